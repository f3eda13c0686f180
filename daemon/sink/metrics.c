// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * metrics.c - Prometheus text exposition of the latest window (metrics.h).
 *
 * Families: per-CPU PELT averages and run-queue length as gauges, the
 * load-balancer group type as a state set (one 0/1 series per type), job
 * unfairness, findings / events / lost events as counters, the engine's
 * absolute error against the kernel's own PELT values as a summary (per
 * entity, CPU or task, and signal; cumulative since start), and the
 * standard process_* metrics.
 */
#include <dirent.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"

/* AddressSanitizer replaces malloc: mallinfo2() would not see its heap. */
#if defined(__SANITIZE_ADDRESS__)
#define IMB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IMB_ASAN 1
#endif
#endif
#ifdef IMB_ASAN
/* The sanitizer runtime's (gcc ships no header for it). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

struct mbuf {
	char *p;
	size_t len, cap;
	int err;
};

static void mb_printf(struct mbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mb_printf(struct mbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->err)
		return;
	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->err = -EINVAL;
			return;
		}
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = b->cap ? b->cap * 2 : 8192;
			char *np;

			while (cap < b->len + (size_t)n + 1)
				cap *= 2;
			np = realloc(b->p, cap);
			if (!np) {
				b->err = -ENOMEM;
				return;
			}
			b->p = np;
			b->cap = cap;
		}
	}
}

/* label value escaping: backslash, double quote, newline */
static void mb_label(struct mbuf *b, const char *s, size_t max)
{
	char tmp[512];
	size_t o = 0;

	for (size_t i = 0; i < max && s[i] && o < sizeof(tmp) - 3; i++) {
		if (s[i] == '\\' || s[i] == '"') {
			tmp[o++] = '\\';
			tmp[o++] = s[i];
		} else if (s[i] == '\n') {
			tmp[o++] = '\\';
			tmp[o++] = 'n';
		} else {
			tmp[o++] = s[i];
		}
	}
	tmp[o] = '\0';
	mb_printf(b, "%s", tmp);
}

static void family(struct mbuf *b, const char *name, const char *type, const char *help)
{
	mb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Prometheus float: Go-style NaN/+Inf/-Inf */
static void mb_value(struct mbuf *b, double v)
{
	if (isnan(v))
		mb_printf(b, " NaN\n");
	else if (isinf(v))
		mb_printf(b, " %sInf\n", v > 0 ? "+" : "-");
	else {
		char tmp[40];

		/* shortest of 15 or 17 digits that reads back exactly */
		snprintf(tmp, sizeof(tmp), "%.15g", v);
		if (strtod(tmp, NULL) != v)
			snprintf(tmp, sizeof(tmp), "%.17g", v);
		mb_printf(b, " %s\n", tmp);
	}
}

const char *const metrics_pelt_signal_names[METRICS_PELT_SIGNALS] = {
	"util_avg", "runnable_avg", "load_avg",
};

/*
 * A summary per entity and signal, cumulative since start: quantiles of
 * every comparison so far, and _sum/_count that only grow (so rate() and
 * the mean error over a range work).
 */
static void pelt_error(struct mbuf *b, const struct metrics_pelt *p)
{
	static const char *const ent[] = { "cpu", "task" };
	bool any = false;

	for (int e = 0; e < 2; e++)
		for (int s = 0; s < METRICS_PELT_SIGNALS; s++)
			any |= (e ? p->task : p->cpu)[s].samples != 0;
	if (!any)
		return;
	family(b, "imbalanced_pelt_abs_error", "summary",
	       "Absolute difference between the engine's PELT average and the kernel's own value, at every kernel sample since start (errors of 2048 and more count as 2048 in _sum).");
	for (int e = 0; e < 2; e++) {
		for (int s = 0; s < METRICS_PELT_SIGNALS; s++) {
			const struct metrics_pelt_sig *g = &(e ? p->task : p->cpu)[s];
			const char *sig = metrics_pelt_signal_names[s];

			if (!g->samples)
				continue;
			mb_printf(b, "imbalanced_pelt_abs_error{entity=\"%s\",signal=\"%s\",quantile=\"0.5\"} %llu\n",
				  ent[e], sig, (unsigned long long)g->median);
			mb_printf(b, "imbalanced_pelt_abs_error{entity=\"%s\",signal=\"%s\",quantile=\"0.95\"} %llu\n",
				  ent[e], sig, (unsigned long long)g->p95);
			mb_printf(b, "imbalanced_pelt_abs_error_sum{entity=\"%s\",signal=\"%s\"} %llu\n",
				  ent[e], sig, (unsigned long long)g->sum);
			mb_printf(b, "imbalanced_pelt_abs_error_count{entity=\"%s\",signal=\"%s\"} %llu\n",
				  ent[e], sig, (unsigned long long)g->samples);
		}
	}
}

static void cpu_gauge(struct mbuf *b, const struct imb_window *w, const char *name,
		      const char *help, int which)
{
	family(b, name, "gauge", help);
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];
		double v = which == 0 ? (double)c->util_avg :
			   which == 1 ? (double)c->runnable_avg :
			   which == 2 ? (double)c->load_avg :
			   which == 3 ? (double)c->nr_running :
			   which == 4 ? (double)c->capacity : c->overloaded_fraction;

		mb_printf(b, "%s{cpu=\"%d\"}", name, c->cpu);
		mb_value(b, v);
	}
}

/* what changes between windows: the store's size and the process figures */
static void dynamic_part(struct mbuf *b, const struct metrics_process *proc, uint64_t db_size)
{
	if (db_size) {
		family(b, "imbalanced_store_size_bytes", "gauge", "Size of the SQLite store with its WAL.");
		mb_printf(b, "imbalanced_store_size_bytes %llu\n",
			  (unsigned long long)db_size);
	}
	if (proc) {
		family(b, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
		mb_printf(b, "process_resident_memory_bytes %llu\n",
			  (unsigned long long)proc->rss_bytes);
		family(b, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
		mb_printf(b, "process_cpu_seconds_total");
		mb_value(b, proc->cpu_seconds);
		family(b, "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.");
		mb_printf(b, "process_start_time_seconds");
		mb_value(b, proc->start_time_seconds);
		family(b, "process_open_fds", "gauge", "Number of open file descriptors.");
		mb_printf(b, "process_open_fds %llu\n", (unsigned long long)proc->open_fds);
	}
}

/* One gauge per job of @w: its unfairness (labelled with its kind too) or max_deviation. */
static void job_gauge(struct mbuf *b, const struct imb_window *w, const char *name,
		      const char *help, bool unfairness)
{
	family(b, name, "gauge", help);
	for (size_t i = 0; i < w->nr_jobs; i++) {
		mb_printf(b, "%s{job_key=\"", name);
		mb_label(b, w->jobs[i].key, sizeof(w->jobs[i].key));
		if (unfairness) {
			mb_printf(b, "\",kind=\"");
			mb_label(b, w->jobs[i].kind, sizeof(w->jobs[i].kind));
		}
		mb_printf(b, "\"}");
		mb_value(b, unfairness ? w->jobs[i].unfairness : w->jobs[i].max_deviation);
	}
}

/* The per-CPU gauges, in the order of cpu_gauge()'s @which. */
static const struct {
	const char *name, *help;
} cpu_gauges[] = {
	{ "imbalanced_cpu_util_avg",
	  "PELT util_avg of the CPU's CFS run queue at the end of the latest window (capacity units, 0-1024)." },
	{ "imbalanced_cpu_runnable_avg",
	  "PELT runnable_avg of the CPU's CFS run queue (1024 per runnable task)." },
	{ "imbalanced_cpu_load_avg",
	  "PELT load_avg of the CPU's CFS run queue (weight units)." },
	{ "imbalanced_cpu_nr_running",
	  "Runnable tasks on the CPU at the end of the latest window." },
	{ "imbalanced_cpu_capacity",
	  "Capacity of the CPU (1024 unless the topology says otherwise)." },
	{ "imbalanced_cpu_overloaded_ratio",
	  "Fraction of the latest window the CPU was classified overloaded." },
};

/* The families of the latest window: per CPU, per job, and its end. */
static void window_part(struct mbuf *b, const struct imb_window *w)
{
	for (int k = 0; k < (int)(sizeof(cpu_gauges) / sizeof(cpu_gauges[0])); k++)
		cpu_gauge(b, w, cpu_gauges[k].name, cpu_gauges[k].help, k);
	family(b, "imbalanced_cpu_group_type", "gauge",
	       "Load-balancer group classification of the CPU (fixed threshold): 1 for the current type, 0 for the others.");
	for (size_t i = 0; i < w->nr_cpus; i++)
		for (int t = IMB_GROUP_HAS_SPARE; t <= IMB_GROUP_OVERLOADED; t++)
			mb_printf(b, "imbalanced_cpu_group_type{cpu=\"%d\",type=\"%s\"} %d\n",
				  w->cpus[i].cpu, imb_group_type_name(t),
				  w->cpus[i].group_type == t);
	job_gauge(b, w, "imbalanced_job_unfairness_ratio",
		  "Unfairness of the job in the latest window: 1 - min/max CPU time of its tasks (0 = fair).",
		  true);
	job_gauge(b, w, "imbalanced_job_max_deviation_ratio",
		  "Largest relative deviation of a task's CPU share from its fair share in the job.",
		  false);
	family(b, "imbalanced_window_end_seconds", "gauge",
	       "End of the latest window on the trace clock.");
	mb_printf(b, "imbalanced_window_end_seconds");
	mb_value(b, (double)w->t_end_ns / 1e9);
}

/* The counters since start: findings by kind and severity, events, lost events, windows. */
static void counters_part(struct mbuf *b, const struct metrics_input *in)
{
	family(b, "imbalanced_findings_total", "counter",
	       "Findings opened since start, by kind and severity.");
	for (size_t i = 0; i < in->nr_findings; i++) {
		mb_printf(b, "imbalanced_findings_total{kind=\"");
		mb_label(b, in->findings[i].kind, sizeof(in->findings[i].kind));
		mb_printf(b, "\",severity=\"%s\"} %llu\n",
			  imb_severity_name(in->findings[i].severity),
			  (unsigned long long)in->findings[i].count);
	}
	family(b, "imbalanced_events_total", "counter", "Scheduler events processed.");
	mb_printf(b, "imbalanced_events_total %llu\n", (unsigned long long)in->events_total);
	family(b, "imbalanced_lost_events_total", "counter",
	       "Events the kernel dropped before imbalanced could read them.");
	mb_printf(b, "imbalanced_lost_events_total %llu\n",
		  (unsigned long long)in->lost_events_total);
	family(b, "imbalanced_windows_total", "counter", "Analysis windows closed.");
	mb_printf(b, "imbalanced_windows_total %llu\n", (unsigned long long)in->windows_total);
}

int metrics_format(const struct metrics_input *in, char **out, size_t *len)
{
	struct mbuf b = { 0 };

	family(&b, "imbalanced_build_info", "gauge", "Version of imbalanced; always 1.");
	mb_printf(&b, "imbalanced_build_info{version=\"");
	mb_label(&b, in->version ? in->version : "unknown", 64);
	mb_printf(&b, "\"} 1\n");
	if (in->w)
		window_part(&b, in->w);
	if (in->pelt)
		pelt_error(&b, in->pelt);
	counters_part(&b, in);
	dynamic_part(&b, in->proc, in->db_size_bytes);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

int metrics_format_dynamic(const char *prefix, size_t prefix_len,
			   const struct metrics_process *proc, uint64_t db_size_bytes,
			   char **out, size_t *len)
{
	struct mbuf b = { 0 };

	b.cap = prefix_len + 2048;
	b.p = malloc(b.cap);
	if (!b.p)
		return -ENOMEM;
	memcpy(b.p, prefix, prefix_len);
	b.len = prefix_len;
	b.p[b.len] = '\0';
	dynamic_part(&b, proc, db_size_bytes);
	if (b.err) {
		free(b.p);
		return b.err;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/*
 * The boot time, read once: /proc/stat is long (an interrupt counter per
 * IRQ line) and reading it was most of a /metrics request.
 */
static pthread_once_t btime_once = PTHREAD_ONCE_INIT;
static double boot_time_s;

static void btime_read(void)
{
	char buf[1024];
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %lf", &boot_time_s) == 1)
			break;
	fclose(f);
}

int metrics_process_read(struct metrics_process *p)
{
	char buf[1024], *s;
	unsigned long long utime, stime, start, rss_pages;
	double btime = 0;
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	FILE *f;
	DIR *d;
	size_t n;

	memset(p, 0, sizeof(*p));
	f = fopen("/proc/self/stat", "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s = strrchr(buf, ')');	/* comm may hold spaces */
	if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu"
			 " %*d %*d %*d %*d %*d %*d %llu %*u %llu",
			 &utime, &stime, &start, &rss_pages) != 4)
		return -EPROTO;
	pthread_once(&btime_once, btime_read);
	btime = boot_time_s;
	p->cpu_seconds = (double)(utime + stime) / (double)tck;
	p->start_time_seconds = btime + (double)start / (double)tck;
	p->rss_bytes = rss_pages * (unsigned long long)page;
	d = opendir("/proc/self/fd");
	if (d) {
		while (readdir(d))
			p->open_fds++;
		closedir(d);
		p->open_fds = p->open_fds > 2 ? p->open_fds - 3 : 0;	/* ., .., dirfd */
	}
	return 0;
}

uint64_t metrics_heap_bytes(void)
{
#ifdef IMB_ASAN
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;	/* in arenas + mmapped */
#endif
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * runtime.c - the live daemon's process (runtime.h).
 *
 * Initialised in dependency order and finalised in exact reverse:
 * configuration, store, snapshot holder (HTTP readers), HTTP server, event
 * source, pipeline.  The loop polls the source with a short timeout so
 * that signals, window closes on quiet hosts and the watchdog are served
 * within 100 ms.
 */
#include "config.h"

#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "analyzers/event_text.h"
#include "analyzers/pipeline.h"
#include "daemon/cli/conf.h"
#include "daemon/host/cgroup_paths.h"
#include "daemon/host/hostinfo.h"
#include "daemon/host/topology.h"
#include "daemon/live/priority.h"
#include "daemon/live/runtime.h"
#include "daemon/report/report.h"
#include "daemon/sink/alerts.h"
#include "daemon/sink/event_writer.h"
#include "daemon/sink/flightrec.h"
#include "daemon/sink/group_rows.h"
#include "daemon/sink/http.h"
#include "daemon/sink/metrics.h"
#include "daemon/sink/snapshot.h"
#include "daemon/sink/store.h"
#include "daemon/source/live.h"
#include "daemon/source/group_names.h"
#include "daemon/util.h"

#define POLL_MS 100

enum { LOG_ERR = 3, LOG_WARN = 4, LOG_INFO = 6, LOG_DEBUG = 7 };

struct runtime {
	const struct runtime_opts *o;
	struct config cfg;
	struct hostinfo host;
	struct store *store;
	int64_t run_id;
	struct snapshot *snap;
	struct http_backend http_be;
	struct http_server *http;
	struct source src;		/* the live source (none while replaying) */
	struct group_names *names;	/* task groups' cgroup paths (BPF source) */
	const char *source_name;
	struct pipeline *p;
	struct cgroup_paths *cgp;	/* labels cgroup jobs with their v2 paths (live, group_by cgroup) */
	uint64_t windows;
	uint64_t store_errors;
	struct event_writer *rec;	/* --record: the event stream as text */
	bool rec_warned;	/* its write error logged */
	struct flightrec *fr;	/* the last seconds of events, for alerts */
	struct alerts *alerts;
	bool journal;		/* stderr goes to the journal */
};

static void rt_log(const struct runtime *rt, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void rt_log(const struct runtime *rt, int level, const char *fmt, ...)
{
	va_list ap;

	if (rt->o->quiet && level > LOG_ERR)
		return;
	if (!rt->o->verbose && level >= LOG_DEBUG)
		return;
	if (rt->journal)
		fprintf(stderr, "<%d>", level);
	fputs("imbalanced: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Configuration file, then the command line's overrides. */
static int rt_config_read(const struct runtime_opts *o, struct config *c, char *err)
{
	char kerr[256];
	int rc;

	config_defaults(c);
	rc = config_load(c, o->config_path, o->config_missing_ok, kerr);
	if (rc) {
		err_set(err, "%.100s: %.150s", o->config_path, kerr);
		return rc;
	}
	for (int i = 0; i < o->nr_overrides; i++) {
		rc = config_set(c, o->overrides[i][0], o->overrides[i][1], kerr);
		if (rc) {
			err_set(err, "%s", kerr);
			return rc;
		}
	}
	return 0;
}

/* An alert's row in the store. */
static void rt_alert_store(void *ctx, const struct imb_alert *a)
{
	struct runtime *rt = ctx;

	if (rt->store && store_alert_insert(rt->store, rt->run_id, a))
		rt->store_errors++;
}

static int task_run_cmp(const void *a, const void *b)
{
	const struct imb_task_sample *x = a, *y = b;

	return x->run_ns < y->run_ns ? 1 : x->run_ns > y->run_ns ? -1 : 0;
}

/*
 * The HTTP readers keep minutes of windows; a burst of thousands of
 * short-lived tasks must not stay in memory with them.  Live windows keep
 * their busiest tasks only (the store keeps fewer still).
 */
#define RT_WINDOW_MAX_TASKS 256

static void rt_window_trim(struct imb_window *w)
{
	if (w->nr_tasks <= RT_WINDOW_MAX_TASKS)
		return;
	qsort(w->tasks, w->nr_tasks, sizeof(w->tasks[0]), task_run_cmp);
	w->nr_tasks = RT_WINDOW_MAX_TASKS;
	w->tasks = realloc(w->tasks, RT_WINDOW_MAX_TASKS * sizeof(w->tasks[0])) ?: w->tasks;
}

/* Each closed window: store it, then hand it to the HTTP readers. */
static void rt_on_window(struct imb_window *w, void *ctx)
{
	struct runtime *rt = ctx;

	rt->windows++;
	if (rt->store && store_window_commit(rt->store, rt->run_id, w)) {
		if (!rt->store_errors++)
			rt_log(rt, LOG_ERR, "%s: store: %s (further errors counted, not logged)",
			       rt->cfg.db, store_last_error(rt->store));
	}
	rt_log(rt, LOG_DEBUG, "window %" PRIu64 ": %" PRIu64 " events, %" PRIu64
	       " lost, %zu tasks, %zu findings", rt->windows, w->events, w->lost_events,
	       w->nr_tasks, w->nr_findings);
	if (w->lost_events)
		rt_log(rt, LOG_WARN, "window %" PRIu64 ": %" PRIu64 " events lost", rt->windows,
		       w->lost_events);
	if (rt->alerts && alerts_window(rt->alerts, w))
		rt_log(rt, LOG_ERR, "out of memory raising alerts");
	for (size_t i = 0; i < w->nr_alerts; i++)
		rt_log(rt, LOG_WARN, "alert %s: %s %s: %s%s%s", w->alerts[i].state,
		       w->alerts[i].finding.kind, w->alerts[i].finding.subject,
		       w->alerts[i].finding.summary, w->alerts[i].evidence_file[0] ? "; events in " : "",
		       w->alerts[i].evidence_file);
	rt_window_trim(w);
	{
		const struct model *m = pipeline_model(rt->p);

		struct group_rows *gr;

		snapshot_set_pelt(rt->snap, m);
		/* the task groups for GET /api/v1/groups, paths joined in now */
		gr = group_rows_build(m, w->t_end_ns, group_names_path_cb, rt->names);
		if (gr)
			snapshot_set_groups(rt->snap, gr);
		else
			rt_log(rt, LOG_ERR, "out of memory listing the task groups");
	}
	if (snapshot_publish(rt->snap, w))
		rt_log(rt, LOG_ERR, "out of memory publishing a window");
	/* give the memory of exited tasks back (a burst of forks) */
	malloc_trim(0);
}

static int rt_on_event(const struct imb_event *ev, void *ctx)
{
	struct runtime *rt = ctx;

	if (rt->fr)
		flightrec_add(rt->fr, ev);

	if (rt->rec && event_writer_put(rt->rec, ev) && !rt->rec_warned) {
		rt->rec_warned = true;
		rt_log(rt, LOG_ERR, "%s: cannot write the recording; no more events are written",
		       rt->o->record_path);
	}

	return pipeline_event(rt->p, ev);
}

static void rt_log_fallback(void *ctx, const char *why)
{
	rt_log(ctx, LOG_WARN, "BPF source unavailable (%s); falling back to tracefs", why);
}

static void rt_log_stale(void *ctx, int removed)
{
	rt_log(ctx, LOG_INFO, "removed %d stale tracefs instance(s)", removed);
}

static int rt_source_open(struct runtime *rt, char *err)
{
	struct live_source_opts lo = {
		.prefer = rt->cfg.source == CONFIG_SOURCE_TRACEFS ? LIVE_SOURCE_TRACEFS :
			  rt->cfg.source == CONFIG_SOURCE_BPF ? LIVE_SOURCE_BPF : LIVE_SOURCE_AUTO,
		/* config.events uses the same bits (CONFIG_EV() == SOURCE_BPF_EV()) */
		.events = rt->cfg.events,
		.no_numa = !rt->cfg.numa_events,
		.runtime_all = rt->cfg.runtime_all,
		.ringbuf_bytes = rt->cfg.ring_buffer_kb * 1024u,
		.pelt_se_min_interval_ns = rt->cfg.pelt_se_rate_ns,
		.group_path_interval_ns = rt->cfg.group_path_interval_ns,
		.tracefs_buffer_kb = rt->cfg.tracefs_buffer_kb,
		.log_fallback = rt_log_fallback,
		.log_stale = rt_log_stale,
		.log_ctx = rt,
	};
	int rc;

	/* bounded as the model's group table is (one entry per group, not per CPU) */
	if (lo.prefer != LIVE_SOURCE_TRACEFS) {
		rt->names = group_names_new(rt->cfg.max_groups);
		if (!rt->names) {
			err_set(err, "out of memory");
			return -ENOMEM;
		}
		lo.group_names = rt->names;
	}
	rc = live_source_open(&rt->src, &lo, err);
	if (rc)
		return rc;
	rt->source_name = rt->src.name;
	if (rt->src.ops->pelt_hooks) {
		char line[256];

		rt->src.ops->pelt_hooks(rt->src.impl, line, sizeof(line));
		rt_log(rt, LOG_INFO, "pelt hooks: %s", line);
	}
	return 0;
}

/* A live source's next batch: SOURCE_MORE or -errno (a live source never ends). */
static int rt_source_poll(struct runtime *rt, int timeout_ms)
{
	char serr[SOURCE_ERR_LEN] = "";

	return rt->src.ops->next(rt->src.impl, timeout_ms, rt_on_event, rt, serr);
}

/* Windows may close up to here: the source has delivered everything older. */
static uint64_t rt_source_watermark(const struct runtime *rt)
{
	return source_watermark(&rt->src);
}

static void rt_source_drain(struct runtime *rt)
{
	source_drain(&rt->src, rt_on_event, rt);
}

static void rt_source_close(struct runtime *rt)
{
	source_close(&rt->src);
	group_names_free(rt->names);	/* after the source that fills it */
	rt->names = NULL;
}

static int rt_store_open(struct runtime *rt, char *err)
{
	struct store_opts so = {
		.raw_days = rt->cfg.retention_days,
		.minute_days = rt->cfg.downsample_days,
		.max_bytes = rt->cfg.db_max_bytes,
	};
	const char *serr = NULL;

	if (!rt->cfg.db[0])
		return 0;
	{
		/* the state directory may not exist outside systemd */
		char dir[CONFIG_PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", rt->cfg.db);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			if (mkdir(dir, 0750) && errno != EEXIST)
				rt_log(rt, LOG_WARN, "%.200s: %s", dir, strerror(errno));
		}
	}
	rt->store = store_open(rt->cfg.db, &so, &serr);
	if (!rt->store) {
		err_set(err, "%.120s: %.120s", rt->cfg.db, serr ? serr : strerror(errno));
		return -EIO;
	}
	return 0;
}

/* The run's row, once the source is known. */
static int rt_store_run_begin(struct runtime *rt, char *err)
{
	struct store_run_info ri = {
		.source = rt->source_name,
		.kernel = rt->host.kernel,
		.nr_cpus = (uint32_t)rt->host.nr_cpus,
		.window_ns = rt->cfg.analyzer.window_ns,
	};

	if (!rt->store)
		return 0;
	rt->run_id = store_run_begin(rt->store, &ri);
	if (rt->run_id < 0) {
		err_set(err, "%.120s: %.120s", rt->cfg.db, store_last_error(rt->store));
		return -EIO;
	}
	return 0;
}

static int rt_http_start(struct runtime *rt, char *err)
{
	struct http_opts ho = {
		.listen = rt->cfg.listen,
		.allow_remote = rt->cfg.allow_remote,
		.token_file = rt->cfg.token_file[0] ? rt->cfg.token_file : NULL,
		.max_connections = rt->cfg.http_max_connections,
		.max_per_ip = rt->cfg.http_max_per_ip,
		.timeout_s = rt->cfg.http_timeout_s,
	};
	const char *herr = NULL;

	if (!rt->cfg.listen[0])
		return 0;
	rt->http_be.snap = rt->snap;
	rt->http_be.db_path = rt->cfg.db[0] ? rt->cfg.db : NULL;
	rt->http_be.version = PACKAGE_VERSION;
	rt->http = http_start(&ho, &rt->http_be, &herr);
	if (!rt->http) {
		err_set(err, "HTTP on %s: %s", rt->cfg.listen, herr ? herr : strerror(errno));
		return -EADDRINUSE;
	}
	return 0;
}

static int rt_pipeline_new(struct runtime *rt)
{
	struct model_opts mo;
	struct analyzer_config ac = rt->cfg.analyzer;

	memset(&mo, 0, sizeof(mo));
	mo.nr_cpus = rt->host.nr_cpus;
	mo.max_tasks = rt->cfg.max_tasks;
	mo.max_groups = rt->cfg.max_groups;
	for (int i = 0; i < rt->host.nr_cpus && i < MODEL_MAX_CPUS; i++)
		mo.capacity[i] = rt->host.capacity[i];
	/* bounded memory: forget exited tasks, unless the run's report wants them */
	ac.live = !rt->o->report_path;
	topology_probe_sysfs(&ac);
	rt->p = pipeline_new(&ac, &mo, rt_on_window, rt);
	if (!rt->p)
		return -ENOMEM;
	/*
	 * Cgroup jobs get this host's v2 paths, live only: a replay's ids are
	 * the recording host's.  Without the resolver (ENOMEM) or the
	 * hierarchy, jobs keep their numeric keys.
	 */
	if (!rt->o->replay_path && ac.group_by == ANALYZER_GROUP_CGROUP) {
		rt->cgp = cgroup_paths_new(NULL);
		if (rt->cgp)
			pipeline_set_cgroup_label(rt->p, cgroup_paths_label_cb, rt->cgp);
	}
	return 0;
}

/*
 * The STATUS= line systemctl status shows: events, lost events, tasks, the
 * heap the daemon holds (and of it, the source's reorder buffer, which it
 * keeps while a backlog lasts) and, with the kernel's PELT values in the
 * stream, the engine's error against them for CPU util_avg (median / p95,
 * of 1024).
 */
static void rt_status_line(const struct runtime *rt, char *buf, size_t len)
{
	const struct model *m = pipeline_model(rt->p);
	const struct model_err_hist *h = &m->err_cpu[MODEL_SIG_UTIL];
	int n;

	n = snprintf(buf, len, "%s: %" PRIu64 " events, %" PRIu64 " lost, %zu tasks, heap %" PRIu64
		     " KiB", rt->source_name, m->events, m->lost_events, m->nr_tasks,
		     metrics_heap_bytes() >> 10);
	if (n < 0 || (size_t)n >= len)
		return;
	if (rt->src.ops && rt->src.ops->held_bytes) {
		int k = snprintf(buf + n, len - n, " (reorder %" PRIu64 " KiB)",
				 rt->src.ops->held_bytes(rt->src.impl) >> 10);

		if (k < 0 || (size_t)k >= len - n)
			return;
		n += k;
	}
	if (h->samples)
		snprintf(buf + n, len - n, ", PELT util_avg error vs kernel median %" PRIu64
			 " p95 %" PRIu64 " of 1024", model_err_quantile(h, 0.5),
			 model_err_quantile(h, 0.95));
	else
		snprintf(buf + n, len - n, ", PELT error: no kernel reference (%s)",
			 rt->source_name);
}

/* The "key = value" lines of config_write(), "\n"-joined, for comparing. */
static char *rt_config_text(const struct config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	config_write(c, f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The value of @key in config_write() text, copied into @val. */
static bool rt_config_value(const char *text, const char *key, char *val, size_t len)
{
	size_t kl = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, key, kl) && !strncmp(l + kl, " = ", 3)) {
			const char *v = l + kl + 3, *e = strchr(v, '\n');
			size_t n = e ? (size_t)(e - v) : strlen(v);

			snprintf(val, len, "%.*s", (int)(n < len ? n : len - 1), v);
			return true;
		}
	}
	return false;
}

/* May a change of @key alone (@c: the running config with it changed) be
 * applied in place?  Alert keys and the analyzers' thresholds can. */
/*
 * The reader's nice level (priority.h).  Called from the reader's thread
 * after the HTTP threads have started, so that they keep the start level.
 */
static void rt_nice_apply(struct runtime *rt, int nice)
{
	char err[256];

	if (priority_raise(nice, err))
		rt_log(rt, LOG_WARN, "%s; the event reader stays at nice %d, and may lose events "
		       "under a heavy load (the nice key)", err, getpriority(PRIO_PROCESS, 0));
}

static bool rt_key_is_live(const struct config *old, const struct config *c, const char *key)
{
	struct config *a, *b;
	bool live;

	if (!strncmp(key, "alert_", 6) || !strcmp(key, "nice"))
		return true;
	if (c->analyzer.window_ns != old->analyzer.window_ns ||
	    c->analyzer.group_by != old->analyzer.group_by)
		return false;
	/* an analyzer threshold: nothing outside cfg.analyzer changed */
	a = malloc(sizeof(*a));
	b = malloc(sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return false;
	}
	*a = *old;
	*b = *c;
	memset(&a->analyzer, 0, sizeof(a->analyzer));
	memset(&b->analyzer, 0, sizeof(b->analyzer));
	live = !memcmp(a, b, sizeof(*a));
	free(a);
	free(b);
	return live;
}

/*
 * Every key line of the new configuration text @tnew whose value differs
 * from the running one's (@told): its name goes to @fa when it can change
 * in place, to @fr when it needs a restart.  @one is scratch space.
 */
static void rt_changed_keys(const struct runtime *rt, const char *told, const char *tnew,
			    struct config *one, FILE *fa, FILE *fr)
{
	for (const char *l = tnew; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char key[64], vold[CONFIG_PATH_MAX], vnew[CONFIG_PATH_MAX], kerr[256];
		const char *eq;

		if (*l == '#' || *l == '\n' || !(eq = strstr(l, " = ")) || eq - l >= (long)sizeof(key))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(eq - l), l);
		if (!rt_config_value(tnew, key, vnew, sizeof(vnew)) ||
		    (rt_config_value(told, key, vold, sizeof(vold)) && !strcmp(vold, vnew)))
			continue;
		*one = rt->cfg;
		if (config_set(one, key, vnew, kerr) == 0 && rt_key_is_live(&rt->cfg, one, key))
			fprintf(fa, "%s%s", ftell(fa) ? ", " : "", key);
		else
			fprintf(fr, "%s%s", ftell(fr) ? ", " : "", key);
	}
}

/*
 * What can change in place, from the re-read configuration @c: the alert
 * keys, the nice level and the analyzers' thresholds (not the window
 * length nor the grouping of jobs).
 */
static void rt_apply_in_place(struct runtime *rt, const struct config *c)
{
	uint64_t win = rt->cfg.analyzer.window_ns;
	int group_by = rt->cfg.analyzer.group_by;

	memcpy(rt->cfg.alert_hook, c->alert_hook, sizeof(c->alert_hook));
	rt->cfg.alert_hook_timeout_s = c->alert_hook_timeout_s;
	rt->cfg.alert_min_ns = c->alert_min_ns;
	rt->cfg.alert_hysteresis = c->alert_hysteresis;
	rt->cfg.alert_overload_ns = c->alert_overload_ns;
	rt->cfg.alert_lost_events = c->alert_lost_events;
	alerts_config(rt->alerts, &rt->cfg);
	if (c->nice != rt->cfg.nice) {
		rt->cfg.nice = c->nice;
		rt_nice_apply(rt, c->nice);
	}
	rt->cfg.analyzer = c->analyzer;
	rt->cfg.analyzer.window_ns = win;
	rt->cfg.analyzer.group_by = group_by;
	pipeline_reconfigure(rt->p, &rt->cfg.analyzer);
}

/*
 * SIGHUP: re-read the file and apply what can change in place (alert keys,
 * the analyzers' thresholds); each changed key that needs a restart is named.
 */
static void rt_reload(struct runtime *rt)
{
	struct config *c = malloc(sizeof(*c)), *one = malloc(sizeof(*one));
	char *told = NULL, *tnew = NULL, *applied = NULL, *restart = NULL;
	size_t alen = 0, rlen = 0;
	FILE *fa = NULL, *fr = NULL;
	char err[256];

	sd_notify(0, "RELOADING=1");
	if (!c || !one)
		goto oom;
	if (rt_config_read(rt->o, c, err)) {
		rt_log(rt, LOG_ERR, "reload: %s (keeping the running configuration)", err);
		goto out;
	}
	told = rt_config_text(&rt->cfg);
	tnew = rt_config_text(c);
	fa = open_memstream(&applied, &alen);
	fr = open_memstream(&restart, &rlen);
	if (!told || !tnew || !fa || !fr)
		goto oom;
	rt_changed_keys(rt, told, tnew, one, fa, fr);
	if (fclose(fa) | fclose(fr)) {
		fa = fr = NULL;
		goto oom;
	}
	fa = fr = NULL;
	rt_apply_in_place(rt, c);
	rt_log(rt, LOG_INFO, "configuration reloaded from %s: %s%s", rt->o->config_path,
	       applied[0] ? "applied " : "no change applied", applied);
	if (restart[0])
		rt_log(rt, LOG_WARN, "reload: %s changed; it takes effect at the next start "
		       "(the running value stays)", restart);
	goto out;
oom:
	rt_log(rt, LOG_ERR, "reload: out of memory (keeping the running configuration)");
out:
	if (fa)
		fclose(fa);
	if (fr)
		fclose(fr);
	free(applied);
	free(restart);
	free(told);
	free(tnew);
	free(one);
	free(c);
	sd_notify(0, "READY=1");
}

/* The whole run as `analyze --json` would report it (--report FILE). */
static void rt_report_write(struct runtime *rt, const struct imb_window *summary)
{
	struct source_info info;
	struct report_run rr;
	char tmp[CONFIG_PATH_MAX + 8];
	FILE *f;
	int rc;

	source_info_get(&rt->src, &info);
	rr = (struct report_run){
		.path = rt->source_name,
		.info = &info,
		.model = pipeline_model(rt->p),
		.cfg = pipeline_config(rt->p),
		.summary = summary,
		.group_names = rt->names,
	};
	snprintf(tmp, sizeof(tmp), "%s.tmp", rt->o->report_path);
	f = fopen(tmp, "we");
	if (!f) {
		rt_log(rt, LOG_ERR, "%s: %s", tmp, strerror(errno));
		return;
	}
	rc = report_json(f, &rr, 1);
	if (fclose(f) || rc || rename(tmp, rt->o->report_path)) {
		rt_log(rt, LOG_ERR, "%s: cannot write the report", rt->o->report_path);
		unlink(tmp);
	}
}

static void rt_done(struct runtime *rt)
{
	/* exact reverse of set-up */
	pipeline_free(rt->p);
	if (rt->cgp) {
		struct cgroup_paths_stats st;

		cgroup_paths_stats(rt->cgp, &st);
		rt_log(rt, LOG_DEBUG, "cgroup paths: %zu held, %" PRIu64 " lookups, %" PRIu64
		       " unresolved, %" PRIu64 " walks, %" PRIu64 " errors, %" PRIu64 " left out",
		       st.entries, st.lookups, st.unresolved, st.scans, st.errors, st.dropped);
	}
	cgroup_paths_free(rt->cgp);
	if (rt->alerts)
		/* a replay waits for its hooks; a stopping daemon gives them 0.5 s */
		alerts_drain(rt->alerts, rt->o->replay_path ?
			     (uint64_t)rt->cfg.alert_hook_timeout_s * 1000000000ull : 500000000ull);
	alerts_free(rt->alerts);
	flightrec_free(rt->fr);
	rt_source_close(rt);
	if (rt->rec) {
		char werr[EVENT_WRITER_ERR_LEN];

		if (rt->o->result)
			rt->o->result->recorded = event_writer_count(rt->rec);
		if (event_writer_close(rt->rec, werr)) {
			rt_log(rt, LOG_ERR, "%s", werr);
			if (rt->o->result)
				rt->o->result->record_failed = true;
		}
		rt->rec = NULL;
	}
	http_stop(rt->http);
	snapshot_free(rt->snap);
	store_close(rt->store);
}

/*
 * rt_open - everything a run needs, in the order it is torn down by
 * rt_done(): store, HTTP, the --record file, the state directory, the
 * source (not for a replay), the store's run, the flight recorder, the
 * alerts and the pipeline.  Returns 0 or -errno with @err filled.
 */
static int rt_open(struct runtime *rt, char *err)
{
	const struct runtime_opts *o = rt->o;
	struct alerts_sink sink = {
		.deliver = rt_alert_store,
		.ctx = rt,
		.journal = true,
	};
	int rc;

	rc = rt_store_open(rt, err);
	if (rc)
		return rc;
	rc = rt_http_start(rt, err);
	if (rc)
		return rc;
	if (o->record_path) {
		char werr[EVENT_WRITER_ERR_LEN];

		rt->rec = event_writer_open(o->record_path, !o->record_no_clobber, werr);
		if (!rt->rec) {
			rc = -errno;
			err_set(err, "%s", werr);
			return rc;
		}
		if (o->result)
			o->result->record_created = true;
	}
	if (rt->cfg.state_dir[0] && mkdir(rt->cfg.state_dir, 0750) && errno != EEXIST)
		rt_log(rt, LOG_WARN, "%.200s: %s", rt->cfg.state_dir, strerror(errno));
	if (o->replay_path) {
		rt->source_name = "replay";
	} else {
		rc = rt_source_open(rt, err);
		if (rc)
			return rc;
	}
	rc = rt_store_run_begin(rt, err);
	if (rc)
		return rc;
	if (rt->cfg.flight_recorder_s) {
		rt->fr = flightrec_new(rt->cfg.flight_recorder_s, rt->cfg.flight_recorder_max_events);
		if (!rt->fr) {
			err_set(err, "flight recorder: %s", strerror(errno));
			return -ENOMEM;
		}
		flightrec_set_keep(rt->fr, rt->cfg.flight_recorder_keep);
	}
	rt->alerts = alerts_new(&rt->cfg, &sink, rt->fr);
	if (!rt->alerts) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	rc = rt_pipeline_new(rt);
	if (rc) {
		err_set(err, "out of memory");
		return rc;
	}
	return 0;
}

/* rt_publish_info - what /api/v1/status says about this run */
static void rt_publish_info(struct runtime *rt)
{
	struct snapshot_info si;

	memset(&si, 0, sizeof(si));
	snprintf(si.source, sizeof(si.source), "%s", rt->source_name);
	snprintf(si.kernel, sizeof(si.kernel), "%.63s", rt->host.kernel);
	gethostname(si.host, sizeof(si.host) - 1);
	si.nr_cpus = (uint32_t)rt->host.nr_cpus;
	si.window_ns = rt->cfg.analyzer.window_ns;
	si.started_ns = real_ns();
	snapshot_set_info(rt->snap, &si);
}

/* rt_replay - a recording through the same sinks, as fast as it reads */
static int rt_replay(struct runtime *rt, char *err)
{
	const char *path = rt->o->replay_path;
	char serr[SOURCE_ERR_LEN] = "";
	struct source src;
	int rc;

	/* its own source: rt->src stays the (absent) live one for the report */
	rc = source_file_open(&src, path, serr);
	while (!rc)
		rc = src.ops->next(src.impl, -1, rt_on_event, rt, serr);
	source_close(&src);
	if (rc != SOURCE_END) {
		err_set(err, "%.100s: %.150s", path, serr);
		return rc;
	}
	alerts_poll(rt->alerts);
	return 0;
}

/*
 * rt_loop - the live loop: poll the source, close windows on event time and
 * on a quiet host, keep systemd's watchdog and status, deliver alerts,
 * reload on SIGHUP, until @stop or --duration.  Returns 0 or -errno with
 * @err filled when the source fails.
 */
static int rt_loop(struct runtime *rt, volatile sig_atomic_t *stop, volatile sig_atomic_t *reload,
		   uint64_t t_start, uint64_t wd_usec, char *err)
{
	uint64_t last_wd = 0, last_status = 0;
	int rc;

	while (!*stop) {
		uint64_t now;

		rc = rt_source_poll(rt, POLL_MS);
		if (rc < 0 && rc != -EINTR) {
			err_set(err, "%s source: %s", rt->source_name, strerror(-rc));
			return rc;
		}
		now = mono_ns();
		/*
		 * Close windows on a quiet host too; stay behind the sources'
		 * reorder hold-back, and behind what a source that has fallen
		 * behind has delivered, so no event of a closed window is late.
		 */
		if (now > 20000000ull) {
			uint64_t until = now - 20000000ull, wm = rt_source_watermark(rt);

			pipeline_flush(rt->p, until < wm ? until : wm);
		}
		if (wd_usec && now - last_wd >= wd_usec * 1000ull / 2) {
			sd_notify(0, "WATCHDOG=1");
			last_wd = now;
		}
		if (now - last_status >= 10000000000ull) {
			char st[256];

			rt_status_line(rt, st, sizeof(st));
			sd_notifyf(0, "STATUS=%s", st);
			last_status = now;
		}
		alerts_poll(rt->alerts);
		if (*reload) {
			*reload = 0;
			rt_reload(rt);
		}
		if (rt->o->duration_ns && now - t_start >= rt->o->duration_ns)
			break;
	}
	return 0;
}

/* rt_finish - drain the source, close the run, store and report its end */
static void rt_finish(struct runtime *rt)
{
	struct imb_window *summary;
	const struct model *m;
	char st[256];

	sd_notify(0, "STOPPING=1");
	rt_source_drain(rt);
	summary = pipeline_finish(rt->p);
	if (summary && rt->o->report_path)
		rt_report_write(rt, summary);
	/* the findings' final state: episodes closed at the end, whole-run ones */
	if (summary && rt->store && rt->run_id > 0 &&
	    store_findings_commit(rt->store, rt->run_id, summary->findings, summary->nr_findings))
		rt_log(rt, LOG_ERR, "%s: the findings' final state: %s", rt->cfg.db,
		       store_last_error(rt->store));
	imb_window_free(summary);

	m = pipeline_model(rt->p);
	rt_log(rt, LOG_INFO, "stopped: %" PRIu64 " windows, %" PRIu64 " events, %" PRIu64 " lost",
	       rt->windows, m->events, m->lost_events);
	if (rt->o->result) {
		rt->o->result->events = m->events;
		rt->o->result->lost = m->lost_events;
	}
	rt_status_line(rt, st, sizeof(st));
	sd_notifyf(0, "STATUS=stopped: %s", st);
}

int runtime_main(const struct runtime_opts *o, volatile sig_atomic_t *stop,
		 volatile sig_atomic_t *reload, char *err)
{
	struct runtime rt;
	uint64_t t_start, wd_usec = 0;
	int rc;

	memset(&rt, 0, sizeof(rt));
	rt.o = o;
	rt.journal = getenv("JOURNAL_STREAM") != NULL;
	rc = rt_config_read(o, &rt.cfg, err);
	if (rc)
		return rc;
	hostinfo_probe(&rt.host);
	if (!o->replay_path && !rt.host.live_ok) {
		err_set(err, "live mode cannot run here: %.200s", rt.host.reason);
		return -ENOTSUP;
	}
	rt.snap = snapshot_new(0, 0);
	if (!rt.snap) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	rc = rt_open(&rt, err);
	if (rc)
		goto out;
	rt_publish_info(&rt);

	if (!o->replay_path)
		rt_nice_apply(&rt, rt.cfg.nice);
	t_start = mono_ns();
	if (!o->replay_path)
		pipeline_flush(rt.p, t_start);	/* start the window clock */
	rt_log(&rt, LOG_INFO, "running: source %s, %d CPUs, window %" PRIu64 " ms, nice %d%s%s",
	       rt.source_name, rt.host.nr_cpus, rt.cfg.analyzer.window_ns / 1000000,
	       getpriority(PRIO_PROCESS, 0), rt.cfg.db[0] ? ", store " : "", rt.cfg.db);
	sd_watchdog_enabled(0, &wd_usec);
	sd_notifyf(0, "READY=1\nSTATUS=attached (%s)", rt.source_name);
	if (o->on_ready)
		o->on_ready(o->ready_ctx);

	if (o->replay_path)
		rc = rt_replay(&rt, err);
	else
		rc = rt_loop(&rt, stop, reload, t_start, wd_usec, err);
	if (rc)
		goto out;
	rt_finish(&rt);
out:
	rt_done(&rt);
	return rc;
}

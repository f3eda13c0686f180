// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - the `analyze` report: readable text or one JSON document
 * (keys of doc/interfaces.md), and the text event dump (report.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/event_text.h"
#include "analyzers/pelt_expect.h"
#include "daemon/report/report.h"
#include "daemon/report/report_pelt.h"
#include "daemon/sink/group_rows.h"
#include "daemon/sink/json.h"
#include "daemon/sink/window_json.h"

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : NAN;
}

static const char *const sig_names[MODEL_SIG__COUNT] = {
	[MODEL_SIG_UTIL] = "util_avg",
	[MODEL_SIG_RUNNABLE] = "runnable_avg",
	[MODEL_SIG_LOAD] = "load_avg",
};

static void json_err_hists(struct json *j, const char *key, const struct model_err_hist *h)
{
	json_key(j, key);
	json_object_begin(j);
	for (int s = 0; s < MODEL_SIG__COUNT; s++) {
		json_key(j, sig_names[s]);
		json_object_begin(j);
		json_kv_uint(j, "median_abs_err", model_err_quantile(&h[s], 0.5));
		json_kv_uint(j, "p95_abs_err", model_err_quantile(&h[s], 0.95));
		json_kv_uint(j, "max_abs_err", h[s].max_abs);
		json_kv_uint(j, "samples", h[s].samples);
		json_object_end(j);
	}
	json_object_end(j);
}

/* Whole-run idle-with-waiters totals per level; @have is false for absent levels. */
static void wc_totals(const struct imb_window *w, uint64_t tot[3], bool have[3])
{
	tot[0] = tot[1] = tot[2] = 0;
	have[0] = have[1] = false;
	have[2] = w->nr_cpus > 0;
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];

		if (c->idle_with_waiters_llc_ns != IMB_UNKNOWN) {
			have[0] = true;
			tot[0] += c->idle_with_waiters_llc_ns;
		}
		if (c->idle_with_waiters_node_ns != IMB_UNKNOWN) {
			have[1] = true;
			tot[1] += c->idle_with_waiters_node_ns;
		}
		tot[2] += c->idle_with_waiters_ns;
	}
}

static const char *const wc_level[3] = { "llc", "node", "machine" };

/*
 * "work_conservation": per level, the CPU time spent idle while another
 * CPU of the same LLC / node / machine had a task waiting, and its share
 * of all CPU time (CPUs x span).
 */
static void json_work_conservation(struct json *j, const struct imb_window *w, uint64_t span)
{
	uint64_t tot[3];
	bool have[3];

	wc_totals(w, tot, have);
	json_key(j, "work_conservation");
	json_object_begin(j);
	for (int l = 0; l < 3; l++) {
		if (!have[l])
			continue;
		json_key(j, wc_level[l]);
		json_object_begin(j);
		json_kv_uint(j, "idle_with_waiters_ns", tot[l]);
		json_kv_double(j, "fraction_of_cpu_time", ratio(tot[l], span * w->nr_cpus));
		json_object_end(j);
	}
	json_kv_str(j, "affinity", "not in the event stream: waiters that may not run on the "
		    "idle CPU are counted too");
	json_object_end(j);
}

/*
 * The per-window CPU signals the seed article asks for: runnable_avg,
 * util_avg and their ratio, nr_running, load/util, and sched_avg (the sum
 * of util_avg over CPUs), at each window's end.
 */
static void json_windows(struct json *j, const struct report_run *r)
{
	json_key(j, "windows");
	json_array_begin(j);
	for (size_t i = 0; i < r->nr_windows; i++) {
		const struct report_window *rw = &r->windows[i];
		uint64_t sched_avg = 0;

		json_object_begin(j);
		json_kv_uint(j, "t_start_ns", rw->t_start_ns);
		json_kv_uint(j, "t_end_ns", rw->t_end_ns);
		json_key(j, "cpus");
		json_array_begin(j);
		for (size_t k = 0; k < rw->nr_cpus; k++) {
			const struct imb_cpu_sample *c = &r->win_cpus[rw->first + k];

			sched_avg += c->util_avg;
			json_object_begin(j);
			window_json_cpu_fields(j, c);
			json_kv_double(j, "runnable_util_ratio", ratio(c->runnable_avg, c->util_avg));
			json_kv_double(j, "load_util_ratio", ratio(c->load_avg, c->util_avg));
			json_object_end(j);
		}
		json_array_end(j);
		json_kv_uint(j, "sched_avg", sched_avg);
		json_object_end(j);
	}
	json_array_end(j);
}

/* "source": the file read, its format and clock, its CPUs, whether it was cut short. */
static void json_run_source(struct json *j, const struct report_run *r)
{
	json_key(j, "source");
	json_object_begin(j);
	json_key(j, "files");
	json_array_begin(j);
	json_str(j, r->path);
	json_array_end(j);
	json_kv_str(j, "format", r->info->format);
	json_kv_str(j, "clock", r->info->clock);
	json_kv_int(j, "nr_cpus", r->info->nr_cpus ? r->info->nr_cpus : r->model->nr_cpus);
	json_kv_bool(j, "truncated", r->info->truncated);
	json_object_end(j);
}

/* The run's span and its event counts, in all and per kind. */
static void json_run_counts(struct json *j, const struct report_run *r, uint64_t span)
{
	const struct imb_window *w = r->summary;
	const struct model *m = r->model;

	json_kv_uint(j, "span_ns", span);
	json_kv_uint(j, "t_start_ns", w->t_start_ns);
	json_kv_uint(j, "t_end_ns", w->t_end_ns);
	json_kv_uint(j, "events", m->events);
	json_kv_uint(j, "lost_events", m->lost_events);
	json_kv_bool(j, "truncated", r->info->truncated);
	json_kv_uint(j, "out_of_order_events", m->out_of_order);
	json_key(j, "event_counts");
	json_object_begin(j);
	for (unsigned int k = 1; k < IMB_EV__COUNT; k++)
		if (m->kind_count[k])
			json_kv_uint(j, imb_ev_kind_name(k), m->kind_count[k]);
	json_object_end(j);
	json_kv_str(j, "run_time_source",
		    m->has_runtime_events ? "sched_stat_runtime" : "sched_switch");
}

/* "tasks" and "jobs": the rows of the whole run. */
static void json_run_tasks_jobs(struct json *j, const struct imb_window *w)
{
	json_key(j, "tasks");
	json_array_begin(j);
	for (size_t i = 0; i < w->nr_tasks; i++)
		window_json_task(j, &w->tasks[i]);
	json_array_end(j);

	json_key(j, "jobs");
	json_array_begin(j);
	for (size_t i = 0; i < w->nr_jobs; i++)
		window_json_job(j, &w->jobs[i]);
	json_array_end(j);
}

/* "cpus" over the whole run, then "sched_avg", the sum of their util_avg. */
static void json_run_cpus(struct json *j, const struct imb_window *w, uint64_t span)
{
	uint64_t sched_avg = 0;

	json_key(j, "cpus");
	json_array_begin(j);
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];

		sched_avg += c->util_avg;
		json_object_begin(j);
		window_json_cpu_fields(j, c);
		json_kv_double(j, "busy_fraction", ratio(c->busy_ns, span));
		json_kv_double(j, "runnable_util_ratio", ratio(c->runnable_avg, c->util_avg));
		json_kv_double(j, "load_util_ratio", ratio(c->load_avg, c->util_avg));
		json_key(j, "idle_with_waiters_by_level");
		json_object_begin(j);
		if (c->idle_with_waiters_llc_ns != IMB_UNKNOWN)
			json_kv_uint(j, "llc", c->idle_with_waiters_llc_ns);
		if (c->idle_with_waiters_node_ns != IMB_UNKNOWN)
			json_kv_uint(j, "node", c->idle_with_waiters_node_ns);
		json_kv_uint(j, "machine", c->idle_with_waiters_ns);
		json_object_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_kv_uint(j, "sched_avg", sched_avg);
}

/* "pelt": the engine's error against the kernel per entity kind, and the error to expect. */
static void json_run_pelt(struct json *j, const struct model *m)
{
	struct pelt_expect e;

	json_key(j, "pelt");
	json_object_begin(j);
	json_kv_bool(j, "kernel_reference", m->has_kernel_pelt);
	json_err_hists(j, "signals", m->err_cpu);
	json_err_hists(j, "task_signals", m->err_task);
	json_err_hists(j, "group_signals", m->err_group);
	json_err_hists(j, "group_entity_signals", m->err_group_se);
	json_kv_uint(j, "unseen_dequeues", m->unseen_dequeued);
	json_kv_uint(j, "guessed_delays", m->delays_guessed);
	json_kv_uint(j, "resyncs", m->resyncs);
	pelt_expect_get(m, &e);
	window_json_pelt_expect(j, &e);
	json_object_end(j);
}

static void json_run(struct json *j, const struct report_run *r, const struct group_rows *groups)
{
	const struct imb_window *w = r->summary;
	uint64_t span = w->t_end_ns - w->t_start_ns;

	json_object_begin(j);
	json_run_source(j, r);
	json_run_counts(j, r, span);
	json_run_tasks_jobs(j, w);
	json_run_cpus(j, w, span);
	json_work_conservation(j, w, span);
	if (r->windows)
		json_windows(j, r);

	/* the task groups at the end of the run, with the kernel's values */
	json_key(j, "groups");
	group_rows_json(j, groups);

	json_run_pelt(j, r->model);

	json_key(j, "findings");
	json_array_begin(j);
	for (size_t i = 0; i < w->nr_findings; i++)
		window_json_finding(j, &w->findings[i]);
	json_array_end(j);
	json_object_end(j);
}

int report_json(FILE *f, const struct report_run *runs, size_t n)
{
	struct json j;
	size_t len;
	char *text;

	json_init(&j);
	if (n > 1) {
		json_object_begin(&j);
		json_key(&j, "runs");
		json_array_begin(&j);
	}
	for (size_t i = 0; i < n; i++) {
		struct group_rows *g = group_rows_build(runs[i].model, runs[i].summary->t_end_ns,
							group_names_path_cb, runs[i].group_names);

		if (!g) {
			json_free(&j);
			return -ENOMEM;
		}
		json_run(&j, &runs[i], g);
		group_rows_put(g);
	}
	if (n > 1) {
		json_array_end(&j);
		json_object_end(&j);
	}
	text = json_steal(&j, &len);
	if (!text)
		return -ENOMEM;
	if (fwrite(text, 1, len, f) != len || fputc('\n', f) == EOF) {
		free(text);
		return -EIO;
	}
	free(text);
	return 0;
}

static int task_cmp_run(const void *a, const void *b)
{
	const struct imb_task_sample *x = *(const struct imb_task_sample *const *)a;
	const struct imb_task_sample *y = *(const struct imb_task_sample *const *)b;

	return x->run_ns < y->run_ns ? 1 : x->run_ns > y->run_ns ? -1 : 0;
}

/* The first lines: what was read, how long, how many events, where CPU time comes from. */
static void text_header(FILE *f, const struct report_run *r, uint64_t span)
{
	const struct imb_window *w = r->summary;
	const struct model *m = r->model;

	fprintf(f, "%s: %s, clock %s, %zu CPUs, %.3f s, %" PRIu64 " events, %" PRIu64
		" lost%s\n", r->path, r->info->format, r->info->clock[0] ? r->info->clock : "?",
		w->nr_cpus, (double)span / 1e9, m->events, m->lost_events,
		r->info->truncated ? " (TRUNCATED)" : "");
	if (m->resyncs)
		fprintf(f, "events lost: the engine took the kernel's PELT values again %" PRIu64
			" times\n", m->resyncs);
	fprintf(f, "CPU time from %s\n\n", m->has_runtime_events ? "sched_stat_runtime" :
		"sched_switch intervals");
}

/* The CPU table, then the work conservation line under it. */
static void text_cpus(FILE *f, const struct imb_window *w, uint64_t span)
{
	uint64_t tot[3];
	bool have[3];

	fprintf(f, "%-4s %6s %9s %8s %4s %6s %-12s %9s %12s\n", "CPU", "busy%", "util_avg",
		"runnable", "nr", "load", "group_type", "overload%", "idle_wait_ms");
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];

		fprintf(f, "%-4d %6.1f %9" PRIu64 " %8" PRIu64 " %4u %6" PRIu64 " %-12s %9.1f %12.1f\n",
			c->cpu, 100.0 * ratio(c->busy_ns, span), c->util_avg, c->runnable_avg,
			c->nr_running, c->load_avg, imb_group_type_name(c->group_type),
			100.0 * c->overloaded_fraction, (double)c->idle_with_waiters_ns / 1e6);
	}
	wc_totals(w, tot, have);
	fprintf(f, "Work conservation (CPU idle while a CPU of the same level had a task "
		"waiting; affinity not known):");
	for (int l = 0; l < 3; l++)
		if (have[l])
			fprintf(f, " %s %.1f ms (%.2f%%)", wc_level[l], (double)tot[l] / 1e6,
				100.0 * ratio(tot[l], span * w->nr_cpus));
	fputc('\n', f);
}

/* The @top tasks by CPU time; nothing when out of memory. */
static void text_tasks(FILE *f, const struct imb_window *w, unsigned int top)
{
	const struct imb_task_sample **order;

	order = malloc((w->nr_tasks ? w->nr_tasks : 1) * sizeof(*order));
	if (!order)
		return;
	for (size_t i = 0; i < w->nr_tasks; i++)
		order[i] = &w->tasks[i];
	qsort(order, w->nr_tasks, sizeof(*order), task_cmp_run);
	fprintf(f, "\n%-8s %-8s %-16s %10s %10s %6s %7s %7s %5s\n", "PID", "TGID", "COMM",
		"run_ms", "wait_ms", "migr", "share%", "fair%", "util");
	for (size_t i = 0; i < w->nr_tasks && i < top; i++) {
		const struct imb_task_sample *t = order[i];

		fprintf(f, "%-8d %-8d %-16s %10.1f %10.1f %6u %7.1f %7.1f %5" PRIu64 "\n",
			t->pid, t->tgid, t->comm, (double)t->run_ns / 1e6,
			(double)t->wait_ns / 1e6, t->migrations, 100.0 * t->share,
			100.0 * t->fair_share, t->util_avg);
	}
	if (w->nr_tasks > top)
		fprintf(f, "(%zu more tasks; --top N or --json for all)\n", w->nr_tasks - top);
	free(order);
}

/* The jobs of two or more tasks (all of them when @verbose). */
static void text_jobs(FILE *f, const struct imb_window *w, bool verbose)
{
	fprintf(f, "\n%-24s %-8s %5s %11s %9s %9s %6s\n", "JOB", "KIND", "tasks", "unfairness%",
		"mean_dev%", "max_dev%", "jain");
	for (size_t i = 0; i < w->nr_jobs; i++) {
		const struct imb_job_sample *j = &w->jobs[i];

		if (j->tasks < 2 && !verbose)
			continue;
		fprintf(f, "%-24s %-8s %5u %11.1f %9.1f %9.1f %6.3f%s%.*s\n", j->key, j->kind,
			j->tasks, 100.0 * j->unfairness, 100.0 * j->mean_deviation,
			100.0 * j->max_deviation, j->jain_index, j->path[0] ? "  " : "",
			(int)sizeof(j->path), j->path);
	}
}

/* With the kernel's PELT values: the engine's error per entity kind and signal, and per group. */
static void text_pelt_errors(FILE *f, const struct report_run *r)
{
	const struct model *m = r->model;
	const struct {
		const char *label;
		const struct model_err_hist *h;
	} rows[] = {
		{ "cpu", m->err_cpu },
		{ "task", m->err_task },
		{ "group run queue", m->err_group },
		{ "group entity", m->err_group_se },
	};

	fprintf(f, "\nPELT engine vs kernel (abs error, 1024 = full CPU):\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (i >= 2 && !rows[i].h[MODEL_SIG_UTIL].samples)
			continue;	/* no task groups in the recording */
		for (int s = 0; s < MODEL_SIG__COUNT; s++)
			fprintf(f, "  %-15s %-13s median %" PRIu64 "  p95 %" PRIu64
				"  max %" PRIu64 "  (%" PRIu64 " samples)\n", rows[i].label,
				sig_names[s], model_err_quantile(&rows[i].h[s], 0.5),
				model_err_quantile(&rows[i].h[s], 0.95), rows[i].h[s].max_abs,
				rows[i].h[s].samples);
	}
	if (report_pelt_text(f, r))
		fprintf(f, "(out of memory listing the task groups)\n");
}

static void text_pelt_expect(FILE *f, const struct model *m)
{
	struct pelt_expect e;

	pelt_expect_get(m, &e);
	fprintf(f, "\nExpected PELT error (%s, %s): CPU util_avg p95 %" PRIu64
		", runnable_avg p95 %" PRIu64 " of 1024\n", e.load,
		e.measured ? "measured against the kernel in this recording"
			   : "from the reference measurements",
		e.util_p95, e.runnable_p95);
}

/* The findings, with their evidence when @verbose. */
static void text_findings(FILE *f, const struct imb_window *w, bool verbose)
{
	fprintf(f, "\nFindings: %zu\n", w->nr_findings);
	for (size_t i = 0; i < w->nr_findings; i++) {
		const struct imb_finding *x = &w->findings[i];

		fprintf(f, "  [%s] %s %s: %s\n", imb_severity_name(x->severity), x->kind,
			x->subject, x->summary);
		if (verbose && x->evidence[0])
			fprintf(f, "      evidence: %s\n", x->evidence);
	}
}

void report_text(FILE *f, const struct report_run *r, unsigned int top, bool verbose)
{
	const struct imb_window *w = r->summary;
	uint64_t span = w->t_end_ns - w->t_start_ns;

	text_header(f, r, span);
	text_cpus(f, w, span);
	text_tasks(f, w, top);
	text_jobs(f, w, verbose);
	if (r->model->has_kernel_pelt)
		text_pelt_errors(f, r);
	text_pelt_expect(f, r->model);
	text_findings(f, w, verbose);
	fputc('\n', f);
}

void report_dump_header(FILE *f)
{
	fprintf(f, "%s\n", event_text_header());
}

int report_dump_event(FILE *f, const struct imb_event *ev)
{
	char line[1024];
	int n = event_text_format(ev, line, sizeof(line));

	if (n < 0)
		return n;
	if (fputs(line, f) == EOF || fputc('\n', f) == EOF)
		return -EIO;
	return 0;
}

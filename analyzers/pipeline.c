// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pipeline.c - feed the model, close windows, run the analyzers, and
 * build the whole-run summary (pipeline.h).
 *
 * Fair share is computed here because every report needs it: per window,
 * the CPU time of the window (CPUs x length) is shared among the tasks that
 * wanted it by fairness_fill() (fairness.h), so a task that sleeps is not
 * owed time it did not ask for and a nice -5 task is owed about three times
 * a nice 0 one.  A task's whole-run fair time is the sum over windows.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers_table.h"
#include "fairness.h"
#include "pipeline.h"

struct pipeline {
	struct analyzer_config cfg;
	struct model *m;
	pipeline_window_fn fn;
	void *ctx;
	pipeline_cgroup_label_fn label_fn;	/* names cgroup jobs, NULL none */
	void *label_ctx;
	void *state[ANALYZERS_MAX];
	struct finding_list run_findings;	/* every finding, latest version; live: the open ones */
	bool started;
	uint64_t win_start_ns;
	uint64_t windows;
	/* scratch for fairness, grown as needed */
	uint64_t *demand, *weight, *fair;
	size_t scratch_cap;
};

void pipeline_config_defaults(struct analyzer_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->window_ns = 1000000000ull;
	cfg->unfairness_threshold = 0.10;
	cfg->unfairness_min_ns = 5000000000ull;
	cfg->imbalance_pct_smt = 110;
	cfg->imbalance_pct = 117;
	cfg->imbalance_pct_pkg = 117;
	cfg->imbalance_pct_numa = 117;
	cfg->overload_min_fraction = 0.25;	/* 3 on 2: each CPU ~half the time */
	cfg->disagreement_min_fraction = 0.25;
	cfg->simultaneous_ns = 100000ull;
	cfg->drift_min_windows = 2;
	cfg->concentration_even_pct = 200;
	cfg->numa_min_count = 2;
	cfg->numa_undo_ns = 1000000000ull;
	cfg->numa_link_ns = 100000000ull;
	cfg->competing_min = 0.90;
	cfg->span_runnable_min = 0.95;
	cfg->span_life_min = 0.90;
	cfg->drift_threshold = 0.10;
	cfg->migration_min = 10;
	cfg->concentration_threshold = 0.5;
	cfg->pingpong_ns = 100000000ull;
	cfg->overload_min_ns = 2000000000ull;
	cfg->pingpong_min = 3;
	cfg->group_by = ANALYZER_GROUP_PROCESS;
	cfg->nr_nodes = 1;
}

struct imb_finding *finding_list_add(struct finding_list *l, const struct imb_finding *f)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct imb_finding *n = realloc(l->items, cap * sizeof(*n));

		if (!n)
			return NULL;
		l->items = n;
		l->cap = cap;
	}
	l->items[l->nr] = *f;
	return &l->items[l->nr++];
}

struct pipeline *pipeline_new(const struct analyzer_config *cfg, const struct model_opts *mopts,
			      pipeline_window_fn fn, void *ctx)
{
	struct pipeline *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (cfg)
		p->cfg = *cfg;
	else
		pipeline_config_defaults(&p->cfg);
	if (!p->cfg.window_ns)
		p->cfg.window_ns = 1000000000ull;
	p->fn = fn;
	p->ctx = ctx;
	p->m = model_new(mopts);
	if (!p->m)
		goto fail;
	for (size_t i = 0; i < analyzers_count; i++) {
		p->state[i] = analyzers[i]->create(&p->cfg);
		if (!p->state[i])
			goto fail;
	}
	return p;
fail:
	pipeline_free(p);
	errno = ENOMEM;
	return NULL;
}

void pipeline_free(struct pipeline *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < analyzers_count; i++)
		if (p->state[i])
			analyzers[i]->destroy(p->state[i]);
	model_free(p->m);
	free(p->run_findings.items);
	free(p->demand);
	free(p->weight);
	free(p->fair);
	free(p);
}

void pipeline_set_cgroup_label(struct pipeline *p, pipeline_cgroup_label_fn fn, void *ctx)
{
	p->label_fn = fn;
	p->label_ctx = ctx;
}

void pipeline_reconfigure(struct pipeline *p, const struct analyzer_config *cfg)
{
	struct analyzer_config c = *cfg;

	c.window_ns = p->cfg.window_ns;
	c.group_by = p->cfg.group_by;
	c.live = p->cfg.live;
	c.nr_nodes = p->cfg.nr_nodes;
	memcpy(c.cpu_node, p->cfg.cpu_node, sizeof(c.cpu_node));
	memcpy(c.llc_of, p->cfg.llc_of, sizeof(c.llc_of));
	memcpy(c.core_of, p->cfg.core_of, sizeof(c.core_of));
	p->cfg = c;
	for (size_t i = 0; i < analyzers_count; i++)
		if (analyzers[i]->configure)
			analyzers[i]->configure(p->state[i], &p->cfg);
}

int pipeline_tgid_hint(struct pipeline *p, int32_t pid, int32_t tgid)
{
	return model_tgid_hint(p->m, pid, tgid);
}

const struct model *pipeline_model(const struct pipeline *p)
{
	return p->m;
}

const struct analyzer_config *pipeline_config(const struct pipeline *p)
{
	return &p->cfg;
}

static int scratch_grow(struct pipeline *p, size_t n)
{
	if (n <= p->scratch_cap)
		return 0;
	n = n * 2;
	free(p->demand);
	free(p->weight);
	free(p->fair);
	p->demand = malloc(n * sizeof(uint64_t));
	p->weight = malloc(n * sizeof(uint64_t));
	p->fair = malloc(n * sizeof(uint64_t));
	if (!p->demand || !p->weight || !p->fair) {
		p->scratch_cap = 0;
		return -ENOMEM;
	}
	p->scratch_cap = n;
	return 0;
}

/* Window fair share of every task that wanted CPU in it. */
/* noinline: its samples are the fairness work bench/detection.sh charges to the analyzers */
static __attribute__((noinline)) int window_fairness(struct pipeline *p, uint64_t len_ns)
{
	struct model *m = p->m;
	size_t n = 0;

	if (scratch_grow(p, m->nr_tasks))
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		t->win_fair_ns = 0;
		if (!t->win_runnable_ns)
			continue;
		p->demand[n] = t->win_runnable_ns;
		p->weight[n] = pelt_nice_to_weight(t->nice);
		n++;
	}
	fairness_fill(p->demand, p->weight, p->fair, n, (uint64_t)m->nr_cpus * len_ns);
	n = 0;
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		if (!t->win_runnable_ns)
			continue;
		t->win_fair_ns = p->fair[n++];
		t->fair_ns += t->win_fair_ns;
	}
	return 0;
}

void analyzer_job_key(const struct analyzer_config *cfg, const struct model *m,
		      const struct model_task *t, char *key, size_t len, char *kind, size_t klen)
{
	if (cfg->group_by == ANALYZER_GROUP_COMM) {
		snprintf(key, len, "comm:%s", t->comm);
		snprintf(kind, klen, "comm");
	} else if (cfg->group_by == ANALYZER_GROUP_CGROUP && t->cgroup) {
		snprintf(key, len, "cgroup:%llu", (unsigned long long)t->cgroup);
		snprintf(kind, klen, "cgroup");
	} else {
		snprintf(key, len, "process:%d", model_task_job_pid(m, t));
		snprintf(kind, klen, "process");
	}
}

/* FNV-1a of a job key, for jobs_build()'s index */
static size_t key_hash(const char *k)
{
	uint64_t h = 1469598103934665603ull;

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 1099511628211ull;
	return (size_t)(h ^ (h >> 32));
}

/*
 * Jobs from task rows: unfairness over the tasks that were runnable the
 * whole span (@full[i]), deviations over tasks with a fair share.  The
 * keys are found through an open-addressing index (a host running
 * thousands of one-task processes has as many jobs: a linear search per
 * task was quadratic).
 */
static int jobs_build(const struct pipeline *p, const struct model *m,
		      const struct model_task **src, const bool *full, struct imb_window *w)
{
	const struct analyzer_config *cfg = &p->cfg;
	size_t cap = w->nr_tasks ? w->nr_tasks : 1;
	struct imb_job_sample *jobs = calloc(cap, sizeof(*jobs));
	double *sum_x = calloc(cap, sizeof(double)), *sum_x2 = calloc(cap, sizeof(double));
	uint64_t *minr = calloc(cap, sizeof(uint64_t)), *maxr = calloc(cap, sizeof(uint64_t));
	uint32_t *nfull = calloc(cap, sizeof(uint32_t)), *ndev = calloc(cap, sizeof(uint32_t));
	size_t nj = 0, icap = 16;
	uint32_t *idx;		/* job number + 1, 0 empty; at most half full */
	int rc = 0;

	while (icap < 2 * cap)
		icap *= 2;
	idx = calloc(icap, sizeof(*idx));
	if (!jobs || !sum_x || !sum_x2 || !minr || !maxr || !nfull || !ndev || !idx) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < w->nr_tasks; i++) {
		const struct imb_task_sample *ts = &w->tasks[i];
		char key[64], kind[12];
		size_t j, h;

		analyzer_job_key(cfg, m, src[i], key, sizeof(key), kind, sizeof(kind));
		for (h = key_hash(key) & (icap - 1); idx[h]; h = (h + 1) & (icap - 1))
			if (!strcmp(jobs[idx[h] - 1].key, key))
				break;
		j = idx[h] ? idx[h] - 1 : nj;
		if (j == nj) {
			idx[h] = (uint32_t)(nj + 1);
			memcpy(jobs[j].key, key, sizeof(key));
			memcpy(jobs[j].kind, kind, sizeof(kind));
			/* once per job and window: the callback's cache, not an event's cost */
			if (p->label_fn && cfg->group_by == ANALYZER_GROUP_CGROUP && src[i]->cgroup &&
			    p->label_fn(src[i]->cgroup, jobs[j].path, sizeof(jobs[j].path),
					p->label_ctx))
				jobs[j].path[0] = '\0';
			minr[j] = UINT64_MAX;
			nj++;
		}
		jobs[j].tasks++;
		if (full[i]) {
			nfull[j]++;
			if (ts->run_ns < minr[j])
				minr[j] = ts->run_ns;
			if (ts->run_ns > maxr[j])
				maxr[j] = ts->run_ns;
		}
		if (ts->fair_share > 0) {
			double dev = fabs(ts->share - ts->fair_share) / ts->fair_share;
			double x = ts->share / ts->fair_share;

			ndev[j]++;
			jobs[j].mean_deviation += dev;
			if (dev > jobs[j].max_deviation)
				jobs[j].max_deviation = dev;
			sum_x[j] += x;
			sum_x2[j] += x * x;
		}
	}
	for (size_t j = 0; j < nj; j++) {
		if (nfull[j] >= 2 && maxr[j] > 0)
			jobs[j].unfairness = 1.0 - (double)minr[j] / (double)maxr[j];
		if (ndev[j]) {
			jobs[j].mean_deviation /= ndev[j];
			jobs[j].jain_index = sum_x2[j] > 0 ?
				sum_x[j] * sum_x[j] / ((double)ndev[j] * sum_x2[j]) : 1.0;
		} else {
			jobs[j].jain_index = 1.0;
		}
	}
	w->jobs = jobs;
	w->nr_jobs = nj;
	jobs = NULL;
out:
	free(idx);
	free(jobs);
	free(sum_x);
	free(sum_x2);
	free(minr);
	free(maxr);
	free(nfull);
	free(ndev);
	return rc;
}

static void cpu_row(const struct model *m, const struct model_cpu *c, struct imb_cpu_sample *s,
		    bool whole_run)
{
	memset(s, 0, sizeof(*s));
	s->cpu = c->cpu;
	s->util_avg = c->cfs.avg.util_avg;
	s->runnable_avg = c->cfs.avg.runnable_avg;
	s->load_avg = c->cfs.avg.load_avg;
	s->nr_running = c->nr_running;
	s->capacity = c->capacity;
	s->busy_ns = whole_run ? c->busy_ns : c->win_busy_ns;
	s->idle_with_waiters_llc_ns = s->idle_with_waiters_node_ns = IMB_UNKNOWN;	/* overload fills */
	s->vruntime = c->kvruntime ? c->kvruntime : c->vclock;
	if (c->kcfs_ns) {
		s->kernel_util_avg = c->kcfs.util_avg;
		s->kernel_runnable_avg = c->kcfs.runnable_avg;
		s->kernel_load_avg = c->kcfs.load_avg;
	} else {
		s->kernel_util_avg = s->kernel_runnable_avg = s->kernel_load_avg = IMB_UNKNOWN;
	}
	(void)m;
}

static void task_row(const struct model_task *t, struct imb_task_sample *s, bool whole_run,
		     uint64_t span_ns)
{
	memset(s, 0, sizeof(*s));
	s->pid = t->pid;
	s->tgid = t->tgid ? t->tgid : t->pid;
	memcpy(s->comm, t->comm, IMB_COMM_LEN);
	s->cpu = t->cpu;
	s->nice = t->nice;
	if (whole_run) {
		s->run_ns = model_task_run_ns(t);
		s->wait_ns = model_task_wait_ns(t);
		s->migrations = t->migrations;
		s->fair_share = span_ns ? (double)t->fair_ns / (double)span_ns : 0;
	} else {
		uint64_t run = t->has_runtime ? t->win_runtime_ns : t->win_switch_run_ns;

		s->run_ns = run;
		s->wait_ns = t->win_runnable_ns > run ? t->win_runnable_ns - run : 0;
		s->migrations = t->win_migrations;
		s->fair_share = span_ns ? (double)t->win_fair_ns / (double)span_ns : 0;
	}
	s->share = span_ns ? (double)s->run_ns / (double)span_ns : 0;
	s->util_avg = t->avg.util_avg;
	s->runnable_avg = t->avg.runnable_avg;
	s->load_avg = t->avg.load_avg;
}

/*
 * Merge a window's findings into the run's.  A live pipeline runs for
 * months: it keeps only the findings still open, whose final state the
 * run's end must give (a closed one went out, closed, with the window that
 * closed it); the others would grow the list by a finding per episode
 * forever, and this search with it.  Offline, the summary lists them all.
 */
static void findings_merge(struct pipeline *p, const struct finding_list *l)
{
	if (p->cfg.live) {
		size_t n = 0;

		for (size_t j = 0; j < p->run_findings.nr; j++)
			if (p->run_findings.items[j].open)
				p->run_findings.items[n++] = p->run_findings.items[j];
		p->run_findings.nr = n;
	}
	for (size_t i = 0; i < l->nr; i++) {
		const struct imb_finding *f = &l->items[i];
		size_t j;

		for (j = 0; j < p->run_findings.nr; j++)
			if (p->run_findings.items[j].id == f->id)
				break;
		if (j < p->run_findings.nr)
			p->run_findings.items[j] = *f;
		else
			finding_list_add(&p->run_findings, f);
	}
}

/*
 * "Runnable for the whole span" of the run: runnable at least 95 % of its
 * own observed life, and a life at least 90 % of the longest such life in
 * the run, so a job's short-lived helpers do not count.
 */
static void full_mark_run(const struct pipeline *p, const struct model_task **src, bool *full,
			  size_t n)
{
	uint64_t maxlife = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t life = src[i]->last_ns - src[i]->first_ns;

		full[i] = life && (double)src[i]->runnable_ns >= (double)life * p->cfg.span_runnable_min;
		if (full[i] && life > maxlife)
			maxlife = life;
	}
	for (size_t i = 0; i < n; i++)
		if (full[i] && (double)(src[i]->last_ns - src[i]->first_ns) <
		    (double)maxlife * p->cfg.span_life_min)
			full[i] = false;
}

/* Does task @t get a row: it was seen in the window, or ran or waited in the run? */
static bool task_has_row(const struct model_task *t, bool whole_run)
{
	return whole_run ? t->runnable_ns || model_task_run_ns(t) : t->win_seen;
}

/*
 * The rows of the window [@start, @end), or with @whole_run of the whole
 * run: span and event counts, a row per CPU and per task that has one, and
 * the job rows over them; no findings yet.  Window close and the run's
 * summary both build theirs here, then let the analyzers add theirs.
 * Returns the window to free with imb_window_free(), or NULL on ENOMEM.
 */
static struct imb_window *rows_build(const struct pipeline *p, uint64_t start, uint64_t end,
				     bool whole_run)
{
	const struct model *m = p->m;
	uint64_t len = end - start;
	struct imb_window *w = calloc(1, sizeof(*w));
	const struct model_task **src = NULL;
	bool *full = NULL;
	size_t n = 0;
	int rc = -ENOMEM;

	if (!w)
		return NULL;
	w->t_start_ns = start;
	w->t_end_ns = end;
	w->events = whole_run ? m->events : m->win_events;
	w->lost_events = whole_run ? m->lost_events : m->win_lost;
	w->nr_cpus = (size_t)m->nr_cpus;
	for (size_t i = 0; i < m->nr_tasks; i++)
		n += task_has_row(&m->tasks[i], whole_run);
	w->cpus = calloc(w->nr_cpus ? w->nr_cpus : 1, sizeof(*w->cpus));
	w->tasks = calloc(n ? n : 1, sizeof(*w->tasks));
	src = calloc(n ? n : 1, sizeof(*src));
	full = calloc(n ? n : 1, sizeof(*full));
	if (!w->cpus || !w->tasks || !src || !full)
		goto out;
	for (int i = 0; i < m->nr_cpus; i++)
		cpu_row(m, &m->cpus[i], &w->cpus[i], whole_run);
	for (size_t i = 0; i < m->nr_tasks; i++) {
		const struct model_task *t = &m->tasks[i];

		if (!task_has_row(t, whole_run))
			continue;
		task_row(t, &w->tasks[w->nr_tasks], whole_run, len);
		src[w->nr_tasks] = t;
		/* in a window: runnable (nearly) all of it */
		full[w->nr_tasks] = !whole_run && len && (double)t->win_runnable_ns >=
			(double)len * p->cfg.span_runnable_min;
		w->nr_tasks++;
	}
	if (whole_run)
		full_mark_run(p, src, full, w->nr_tasks);
	rc = jobs_build(p, m, src, full, w);
out:
	free(src);
	free(full);
	if (rc) {
		imb_window_free(w);
		return NULL;
	}
	return w;
}

/*
 * Close the window [win_start, end).  The PELT averages brought to its end
 * for its figures are put back after (model_advance_undo()) unless @last:
 * the run's summary reads them at the end of the stream.
 */
static int window_close(struct pipeline *p, uint64_t end_ns, bool last)
{
	struct model *m = p->m;
	uint64_t len = end_ns - p->win_start_ns;
	struct imb_window *w;
	struct finding_list out = { .next_id = 0 };

	if (last)
		model_advance(m, end_ns);
	else
		model_advance_window(m, end_ns);
	if (window_fairness(p, len ? len : 1))
		return -ENOMEM;
	w = rows_build(p, p->win_start_ns, end_ns, false);
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < analyzers_count; i++)
		analyzers[i]->window(p->state[i], m, w, &out);
	if (!last)
		model_advance_undo(m);
	findings_merge(p, &out);
	/*
	 * The window keeps its findings as long as it lives (the daemon's
	 * history holds 300): trim the list's growth room, 16 findings of
	 * 1.4 KiB where most windows have one or none.
	 */
	if (!out.nr) {
		free(out.items);
		out.items = NULL;
	} else if (out.nr < out.cap) {
		struct imb_finding *fit = realloc(out.items, out.nr * sizeof(*fit));

		if (fit)
			out.items = fit;
	}
	w->findings = out.items;
	w->nr_findings = out.nr;
	p->windows++;
	model_window_reset(m, end_ns);
	if (p->cfg.live && end_ns > len)
		model_evict_dead(m, end_ns - len);
	p->win_start_ns = end_ns;
	if (p->fn)
		p->fn(w, p->ctx);
	else
		imb_window_free(w);
	return 0;
}

int pipeline_event(struct pipeline *p, const struct imb_event *ev)
{
	int rc;

	if (!p->started) {
		p->started = true;
		p->win_start_ns = ev->ts_ns;
	}
	while (ev->ts_ns >= p->win_start_ns + p->cfg.window_ns) {
		uint64_t end = p->win_start_ns + p->cfg.window_ns;

		/* a long silence: skip empty windows, close one up to the event */
		if (ev->ts_ns - p->win_start_ns > 64 * p->cfg.window_ns)
			end = ev->ts_ns - (ev->ts_ns - p->win_start_ns) % p->cfg.window_ns;
		rc = window_close(p, end, false);
		if (rc)
			return rc;
	}
	rc = model_event(p->m, ev);
	if (rc)
		return rc;
	for (size_t i = 0; i < analyzers_count; i++)
		if (analyzers[i]->event)
			analyzers[i]->event(p->state[i], p->m, ev);
	return 0;
}

int pipeline_flush(struct pipeline *p, uint64_t now_ns)
{
	int rc;

	if (!p->started) {
		p->started = true;
		p->win_start_ns = now_ns;
		return 0;
	}
	while (now_ns >= p->win_start_ns + p->cfg.window_ns) {
		rc = window_close(p, p->win_start_ns + p->cfg.window_ns, false);
		if (rc)
			return rc;
	}
	return 0;
}

struct imb_window *pipeline_finish(struct pipeline *p)
{
	struct model *m = p->m;
	struct imb_window *w;
	struct finding_list out = { 0 };

	if (p->started && m->now_ns > p->win_start_ns) {
		if (window_close(p, m->now_ns, true))
			return NULL;
	} else {
		model_advance(m, m->now_ns);	/* the summary's averages at the end */
	}
	w = rows_build(p, m->t0_ns, m->now_ns, true);
	if (!w)
		goto fail;
	for (size_t i = 0; i < analyzers_count; i++)
		if (analyzers[i]->finish)
			analyzers[i]->finish(p->state[i], m, w, &out);
	findings_merge(p, &out);
	free(out.items);
	w->findings = malloc((p->run_findings.nr ? p->run_findings.nr : 1) * sizeof(*w->findings));
	if (!w->findings)
		goto fail;
	if (p->run_findings.nr)	/* items is NULL when no finding was ever made */
		memcpy(w->findings, p->run_findings.items,
		       p->run_findings.nr * sizeof(*w->findings));
	w->nr_findings = p->run_findings.nr;
	return w;
fail:
	imb_window_free(w);
	errno = ENOMEM;
	return NULL;
}

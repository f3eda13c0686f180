// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * migration.c - why each task moved, and whether the balancer keeps
 * picking the same one.
 *
 * Every sched_migrate_task gets a cause from what surrounds it in the
 * stream (doc/pelt.md §8); all of them are inferred from event order:
 *  - numa: a sched_move_numa/sched_swap_numa named the task within the
 *    last numa_link_ns (100 ms);
 *  - wakeup: between sched_waking and sched_wakeup of the task, or the task
 *    was asleep (the model still has it blocked);
 *  - active: the task was running, or the CPU the event came from runs the
 *    stopper `migration/N` (the active-balance push);
 *  - lb_pull: the task was queued and the event came from the destination
 *    CPU (periodic, idle or newly-idle balance pulls);
 *  - affinity: anything else (a queued task moved from another context:
 *    sched_setaffinity, cpuset changes).
 * For load-balancer moves (lb_pull + active) per task: concentration (the
 * most-moved task's share of all of them against an even spread over the
 * tasks competing for CPU), its CPU-time deficit against its fair share
 * (the pipeline's), the correlation of moves with deficits across tasks,
 * and ping-pong: a balancer, NUMA or affinity move B->A within pingpong_ns
 * of the same task's A->B.  Findings `same_task_migrated` (share at least
 * concentration_threshold of at least migration_min moves, and at least
 * concentration_even_pct (200 %) of an even spread) and `migration_pingpong` (at least pingpong_min).
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "analyzer.h"
#include "finding_util.h"

enum mig_cause { MIG_WAKEUP, MIG_LB_PULL, MIG_ACTIVE, MIG_NUMA, MIG_AFFINITY, MIG__COUNT };

struct mig_task {
	int32_t pid;
	bool waking, running;
	uint64_t numa_ts;
	uint32_t cause[MIG__COUNT];
	uint32_t lb;			/* lb_pull + active */
	uint64_t last_ts;		/* last non-wakeup move */
	int last_orig, last_dest;
	uint32_t pingpong;
	uint64_t pp_first_ns, pp_last_ns;
	int same_flag, pp_flag;		/* index+1 into flags, 0 none */
	uint32_t pp_reported;
};

struct mig_flag {
	struct imb_finding f;
	bool open;
};

struct mig_state {
	struct analyzer_config cfg;
	struct mig_task *tasks;
	size_t nr, cap;
	int32_t *hash;			/* index+1, open addressing on pid */
	size_t hash_cap;
	uint64_t cause[MIG__COUNT];
	uint64_t lb_total;
	uint64_t first_ns;
	struct mig_flag *flags;
	size_t nr_flags, cap_flags;
	uint64_t next_id;
};

static uint32_t mig_hash(int32_t pid)
{
	return (uint32_t)pid * 2654435761u;
}

static void *mig_create(const struct analyzer_config *cfg)
{
	struct mig_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->hash_cap = 256;
	s->hash = calloc(s->hash_cap, sizeof(*s->hash));
	if (!s->hash) {
		free(s);
		return NULL;
	}
	return s;
}

static void mig_configure(void *state, const struct analyzer_config *cfg)
{
	((struct mig_state *)state)->cfg = *cfg;
}

static void mig_destroy(void *state)
{
	struct mig_state *s = state;

	if (!s)
		return;
	free(s->tasks);
	free(s->hash);
	free(s->flags);
	free(s);
}

static int mig_rehash(struct mig_state *s, size_t cap)
{
	int32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -1;
	for (size_t i = 0; i < s->nr; i++) {
		size_t j = mig_hash(s->tasks[i].pid) & (cap - 1);

		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (int32_t)(i + 1);
	}
	free(s->hash);
	s->hash = h;
	s->hash_cap = cap;
	return 0;
}

static struct mig_task *mig_find(const struct mig_state *s, int32_t pid)
{
	size_t j = mig_hash(pid) & (s->hash_cap - 1);

	while (s->hash[j]) {
		struct mig_task *t = &s->tasks[s->hash[j] - 1];

		if (t->pid == pid)
			return t;
		j = (j + 1) & (s->hash_cap - 1);
	}
	return NULL;
}

static struct mig_task *mig_get(struct mig_state *s, int32_t pid)
{
	struct mig_task *t = mig_find(s, pid);
	size_t j;

	if (t || pid <= 0)
		return t;
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct mig_task *n = realloc(s->tasks, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->tasks = n;
		s->cap = cap;
	}
	if ((s->nr + 1) * 2 > s->hash_cap && mig_rehash(s, s->hash_cap * 2))
		return NULL;
	t = &s->tasks[s->nr];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->last_orig = t->last_dest = -1;
	j = mig_hash(pid) & (s->hash_cap - 1);
	while (s->hash[j])
		j = (j + 1) & (s->hash_cap - 1);
	s->hash[j] = (int32_t)(++s->nr);
	return t;
}

static bool cpu_runs_stopper(const struct model *m, int cpu)
{
	const struct model_task *t;

	if (cpu < 0 || cpu >= m->nr_cpus || m->cpus[cpu].curr <= 0)
		return false;
	t = model_task_find(m, m->cpus[cpu].curr);
	return t && !strncmp(t->comm, "migration/", 10);
}

static void mig_migrate(struct mig_state *s, const struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_migrate *mg = &ev->migrate;
	struct mig_task *t = mig_get(s, mg->pid);
	const struct model_task *mt = model_task_find(m, mg->pid);
	enum mig_cause c;

	if (!t)
		return;
	if (t->numa_ts && ev->ts_ns - t->numa_ts <= s->cfg.numa_link_ns)
		c = MIG_NUMA;
	else if (t->waking || (mt && mt->state == MODEL_TASK_SLEEPING))
		c = MIG_WAKEUP;
	else if (t->running || cpu_runs_stopper(m, ev->cpu))
		c = MIG_ACTIVE;
	else if (ev->cpu == mg->dest_cpu)
		c = MIG_LB_PULL;
	else
		c = MIG_AFFINITY;
	t->numa_ts = 0;
	t->running = false;
	t->cause[c]++;
	s->cause[c]++;
	if (c == MIG_WAKEUP)
		return;
	if (c == MIG_LB_PULL || c == MIG_ACTIVE) {
		t->lb++;
		s->lb_total++;
	}
	if (t->last_ts && ev->ts_ns - t->last_ts <= s->cfg.pingpong_ns &&
	    mg->dest_cpu == t->last_orig && mg->orig_cpu == t->last_dest) {
		if (!t->pingpong)
			t->pp_first_ns = t->last_ts;
		t->pingpong++;
		t->pp_last_ns = ev->ts_ns;
	}
	t->last_ts = ev->ts_ns;
	t->last_orig = mg->orig_cpu;
	t->last_dest = mg->dest_cpu;
}

static void mig_event(void *state, const struct model *m, const struct imb_event *ev)
{
	struct mig_state *s = state;
	struct mig_task *t;

	if (!s->first_ns)
		s->first_ns = ev->ts_ns;
	switch (ev->kind) {
	case IMB_EV_WAKING:
		t = mig_get(s, ev->wakeup.pid);
		if (t)
			t->waking = true;
		break;
	case IMB_EV_WAKEUP:
	case IMB_EV_WAKEUP_NEW:
		t = mig_find(s, ev->wakeup.pid);
		if (t)
			t->waking = false;
		break;
	case IMB_EV_SWITCH:
		t = mig_find(s, ev->sw.prev_pid);
		if (t)
			t->running = false;
		t = ev->sw.next_pid > 0 ? mig_get(s, ev->sw.next_pid) : NULL;
		if (t)
			t->running = true;
		break;
	case IMB_EV_MIGRATE:
		mig_migrate(s, m, ev);
		break;
	case IMB_EV_NUMA_MOVE:
	case IMB_EV_NUMA_SWAP:
		t = mig_get(s, ev->numa.src_pid);
		if (t)
			t->numa_ts = ev->ts_ns;
		if (ev->kind == IMB_EV_NUMA_SWAP && ev->numa.dst_pid > 0) {
			t = mig_get(s, ev->numa.dst_pid);
			if (t)
				t->numa_ts = ev->ts_ns;
		}
		break;
	default:
		break;
	}
}

static struct mig_flag *mig_flag_get(struct mig_state *s, int *slot)
{
	if (*slot)
		return &s->flags[*slot - 1];
	if (s->nr_flags == s->cap_flags) {
		size_t cap = s->cap_flags ? 2 * s->cap_flags : 8;
		struct mig_flag *n = realloc(s->flags, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->flags = n;
		s->cap_flags = cap;
	}
	memset(&s->flags[s->nr_flags], 0, sizeof(s->flags[0]));
	s->flags[s->nr_flags].f.id = finding_id_make(FINDING_SRC_MIGRATION, ++s->next_id);
	*slot = (int)++s->nr_flags;
	return &s->flags[s->nr_flags - 1];
}

/* CPU time a task got against its fair share so far. */
static void mig_deficit(const struct model *m, int32_t pid, uint64_t *fair, uint64_t *run,
			double *rel)
{
	const struct model_task *t = model_task_find(m, pid);

	*fair = t ? t->fair_ns : 0;
	*run = t ? model_task_run_ns(t) : 0;
	*rel = *fair ? ((double)*fair - (double)*run) / (double)*fair : 0;
}

static void mig_causes(const struct mig_state *s, const struct mig_task *t, struct evb *e)
{
	const uint32_t *c = t->cause;

	evb_add(e, "\"causes\":{\"wakeup\":%u,\"lb_pull\":%u,\"active\":%u,\"numa\":%u,"
		"\"affinity\":%u}", c[0], c[1], c[2], c[3], c[4]);
	evb_add(e, "\"all_causes\":{\"wakeup\":%llu,\"lb_pull\":%llu,\"active\":%llu,"
		"\"numa\":%llu,\"affinity\":%llu}", (unsigned long long)s->cause[0],
		(unsigned long long)s->cause[1], (unsigned long long)s->cause[2],
		(unsigned long long)s->cause[3], (unsigned long long)s->cause[4]);
	evb_add(e, "\"numa_link_ns\":%llu", (unsigned long long)s->cfg.numa_link_ns);
	evb_add(e, "\"inferred\":\"all causes, from event order: numa after move/swap_numa, "
		"wakeup between waking and wakeup or asleep, active if running or from "
		"migration/N, lb_pull on the destination CPU, else affinity\"");
}

/*
 * Forget tasks the model no longer has (exited and evicted) unless a
 * finding names them, so a daemon that runs for months keeps a bounded
 * table.
 */
static void mig_compact(struct mig_state *s, const struct model *m)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr; i++) {
		const struct mig_task *t = &s->tasks[i];

		if (!t->same_flag && !t->pp_flag && !model_task_find(m, t->pid))
			continue;
		s->tasks[n++] = *t;
	}
	if (n == s->nr)
		return;
	s->nr = n;
	memset(s->hash, 0, s->hash_cap * sizeof(*s->hash));
	for (size_t i = 0; i < n; i++) {
		size_t j = mig_hash(s->tasks[i].pid) & (s->hash_cap - 1);

		while (s->hash[j])
			j = (j + 1) & (s->hash_cap - 1);
		s->hash[j] = (int32_t)(i + 1);
	}
}

/* The task the load balancer moved most, NULL when it moved none. */
static struct mig_task *mig_top(struct mig_state *s)
{
	struct mig_task *top = NULL;

	for (size_t i = 0; i < s->nr; i++)
		if (s->tasks[i].lb && (!top || s->tasks[i].lb > top->lb))
			top = &s->tasks[i];
	return top;
}

/*
 * Moves against deficits over the tasks with a real fair share (at least
 * a quarter of the largest): their correlation in @corr, the mean deficit
 * of the tasks other than @top in @others (both 0 under three tasks).
 */
static void mig_correlation(const struct mig_state *s, const struct model *m,
			    const struct mig_task *top, double *corr, double *others)
{
	double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
	uint64_t maxfair = 0;
	unsigned int nc = 0;

	*corr = *others = 0;
	for (size_t i = 0; i < s->nr; i++) {
		const struct model_task *t = model_task_find(m, s->tasks[i].pid);

		if (t && t->fair_ns > maxfair)
			maxfair = t->fair_ns;
	}
	for (size_t i = 0; i < s->nr; i++) {
		uint64_t fair, run;
		double rel, x;

		mig_deficit(m, s->tasks[i].pid, &fair, &run, &rel);
		if (!fair || fair * 4 < maxfair)
			continue;
		x = (double)s->tasks[i].lb;
		sx += x;
		sy += rel;
		sxx += x * x;
		syy += rel * rel;
		sxy += x * rel;
		nc++;
		if (&s->tasks[i] != top)
			*others += rel;
	}
	if (nc >= 3) {
		double vx = sxx - sx * sx / nc, vy = syy - sy * sy / nc;

		*corr = vx > 0 && vy > 0 ? (sxy - sx * sy / nc) / sqrt(vx * vy) : 0;
		*others /= (double)(nc - (top ? 1 : 0));
	}
}

/*
 * `same_task_migrated` for @top, the most moved task, when it got at least
 * concentration_threshold of the load balancer's moves and well over an
 * even spread over the @k competing tasks.
 */
static void mig_concentration(struct mig_state *s, const struct model *m,
			      const struct imb_window *w, struct mig_task *top, unsigned int k,
			      struct finding_list *out)
{
	double share = (double)top->lb / (double)s->lb_total;
	double even = k ? 1.0 / k : 1.0;
	const struct model_task *mt = model_task_find(m, top->pid);
	struct mig_flag *fl;
	struct imb_finding *f;
	uint64_t fair, run;
	double rel, corr, others;
	struct evb e;

	if (share < s->cfg.concentration_threshold ||
	    share * 100 < (double)s->cfg.concentration_even_pct * even)
		return;
	fl = mig_flag_get(s, &top->same_flag);
	if (!fl)
		return;
	f = &fl->f;
	mig_correlation(s, m, top, &corr, &others);
	mig_deficit(m, top->pid, &fair, &run, &rel);
	finding_init(f, f->id, "same_task_migrated", IMB_SEV_WARNING, s->first_ns, w->t_end_ns);
	snprintf(f->subject, sizeof(f->subject), "pid %d (%.15s)", top->pid, mt ? mt->comm : "?");
	f->value = share;
	f->threshold = s->cfg.concentration_threshold;
	f->open = true;
	snprintf(f->summary, sizeof(f->summary),
		 "the load balancer moved pid %d (%.15s) %u of %llu times (%.0f%%; an "
		 "even spread over %u tasks is %.0f%%); it got %.1f%% less CPU than its "
		 "fair share (%.1f ms lost)", top->pid, mt ? mt->comm : "?", top->lb,
		 (unsigned long long)s->lb_total, 100 * share, k, 100 * even,
		 100 * rel, fair > run ? (double)(fair - run) / 1e6 : 0.0);
	evb_init(&e, f->evidence, sizeof(f->evidence));
	evb_add(&e, "\"pid\":%d", top->pid);
	evb_add(&e, "\"lb_migrations\":%u", top->lb);
	evb_add(&e, "\"lb_migrations_all\":%llu", (unsigned long long)s->lb_total);
	evb_add(&e, "\"share\":%.4f", share);
	evb_add(&e, "\"even_share\":%.4f", even);
	evb_add(&e, "\"competing_tasks\":%u", k);
	evb_add(&e, "\"migration_min\":%u", s->cfg.migration_min);
	evb_add(&e, "\"concentration_threshold\":%.3f", s->cfg.concentration_threshold);
	evb_add(&e, "\"even_factor_pct\":%u", s->cfg.concentration_even_pct);
	evb_add(&e, "\"fair_ns\":%llu", (unsigned long long)fair);
	evb_add(&e, "\"run_ns\":%llu", (unsigned long long)run);
	evb_add(&e, "\"lost_ns\":%llu", (unsigned long long)(fair > run ? fair - run : 0));
	evb_add(&e, "\"deficit\":%.4f", rel);
	evb_add(&e, "\"others_mean_deficit\":%.4f", others);
	evb_add(&e, "\"moves_deficit_correlation\":%.3f", corr);
	mig_causes(s, top, &e);
	evb_close(&e);
	fl->open = true;
	finding_list_add(out, f);
}

/* `migration_pingpong` for @t, opened or updated with its new count. */
static void mig_pingpong(struct mig_state *s, const struct model *m, struct mig_task *t,
			 struct finding_list *out)
{
	const struct model_task *mt = model_task_find(m, t->pid);
	struct mig_flag *fl = mig_flag_get(s, &t->pp_flag);
	struct imb_finding *f;
	uint64_t fair, run;
	double rel;
	struct evb e;

	if (!fl)
		return;
	f = &fl->f;
	mig_deficit(m, t->pid, &fair, &run, &rel);
	finding_init(f, f->id, "migration_pingpong", IMB_SEV_WARNING, t->pp_first_ns,
		     t->pp_last_ns);
	snprintf(f->subject, sizeof(f->subject), "pid %d (%.15s)", t->pid, mt ? mt->comm : "?");
	f->value = t->pingpong;
	f->threshold = s->cfg.pingpong_min ? s->cfg.pingpong_min : 3;
	f->open = true;
	snprintf(f->summary, sizeof(f->summary),
		 "pid %d (%.15s) went back to the CPU it had just left %u times within "
		 "%.0f ms (last between CPUs %d and %d); %.1f ms of CPU time short of "
		 "its fair share", t->pid, mt ? mt->comm : "?", t->pingpong,
		 (double)s->cfg.pingpong_ns / 1e6, t->last_orig, t->last_dest,
		 fair > run ? (double)(fair - run) / 1e6 : 0.0);
	evb_init(&e, f->evidence, sizeof(f->evidence));
	evb_add(&e, "\"pid\":%d", t->pid);
	evb_add(&e, "\"pingpongs\":%u", t->pingpong);
	evb_add(&e, "\"pingpong_ns\":%llu", (unsigned long long)s->cfg.pingpong_ns);
	evb_add(&e, "\"pingpong_min\":%u", s->cfg.pingpong_min);
	evb_add(&e, "\"lb_migrations\":%u", t->lb);
	evb_add(&e, "\"fair_ns\":%llu", (unsigned long long)fair);
	evb_add(&e, "\"run_ns\":%llu", (unsigned long long)run);
	evb_add(&e, "\"lost_ns\":%llu", (unsigned long long)(fair > run ? fair - run : 0));
	evb_add(&e, "\"wait_ns\":%llu", (unsigned long long)(mt ? model_task_wait_ns(mt) : 0));
	mig_causes(s, t, &e);
	evb_close(&e);
	fl->open = true;
	t->pp_reported = t->pingpong;
	finding_list_add(out, f);
}

static void mig_window(void *state, const struct model *m, struct imb_window *w,
		       struct finding_list *out)
{
	struct mig_state *s = state;
	uint64_t len = w->t_end_ns - w->t_start_ns;
	struct mig_task *top = mig_top(s);
	unsigned int k = 0;

	/* tasks competing for CPU in this window: runnable at least half of it */
	for (size_t i = 0; i < w->nr_tasks; i++)
		k += len && (w->tasks[i].run_ns + w->tasks[i].wait_ns) * 2 >= len;
	if (top && s->lb_total >= s->cfg.migration_min)
		mig_concentration(s, m, w, top, k, out);
	for (size_t i = 0; i < s->nr; i++) {
		struct mig_task *t = &s->tasks[i];
		struct mig_flag *fl;

		/* a concentration finding whose task is no longer the top one closes */
		if (t->same_flag && t != top && s->flags[t->same_flag - 1].open) {
			fl = &s->flags[t->same_flag - 1];
			fl->open = fl->f.open = false;
			finding_list_add(out, &fl->f);
		}
		if (t->pingpong >= (s->cfg.pingpong_min ? s->cfg.pingpong_min : 3) &&
		    t->pingpong != t->pp_reported)
			mig_pingpong(s, m, t, out);
	}
	mig_compact(s, m);
}

static void mig_finish(void *state, const struct model *m, struct imb_window *summary,
		       struct finding_list *out)
{
	struct mig_state *s = state;

	(void)m;
	(void)summary;
	for (size_t i = 0; i < s->nr_flags; i++) {
		if (!s->flags[i].open)
			continue;
		s->flags[i].open = s->flags[i].f.open = false;
		finding_list_add(out, &s->flags[i].f);
	}
}

const struct analyzer_ops migration_analyzer = {
	.name = "migration",
	.create = mig_create,
	.destroy = mig_destroy,
	.configure = mig_configure,
	.event = mig_event,
	.window = mig_window,
	.finish = mig_finish,
};

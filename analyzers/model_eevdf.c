// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_eevdf.c - which blocking tasks the kernel keeps queued, where the
 * recording does not say.
 *
 * EEVDF's delayed dequeue (6.12+) keeps a task that blocks while not
 * eligible (its vruntime past its run queue's weighted average) queued
 * until it is picked or woken.  The BPF source marks such switches; a
 * tracefs or trace.dat recording cannot.  The marks matter to runnable_avg
 * where the task sits in a task group: the delay lowers h_nr_runnable on
 * every level at once but updates only the task's own run queue, so the
 * root integrates the time since its last update with the lowered count
 * (and a wake-up that requeues the task raises it the same way).
 *
 * Without marks the model estimates each task's vruntime from the time it
 * ran (scaled by its weight) and the lag its last dequeue left it, placed
 * again at each enqueue as place_entity() does.  The run time is the
 * kernel's own where the stream has sched_stat_runtime (update_curr()'s
 * delta, on the run-queue clock), else the switch intervals; the two
 * differ by tens of microseconds a run (IRQ time, and a preempting task
 * charged from its wake-up's clock), as much as the lags being told
 * apart, so the guess is near-exact with the first and near chance with
 * the second for threads whose vruntimes stay close.  It takes the
 * tasks queued on one CPU that are related (threads of one process, or
 * processes one of which started the other within the recording:
 * model_lineage.c) as one run queue: they share their autogroup or
 * cgroup, and a recording without task-group ids has no better sign of
 * one.  A task alone there is always eligible, so a task with nothing
 * related queued with it is never taken as delayed.
 */
#include "model_internal.h"

/* update_entity_lag()'s bound: max(2 * slice, TICK_NSEC), 4 ms at HZ=250 */
#define EEVDF_LAG_LIMIT_NS 4000000ll

/*
 * Whether the input leaves delays to guess: where it leaves task groups
 * to guess (a source that names groups marks delays).
 */
bool model_guess_delays(const struct model *m)
{
	return model_guess_groups(m);
}

static bool same_queue(const struct model_task *t, const struct model_task *o, int cpu)
{
	return o != t && o->fair && o->cpu == cpu && model_lineage_related(t, o) &&
	       (o->state == MODEL_TASK_RUNNING || o->state == MODEL_TASK_QUEUED || o->delayed);
}

/*
 * vruntime of @t at @ts.  From the kernel's run times where the stream has
 * them: its vruntime moves only at update_curr(), and each decision point
 * (a dequeue, an enqueue's placement) follows one.  Else from switch
 * times: what it ran since its state was last accounted added.
 */
static int64_t vr_at(const struct model_task *t, uint64_t ts)
{
	int64_t vr = t->vr;

	if (!t->has_runtime && t->state == MODEL_TASK_RUNNING && ts > t->state_ns)
		vr += (int64_t)((ts - t->state_ns) * 1024 / model_task_weight(t));
	return vr;
}

/*
 * A task the balancer of @cpu pulled there after a blocking task's dequeue
 * but before its switch: __schedule() dequeues prev, finds nothing else
 * runnable and balances (newly idle) before it picks, so the pulled task
 * was placed without prev, and prev's dequeue did not see it.  A pull
 * traced at most this long before the switch is taken as that.
 */
#define EEVDF_NEWIDLE_NS 50000ull

static bool pulled_since(const struct model_task *o, int cpu, uint64_t ts)
{
	return o->pulled_ns && o->cpu == cpu && o->state == MODEL_TASK_QUEUED &&
	       o->state_ns == o->pulled_ns && ts - o->pulled_ns <= EEVDF_NEWIDLE_NS;
}

/*
 * Weighted mean vruntime of the tasks queued with @t on @cpu at @ts, @t
 * itself counted if @self; *@w the others' weight (0: nobody else).  Left
 * out: @skip, and with @newidle the tasks pulled_since() @ts.
 */
static int64_t queue_avg(const struct model *m, const struct model_task *t, int cpu, bool self,
			 const struct model_task *skip, bool newidle, uint64_t ts, uint64_t *w)
{
	int64_t ref = vr_at(t, ts), sum = 0;
	uint64_t wsum = 0;

	for (size_t i = 0; i < m->nr_tasks; i++) {
		const struct model_task *o = &m->tasks[i];
		unsigned long ow;

		if (!same_queue(t, o, cpu) || o == skip || (newidle && pulled_since(o, cpu, ts)))
			continue;
		ow = model_task_weight(o);
		sum += (vr_at(o, ts) - ref) * (int64_t)ow;
		wsum += ow;
	}
	*w = wsum;
	if (self)
		wsum += model_task_weight(t);	/* its own term is 0 about ref */
	return wsum ? ref + sum / (int64_t)wsum : ref;
}

/* Lag of @t in its run queue on @cpu at @ts (avg_vruntime - vruntime); *@w as queue_avg() */
static int64_t lag_at(const struct model *m, const struct model_task *t, int cpu, uint64_t ts,
		      uint64_t *w)
{
	return queue_avg(m, t, cpu, true, NULL, false, ts, w) - vr_at(t, ts);
}

static int64_t lag_clamp(const struct model_task *t, int64_t lag)
{
	int64_t limit = EEVDF_LAG_LIMIT_NS * 1024 / (int64_t)model_task_weight(t);

	return lag > limit ? limit : lag < -limit ? -limit : lag;
}

void model_eevdf_run(struct model_task *t, uint64_t d)
{
	t->vr += (int64_t)(d * 1024 / model_task_weight(t));
}

/* place_entity() of @t on @cpu at @ts, @skip not there (or NULL) */
static void place(struct model *m, struct model_task *t, int cpu, const struct model_task *skip,
		  uint64_t ts)
{
	uint64_t w;
	int64_t avg = queue_avg(m, t, cpu, false, skip, false, ts, &w);

	t->vr_unplaced = t->vr;
	if (!w)
		return;		/* alone: its lag matters to nobody */
	t->vr = avg - t->vlag * (int64_t)(w + model_task_weight(t)) / (int64_t)w;
}

/* place_entity(): at the average of the others, less its lag (scaled for its own weight) */
void model_eevdf_place(struct model *m, struct model_task *t, int cpu, uint64_t ts)
{
	place(m, t, cpu, NULL, ts);
}

/*
 * A blocking @t on @cpu at @ts: true if the kernel keeps it queued (not
 * eligible, others queued with it).  Its lag is kept for its next
 * placement (a delay that ends when it is eligible zeroes it).  Tasks the
 * balancer pulled after its dequeue (pulled_since()) are left out of its
 * lag, and where it leaves they are placed again without it.
 */
bool model_eevdf_block(struct model *m, struct model_task *t, int cpu, uint64_t ts)
{
	uint64_t w;
	int64_t lag = queue_avg(m, t, cpu, true, NULL, true, ts, &w) - vr_at(t, ts);
	bool delayed = w && lag < 0;

	t->vlag = lag_clamp(t, lag);
	if (delayed)
		return true;
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *o = &m->tasks[i];

		if (same_queue(t, o, cpu) && pulled_since(o, cpu, ts)) {
			o->vr = o->vr_unplaced;
			place(m, o, cpu, t, ts);
			o->pulled_ns = 0;
		}
	}
	return false;
}

/*
 * A dequeue that is not a block (a migration, or the end of a delay when
 * the CPU goes idle): its lag goes with it, a delayed one's positive lag
 * zeroed (finish_delayed_dequeue_entity()).
 */
void model_eevdf_leave(struct model *m, struct model_task *t, int cpu, uint64_t ts)
{
	uint64_t w;

	t->vlag = lag_clamp(t, lag_at(m, t, cpu, ts, &w));
	if (t->delayed && t->vlag > 0)
		t->vlag = 0;
}

/*
 * Whether delayed @t has become eligible on @cpu at @ts: the scheduler's
 * next pick there dequeues it at last, its lag burnt (zeroed).
 */
bool model_eevdf_eligible(const struct model *m, const struct model_task *t, int cpu, uint64_t ts)
{
	uint64_t w;

	return lag_at(m, t, cpu, ts, &w) >= 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_events.c - drive the system model (model.h) from the event stream.
 *
 * Each event first brings the affected CPU's root run queue and task
 * entities up to the event's time with their old state (the kernel's own
 * order: update_load_avg() before the enqueue, dequeue or switch), then
 * applies the state change.  CPU time comes from sched_stat_runtime where
 * the source has it (the same clock_task deltas the kernel adds to the
 * thread's own CPU time), else from switch intervals; runnable time is
 * bounded by wake-ups and blocking switches, which every source records.
 */
#include "model_internal.h"

void model_cpu_offset_bound(struct model_cpu *c, int64_t bound, uint64_t ts)
{
	if (!c->offset_ts || bound >= c->pelt_offset || ts - c->offset_ts > 4000000ull) {
		c->pelt_offset = bound;
		c->offset_ts = ts;
	}
}

static uint64_t pelt_now(struct model_cpu *c, uint64_t ts)
{
	int64_t v = (int64_t)ts + c->pelt_offset;
	uint64_t now = v < 0 ? 0 : (uint64_t)v;

	if (c->ev_clock_ts && c->ev_clock_ts == ts)
		now = c->ev_clock;

	/* a new offset estimate must not move the clock backwards */
	if (now < c->pelt_last)
		now = c->pelt_last;
	c->pelt_last = now;
	return now;
}

unsigned long model_task_weight(const struct model_task *t)
{
	return pelt_nice_to_weight(t->nice);
}

/*
 * Run time the kernel charged a task (update_curr(), the
 * clock_task time it ran).  From the first, the vruntime estimate follows
 * it (model_eevdf.c) instead of switch times.
 */
static void task_runtime_add(struct model *m, struct model_task *t, uint64_t d)
{
	t->has_runtime = true;
	m->has_runtime_events = true;
	t->runtime_ns += d;
	t->win_runtime_ns += d;
	t->win_seen = true;
	model_eevdf_run(t, d);
}

/*
 * A task's run-time counter (se.sum_exec_runtime, @sum; 0: not read) as a
 * record reads it: what it grew by since the last reading is run time the
 * kernel charged, whether or not the update_curr() steps between were
 * sent (the BPF source sends only the tick's).  Returns that, or @step
 * (the record's own step) where there was no earlier reading.
 */
static uint64_t task_counter_step(struct model_task *t, uint64_t sum, uint64_t step)
{
	uint64_t d;

	if (!sum)
		return step;
	d = !t->sum_exec_known ? step : sum > t->sum_exec_ns ? sum - t->sum_exec_ns : 0;
	t->sum_exec_ns = sum;
	t->sum_exec_known = true;
	return d;
}

/* Account a task's time in its current state up to @ts. */
static void task_account(struct model_task *t, uint64_t ts)
{
	uint64_t d;

	if (ts <= t->state_ns)
		return;
	d = ts - t->state_ns;
	switch (t->state) {
	case MODEL_TASK_RUNNING:
		t->switch_run_ns += d;
		t->win_switch_run_ns += d;
		if (!t->has_runtime)	/* else the kernel's own run time (ev_runtime()) */
			model_eevdf_run(t, d);
		/* fall through */
	case MODEL_TASK_QUEUED:
		t->runnable_ns += d;
		t->win_runnable_ns += d;
		t->win_seen = true;
		break;
	case MODEL_TASK_SLEEPING:
		t->sleep_ns_total += d;
		break;
	case MODEL_TASK_UNKNOWN:
		t->unknown_ns += d;
		break;
	default:
		break;
	}
	t->state_ns = ts;
}

/* Account a CPU's busy time up to @ts. */
void model_cpu_account(struct model_cpu *c, uint64_t ts)
{
	uint64_t d;

	if (ts <= c->last_ns)
		return;
	d = ts - c->last_ns;
	if (c->curr > 0) {
		c->busy_ns += d;
		c->win_busy_ns += d;
	}
	c->nr_running_area += d * c->nr_running;
	if (c->weight)
		c->vclock += d * 1024 / c->weight;
	else if (c->curr > 0)
		c->vclock += d;
	c->last_ns = ts;
}

/* Bring a CPU's root run queue's PELT up to @ts with its current state. */
void model_cpu_pelt_update(struct model_cpu *c, uint64_t ts)
{
	model_root_update(c, &c->cfs, pelt_now(c, ts));
}

/*
 * Update the run queues on the path of task @t on @cpu (its group's, the
 * ancestors', the root) at @ts, as update_load_avg() at every level of an
 * enqueue, dequeue, tick or switch.  @t may be NULL: the root only.
 */
static void task_path_update(struct model *m, struct model_task *t, int cpu, uint64_t ts)
{
	uint64_t now = pelt_now(&m->cpus[cpu], ts);

	if (!t || !m->has_groups) {
		model_path_update(m, cpu, 0, now);
		return;
	}
	if (t->att_group && t->att_cpu == cpu && t->att_group != t->group)
		model_path_update(m, cpu, t->att_group, now);
	if (t->q_group && t->cpu == cpu && t->q_group != t->group)
		model_path_update(m, cpu, t->q_group, now);
	model_path_update(m, cpu, t->group, now);
}

/* The group whose run queue holds task @t on @cpu now or would (0: the root). */
static uint64_t task_level_group(struct model *m, const struct model_task *t, int cpu)
{
	if (!t || !m->has_groups || !t->fair)
		return 0;
	if ((t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED) && t->cpu == cpu)
		return t->q_group;
	return t->group && model_group_find(m, cpu, t->group) ? t->group : 0;
}

/*
 * task_path_update() that stops at group @stop's run queue: put_prev and
 * set_next walk up only to the run queue the two tasks share
 * (pick_next_task_fair()); @stop 0: every level.
 */
static void task_path_update_to(struct model *m, struct model_task *t, int cpu, uint64_t stop,
				uint64_t ts)
{
	if (!stop || !t || !m->has_groups) {
		task_path_update(m, t, cpu, ts);
		return;
	}
	model_path_update_to(m, cpu, task_level_group(m, t, cpu), stop, pelt_now(&m->cpus[cpu], ts));
}

/* detach_entity_load_avg() from the run queue holding the task's averages */
static void task_detach_avg(struct model *m, struct model_task *t)
{
	int cpu = t->att_group ? t->att_cpu : t->cpu;

	if (cpu < 0 || cpu >= m->nr_cpus)
		return;
	pelt_detach(model_group_cfs(m, cpu, t->att_group), &t->avg);
	model_group_mark_propagate(m, cpu, t->att_group);
	model_drift_propagate(m, t, cpu);
	model_task_set_att(m, t, 0);
}

/* remove_entity_load_avg(): applied at that run queue's next update */
static void task_remove_avg(struct model *m, struct model_task *t)
{
	int cpu = t->att_group ? t->att_cpu : t->cpu;

	if (cpu < 0 || cpu >= m->nr_cpus)
		return;
	pelt_remove(model_group_cfs(m, cpu, t->att_group), &t->avg);
	model_drift_propagate(m, t, cpu);
	model_task_set_att(m, t, 0);
}

/* Bring a task's entity up to @ts with its current state. */
void model_task_pelt_update(struct model *m, struct model_task *t, uint64_t ts)
{
	struct model_cpu *c;
	bool on_rq;

	if (!t->fair || !t->pelt_valid || t->cpu < 0 || t->cpu >= m->nr_cpus)
		return;
	c = &m->cpus[t->cpu];
	on_rq = t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED;
	/* a delayed task still weighs on its run queue, but is not runnable */
	pelt_se_update(&t->avg, pelt_now(c, ts), model_task_weight(t), on_rq || t->delayed, on_rq,
		       t->state == MODEL_TASK_RUNNING);
}

/*
 * EEVDF's delayed dequeue (6.12+; the BPF source says which blocking
 * switches it hit): a task that blocks while not eligible stays queued,
 * but stops counting as runnable at every level at once (set_delayed()),
 * and only its own run queue is updated before that.  The levels above
 * are updated later (put_prev_entity() at this switch, or a tick) and
 * integrate the time since their last update with the lowered count, so
 * the model does the same: its own level first, then the others without
 * it.  The blocked task then leaves the model's counts as any other.
 */
static void task_delay(struct model *m, struct model_task *t, struct model_cpu *c, uint64_t stop,
		       uint64_t ts)
{
	uint64_t id = m->has_groups ? t->q_group : 0;

	model_task_pelt_update(m, t, ts);
	if (!c->nr_queued || !model_chain_counts(m, c->cpu, id)) {
		task_path_update(m, t, c->cpu, ts);	/* the model does not count it: as a dequeue */
		return;
	}
	/*
	 * Its own run queue first; a guessed delay is of a task in a group
	 * (model_eevdf.c), whose run queue the model without group ids
	 * does not have: nothing there.
	 */
	if (m->has_groups || !model_guess_delays(m))
		model_level_update(m, c->cpu, id, pelt_now(c, ts));
	model_chain_runnable(m, c->cpu, id, -1, false);
	c->nr_queued--;
	task_path_update_to(m, t, c->cpu, stop, ts);
	model_chain_runnable(m, c->cpu, id, 1, false);
	c->nr_queued++;
	t->delayed = true;
	t->requeue = false;
	t->delayed_group = id;
	c->nr_delayed++;
}

/*
 * The end of a delay at PELT time @now.  A delayed task is finally
 * dequeued when the scheduler picks it (no event says when; its own
 * entity's update is traced, or the CPU goes idle), and then every level
 * above its run queue is updated while counting it runnable once more
 * (clear_delayed() runs before the walk up, which takes it off again):
 * with @walk, do that update.  A wake-up that requeues it (requeue) or a
 * migration ends it without.
 */
void model_task_delay_end(struct model *m, struct model_task *t, uint64_t now, bool walk)
{
	struct model_group *g;
	struct model_cpu *c;

	if (!t->delayed)
		return;
	t->delayed = false;
	t->requeue = false;
	if (t->cpu >= 0 && t->cpu < m->nr_cpus) {
		c = &m->cpus[t->cpu];
		if (c->nr_delayed)
			c->nr_delayed--;
		if (walk && t->delayed_group && (g = model_group_find(m, t->cpu, t->delayed_group))) {
			model_chain_runnable(m, t->cpu, g->parent_id, 1, false);
			c->nr_queued++;
			model_path_update(m, t->cpu, g->id, now);
			model_chain_runnable(m, t->cpu, g->parent_id, -1, false);
			c->nr_queued--;
			model_chain_runnable(m, t->cpu, g->id, 0, true);	/* the walk's se_update_runnable() */
		}
		if (walk)
			model_drift_refresh(m, t, t->cpu);
	}
	/* dequeued at last: the path it held is free (after the walk's update) */
	if (t->held_cpu >= 0) {
		model_chain_hold(m, t->held_cpu, t->delayed_group, -1);
		t->held_cpu = -1;
	}
}

/*
 * Picks took every delayed task on @c off, with their walks, at PELT time
 * @now (@ts: the event's time): the CPU going idle, or root records that
 * count none of them (delays_counted_out()).
 */
static void cpu_end_delays(struct model *m, struct model_cpu *c, uint64_t ts, uint64_t now)
{
	if (!c->nr_delayed)
		return;
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		if (t->delayed && t->cpu == c->cpu) {
			if (model_guess_delays(m))
				model_eevdf_leave(m, t, c->cpu, ts);
			model_task_delay_end(m, t, now, true);
		}
	}
	c->nr_delayed = 0;
}

/*
 * A fair task's share of its CPU's counts: the fair run queue's count and
 * weight and its group path (model_chain_enqueue()).  q_weight is the
 * weight it went in with, 0 while it is not counted; taken off with that
 * weight, whatever the task's priority says by then.
 */
static void fair_counts_on(struct model *m, struct model_task *t, bool walk)
{
	struct model_cpu *c = &m->cpus[t->cpu];

	if (!t->fair || t->q_weight)
		return;
	c->nr_queued++;
	t->q_weight = model_task_weight(t);
	c->weight += t->q_weight;
	t->q_group = model_task_place(m, t, t->cpu);
	model_chain_enqueue(m, t->cpu, t->q_group, t->q_weight, walk);
	model_drift_count(m, t, t->cpu, 1, walk);
}

static void fair_counts_off(struct model *m, struct model_task *t, bool walk)
{
	struct model_cpu *c = &m->cpus[t->cpu];

	if (!t->q_weight)
		return;
	if (c->nr_queued)
		c->nr_queued--;
	c->weight = c->weight > t->q_weight ? c->weight - t->q_weight : 0;
	model_chain_dequeue(m, t->cpu, t->q_group, t->q_weight, walk);
	model_drift_count(m, t, t->cpu, -1, walk);
	if (t->delayed && t->q_group && t->held_cpu < 0 && t->delayed_group == t->q_group) {
		model_chain_hold(m, t->cpu, t->q_group, 1);
		t->held_cpu = t->cpu;
	}
	t->q_group = 0;
	t->q_weight = 0;
}

/* Take a queued/running task off its CPU's counts (no PELT change). */
static void cpu_unqueue(struct model *m, struct model_task *t)
{
	struct model_cpu *c;

	if (t->cpu < 0 || t->cpu >= m->nr_cpus)
		return;
	if (t->state != MODEL_TASK_RUNNING && t->state != MODEL_TASK_QUEUED)
		return;
	c = &m->cpus[t->cpu];
	if (c->nr_running)
		c->nr_running--;
	fair_counts_off(m, t, !t->delayed);
	if (c->curr == t->pid) {
		c->curr = 0;
		c->idle_since_ns = t->state_ns;
	}
}

/*
 * What an event says of a task (model_task_note()); a queued task whose
 * nice changed (an event shows a new priority) carries its new weight on
 * its run queue from now on, as reweight_entity() does.
 */
static void task_note(struct model *m, struct model_task *t, const char *comm, int prio, uint64_t ts)
{
	struct model_cpu *c;
	unsigned long w;

	model_task_note(t, comm, prio, ts);
	if (t->cpu < 0 || t->cpu >= m->nr_cpus ||
	    (t->state != MODEL_TASK_RUNNING && t->state != MODEL_TASK_QUEUED))
		return;
	if (t->fair != !!t->q_weight) {
		/* into or out of the fair class while queued */
		if (t->q_weight)
			fair_counts_off(m, t, true);
		else
			fair_counts_on(m, t, true);
		return;
	}
	w = model_task_weight(t);
	if (!t->q_weight || w == t->q_weight)
		return;
	c = &m->cpus[t->cpu];
	model_weight_swap(&c->weight, t->q_weight, w);
	model_chain_reweight(m, t->cpu, t->q_group, t->q_weight, w);
	t->q_weight = w;
}

/* Count a task queued on its CPU; @walk: see model_chain_enqueue(). */
static void cpu_enqueue_counts(struct model *m, struct model_task *t, bool walk)
{
	m->cpus[t->cpu].nr_running++;
	fair_counts_on(m, t, walk);
}

static void cpu_enqueue(struct model *m, struct model_task *t)
{
	if (t->fair && model_guess_delays(m))
		model_eevdf_place(m, t, t->cpu, m->now_ns);
	cpu_enqueue_counts(m, t, true);
}

/*
 * Attach a task's entity to its CPU's run queue, as the kernel does at the
 * first enqueue after fork or migration.
 */
static void task_pelt_attach(struct model *m, struct model_task *t, uint64_t ts, bool fresh)
{
	struct model_cpu *c = &m->cpus[t->cpu];
	struct pelt_cfs *cfs;
	uint64_t id;

	if (!t->fair)
		return;
	if (t->att_group)
		model_task_set_att(m, t, 0);	/* averages reset without a detach */
	id = model_task_place(m, t, t->cpu);
	cfs = model_group_cfs(m, t->cpu, id);
	if (t->state == MODEL_TASK_UNKNOWN && t->pelt_valid) {
		/*
		 * First sight of a task whose averages came from the kernel's
		 * own record: it was attached here before the model saw it, so
		 * the kernel's values the model was seeded with hold it.
		 */
		model_task_set_att(m, t, id);
		return;
	}
	if (!t->pelt_valid) {
		/*
		 * A new task starts heavy with half the spare capacity as its
		 * util (the kernel's post_init); one first seen mid-trace has
		 * an unknown past and starts from zero (warm-up: ~345 ms).
		 */
		if (fresh && m->fresh_pid == t->pid) {
			t->avg = m->fresh_init;	/* computed before the enqueue's update */
		} else if (fresh) {
			pelt_init(&t->avg, model_task_weight(t));
			pelt_post_init(&t->avg, model_task_weight(t), cfs, c->capacity);
		} else {
			memset(&t->avg, 0, sizeof(t->avg));
		}
		t->pelt_valid = true;
	}
	pelt_attach(cfs, &t->avg, model_task_weight(t));
	model_group_mark_propagate(m, t->cpu, id);
	model_drift_propagate(m, t, t->cpu);
	model_task_set_att(m, t, id);
	(void)ts;
}

/* Make @t the running task on CPU @c from @ts (state already accounted). */
static void cpu_set_curr(struct model *m, struct model_cpu *c, struct model_task *t, uint64_t ts)
{
	if (c->curr > 0 && (!t || c->curr != t->pid)) {
		struct model_task *old = model_task_find(m, c->curr);

		/*
		 * Replaced without a switch naming it: the trace lacks that
		 * switch (tracefs misses some, e.g. of PID 1's threads on this
		 * kernel).  Take it as blocked: a task that still wanted the
		 * CPU shows up again in a switch or a wake-up, while one wrongly
		 * left queued would inflate nr_running and runnable for ever.
		 */
		if (old && old->state == MODEL_TASK_RUNNING && old->cpu == c->cpu) {
			model_task_pelt_update(m, old, ts);
			task_account(old, ts);
			c->curr = 0;
			old->state = MODEL_TASK_QUEUED;	/* so that cpu_unqueue counts it */
			cpu_unqueue(m, old);
			old->state = MODEL_TASK_SLEEPING;
			old->state_ns = ts;
			m->vanished++;
		}
	}
	if (!t) {
		if (c->curr != 0)
			c->idle_since_ns = ts;
		c->curr = 0;
		c->fair_curr = false;
		return;
	}
	c->curr = t->pid;
	c->fair_curr = t->fair;
	task_account(t, ts);	/* its time so far was not running */
	t->state = MODEL_TASK_RUNNING;
}

/*
 * The run queue averages post_init_entity_util_avg() reads for the new
 * task @t placed in group @id on @cpu: those of the queue's last update
 * before the enqueue.  The kernel's averages change only where it traces
 * them (a period crossed, an attach, a detach, a propagation into it), so
 * with its records they are those of the group's last record older than
 * the new task (the enqueue's own update and attach are traced before the
 * wake-up that tells the model); the engine's load_avg of a group is not
 * exact (blocked tasks that the kernel keeps queued count in it).  With
 * groups but without records: the engine's run queue.  Where the input
 * names no groups: the guessed group's (model_lineage.c).
 */
static const struct pelt_cfs *post_init_cfs(struct model *m, const struct model_task *t, int cpu,
					    uint64_t id)
{
	struct model_group *g = model_group_find(m, cpu, id);
	struct model_cpu *c = &m->cpus[cpu];
	struct pelt_cfs *k = &m->post_init_k;
	uint64_t util, load;

	if (model_guess_groups(m))
		return model_lineage_cfs(m, t, cpu);
	if (g && g->k_ns && g->k_ns < t->first_ns) {
		util = g->k_avg[MODEL_SIG_UTIL];
		load = g->k_avg[MODEL_SIG_LOAD];
	} else if (g && g->k_prev_ns && g->k_prev_ns < t->first_ns) {
		util = g->k_prev_avg[MODEL_SIG_UTIL];
		load = g->k_prev_avg[MODEL_SIG_LOAD];
	} else if (!g && c->kcfs_ns && c->kcfs_ns < t->first_ns) {
		util = c->kcfs.util_avg;
		load = c->kcfs.load_avg;
	} else if (!g && c->kcfs_prev_ns && c->kcfs_prev_ns < t->first_ns) {
		util = c->kcfs_prev.util_avg;
		load = c->kcfs_prev.load_avg;
	} else {
		return model_group_cfs(m, cpu, id);
	}
	*k = *model_group_cfs(m, cpu, id);
	k->avg.util_avg = (unsigned long)util;
	k->avg.load_avg = (unsigned long)load;
	return k;
}

/*
 * A wake-up of a task still queued by a delayed dequeue (requeue_delayed_
 * entity()): its own run queue (group @id) is updated without it, then it
 * counts as runnable again at every level; nothing above is updated, so
 * their next update counts it over all the time since their last one.
 */
static void task_requeue(struct model *m, struct model_task *t, struct model_cpu *c, uint64_t id,
			 uint64_t ts)
{
	t->delayed = true;		/* its entity's update: still weighing, not runnable */
	model_task_pelt_update(m, t, ts);
	t->delayed = false;
	if (m->has_groups || !model_guess_delays(m))	/* see task_delay() */
		model_level_update(m, c->cpu, m->has_groups ? id : 0, pelt_now(c, ts));
	task_account(t, ts);
	t->state = MODEL_TASK_QUEUED;
	t->state_ns = ts;
	t->runnable_since_ns = ts;
	cpu_enqueue_counts(m, t, false);
	if (c->curr <= 0)
		cpu_set_curr(m, c, t, ts);
}

/*
 * Put task @t on CPU @cpu as queued at @ts (wake-up, new task, migration
 * in); if the CPU is idle it starts running at once.
 */
static void task_enqueue(struct model *m, struct model_task *t, int cpu, uint64_t ts, bool fresh)
{
	struct model_cpu *c;

	if (model_cpu_grow(m, cpu))
		return;
	c = &m->cpus[cpu];
	model_cpu_account(c, ts);
	m->fresh_pid = 0;
	if (t->delayed) {
		/* where the source gives no marks, a wake-up of a delayed task requeues it */
		bool requeue = (t->requeue || model_guess_delays(m)) && t->cpu == cpu &&
			       t->state == MODEL_TASK_SLEEPING;
		uint64_t id = t->delayed_group;

		model_task_delay_end(m, t, pelt_now(c, ts), false);
		if (requeue) {
			task_requeue(m, t, c, id, ts);
			return;
		}
	}
	if (fresh && !t->pelt_valid && t->fair) {
		/*
		 * post_init_entity_util_avg() reads the run queue's util as of
		 * its last update, before the enqueue updates it.
		 */
		uint64_t id = model_task_place(m, t, cpu);

		pelt_init(&m->fresh_init, model_task_weight(t));
		pelt_post_init(&m->fresh_init, model_task_weight(t), post_init_cfs(m, t, cpu, id), c->capacity);
		m->fresh_pid = t->pid;
	}
	task_path_update(m, t, cpu, ts);
	task_account(t, ts);
	if (t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED) {
		if (t->cpu == cpu)
			return;		/* already there (e.g. a wake-up of a delayed task) */
		/* queued elsewhere: the trace missed a migration */
		cpu_unqueue(m, t);
		if (t->fair && t->pelt_valid && t->cpu >= 0 && t->cpu < m->nr_cpus)
			task_detach_avg(m, t);
		t->cpu = cpu;
		task_pelt_attach(m, t, ts, false);
	} else if (t->attach_pending) {
		/* removed at its migration (ev_migrate()): attach as it is */
		t->attach_pending = false;
		t->cpu = cpu;
		task_pelt_attach(m, t, ts, false);
	} else {
		bool moved = t->cpu != cpu;

		/* blocked decay to now, then attach where it lands */
		model_task_pelt_update(m, t, ts);
		if (moved || !t->pelt_valid) {
			if (t->pelt_valid && t->cpu >= 0 && t->cpu < m->nr_cpus && t->fair)
				task_remove_avg(m, t);
			t->cpu = cpu;
			task_pelt_attach(m, t, ts, fresh);
		} else if (t->fair && m->has_groups && t->att_group != t->group) {
			/* moved to another group while asleep (sched_move_task()) */
			task_detach_avg(m, t);
			task_pelt_attach(m, t, ts, false);
		}
	}
	t->state = MODEL_TASK_QUEUED;
	t->state_ns = ts;
	t->runnable_since_ns = ts;
	cpu_enqueue(m, t);
	model_task_pelt_update(m, t, ts);
	if (c->curr <= 0)
		cpu_set_curr(m, c, t, ts);
	if (m->has_groups)
		task_path_update(m, t, cpu, ts);	/* the attach propagates up */
}

/* The task is gone: remove its contribution, as remove_entity_load_avg(). */
static void task_kill(struct model *m, struct model_task *t, uint64_t ts)
{
	model_task_delay_end(m, t, 0, false);
	task_account(t, ts);
	if (t->fair && t->pelt_valid && !t->attach_pending && t->cpu >= 0 && t->cpu < m->nr_cpus)
		task_remove_avg(m, t);
	model_task_set_att(m, t, 0);
	t->pelt_valid = false;
	t->attach_pending = false;
	t->state = MODEL_TASK_DEAD;
	t->state_ns = ts;
	t->last_ns = ts;
}

/*
 * Make sure @t is on CPU @cpu's run queue (running or queued) at @ts, for a
 * switch that names it although the model has it elsewhere or asleep.  Its
 * entity moves with it only when it changes CPU: a sleeping task stays
 * attached to its CPU's run queue, as in the kernel.
 */
static void task_queue_here(struct model *m, struct model_task *t, int cpu, uint64_t ts)
{
	bool queued = t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED;
	bool valid_cpu = t->cpu >= 0 && t->cpu < m->nr_cpus;

	if (queued && t->cpu == cpu)
		return;
	model_task_delay_end(m, t, 0, false);
	/*
	 * Asleep in the model: the trace lacks its wake-up (seen in BPF
	 * recordings too, for a kernel thread after a long sleep).  Its
	 * entity decays as asleep up to now, not as runnable since it
	 * blocked.
	 */
	if (!queued)
		model_task_pelt_update(m, t, ts);
	task_account(t, ts);
	if (t->attach_pending && !queued) {
		/* removed at a wake-up migration whose wake-up the trace lacks */
		t->attach_pending = false;
		t->cpu = cpu;
		task_pelt_attach(m, t, ts, false);
	} else if (queued) {
		cpu_unqueue(m, t);
		if (t->fair && t->pelt_valid && valid_cpu)
			task_detach_avg(m, t);
	} else if (t->cpu != cpu && t->fair && t->pelt_valid && valid_cpu) {
		task_remove_avg(m, t);
		t->pelt_valid = false;
	}
	if (t->cpu != cpu || !t->pelt_valid) {
		t->cpu = cpu;
		task_pelt_attach(m, t, ts, false);
	}
	t->state = MODEL_TASK_QUEUED;
	t->state_ns = ts;
	cpu_enqueue(m, t);
}

/*
 * sched_autogroup_exit_task(): an exiting task leaves its autogroup for the
 * root group before its last switch (sched_move_task(): dequeue, detach
 * with propagation up the hierarchy, attach to the root, enqueue), so its
 * util goes with it to the root, whose next update then removes it.
 */
void model_task_exit_autogroup(struct model *m, struct model_task *t, int cpu, uint64_t ts)
{
	bool queued = t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED;
	uint64_t old = t->att_group ? t->att_group : t->q_group;

	if (!m->has_groups || !t->fair || !(old & IMB_TG_AUTOGROUP) || t->cpu != cpu)
		return;
	/*
	 * The dequeue first brings the task and every level up to now with
	 * the counts and the running task as they were (within a PELT period
	 * no record shows it: the sums take the time, the averages stay).
	 */
	model_task_pelt_update(m, t, ts);
	model_path_update(m, cpu, old, pelt_now(&m->cpus[cpu], ts));
	if (queued) {
		model_chain_dequeue(m, cpu, t->q_group, t->q_weight, true);
		t->q_group = 0;
	}
	if (t->pelt_valid && t->att_group)
		task_detach_avg(m, t);
	model_path_update(m, cpu, old, pelt_now(&m->cpus[cpu], ts));
	t->group = 0;
	if (t->pelt_valid) {
		pelt_attach(&m->cpus[cpu].cfs, &t->avg, model_task_weight(t));
		model_task_set_att(m, t, 0);
	}
	if (queued)
		model_chain_enqueue(m, cpu, 0, t->q_weight, true);
}

/*
 * The kernel's root records count the fair tasks queued on the CPU
 * (h_nr_queued, delayed ones included).  Where that stays below the
 * model's count for MODEL_UNSEEN_NS, a task the model has waiting there
 * left without an event saying so: some kernels hide every switch of
 * certain threads (this host's hides its PID-1 agent's now and then, so
 * a worker last seen preempted stays queued in the model for good, one
 * runnable task too many: CPU runnable_avg +40-100 under load).  The task
 * waiting that was seen last longest ago, before the counts parted, is
 * taken as asleep from now.
 */
#define MODEL_UNSEEN_NS 20000000ull

/* The task waiting on @c (not running, not delayed) seen last longest ago, before @since. */
static struct model_task *oldest_waiting(struct model *m, const struct model_cpu *c, uint64_t since)
{
	struct model_task *gone = NULL;

	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		if (t->cpu != c->cpu || t->state != MODEL_TASK_QUEUED || !t->q_weight || t->delayed ||
		    t->pid == c->curr || t->last_ns >= since)
			continue;
		if (!gone || t->last_ns < gone->last_ns)
			gone = t;
	}
	return gone;
}

/* @t, which the model has waiting on @c, left it unseen: asleep from @ts. */
static void unseen_asleep(struct model *m, struct model_cpu *c, struct model_task *t, uint64_t ts)
{
	model_task_pelt_update(m, t, ts);
	task_account(t, ts);
	if (m->has_groups)
		task_path_update(m, t, c->cpu, ts);
	cpu_unqueue(m, t);
	t->state = MODEL_TASK_SLEEPING;
	t->state_ns = ts;
	m->unseen_dequeued++;
}

/*
 * A delayed task is dequeued when the scheduler picks it, and its own
 * update is traced only if a PELT period ended since it blocked: picked
 * within the same period (a fraction of a millisecond later, when its lag
 * turned eligible as the task after it ran), it leaves no record of its
 * own, only the dequeue walk's records of its group entity and the root,
 * which count one task fewer (h_nr_queued holds the delayed ones).  Where
 * two root records of different instants count no more tasks than the
 * model has queued here, none of its delayed ones (one record alone may
 * be a blocking switch's dequeue traced before the switch), the delays
 * end as the pick ends them, with the walk that refreshes each group
 * entity's runnable weight: without it the entity kept integrating the
 * count of its last walk (rt-app beside a build: 1,421 against the
 * kernel's 866 for 39 ms, and the root off by 555 when an exit's
 * propagation read it).  Where the records still count some delayed
 * tasks, which ones the pick took is not known, and none is ended.
 */
static void delays_counted_out(struct model *m, struct model_cpu *c, uint32_t k_h_nr_queued,
			       uint64_t lut, uint64_t ts)
{
	if (!c->nr_delayed || k_h_nr_queued != c->nr_queued) {
		c->delay_excess_lut = 0;
		return;
	}
	if (!c->delay_excess_lut || c->delay_excess_lut == lut) {
		c->delay_excess_lut = lut;
		return;
	}
	/*
	 * At the first record's instant, the dequeue walk's own: the levels
	 * are past it by now, so the walk refreshes the entities' runnable
	 * weights without integrating the time since with one task too many.
	 */
	m->unseen_dequeued += c->nr_delayed;
	cpu_end_delays(m, c, ts, c->delay_excess_lut);
	c->delay_excess_lut = 0;
}

void model_cpu_count_check(struct model *m, struct model_cpu *c, uint32_t k_h_nr_queued, uint64_t lut,
			   uint64_t ts)
{
	struct model_task *gone;

	if (k_h_nr_queued)
		c->k_counts = true;
	if (c->k_counts && !model_guess_delays(m))
		delays_counted_out(m, c, k_h_nr_queued, lut, ts);
	if (c->gap_counts) {
		/*
		 * Events were lost (model_resync()): the tasks that blocked
		 * unseen then are all still waiting in the model.  Take the
		 * kernel's count at once, from those not seen since.
		 */
		c->gap_counts = false;
		while (c->k_counts && c->nr_queued > k_h_nr_queued &&
		       (gone = oldest_waiting(m, c, m->gap_ns)))
			unseen_asleep(m, c, gone, ts);
		c->count_excess_ns = 0;
		return;
	}
	if (!c->k_counts || c->nr_queued <= k_h_nr_queued) {
		c->count_excess_ns = 0;
		return;
	}
	if (!c->count_excess_ns) {
		c->count_excess_ns = ts;
		return;
	}
	if (ts - c->count_excess_ns < MODEL_UNSEEN_NS)
		return;
	gone = oldest_waiting(m, c, c->count_excess_ns);
	c->count_excess_ns = ts;	/* found or not: look again in MODEL_UNSEEN_NS */
	if (gone)
		unseen_asleep(m, c, gone, ts);
}

/* A switch's prev leaves the CPU: still queued (R, R+), or blocked and dequeued. */
static struct model_task *switch_prev_out(struct model *m, struct model_cpu *c,
					  const struct imb_ev_switch *s, uint64_t stop, uint64_t ts)
{
	bool blocked = s->prev_state != IMB_STATE_RUNNING && s->prev_state != IMB_STATE_PREEMPTED;
	bool dead = s->prev_state == 0x10 || s->prev_state == 0x20;
	struct model_task *prev = model_task_get(m, s->prev_pid, ts);
	uint64_t d;

	if (!prev)
		return NULL;
	task_note(m, prev, s->prev_comm, s->prev_prio, ts);
	model_task_set_tgid(m, prev, s->prev_tgid);
	/* first sight, or the trace missed how it got here */
	task_queue_here(m, prev, c->cpu, ts);
	if (c->curr != prev->pid) {
		/*
		 * It was running here although we did not see it start (this
		 * kernel's tracefs drops the switch out of idle on CPU 1): it
		 * started no earlier than this CPU's last switch, nor than it
		 * was queued here.
		 */
		if (c->switch_ns > prev->state_ns && c->switch_ns < ts)
			task_account(prev, c->switch_ns);
		if (c->curr > 0)
			cpu_set_curr(m, c, NULL, ts);
		c->curr = prev->pid;
		c->fair_curr = prev->fair;
		prev->state = MODEL_TASK_RUNNING;
	}
	model_task_pelt_update(m, prev, ts);
	d = task_counter_step(prev, s->prev_sum_exec_ns, 0);	/* 0 where not read */
	if (d)
		task_runtime_add(m, prev, d);
	task_account(prev, ts);
	if (m->has_groups)
		task_path_update_to(m, prev, c->cpu, stop, ts);
	if (blocked && (prev->exited || dead))
		model_task_exit_autogroup(m, prev, c->cpu, ts);
	if (prev->fair) {
		m->switch_out_fair++;
		if (blocked)
			m->switch_out_blocked++;
	}
	if (!blocked) {
		prev->state = MODEL_TASK_QUEUED;
		return prev;
	}
	/* blocked: dequeue; its entity stays attached, decaying */
	cpu_unqueue(m, prev);
	prev->state = MODEL_TASK_SLEEPING;
	prev->state_ns = ts;
	if (prev->exited || dead)
		task_kill(m, prev, ts);
	return prev;
}

/* A switch's next starts running on the CPU. */
static void switch_next_in(struct model *m, struct model_cpu *c, const struct imb_ev_switch *s,
			   uint64_t stop, uint64_t ts)
{
	struct model_task *next = model_task_get(m, s->next_pid, ts);

	if (!next)
		return;
	task_note(m, next, s->next_comm, s->next_prio, ts);
	model_task_set_tgid(m, next, s->next_tgid);
	if (s->next_cgroup)
		next->cgroup = s->next_cgroup;
	if (s->next_group)
		next->group = model_tg_internal(s->next_group);
	task_queue_here(m, next, c->cpu, ts);
	if (next->fair && m->has_groups && next->cpu == c->cpu &&
	    (next->q_group != model_task_place(m, next, c->cpu) ||
	     (next->pelt_valid && next->att_group != next->q_group))) {
		/* in another group than the model had it (sched_move_task()) */
		next->state = MODEL_TASK_QUEUED;
		cpu_unqueue(m, next);
		if (next->pelt_valid)
			task_detach_avg(m, next);
		task_path_update(m, next, c->cpu, ts);
		task_pelt_attach(m, next, ts, false);
		cpu_enqueue(m, next);
	}
	model_task_pelt_update(m, next, ts);
	task_account(next, ts);	/* it waited until now */
	if (s->next_sum_exec_ns) {	/* it does not grow until now (update_curr() is for the running) */
		next->sum_exec_ns = s->next_sum_exec_ns;
		next->sum_exec_known = true;
	}
	c->curr = next->pid;
	c->fair_curr = next->fair;
	next->state = MODEL_TASK_RUNNING;
	if (m->has_groups)
		task_path_update_to(m, next, c->cpu, stop, ts);
}

/*
 * A switch out of idle that picks another task than the one the model
 * took as running when it woke on this idle CPU (task_enqueue(): a trace
 * may lack the switch out of idle, tracefs on this kernel always does for
 * CPU 1).  The CPU idled until now, so that task never ran: it waits,
 * queued and runnable, behind the one picked.  Taking it as vanished
 * instead (cpu_set_curr()) dropped it from the run queue until its own
 * switch in, a whole wait not counted in its runnable_avg nor the CPU's
 * (two periodic tasks woken by timers on one idle CPU do this each period).
 */
static void switch_from_idle_unguess(struct model *m, struct model_cpu *c, uint64_t ts)
{
	struct model_task *w = model_task_find(m, c->curr);

	if (!w || w->state != MODEL_TASK_RUNNING || w->cpu != c->cpu)
		return;
	model_task_pelt_update(m, w, ts);
	task_account(w, ts);
	w->state = MODEL_TASK_QUEUED;
	c->curr = 0;
	c->fair_curr = false;
}

/*
 * Where the source names no task groups and delays are guessed: whether
 * two tasks are taken as sharing a group below the root (threads of one
 * process, or processes one of which started the other: model_lineage.c),
 * so a switch between them updates no level above it, the root included.
 */
static bool same_guessed_group(const struct model *m, const struct model_task *a,
			       const struct model_task *b)
{
	return !m->has_groups && model_guess_delays(m) && model_lineage_related(a, b);
}

static void ev_switch(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_switch *s = &ev->sw;
	bool blocked = s->prev_state != IMB_STATE_RUNNING && s->prev_state != IMB_STATE_PREEMPTED;
	bool pfair, nfair = !model_pid_is_idle(s->next_pid) && s->next_prio >= 100;
	bool delayed = s->prev_delayed;
	uint64_t ts = ev->ts_ns, stop = 0;
	struct model_task *prev = NULL, *pt, *nt;
	struct model_cpu *c;

	if (model_cpu_grow(m, ev->cpu))
		return;
	c = &m->cpus[ev->cpu];
	model_cpu_account(c, ts);
	if (s->next_group && s->next_pid > 0)
		m->has_groups = true;
	/*
	 * update_load_avg() where the kernel's switch does it: a blocking
	 * prev's dequeue walks all its levels (a delayed one only its own),
	 * then put_prev and set_next walk up from both tasks to the run
	 * queue they share (all the way when one of them is not a CFS task).
	 */
	pt = s->prev_pid > 0 ? model_task_find(m, s->prev_pid) : NULL;
	nt = nfair ? model_task_find(m, s->next_pid) : NULL;
	pfair = pt && pt->fair && pt->state == MODEL_TASK_RUNNING && pt->cpu == c->cpu &&
		c->curr == pt->pid;
	if (pfair && nfair && m->has_groups)
		stop = model_group_common(m, c->cpu, task_level_group(m, pt, c->cpu),
					  task_level_group(m, nt, c->cpu));
	if (pfair && blocked && model_guess_delays(m)) {
		/* going idle, the pick dequeues a delayed task at once: no delay */
		delayed = model_eevdf_block(m, pt, c->cpu, ts) && nfair;
		m->delays_guessed += delayed;
	}
	if (pfair && blocked && delayed && nfair)
		task_delay(m, pt, c, stop, ts);
	else if (!(pfair && !blocked && nt && same_guessed_group(m, pt, nt)))
		task_path_update_to(m, pt, ev->cpu, pfair && !blocked ? stop : 0, ts);
	/*
	 * Going idle, the pick dequeues every delayed task, after the blocking
	 * prev's dequeue has brought each level up to now with its counts.
	 */
	if (model_pid_is_idle(s->next_pid) && c->nr_delayed)
		cpu_end_delays(m, c, ts, pelt_now(c, ts));
	if (nfair && m->has_groups)
		task_path_update_to(m, nt, ev->cpu, stop, ts);

	if (!model_pid_is_idle(s->prev_pid))
		prev = switch_prev_out(m, c, s, pfair && (!blocked || delayed) ? stop : 0, ts);
	else if (c->curr > 0 && c->curr != s->next_pid)
		switch_from_idle_unguess(m, c, ts);
	/*
	 * A task still current here that the switch does not name vanished
	 * (see cpu_set_curr()) — unless it is the one switched in: a task
	 * woken on this idle CPU was taken as running from its wake-up.
	 */
	if (c->curr > 0 && (!prev || c->curr != prev->pid) && c->curr != s->next_pid)
		cpu_set_curr(m, c, NULL, ts);
	c->curr = 0;
	c->fair_curr = false;
	c->switch_ns = ts;

	if (model_pid_is_idle(s->next_pid))
		c->idle_since_ns = ts;
	else
		switch_next_in(m, c, s, stop, ts);
}

static void ev_wakeup(struct model *m, const struct imb_event *ev, bool fresh)
{
	const struct imb_ev_wakeup *w = &ev->wakeup;
	struct model_task *t = model_task_get(m, w->pid, ev->ts_ns);
	int cpu = w->target_cpu >= 0 ? w->target_cpu : ev->cpu;

	if (!t)
		return;
	task_note(m, t, w->comm, w->prio, ev->ts_ns);
	model_task_set_tgid(m, t, w->tgid);
	if (fresh && t->state == MODEL_TASK_UNKNOWN)
		t->pelt_valid = false;
	m->new_tasks += fresh;
	task_enqueue(m, t, cpu, ev->ts_ns, fresh);
}

/*
 * The balancer moves a task whose dequeue is delayed (it may when it
 * migrates load; the detach traced the task's record, which ended its
 * delay in the model): the task is still queued, so it is detached from
 * its run queue at once (not removed later, as a sleeping task placed at
 * wake-up is) and attached on the new CPU, where it stays queued and
 * delayed (counted in h_nr_queued, not runnable) until it is picked and
 * finally dequeued there, or woken.  Without this the model attached it
 * only at its next wake-up, tens of milliseconds later on a loaded host.
 */
static void migrate_delayed(struct model *m, struct model_task *t, int dest, uint64_t ts)
{
	struct model_cpu *src = &m->cpus[t->cpu], *dst = &m->cpus[dest];
	uint64_t old = t->delayed_group;

	model_cpu_account(src, ts);
	task_detach_avg(m, t);
	if (old)
		model_path_update(m, src->cpu, old, pelt_now(src, ts));	/* the detach propagates */
	t->cpu = dest;
	model_cpu_account(dst, ts);
	t->delayed_group = model_task_place(m, t, dest);
	model_path_update(m, dest, t->delayed_group, pelt_now(dst, ts));	/* then attach */
	task_pelt_attach(m, t, ts, false);
	t->delayed = true;
	t->requeue = false;
	if (t->delayed_group) {
		model_path_update(m, dest, t->delayed_group, pelt_now(dst, ts));
		model_chain_hold(m, dest, t->delayed_group, 1);
		t->held_cpu = dest;
	}
	dst->nr_delayed++;
}

static void ev_migrate(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_migrate *mg = &ev->migrate;
	struct model_task *t = model_task_get(m, mg->pid, ev->ts_ns);
	uint64_t ts = ev->ts_ns;

	if (!t || model_cpu_grow(m, mg->dest_cpu) || model_cpu_grow(m, mg->orig_cpu))
		return;
	task_note(m, t, mg->comm, mg->prio, ts);
	t->migrations++;
	t->win_migrations++;
	t->win_seen = true;
	/*
	 * The balancer's detach of a delayed task is traced (its own record)
	 * just before this event, which the model took for its final dequeue.
	 */
	if (!t->delayed && t->delay_rec_ns && ts - t->delay_rec_ns <= 50000 &&
	    t->state == MODEL_TASK_SLEEPING && t->cpu == mg->orig_cpu &&
	    mg->dest_cpu != mg->orig_cpu && t->fair && t->pelt_valid && m->has_groups) {
		t->delay_rec_ns = 0;
		migrate_delayed(m, t, mg->dest_cpu, ts);
		return;
	}
	model_task_delay_end(m, t, 0, false);
	if (t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED) {
		struct model_cpu *src = &m->cpus[t->cpu >= 0 ? t->cpu : mg->orig_cpu];

		/* a queued task moved by the balancer: detach, attach at dest */
		model_cpu_account(src, ts);
		task_path_update(m, t, src->cpu, ts);
		model_task_pelt_update(m, t, ts);
		if (t->fair && model_guess_delays(m))
			model_eevdf_leave(m, t, src->cpu, ts);
		task_account(t, ts);
		cpu_unqueue(m, t);
		if (t->fair && t->pelt_valid)
			task_detach_avg(m, t);
		if (m->has_groups)
			task_path_update(m, t, src->cpu, ts);	/* the detach propagates */
		t->state = MODEL_TASK_SLEEPING;	/* transiently off any rq */
		t->cpu = mg->dest_cpu;
		t->pelt_valid = t->pelt_valid && t->fair;
		{
			struct model_cpu *dst = &m->cpus[mg->dest_cpu];

			/* pulled by dest's own balancer (model_eevdf_block()) */
			t->pulled_ns = ev->cpu == mg->dest_cpu ? ts : 0;
			model_cpu_account(dst, ts);
			task_path_update(m, t, dst->cpu, ts);
			if (t->fair && t->pelt_valid)
				task_pelt_attach(m, t, ts, false);
			t->state = MODEL_TASK_QUEUED;
			t->state_ns = ts;
			cpu_enqueue(m, t);
			if (dst->curr <= 0)
				cpu_set_curr(m, dst, t, ts);
			if (m->has_groups)
				task_path_update(m, t, dst->cpu, ts);
		}
		if (src->curr <= 0)
			src->idle_since_ns = ts;
	} else {
		/*
		 * A sleeping task placed on another CPU at wake-up: the
		 * kernel removes it from the old run queue here
		 * (migrate_task_rq_fair() in set_task_cpu(), where this
		 * tracepoint fires), its averages synced to that run queue's
		 * last update and, if the old CPU idles, decayed on to an
		 * estimate of its clock now (migrate_se_pelt_lag()); the
		 * enqueue that follows attaches them unchanged.
		 */
		if (t->cpu < 0)
			t->cpu = mg->orig_cpu;
		if (t->fair && t->pelt_valid && t->cpu != mg->dest_cpu && !t->attach_pending) {
			struct model_cpu *src = &m->cpus[t->cpu];

			task_remove_avg(m, t);
			if (src->curr <= 0)
				pelt_se_update(&t->avg, pelt_now(src, ts), model_task_weight(t), 0, 0, 0);
			t->attach_pending = true;
		}
	}
}

static void ev_fork(struct model *m, const struct imb_event *ev)
{
	struct model_task *t = model_task_get(m, ev->fork.child_pid, ev->ts_ns);

	if (!t)
		return;
	task_note(m, t, ev->fork.child_comm, -1, ev->ts_ns);
	model_task_set_att(m, t, 0);
	t->pelt_valid = false;
	t->attach_pending = false;
	model_task_set_tgid(m, t, ev->fork.child_tgid);
	{
		const struct model_task *p = model_task_find(m, ev->fork.parent_pid);

		if (p && p != t)
			t->group = p->group;	/* a child starts in its parent's group */
		model_lineage_fork(t, p != t ? p : NULL, ev->fork.parent_pid);
	}
	t->parent_pid = ev->fork.parent_pid;
	t->sum_exec_ns = 0;	/* a new task's run-time counter starts at zero */
	t->sum_exec_known = true;
}

static void ev_exit(struct model *m, const struct imb_event *ev)
{
	struct model_task *t = model_task_find(m, ev->exit.pid);
	uint64_t ts = ev->ts_ns;

	if (!t)
		return;
	task_note(m, t, ev->exit.comm, ev->exit.prio, ts);
	t->exited = true;
	t->win_seen = true;
	/*
	 * sched_process_exit fires while the task still runs; its final
	 * switch out dequeues it and task_block() then removes its PELT
	 * contribution.  A task that is not on a run queue now goes at once.
	 */
	if (t->state != MODEL_TASK_RUNNING && t->state != MODEL_TASK_QUEUED)
		task_kill(m, t, ts);
}

static void ev_runtime(struct model *m, const struct imb_event *ev)
{
	struct model_task *t = model_task_get(m, ev->runtime.pid, ev->ts_ns);
	uint64_t ts = ev->ts_ns;
	struct model_cpu *c;

	if (!t || model_cpu_grow(m, ev->cpu))
		return;
	t->last_ns = ts;
	/*
	 * update_curr() advances the task's vruntime by exactly this run
	 * time (the run-queue clock's, which leaves out IRQ time and starts
	 * a preempting task at its wake-up's clock).
	 */
	task_runtime_add(m, t, task_counter_step(t, ev->runtime.sum_exec_ns,
						 ev->runtime.runtime_ns));
	c = &m->cpus[ev->cpu];
	/*
	 * A task current on another CPU: a remote update_curr(), e.g. the
	 * balancer on this CPU updating the busiest CPU's current task before
	 * it pulls from it; the record is in this CPU's buffer, the task did
	 * not move.
	 */
	if (t->state == MODEL_TASK_RUNNING && t->cpu != ev->cpu && t->cpu >= 0 &&
	    t->cpu < m->nr_cpus && m->cpus[t->cpu].curr == t->pid)
		return;
	model_cpu_account(c, ts);
	/*
	 * The task runs on this CPU now.  If the model thought otherwise, the
	 * trace lacked the switch that started it.
	 */
	if (c->curr != t->pid) {
		task_account(t, ts);
		if (t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED) {
			if (t->cpu != ev->cpu) {
				task_path_update(m, t, t->cpu, ts);
				cpu_unqueue(m, t);
				if (t->fair && t->pelt_valid)
					task_detach_avg(m, t);
				t->cpu = ev->cpu;
				t->state = MODEL_TASK_QUEUED;
				cpu_enqueue(m, t);
				task_pelt_attach(m, t, ts, false);
			}
		} else {
			task_enqueue(m, t, ev->cpu, ts, false);
		}
		model_cpu_pelt_update(c, ts);
		if (c->curr != t->pid)
			cpu_set_curr(m, c, t, ts);
	}
	/*
	 * sched_stat_runtime is update_curr(), which updates no average; of
	 * its callers only the tick goes on to update every level of the
	 * current task's path (the others are an enqueue, a dequeue, a pick
	 * or a preemption check, which bring their own updates or none).
	 * Without the kernel's records any one may be a tick.  With them and
	 * the run-queue clocks, the update waits for the next event of the
	 * CPU (model_tick_settle()): one of the same instant shows what the
	 * update_curr() was part of; none, that it stood alone, a tick.
	 */
	model_task_pelt_update(m, t, ts);
	c->tick_pid = 0;
	if (model_guess_delays(m)) {
		c->tick_pid = t->pid;	/* model_tick_settle_plain() */
		c->tick_timer = ev->runtime.timer;
		c->tick_ns = ts;
	} else if (!m->has_kernel_pelt) {
		task_path_update(m, t, ev->cpu, ts);
	} else if (ev->flags & IMB_EVF_RQ_CLOCKS) {
		c->tick_pid = t->pid;
		c->tick_recs = false;
		c->tick_timer = ev->runtime.timer;
		c->tick_ns = ts;
		c->tick_clock = ev->clock_pelt_ns;
	}
}

/*
 * Before @ev: settle the lone update_curr() each CPU @ev changes may hold
 * (ev_runtime()).  An event of the same run-queue clock on that CPU other
 * than a record is part of the same operation (an enqueue, a dequeue, a
 * switch): nothing to do.  Otherwise it stood alone, and if it ran in an
 * hrtimer expiry it was the tick, which updates every level of the
 * current task's path, traced only where a period boundary was crossed
 * (the others' sums still carry that instant's counts, which their next
 * records integrate from).  Lone ones outside a timer (a thread reading
 * its own CPU time) update no average.  Where the source does not say,
 * only a lone update_curr() followed by records of its instant is taken
 * as the tick.
 */
static void model_tick_settle(struct model *m, const struct imb_event *ev)
{
	for (int i = 0; i < m->nr_cpus; i++) {
		struct model_cpu *c = &m->cpus[i];
		struct model_task *t;
		bool tick;

		if (!c->tick_pid || !model_ev_touches_cpu(ev, i))
			continue;
		if (model_ev_same_clock(ev, i, c->tick_clock)) {
			if (ev->kind == IMB_EV_PELT_CFS || ev->kind == IMB_EV_PELT_SE)
				c->tick_recs = true;
			else if (ev->kind != IMB_EV_RUNTIME)
				c->tick_pid = 0;
			continue;
		}
		tick = c->tick_timer == IMB_TIMER_UNKNOWN ? c->tick_recs :
		       c->tick_timer == IMB_TIMER_INSIDE;
		t = model_task_find(m, c->tick_pid);
		c->tick_pid = 0;
		if (tick && t && t->state == MODEL_TASK_RUNNING && t->cpu == i && c->curr == t->pid) {
			c->ev_clock = c->tick_clock;	/* at the tick's own clock */
			c->ev_clock_ts = c->tick_ns;
			task_path_update(m, t, i, c->tick_ns);
			c->ev_clock_ts = 0;
		}
	}
}

/*
 * model_tick_settle() for a stream without run-queue clocks or records to
 * use: a lone update_curr() is taken as the tick unless the source says it
 * ran outside a timer, or the next event of its CPU within 50 us is what
 * it was part of: the blocking switch of the same task (its dequeue: a
 * delayed one updates no level above the task's own) or a wake-up (its
 * enqueue, which updates every level itself).  One before a preemption
 * is taken as the tick that preempted.
 */
static void model_tick_settle_plain(struct model *m, const struct imb_event *ev)
{
	for (int i = 0; i < m->nr_cpus; i++) {
		struct model_cpu *c = &m->cpus[i];
		struct model_task *t;
		bool part;

		if (!c->tick_pid || !model_ev_touches_cpu(ev, i))
			continue;
		part = ev->ts_ns - c->tick_ns <= 50000 &&
		       ((ev->kind == IMB_EV_SWITCH && ev->cpu == i && ev->sw.prev_pid == c->tick_pid &&
			 ev->sw.prev_state != IMB_STATE_RUNNING &&
			 ev->sw.prev_state != IMB_STATE_PREEMPTED) ||
			ev->kind == IMB_EV_WAKEUP || ev->kind == IMB_EV_WAKEUP_NEW);
		t = model_task_find(m, c->tick_pid);
		c->tick_pid = 0;
		if (!part && c->tick_timer != IMB_TIMER_OUTSIDE && t &&
		    t->state == MODEL_TASK_RUNNING && t->cpu == i && c->curr == t->pid)
			task_path_update(m, t, i, c->tick_ns);
	}
}

/*
 * The root's side of a pick that dequeues a delayed task of a guessed
 * group (flat model): clear_delayed() counts the task runnable again on
 * every level before the walk up updates them, so the root integrates the
 * time since its last update as if the task had never left, and the delay
 * shows at the root only where something else updated it in between.
 * The model ends a delay at the first event that finds the task eligible
 * (delays_settle()); where that event is a preempting switch, the pick is
 * that switch's and comes before any walk of it: count the task once more
 * in a root update at once.  After a blocking prev's dequeue (which walks
 * the root first) or a tick (which updates it first) there is nothing
 * left to integrate.  An update_curr() that is not the tick (the BPF
 * source's timer mark) may be the schedule() that picks; it waits for the
 * CPU's next event: if that is the same task blocking within 50 us, the
 * update_curr() was its dequeue's, which walks the root before the pick.
 */
static void root_counts_delayed(struct model *m, int cpu, uint64_t now)
{
	struct model_cpu *c = &m->cpus[cpu];

	c->nr_queued++;
	model_level_update(m, cpu, 0, now);
	c->nr_queued--;
}

/* Before @ev: the pick a delay's end at an update_curr() may stand for (see above). */
static void pick_settle(struct model *m, const struct imb_event *ev)
{
	for (int i = 0; i < m->nr_cpus; i++) {
		struct model_cpu *c = &m->cpus[i];
		bool near;

		if (!c->pick_pid || !model_ev_touches_cpu(ev, i))
			continue;
		near = ev->cpu == i && ev->ts_ns - c->pick_ns <= 50000;
		if (near && ev->kind == IMB_EV_RUNTIME && ev->runtime.pid == c->pick_pid)
			continue;	/* more of the same schedule() */
		if (!(near && ev->kind == IMB_EV_SWITCH && ev->sw.prev_pid == c->pick_pid &&
		      ev->sw.prev_state != IMB_STATE_RUNNING &&
		      ev->sw.prev_state != IMB_STATE_PREEMPTED))
			root_counts_delayed(m, i, c->pick_now);
		c->pick_pid = 0;
	}
}

/* A delay of a guessed group's task on @cpu ended before @ev at PELT time @now. */
static void delay_end_root(struct model *m, const struct imb_event *ev, int cpu, uint64_t now)
{
	struct model_cpu *c = &m->cpus[cpu];

	if (m->has_groups || ev->cpu != cpu)
		return;
	if (ev->kind == IMB_EV_SWITCH && (ev->sw.prev_state == IMB_STATE_RUNNING ||
					  ev->sw.prev_state == IMB_STATE_PREEMPTED)) {
		root_counts_delayed(m, cpu, now);
	} else if (ev->kind == IMB_EV_RUNTIME && ev->runtime.timer == IMB_TIMER_OUTSIDE &&
		   !c->pick_pid) {
		c->pick_pid = ev->runtime.pid;
		c->pick_ns = ev->ts_ns;
		c->pick_now = now;
	}
}

/*
 * Where delays are guessed (model_eevdf.c): before @ev, a delayed task on
 * a CPU @ev changes that has become eligible since is taken off, as the
 * next pick there does (no event says when).
 */
static void delays_settle(struct model *m, const struct imb_event *ev)
{
	for (int i = 0; i < m->nr_cpus; i++) {
		struct model_cpu *c = &m->cpus[i];

		if (!c->nr_delayed || !model_ev_touches_cpu(ev, i))
			continue;
		for (size_t j = 0; j < m->nr_tasks && c->nr_delayed; j++) {
			struct model_task *t = &m->tasks[j];

			if (t->delayed && t->cpu == i && model_eevdf_eligible(m, t, i, ev->ts_ns)) {
				uint64_t now = pelt_now(c, ev->ts_ns);

				model_task_delay_end(m, t, now, true);
				t->vlag = 0;
				delay_end_root(m, ev, i, now);
			}
		}
	}
}

/* Apply one event's state change (the kind's handler). */
static void event_apply(struct model *m, const struct imb_event *ev)
{
	switch (ev->kind) {
	case IMB_EV_SWITCH:
		ev_switch(m, ev);
		break;
	case IMB_EV_WAKEUP:
		ev_wakeup(m, ev, false);
		break;
	case IMB_EV_WAKEUP_NEW:
		ev_wakeup(m, ev, true);
		break;
	case IMB_EV_WAKING:
		if (ev->wakeup.delayed) {
			struct model_task *t = model_task_find(m, ev->wakeup.pid);

			if (t && t->delayed)
				t->requeue = true;
		}
		break;
	case IMB_EV_MIGRATE:
		ev_migrate(m, ev);
		break;
	case IMB_EV_FORK:
		ev_fork(m, ev);
		break;
	case IMB_EV_EXIT:
		ev_exit(m, ev);
		break;
	case IMB_EV_RUNTIME:
		ev_runtime(m, ev);
		break;
	case IMB_EV_PELT_CFS:
		if (m->opts.plain_events)
			model_ev_pelt_plain(m, ev);
		else
			model_ev_pelt_cfs(m, ev);
		break;
	case IMB_EV_PELT_SE:
		if (m->opts.plain_events)
			model_ev_pelt_plain(m, ev);
		else
			model_ev_pelt_se(m, ev);
		break;
	case IMB_EV_VRUNTIME:
		if (ev->cpu >= 0 && ev->cpu < m->nr_cpus)
			m->cpus[ev->cpu].kvruntime = ev->vruntime.vruntime_ref;
		break;
	case IMB_EV_LOST:
		m->lost_events += ev->lost.count ? ev->lost.count : 1;
		m->win_lost += ev->lost.count ? ev->lost.count : 1;
		if (!ev->lost.marked)
			model_resync(m, ev->ts_ns);	/* else at the marked event */
		break;
	default:
		break;		/* NUMA: read by the analyzers */
	}
}

/*
 * The event as the model takes it, in @e when it differs from @ev: an
 * older one at the current time (counted), and with --plain-events
 * without task-group ids and run-queue clocks.
 */
static const struct imb_event *event_prepare(struct model *m, const struct imb_event *ev,
					     struct imb_event *e)
{
	if (ev->ts_ns < m->now_ns) {
		m->out_of_order++;
		*e = *ev;
		e->ts_ns = m->now_ns;
		ev = e;
	}
	if (m->opts.plain_events &&
	    ((ev->flags & IMB_EVF_RQ_CLOCKS) ||
	     (ev->kind == IMB_EV_SWITCH && (ev->sw.next_group || ev->sw.prev_delayed ||
					    ev->sw.prev_sum_exec_ns || ev->sw.next_sum_exec_ns)) ||
	     (ev->kind == IMB_EV_RUNTIME && ev->runtime.sum_exec_ns) ||
	     (ev->kind == IMB_EV_WAKING && ev->wakeup.delayed))) {
		if (ev != e) {
			*e = *ev;
			ev = e;
		}
		e->flags &= ~IMB_EVF_RQ_CLOCKS;
		if (e->kind == IMB_EV_SWITCH) {
			e->sw.next_group = 0;
			e->sw.prev_delayed = 0;
			e->sw.prev_sum_exec_ns = e->sw.next_sum_exec_ns = 0;
		}
		if (e->kind == IMB_EV_RUNTIME)
			e->runtime.sum_exec_ns = 0;
		if (e->kind == IMB_EV_WAKING)
			e->wakeup.delayed = 0;
	}
	return ev;
}

/*
 * The clock the kernel used for the updates an event stands for, where the
 * event carries its run queue's clocks: a switch and an update_curr() read
 * the clock of the CPU they are on, a wake-up that of its target.  The
 * event's time plus the offset is the real instant, but the kernel may use
 * an older clock: a wake-up that preempts asks the following schedule() to
 * skip its clock update, so a switch that comes late (a vCPU preempted, a
 * long non-preemptible section) is accounted at the wake-up's clock and
 * the time in between charged to the next task.
 */
static struct model_cpu *clock_hint(struct model *m, const struct imb_event *ev)
{
	struct model_cpu *c;
	int cpu = ev->cpu;

	if (m->opts.plain_events || !(ev->flags & IMB_EVF_RQ_CLOCKS))
		return NULL;
	switch (ev->kind) {
	case IMB_EV_SWITCH:
	case IMB_EV_RUNTIME:
		break;
	case IMB_EV_WAKEUP:
	case IMB_EV_WAKEUP_NEW:
		if (ev->wakeup.target_cpu >= 0)
			cpu = ev->wakeup.target_cpu;
		break;
	default:
		return NULL;
	}
	if (cpu < 0 || cpu >= m->nr_cpus)
		return NULL;
	c = &m->cpus[cpu];
	c->ev_clock = ev->clock_pelt_ns;
	c->ev_clock_ts = ev->ts_ns;
	return c;
}

/*
 * The CPU whose run-queue clock @ev carries, -1 none: a switch's, a tick's
 * and a record's are their own CPU's; a wake-up's the target's (the task's
 * run queue once placed); a migration's the CPU the task leaves (traced
 * before set_task_cpu() moves it).
 */
static int ev_clock_cpu(const struct imb_event *ev)
{
	if (!(ev->flags & IMB_EVF_RQ_CLOCKS))
		return -1;
	switch (ev->kind) {
	case IMB_EV_SWITCH:
	case IMB_EV_RUNTIME:
	case IMB_EV_PELT_CFS:
	case IMB_EV_PELT_SE:
		return ev->cpu;
	case IMB_EV_WAKEUP:
	case IMB_EV_WAKEUP_NEW:
		return ev->wakeup.target_cpu >= 0 ? ev->wakeup.target_cpu : ev->cpu;
	case IMB_EV_MIGRATE:
		return ev->migrate.orig_cpu >= 0 ? ev->migrate.orig_cpu : ev->cpu;
	default:
		return -1;
	}
}

/*
 * A CPU's PELT clock is the event clock plus an offset learnt from the
 * events that carry its run queue's clock (model_cpu_offset_bound(), from
 * switches and ticks).  Before any has, pelt_now() would use the event
 * clock itself, which runs ahead of the PELT clock by the idle, IRQ and
 * steal time since boot (1.5 s on a machine up for hours); as that clock
 * never moves back, every average of the CPU would then stand still until
 * the real clock caught up, and every task attached meanwhile would be
 * charged the difference on its next update.  A recording that opens with
 * a wake-up or a migration touching a CPU whose own events come later
 * does that.  So the first event that carries a CPU's clock, of any kind,
 * sets its offset.
 */
static void clock_first(struct model *m, const struct imb_event *ev)
{
	int cpu = ev_clock_cpu(ev);

	if (cpu < 0 || cpu >= m->nr_cpus || m->cpus[cpu].offset_ts)
		return;
	model_cpu_offset_bound(&m->cpus[cpu], (int64_t)ev->clock_pelt_ns - (int64_t)ev->ts_ns,
			       ev->ts_ns);
}

int model_event(struct model *m, const struct imb_event *ev)
{
	struct model_cpu *hint;
	struct imb_event e;
	bool gcmp_after;
	int cmp_after;

	if (ev->kind >= IMB_EV__COUNT)
		return -EINVAL;
	if (!m->events)
		m->t0_ns = m->now_ns = m->win_start_ns = ev->ts_ns;
	ev = event_prepare(m, ev, &e);
	m->now_ns = ev->ts_ns;
	m->events++;
	m->win_events++;
	m->kind_count[ev->kind]++;
	if (ev->cpu >= 0 && ev->cpu < MODEL_MAX_CPUS) {
		if (model_cpu_grow(m, ev->cpu))
			return -ENOMEM;
		/*
		 * The run queue clocks a record carries are as old as the last
		 * update_rq_clock() (tens of microseconds at a switch), so
		 * clock - ts is a lower bound of the offset now: keep the
		 * largest recent bound, and let it fall (steal and IRQ time
		 * slow clock_task down) only once it is 4 ms old.
		 */
		if ((ev->flags & IMB_EVF_RQ_CLOCKS) &&
		    (ev->kind == IMB_EV_SWITCH || ev->kind == IMB_EV_RUNTIME))
			model_cpu_offset_bound(&m->cpus[ev->cpu],
					       (int64_t)ev->clock_pelt_ns - (int64_t)ev->ts_ns,
					       ev->ts_ns);
		clock_first(m, ev);
	}
	if (ev->flags & IMB_EVF_GAP)
		model_resync(m, ev->ts_ns);

	cmp_after = m->has_kernel_pelt ? model_cpu_compare_pending(m, ev) : -1;
	gcmp_after = m->nr_gpend ? model_group_compare_pending(m, ev) : false;
	if (!model_guess_delays(m)) {
		model_tick_settle(m, ev);	/* only then is one held (ev_runtime()) */
	} else if (!model_ev_is_record(ev)) {
		/*
		 * Not at the kernel's own records (--plain-events keeps them
		 * to compare): a plain recording has none, and their instants
		 * are no pick nor tick.
		 */
		pick_settle(m, ev);
		model_tick_settle_plain(m, ev);
		delays_settle(m, ev);
	}
	hint = clock_hint(m, ev);
	event_apply(m, ev);
	if (hint)
		hint->ev_clock_ts = 0;
	if (cmp_after >= 0)
		model_cpu_compare(m, &m->cpus[cmp_after]);
	if (gcmp_after)
		model_group_compare_after(m);
	return 0;
}

/* Save what model_advance() is about to move; false without memory. */
static bool advance_save(struct model *m)
{
	size_t n = 0;

	if (m->adv_cpu_cap < (size_t)m->nr_cpus) {
		struct model_adv_cpu *a = realloc(m->adv_cpu, (size_t)m->nr_cpus * sizeof(*a));

		if (!a)
			return false;
		m->adv_cpu = a;
		m->adv_cpu_cap = (size_t)m->nr_cpus;
	}
	for (size_t i = 0; i < m->nr_tasks; i++)
		n += m->tasks[i].state == MODEL_TASK_RUNNING || m->tasks[i].state == MODEL_TASK_QUEUED;
	if (m->adv_task_cap < n) {
		struct model_adv_task *a = realloc(m->adv_task, n * sizeof(*a));

		if (!a)
			return false;
		m->adv_task = a;
		m->adv_task_cap = n;
	}
	for (int i = 0; i < m->nr_cpus; i++) {
		m->adv_cpu[i].cfs = m->cpus[i].cfs;
		m->adv_cpu[i].pelt_last = m->cpus[i].pelt_last;
	}
	m->nr_adv_task = 0;
	for (size_t i = 0; i < m->nr_tasks; i++) {
		const struct model_task *t = &m->tasks[i];

		if (t->state != MODEL_TASK_RUNNING && t->state != MODEL_TASK_QUEUED)
			continue;
		m->adv_task[m->nr_adv_task].idx = i;
		m->adv_task[m->nr_adv_task].avg = t->avg;
		m->nr_adv_task++;
	}
	return true;
}

void model_advance_undo(struct model *m)
{
	if (!m->adv_saved)
		return;
	m->adv_saved = false;
	for (int i = 0; i < m->nr_cpus && (size_t)i < m->adv_cpu_cap; i++) {
		m->cpus[i].cfs = m->adv_cpu[i].cfs;
		m->cpus[i].pelt_last = m->adv_cpu[i].pelt_last;
	}
	for (size_t i = 0; i < m->nr_adv_task; i++)
		if (m->adv_task[i].idx < m->nr_tasks)
			m->tasks[m->adv_task[i].idx].avg = m->adv_task[i].avg;
}

/*
 * @settle: compare and count the kernel samples still waiting (the end of
 * the stream); a window's end leaves them to the events that follow, as if
 * no window ended there (model_advance_window()).
 */
static void advance(struct model *m, uint64_t now_ns, bool settle)
{
	if (now_ns < m->now_ns)
		now_ns = m->now_ns;
	for (int i = 0; settle && i < m->nr_cpus; i++) {
		if (m->cpus[i].cmp_pending)
			model_cpu_compare(m, &m->cpus[i]);
		model_cpu_commit(m, &m->cpus[i]);
	}
	m->adv_saved = advance_save(m);
	for (int i = 0; i < m->nr_cpus; i++) {
		model_cpu_account(&m->cpus[i], now_ns);
		model_cpu_pelt_update(&m->cpus[i], now_ns);
	}
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		if (t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED)
			model_task_pelt_update(m, t, now_ns);
		task_account(t, now_ns);
	}
	m->now_ns = now_ns;
}

void model_advance(struct model *m, uint64_t now_ns)
{
	advance(m, now_ns, true);
}

void model_advance_window(struct model *m, uint64_t now_ns)
{
	advance(m, now_ns, false);
}

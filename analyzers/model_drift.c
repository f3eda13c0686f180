// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_drift.c - a guessed task group's entity drift, where the recording
 * names no groups.
 *
 * A task group's entity on a CPU integrates the runnable count its run
 * queue had when a walk last passed it (se_update_runnable()); its run
 * queue integrates the count it has.  A delayed dequeue lowers the run
 * queue's count at once (set_delayed()) and a requeue raises it again,
 * neither walking up, so between walks the entity integrates more (or
 * less) than its run queue.  The root never sees the entity's average
 * except at a propagation (an attach, a detach, removed load:
 * update_tg_cfs_runnable()), which adds to the root the run queue's
 * average less the entity's: the task's average less the drift.  The flat
 * model (no group ids) adds the task's average alone.
 *
 * So for each guessed group on a CPU (a lineage, model_lineage.c) the
 * model keeps the count its entity last took and the count its run queue
 * has, integrates their difference as PELT does (one sum per sign, since
 * a sum cannot go below zero), and at the next propagation takes it off
 * the root, as update_tg_cfs_runnable()'s add_positive() does, and starts
 * again.  Only where delays are guessed (model_eevdf.c): with group ids
 * the model has the groups themselves.  The kernel's own records show the
 * size of it: in the recordings kept with them, the drift the model took
 * off at each propagation was within 4 of the group entity's runnable_avg
 * less its run queue's (both traced at that instant).
 */
#include "model_internal.h"

static bool drift_on(const struct model *m)
{
	return !m->has_groups && model_guess_delays(m);
}

static bool slot_idle(const struct model_drift *d)
{
	return !d->key || (!d->w_stale && !d->w_cur && !d->pos.avg.runnable_sum &&
			   !d->neg.avg.runnable_sum);
}

static void slot_restart(struct model_drift *d, uint64_t now)
{
	pelt_cfs_init(&d->pos);
	pelt_cfs_init(&d->neg);
	d->pos.avg.last_update_time = d->neg.avg.last_update_time = now;
}

/*
 * The slot of @t's guessed group on @cpu; with @make a new one (an idle
 * slot taken over) if it has none.  NULL: a task of the root group, or
 * no slot free (that group's drift is then not modelled).
 */
static struct model_drift *drift_slot(struct model *m, const struct model_task *t, int cpu,
				      bool make)
{
	struct model_drift *free_slot = NULL;
	int32_t key = model_lineage_key(t);
	struct model_cpu *c;

	if (cpu < 0 || cpu >= m->nr_cpus || key <= 0)
		return NULL;
	c = &m->cpus[cpu];
	for (int i = 0; i < MODEL_DRIFT_SLOTS; i++) {
		struct model_drift *d = &c->drift[i];

		if (d->key == key)
			return d;
		if (!free_slot && slot_idle(d))
			free_slot = d;
	}
	if (!make || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->key = key;
	slot_restart(free_slot, c->pelt_last);
	return free_slot;
}

/* Integrate the count difference up to the CPU's PELT clock. */
static void drift_advance(const struct model_cpu *c, struct model_drift *d)
{
	uint32_t pos = d->w_stale > d->w_cur ? d->w_stale - d->w_cur : 0;
	uint32_t neg = d->w_cur > d->w_stale ? d->w_cur - d->w_stale : 0;

	/* a weight of 1: PELT integrates no runnable time without load */
	if (c->pelt_last > d->pos.avg.last_update_time)
		pelt_cfs_update(&d->pos, c->pelt_last, 1, pos, 0);
	if (c->pelt_last > d->neg.avg.last_update_time)
		pelt_cfs_update(&d->neg, c->pelt_last, 1, neg, 0);
}

/*
 * @t's counts come on (@delta 1) or off (-1) its CPU's run queue @cpu;
 * with @walk the change walks up (an enqueue or dequeue), so the entity
 * takes the new count; without, only the run queue has it (a delay, a
 * requeue).
 */
void model_drift_count(struct model *m, const struct model_task *t, int cpu, int delta, bool walk)
{
	struct model_drift *d;

	if (!drift_on(m) || !(d = drift_slot(m, t, cpu, delta > 0)))
		return;
	drift_advance(&m->cpus[cpu], d);
	if (delta < 0 && d->w_cur)
		d->w_cur--;
	else if (delta > 0)
		d->w_cur++;
	if (walk)
		d->w_stale = d->w_cur;
}

/* A walk up from @t's group on @cpu (a delay's end at a pick): the entity takes the count. */
void model_drift_refresh(struct model *m, const struct model_task *t, int cpu)
{
	struct model_drift *d;

	if (!drift_on(m) || !(d = drift_slot(m, t, cpu, false)))
		return;
	drift_advance(&m->cpus[cpu], d);
	d->w_stale = d->w_cur;
}

/*
 * A propagation from @t's group on @cpu (its attach, detach or removed
 * load there): the root takes the run queue's average, not the entity's,
 * so the drift comes off the root's runnable average and sum, floored as
 * update_tg_cfs_runnable() floors them.
 */
void model_drift_propagate(struct model *m, const struct model_task *t, int cpu)
{
	struct model_drift *d;
	struct pelt_avg *root;
	int64_t davg, dsum;

	if (!drift_on(m) || !(d = drift_slot(m, t, cpu, false)))
		return;
	drift_advance(&m->cpus[cpu], d);
	dsum = (int64_t)d->pos.avg.runnable_sum - (int64_t)d->neg.avg.runnable_sum;
	davg = dsum / (int64_t)(PELT_MIN_DIVIDER + d->pos.avg.period_contrib);
	root = &m->cpus[cpu].cfs.avg;
	if (davg > (int64_t)root->runnable_avg)
		root->runnable_avg = 0;
	else
		root->runnable_avg = (unsigned long)((int64_t)root->runnable_avg - davg);
	if (dsum > (int64_t)root->runnable_sum)
		root->runnable_sum = 0;
	else
		root->runnable_sum = (uint64_t)((int64_t)root->runnable_sum - dsum);
	if (root->runnable_sum < (uint64_t)root->runnable_avg * PELT_MIN_DIVIDER)
		root->runnable_sum = (uint64_t)root->runnable_avg * PELT_MIN_DIVIDER;
	slot_restart(d, m->cpus[cpu].pelt_last);
	m->drift_propagations += davg != 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_kernel.c - the kernel's own PELT values in the model.
 *
 * Where the stream carries pelt_cfs_tp/pelt_se_tp records (BPF, or the
 * sched_pelt_* events of out-of-tree modules) they seed an entity the
 * first time it is seen, show the instants of the kernel's lazy updates
 * (blocked averages of groups), and are compared with the engine at the
 * end of the kernel update they report: the error histograms of model.h.
 * With --plain-events they are only compared.
 */
#include "model_internal.h"

static void err_add(struct model_err_hist *h, uint64_t engine, uint64_t kernel)
{
	uint64_t d = engine > kernel ? engine - kernel : kernel - engine;

	h->samples++;
	if (d > h->max_abs)
		h->max_abs = d;
	h->bucket[d < MODEL_ERR_BUCKETS ? d : MODEL_ERR_BUCKETS]++;
}

/* The engine's averages @e against the kernel's three at one record. */
static void err_add_avg(struct model_err_hist *h, const struct pelt_avg *e, uint64_t util,
			uint64_t runnable, uint64_t load)
{
	err_add(&h[MODEL_SIG_UTIL], e->util_avg, util);
	err_add(&h[MODEL_SIG_RUNNABLE], e->runnable_avg, runnable);
	err_add(&h[MODEL_SIG_LOAD], e->load_avg, load);
}

uint64_t model_err_quantile(const struct model_err_hist *h, double q)
{
	uint64_t want, seen = 0;

	if (!h->samples)
		return 0;
	want = (uint64_t)(q * (double)h->samples);
	if (want >= h->samples)
		want = h->samples - 1;
	for (size_t i = 0; i <= MODEL_ERR_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen > want)
			return i < MODEL_ERR_BUCKETS ? i : h->max_abs;
	}
	return h->max_abs;
}

static void pelt_from_kernel(struct pelt_avg *a, unsigned long w, uint64_t lut, uint64_t load_sum,
			     uint64_t runnable_sum, uint32_t util_sum, uint32_t pc,
			     uint64_t load_avg, uint64_t runnable_avg, uint64_t util_avg)
{
	/*
	 * Records with averages only (the sched_pelt_* events of out-of-tree
	 * modules such as LISA's carry no sums nor period_contrib): sums that
	 * give back these averages, as the kernel's invariant avg = sum /
	 * divider has it, mid-period (the phase is unknown: at most 1024 of
	 * the divider's 46718..47742, 1 %).  @w: 1 for a run queue, whose load
	 * sum is weighted; an entity's weight for an entity, whose is not.
	 */
	if (!load_sum && !runnable_sum && !util_sum && !pc &&
	    (load_avg || runnable_avg || util_avg)) {
		uint32_t div = PELT_MIN_DIVIDER + 512;

		pc = 512;
		util_sum = (uint32_t)(util_avg * div);
		runnable_sum = runnable_avg * div;
		load_sum = load_avg * div / (w ? w : 1);
	}
	a->last_update_time = lut;
	a->load_sum = load_sum;
	a->runnable_sum = runnable_sum;
	a->util_sum = util_sum;
	a->period_contrib = pc;
	a->load_avg = load_avg;
	a->runnable_avg = runnable_avg;
	a->util_avg = util_avg;
}

/*
 * The kernel's own root run-queue values at one of its update instants.
 * The first one seeds the engine (whose history before the trace is
 * unknown); later ones are compared after bringing the engine to the same
 * PELT instant.
 */
void model_cpu_compare(struct model *m, struct model_cpu *c)
{
	const struct imb_ev_pelt_cfs *k = &c->cmp_k;
	const struct pelt_avg *e = &c->cfs.avg;
	struct pelt_cfs tmp;

	c->cmp_pending = false;
	model_cpu_commit(m, c);
	if (c->cmp_ns - m->t0_ns < MODEL_WARMUP_NS)
		return;
	if (m->opts.plain_events) {
		/* a copy brought to the record's instant (model_ev_pelt_plain()) */
		int64_t v = (int64_t)c->cmp_ns + c->pelt_offset;

		tmp = c->cfs;
		if (v > 0 && (uint64_t)v > tmp.avg.last_update_time)
			model_root_update(c, &tmp, (uint64_t)v);
		e = &tmp.avg;
	}
	c->tent = true;
	c->tent_lut = k->last_update_time;
	c->tent_e[MODEL_SIG_UTIL] = e->util_avg;
	c->tent_e[MODEL_SIG_RUNNABLE] = e->runnable_avg;
	c->tent_e[MODEL_SIG_LOAD] = e->load_avg;
	c->tent_k[MODEL_SIG_UTIL] = k->util_avg;
	c->tent_k[MODEL_SIG_RUNNABLE] = k->runnable_avg;
	c->tent_k[MODEL_SIG_LOAD] = k->load_avg;
}

/*
 * Count the CPU's compared sample.  A sample is compared when an event
 * changes its CPU, but the kernel may still be inside the same locked
 * operation (the balancer's attach loop, a fork's attach and propagation
 * trace several root records of one update instant, with other events
 * between them): a later root record of the same instant supersedes it
 * (model_ev_pelt_cfs()), so it is counted only when a record of another
 * instant comes, or at model_advance().
 */
void model_cpu_commit(struct model *m, struct model_cpu *c)
{
	if (!c->tent)
		return;
	c->tent = false;
	for (int i = 0; i < MODEL_SIG__COUNT; i++)
		err_add(&m->err_cpu[i], c->tent_e[i], c->tent_k[i]);
}

/*
 * The CPU whose kernel records of the change @ev reports were traced
 * before @ev itself, -1 none: an enqueue's attach fires before the
 * wake-up tracepoint (on the target CPU), and a queued task's detach
 * before sched_migrate_task (on the CPU it leaves; the attach on the
 * destination comes after).
 */
static int ev_attach_cpu(const struct imb_event *ev)
{
	switch (ev->kind) {
	case IMB_EV_WAKEUP:
	case IMB_EV_WAKEUP_NEW:
		return ev->wakeup.target_cpu;
	case IMB_EV_MIGRATE:
		return ev->migrate.orig_cpu;
	default:
		return -1;
	}
}

/* The last update instant a kernel PELT record of @ev names, 0 for other events. */
static uint64_t ev_pelt_lut(const struct imb_event *ev)
{
	if (ev->kind == IMB_EV_PELT_CFS)
		return ev->pelt_cfs.last_update_time;
	if (ev->kind == IMB_EV_PELT_SE)
		return ev->pelt_se.last_update_time;
	return 0;
}

/* A kernel PELT record, or the vruntime sample taken from one. */
bool model_ev_is_record(const struct imb_event *ev)
{
	return ev->kind == IMB_EV_PELT_CFS || ev->kind == IMB_EV_PELT_SE ||
	       ev->kind == IMB_EV_VRUNTIME;
}

/* Whether applying @ev can change the model's run queues of CPU @cpu. */
bool model_ev_touches_cpu(const struct imb_event *ev, int cpu)
{
	if (ev->kind == IMB_EV_VRUNTIME)
		return false;
	if (ev->cpu == cpu || ev_attach_cpu(ev) == cpu)
		return true;
	return ev->kind == IMB_EV_MIGRATE && ev->migrate.dest_cpu == cpu;
}

/*
 * Whether @ev happened on CPU @cpu within the PELT clock unit (1024 ns)
 * that starts at @clock: the same update_rq_clock() instant, so part of
 * the same locked operation as what was seen there (averages cannot move
 * before the clock crosses the next unit).
 */
bool model_ev_same_clock(const struct imb_event *ev, int cpu, uint64_t clock)
{
	return ev->cpu == cpu && (ev->flags & IMB_EVF_RQ_CLOCKS) && ev->clock_pelt_ns >= clock &&
	       ev->clock_pelt_ns - clock < 1024;
}

/*
 * Whether @ev, on CPU @cpu, is an update_curr() under the same run-queue
 * clock as the sample taken at @lut: sched_stat_runtime fires in the
 * middle of an enqueue or of the balancer's attach loop, between records
 * of one locked operation.
 */
static bool ev_same_instant(const struct imb_event *ev, int cpu, uint64_t lut)
{
	return ev->kind == IMB_EV_RUNTIME && model_ev_same_clock(ev, cpu, lut);
}

/*
 * Before applying @ev: compare the kernel samples that @ev would change,
 * or return the CPU whose sample is compared after @ev.
 *
 * A root record is the state at the end of one locked update of its CPU,
 * but the kernel traces it in the middle of the operation the model sees
 * as one event: an enqueue's attach fires before the wake-up or migration
 * tracepoint that tells of it, a group's propagation fires the root and
 * then the group's entity.  So a sample waits until an event changes its
 * CPU (events of other CPUs cannot move its engine values), records of
 * the same update instant join it (a newer root record replaces it), and
 * an enqueue-type change of the CPU within 50 us is applied first.
 */
int model_cpu_compare_pending(struct model *m, const struct imb_event *ev)
{
	int after = -1, acpu = ev_attach_cpu(ev);
	uint64_t lut = ev_pelt_lut(ev);

	for (int i = 0; i < m->nr_cpus; i++) {
		struct model_cpu *c = &m->cpus[i];

		if (!c->cmp_pending || !model_ev_touches_cpu(ev, i))
			continue;
		if (lut && lut == c->cmp_k.last_update_time)
			continue;	/* the same update: a record of its end */
		if (ev_same_instant(ev, i, c->cmp_k.last_update_time))
			continue;
		if (i == acpu && ev->ts_ns - c->cmp_ns <= 50000)
			after = i;
		else
			model_cpu_compare(m, c);
	}
	return after;
}

/* The engine's error against the group's last kernel record, now. */
static void group_compare(struct model *m, struct model_group *g)
{
	bool cfs = g->kcfs_cmp;
	/* counted after the warm-up, as the CPUs' (model_cpu_compare()) */
	bool count = g->kcmp_ns - m->t0_ns >= MODEL_WARMUP_NS;

	g->k_pending = g->k_after = g->kcfs_cmp = false;
	if (g->kse_cmp) {
		g->kse_cmp = false;
		if (count)
			err_add_avg(m->err_group_se, &g->se, g->kse_avg[MODEL_SIG_UTIL],
				    g->kse_avg[MODEL_SIG_RUNNABLE], g->kse_avg[MODEL_SIG_LOAD]);
	}
	if (!cfs)
		return;
	g->k_compared++;
	if (count)
		err_add_avg(m->err_group, &g->cfs.avg, g->k_avg[MODEL_SIG_UTIL],
			    g->k_avg[MODEL_SIG_RUNNABLE], g->k_avg[MODEL_SIG_LOAD]);
	g->k_err[MODEL_SIG_UTIL] = (int64_t)g->cfs.avg.util_avg - (int64_t)g->k_avg[MODEL_SIG_UTIL];
	g->k_err[MODEL_SIG_RUNNABLE] = (int64_t)g->cfs.avg.runnable_avg -
				       (int64_t)g->k_avg[MODEL_SIG_RUNNABLE];
	g->k_err[MODEL_SIG_LOAD] = (int64_t)g->cfs.avg.load_avg - (int64_t)g->k_avg[MODEL_SIG_LOAD];
}

/*
 * Keep a group's kernel values; with @compare, the engine's error against
 * them, taken as for the CPUs (model_cpu_compare_pending()): the engine has just
 * been brought to the record's PELT instant, but the kernel fires
 * pelt_cfs_tp inside an enqueue's attach, before the wake-up that tells
 * the model of it, so the comparison waits for the next event.
 */
/*
 * A record of group @g (its run queue's or its entity's) waits to be
 * compared: the newer values replace waiting ones of the same kind.
 */
static void group_pend(struct model *m, struct model_group *g, uint64_t ts)
{
	g->kcmp_ns = ts;
	if (g->k_pending)
		return;
	if (m->nr_gpend == MODEL_GROUP_PENDING) {
		group_compare(m, g);	/* no room to wait: compare at the record */
		return;
	}
	g->k_pending = true;
	g->k_after = false;
	m->gpend[m->nr_gpend].cpu = g->cpu;
	m->gpend[m->nr_gpend].id = g->id;
	m->nr_gpend++;
}

static void group_kernel_note(struct model *m, struct model_group *g, const struct imb_event *ev,
			      bool compare)
{
	const struct imb_ev_pelt_cfs *k = &ev->pelt_cfs;

	if (g->k_ns && g->k_lut != k->last_update_time) {
		g->k_prev_ns = g->k_ns;
		memcpy(g->k_prev_avg, g->k_avg, sizeof(g->k_avg));
	}
	g->k_lut = k->last_update_time;
	g->k_ns = ev->ts_ns;
	g->k_avg[MODEL_SIG_UTIL] = k->util_avg;
	g->k_avg[MODEL_SIG_RUNNABLE] = k->runnable_avg;
	g->k_avg[MODEL_SIG_LOAD] = k->load_avg;
	g->k_h_nr_queued = k->h_nr_queued;
	if (!compare) {
		g->kcfs_cmp = false;
		/* stays in gpend[]: dropped there when found not pending */
		g->k_pending = g->kse_cmp;
		return;
	}
	g->kcfs_cmp = true;
	group_pend(m, g, ev->ts_ns);
}

/*
 * Before applying @ev: each group record waiting is compared now, or, when
 * @ev is an enqueue-type change of its CPU within 50 us, after @ev
 * (model_group_compare_after()).  PELT records of the same update wait on.
 */
bool model_group_compare_pending(struct model *m, const struct imb_event *ev)
{
	int acpu = ev_attach_cpu(ev), n = 0;
	bool after = false;

	if (model_ev_is_record(ev))
		return false;
	for (int i = 0; i < m->nr_gpend; i++) {
		struct model_group *g = model_group_find(m, m->gpend[i].cpu, m->gpend[i].id);

		if (!g || !g->k_pending)
			continue;	/* evicted, or re-seeded */
		if (g->cpu == acpu && ev->ts_ns - g->kcmp_ns <= 50000) {
			g->k_after = true;
			after = true;
			m->gpend[n++] = m->gpend[i];
		} else {
			group_compare(m, g);
		}
	}
	m->nr_gpend = n;
	return after;
}

/* After applying the event: compare the records model_group_compare_pending() kept. */
void model_group_compare_after(struct model *m)
{
	int n = 0;

	for (int i = 0; i < m->nr_gpend; i++) {
		struct model_group *g = model_group_find(m, m->gpend[i].cpu, m->gpend[i].id);

		if (g && g->k_pending && g->k_after)
			group_compare(m, g);
		else if (g && g->k_pending)
			m->gpend[n++] = m->gpend[i];
	}
	m->nr_gpend = n;
}

/*
 * A kernel record of a group's run queue.  The first one seeds the group
 * (and its entity, taken as in step with it, as propagation keeps it);
 * later ones are instants of the kernel's own updates of that run queue,
 * among them the lazy ones of update_blocked_averages() that no other
 * event shows (pelt_cfs_tp fires only from an update that crossed a
 * period, or from an attach, detach or propagation).  Only that run queue
 * is brought to the record: a delayed dequeue, a requeue and a switch
 * within the group update this level alone, and where the kernel goes on
 * up, the entity's own record follows (ev_pelt_se_group()), which applies
 * removed load and propagates.
 */
static void ev_pelt_cfs_group(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_pelt_cfs *k = &ev->pelt_cfs;
	uint64_t id = k->cgroup_id, parent = model_tg_internal(k->parent_id);
	struct model_group *g;

	if (k->parent_id)
		m->has_groups = true;	/* a source that names groups */
	if (!m->has_groups || !id || id == IMB_TG_ROOT)
		return;
	g = model_group_get(m, ev->cpu, id, parent, 0);
	if (!g) {
		m->groups_overflow++;
		return;
	}
	if (k->parent_id && g->parent_id != parent && !g->nr_queued && !g->se_attached &&
	    !g->nr_children && (!parent || model_group_get(m, ev->cpu, parent, 0, 0))) {
		struct model_group *p;

		if ((p = model_group_find(m, ev->cpu, g->parent_id)) && p->nr_children)
			p->nr_children--;
		g = model_group_find(m, ev->cpu, id);
		g->parent_id = parent;
		if ((p = model_group_find(m, ev->cpu, parent)))
			p->nr_children++;
		g = model_group_find(m, ev->cpu, id);
	}
	if (!g->kseeded) {
		struct pelt_avg *se = &g->se;
		bool propagated = se->util_avg || se->runnable_avg || se->load_avg;
		uint32_t div;

		g->kseeded = true;
		pelt_from_kernel(&g->cfs.avg, 1, k->last_update_time, k->load_sum, k->runnable_sum,
				 k->util_sum, k->period_contrib, k->load_avg, k->runnable_avg,
				 k->util_avg);
		g->cfs.prop_runnable_sum = 0;
		g->propagate = false;
		/* the entity as propagation keeps it; the parent's kernel values hold it */
		*se = g->cfs.avg;
		div = PELT_MIN_DIVIDER + se->period_contrib;
		se->load_sum = (uint64_t)se->load_avg * div / (g->shares ? g->shares : 1);
		se->weight = g->shares;
		g->se_attached = true;
		/*
		 * What the model propagated up from it so far is in the kernel's
		 * values too: take the root's again from its next record (at
		 * the start only: a group born during the run has propagated
		 * nothing before the kernel's first record of it).
		 */
		if (propagated)
			m->cpus[ev->cpu].reseed = true;
		group_kernel_note(m, g, ev, false);
		return;
	}
	if (k->h_nr_runnable < g->h_nr_runnable && (id & IMB_TG_AUTOGROUP)) {
		struct model_cpu *c = &m->cpus[ev->cpu];
		struct model_task *t = c->curr > 0 ? model_task_find(m, c->curr) : NULL;

		/*
		 * The detach of the current task's autogroup exit: apply it
		 * now, if the record lost the task's averages.  It comes just
		 * before the final switch, and an exiting task may run on for
		 * a while after sched_process_exit: a lower count alone may be
		 * another task's enqueue the model took early (a balancer's
		 * migration, whose attach is traced before the enqueue).
		 */
		if (t && t->exited && t->q_group == id &&
		    k->runnable_avg + t->avg.runnable_avg / 2 < g->cfs.avg.runnable_avg) {
			group_kernel_note(m, g, ev, false);
			/*
			 * At the record's own clock (the offset estimate may run
			 * microseconds ahead).  The root's records of this instant
			 * come after the move, with the count it left: the
			 * interval before it was integrated at the dequeue, with
			 * the count before (no recount, model_ev_pelt_cfs()).
			 */
			if (ev->flags & IMB_EVF_RQ_CLOCKS) {
				c->ev_clock = ev->clock_pelt_ns;
				c->ev_clock_ts = ev->ts_ns;
			}
			model_task_exit_autogroup(m, t, ev->cpu, ev->ts_ns);
			c->ev_clock_ts = 0;
			c->moved_lut = c->cfs.avg.last_update_time;
			return;
		}
	}
	if (k->last_update_time > g->cfs.avg.last_update_time) {
		/* with the count the kernel integrated with (see model_ev_pelt_cfs()) */
		if (g->cfs.removed_nr)
			g->propagate = true;
		pelt_cfs_update(&g->cfs, k->last_update_time, g->weight, k->h_nr_runnable,
				model_group_is_curr(m, &m->cpus[ev->cpu], g));
	}
	group_kernel_note(m, g, ev, true);
}

/*
 * Events were lost before @ts: a record the source marked (the BPF ring
 * was full, IMB_EVF_GAP), or a lost event the source did not mark (a
 * marked one, the count of a loss whose mark comes on that CPU's next
 * record, only counts).  Whatever the lost events would have changed is
 * missing from the engine for good (a missed wake-up leaves a task
 * asleep, a missed exit a dead task's load), so with the
 * kernel's values at hand it takes them again as at the start: each root
 * run queue from its next record (then its task count at once, not one
 * task per 20 ms: model_cpu_count_check()), each group's run queue and
 * entity from theirs, each task from its first record after @ts.  Those
 * records seed and are not compared; the comparisons go on after them.
 * Without the kernel's values (plain recordings) nothing can be taken.
 */
void model_resync(struct model *m, uint64_t ts)
{
	if (!m->has_kernel_pelt || m->opts.plain_events)
		return;
	/*
	 * The same gap again: a root record and the vruntime event taken from
	 * it carry one mark.  Flagging anew would make the CPU whose record
	 * just seeded it seed once more.
	 */
	if (m->resyncs && ts == m->gap_ns)
		return;
	m->gap_ns = ts;
	m->resyncs++;
	for (int i = 0; i < m->nr_cpus; i++) {
		m->cpus[i].reseed = true;
		m->cpus[i].gap_counts = true;
	}
	for (size_t i = 0; i < m->nr_groups; i++) {
		m->groups[i].kseeded = false;
		m->groups[i].kse_seeded = false;
	}
}

void model_ev_pelt_cfs(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_pelt_cfs *k = &ev->pelt_cfs;
	struct model_cpu *c;

	if (model_cpu_grow(m, ev->cpu))
		return;
	if (!k->root) {
		ev_pelt_cfs_group(m, ev);
		return;
	}
	m->has_kernel_pelt = true;
	c = &m->cpus[ev->cpu];
	if (c->tent && c->tent_lut == k->last_update_time)
		c->tent = false;	/* superseded: the same update went on */
	else
		model_cpu_commit(m, c);
	if (ev->flags & IMB_EVF_RQ_CLOCKS)
		model_cpu_offset_bound(c, (int64_t)k->last_update_time - (int64_t)ev->ts_ns, ev->ts_ns);
	model_cpu_account(c, ev->ts_ns);
	if (m->has_groups)
		model_cpu_count_check(m, c, k->h_nr_queued, k->last_update_time, ev->ts_ns);
	if (!c->kcfs_ns || c->reseed) {
		c->reseed = false;
		c->cmp_pending = false;
		pelt_from_kernel(&c->cfs.avg, 1, k->last_update_time, k->load_sum, k->runnable_sum,
				 k->util_sum, k->period_contrib, k->load_avg, k->runnable_avg,
				 k->util_avg);
	} else {
		/* the engine's clock may be a little ahead: then compare as is */
		/*
		 * The record's h_nr_runnable is the count the kernel integrated
		 * with up to this instant; within a dequeue it is already the
		 * lowered one (the task's levels are accounted before the
		 * update of the upper ones), which the model learns only at
		 * the switch that follows.
		 */
		if (k->last_update_time > c->cfs.avg.last_update_time)
			pelt_cfs_update(&c->cfs, k->last_update_time, c->root_weight,
					m->has_groups ? k->h_nr_runnable : c->nr_queued,
					c->curr > 0 && c->fair_curr);
		/*
		 * The engine got to this instant before the record, on the
		 * entity's record that precedes it (a group's entity is traced
		 * first, and the model updates the levels above it there), with
		 * its own count.  In a delayed dequeue that count is stale: the
		 * kernel lowers h_nr_runnable on every level before put_prev
		 * updates the upper ones, and the model learns of the delay
		 * only at the switch.  The first record of the instant gives
		 * the count the kernel integrated with (later ones of the same
		 * instant may show a count changed since).
		 */
		else if (m->has_groups && k->last_update_time == c->cfs.avg.last_update_time &&
			 c->kcfs.last_update_time != k->last_update_time &&
			 c->moved_lut != k->last_update_time)
			pelt_cfs_recount(&c->cfs, k->h_nr_runnable);
		/*
		 * The kernel fires pelt_cfs_tp inside an enqueue's attach,
		 * before the wake-up or migration tracepoint that tells us
		 * of it: compare after the next event if that one is such a
		 * change of this CPU within 50 us (model_cpu_compare_pending()).
		 */
		c->cmp_pending = true;
		c->cmp_ns = ev->ts_ns;
		c->cmp_k = *k;
	}
	if (k->last_update_time > c->pelt_last)
		c->pelt_last = k->last_update_time;
	if (c->kcfs_ns && c->kcfs.last_update_time != k->last_update_time) {
		c->kcfs_prev = c->kcfs;
		c->kcfs_prev_ns = c->kcfs_ns;
	}
	c->kcfs = *k;
	c->kcfs_ns = ev->ts_ns;
}

/*
 * A kernel record of a group's entity.  The kernel updates a group entity
 * only right after its group's run queue (every caller walks the
 * hierarchy bottom-up, and update_blocked_averages() does the run queue
 * first), and a propagation always traces the entity.  So the record is
 * the instant of a lazy update the other events do not show: removed load
 * of a task that woke up elsewhere applied to the group's run queue,
 * propagated to the parent and on to the root.  Apply it here; a pelt_cfs
 * record of the root at the same instant is compared after it.
 */
static void ev_pelt_se_group(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_pelt_se *k = &ev->pelt_se;
	struct model_group *g;
	bool pre;

	if (!m->has_groups || !k->cgroup_id || k->cgroup_id == IMB_TG_ROOT ||
	    ev->cpu < 0 || ev->cpu >= m->nr_cpus)
		return;
	g = model_group_find(m, ev->cpu, k->cgroup_id);
	if (!g || !g->kseeded || !g->se_attached)
		return;
	/*
	 * An older instant than the engine's: skipped, unless it is that of
	 * its run queue's last record (the model applied what that record
	 * showed, an autogroup exit's detach, at the event's clock, a few
	 * microseconds past the kernel's).
	 */
	if (k->last_update_time < g->cfs.avg.last_update_time && k->last_update_time != g->k_lut)
		return;
	/*
	 * With a propagation pending the kernel traces the entity twice at
	 * this instant: before it (its own accumulation, if a period was
	 * crossed) and after; the engine is past both after the update.
	 */
	pre = g->propagate || g->cfs.removed_nr || g->cfs.prop_runnable_sum;
	/*
	 * ... unless the kernel propagated already: update_tg_cfs_util()
	 * and _runnable() leave the entity's averages those of its run
	 * queue's record of the same instant (the model may propagate at
	 * a record that ends a propagation the kernel made, as an exiting
	 * task's detach from its autogroup).
	 */
	if (pre && k->last_update_time == g->k_lut && k->util_avg == g->k_avg[MODEL_SIG_UTIL] &&
	    k->runnable_avg == g->k_avg[MODEL_SIG_RUNNABLE])
		pre = false;
	model_path_update(m, ev->cpu, g->id, k->last_update_time);
	if (pre)
		return;
	if (!g->kse_seeded) {
		/*
		 * The entity was seeded from its run queue (as a propagation
		 * leaves it); its own first record says where it really is:
		 * a delay that held it at a stale runnable weight, or util
		 * removed below and not yet propagated, part the two.
		 */
		unsigned long w = g->se.weight;

		g->kse_seeded = true;
		pelt_from_kernel(&g->se, w ? w : 1, k->last_update_time, k->load_sum, k->runnable_sum,
				 k->util_sum, k->period_contrib, k->load_avg, k->runnable_avg,
				 k->util_avg);
		g->se.weight = w;
		return;
	}
	/* the entity as the update left it, compared as its run queue is */
	g->kse_avg[MODEL_SIG_UTIL] = k->util_avg;
	g->kse_avg[MODEL_SIG_RUNNABLE] = k->runnable_avg;
	g->kse_avg[MODEL_SIG_LOAD] = k->load_avg;
	g->kse_cmp = true;
	group_pend(m, g, ev->ts_ns);
}

void model_ev_pelt_se(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_pelt_se *k = &ev->pelt_se;
	struct model_task *t;

	if (k->pid <= 0) {
		ev_pelt_se_group(m, ev);
		return;
	}
	m->has_kernel_pelt = true;
	t = model_task_get(m, k->pid, ev->ts_ns);
	if (!t)
		return;
	model_task_set_tgid(m, t, k->tgid);
	if (t->state == MODEL_TASK_DEAD) {
		/*
		 * remove_entity_load_avg() after the final switch syncs the
		 * dead task's averages and fires pelt_se_tp: the model has
		 * removed it already, so it is neither seeded nor attached
		 * again (a dead task holding a group would keep the group,
		 * whose cgroup may be gone, in the table for ever).
		 */
		goto kernel;
	}
	if (t->delayed && !t->requeue && t->cpu == ev->cpu) {
		model_task_delay_end(m, t, k->last_update_time, true);	/* picked: finally dequeued */
		t->delay_rec_ns = ev->ts_ns;	/* ... or detached by the balancer (ev_migrate()) */
	}
	if (k->parent_id) {
		m->has_groups = true;
		t->group = model_tg_internal(k->parent_id);
	}
	if (!t->kavg_ns || !t->pelt_valid || t->kavg_ns < m->gap_ns) {
		pelt_from_kernel(&t->avg, model_task_weight(t), k->last_update_time, k->load_sum, k->runnable_sum,
				 k->util_sum, k->period_contrib, k->load_avg, k->runnable_avg,
				 k->util_avg);
		t->avg.weight = model_task_weight(t);	/* detach and remove need it */
		t->pelt_valid = true;
		/* in the kernel's values of its group's run queue already */
		if (t->cpu == ev->cpu && m->has_groups)
			model_task_set_att(m, t, model_task_place(m, t, t->cpu));
	} else if (t->cpu >= 0 && t->cpu < m->nr_cpus) {
		bool on_rq = t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED;

		pelt_se_update(&t->avg, k->last_update_time, model_task_weight(t), on_rq || t->delayed, on_rq,
			       t->state == MODEL_TASK_RUNNING);
		err_add_avg(m->err_task, &t->avg, k->util_avg, k->runnable_avg, k->load_avg);
	}
kernel:
	pelt_from_kernel(&t->kavg, model_task_weight(t), k->last_update_time, k->load_sum, k->runnable_sum,
			 k->util_sum, k->period_contrib, k->load_avg, k->runnable_avg, k->util_avg);
	t->kavg_ns = ev->ts_ns;
}

/*
 * --plain-events: a kernel record is only a reference.  The engine, fed
 * by the sched events alone, is compared with a copy of its root brought
 * to the record's event time (model_cpu_compare()); group records are
 * skipped (the engine has no groups then).  A root record waits like the
 * others for the event that changes its CPU (model_cpu_compare_pending()).
 * The engine itself is not updated at the record: a plain recording has
 * no such instant, and the kernel traces a record in the middle of an
 * operation whose count change the engine learns only from the event
 * after it (a delayed block's put_prev walk, before its switch), so an
 * update there would integrate the interval with the count before it.
 */
void model_ev_pelt_plain(struct model *m, const struct imb_event *ev)
{
	uint64_t ts = ev->ts_ns;

	if (ev->cpu < 0 || ev->cpu >= m->nr_cpus)
		return;
	if (ev->kind == IMB_EV_PELT_CFS && ev->pelt_cfs.root) {
		struct model_cpu *c = &m->cpus[ev->cpu];

		m->has_kernel_pelt = true;
		model_cpu_account(c, ts);
		c->kcfs = ev->pelt_cfs;
		c->kcfs_ns = ts;
		if (ts - m->t0_ns < MODEL_WARMUP_NS)
			return;
		c->cmp_pending = true;
		c->cmp_ns = ts;
		c->cmp_k = ev->pelt_cfs;
	} else if (ev->kind == IMB_EV_PELT_SE && ev->pelt_se.pid > 0) {
		const struct imb_ev_pelt_se *k = &ev->pelt_se;
		struct model_task *t = model_task_find(m, k->pid);

		m->has_kernel_pelt = true;
		if (!t || !t->fair || !t->pelt_valid || t->cpu != ev->cpu ||
		    ts - t->first_ns < MODEL_WARMUP_NS || ts - m->t0_ns < MODEL_WARMUP_NS)
			return;
		model_task_pelt_update(m, t, ts);
		err_add_avg(m->err_task, &t->avg, k->util_avg, k->runnable_avg, k->load_avg);
	}
}

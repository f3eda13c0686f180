// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_groups.c - task groups in the model: per (CPU, group) a run queue
 * and the group's entity in its parent, the queued counts and weights up
 * the hierarchy, the kernel's propagation of a group's averages to its
 * entity and the parent (propagate_entity_load_avg()), the shares
 * (update_cfs_group()), and eviction of empty groups whose averages have
 * decayed.
 */
#include "model_internal.h"

/*
 * Task groups.  Each (CPU, group) has a run queue (cfs) and an entity (se)
 * queued on its parent's run queue, as in the kernel with
 * CONFIG_FAIR_GROUP_SCHED.  A task's averages are attached to its group's
 * run queue; the root run queue sees them only through the group entity,
 * whose averages follow the group's run queue at each update of the entity
 * (propagate_entity_load_avg()).  Pointers into the table are valid until
 * the next model_group_get().
 */
static uint32_t group_hash(int cpu, uint64_t id)
{
	uint64_t k = id * 0x9e3779b97f4a7c15ull + (uint64_t)cpu * 0xff51afd7ed558ccdull;

	return (uint32_t)(k >> 32) ^ (uint32_t)k;
}

static int ghash_rebuild(struct model *m, size_t cap)
{
	int32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_groups; i++) {
		size_t j = group_hash(m->groups[i].cpu, m->groups[i].id) & (cap - 1);

		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (int32_t)(i + 1);
	}
	free(m->ghash);
	m->ghash = h;
	m->ghash_cap = cap;
	return 0;
}

struct model_group *model_group_find(const struct model *m, int cpu, uint64_t id)
{
	size_t j;

	if (!m->ghash_cap || !id)
		return NULL;
	j = group_hash(cpu, id) & (m->ghash_cap - 1);
	while (m->ghash[j]) {
		struct model_group *g = &m->groups[m->ghash[j] - 1];

		if (g->id == id && g->cpu == cpu)
			return g;
		j = (j + 1) & (m->ghash_cap - 1);
	}
	return NULL;
}

/*
 * Empty (nothing queued, no task, no child group) and idle: its averages,
 * decayed to the CPU's PELT clock now, are 0 (as the kernel's
 * cfs_rq_is_decayed()), so dropping it, and any removal still pending on
 * it, changes no sum.
 */
static bool group_evictable(const struct model *m, const struct model_group *g)
{
	uint64_t now = m->cpus[g->cpu].pelt_last, n;

	if (g->nr_queued || g->h_nr_runnable || g->nr_held || g->nr_tasks || g->nr_children)
		return false;
	n = now > g->cfs.avg.last_update_time ?
		(now - g->cfs.avg.last_update_time) / PELT_PERIOD_NS : 0;
	return !pelt_decay_load(g->cfs.avg.util_avg, n) &&
	       !pelt_decay_load(g->cfs.avg.runnable_avg, n) &&
	       !pelt_decay_load(g->cfs.avg.load_avg, n) &&
	       !pelt_decay_load(g->se.util_avg, n) && !pelt_decay_load(g->se.runnable_avg, n) &&
	       !pelt_decay_load(g->se.load_avg, n);
}

/* Drop the empty idle group touched longest ago, never @keep; -ENOSPC if none. */
static int group_evict_one(struct model *m, const struct model_group *keep)
{
	size_t victim = SIZE_MAX;
	struct model_group *g;

	for (size_t i = 0; i < m->nr_groups; i++) {
		if (&m->groups[i] == keep || !group_evictable(m, &m->groups[i]))
			continue;
		if (victim == SIZE_MAX || m->groups[i].last_ns < m->groups[victim].last_ns)
			victim = i;
	}
	if (victim == SIZE_MAX)
		return -ENOSPC;
	g = &m->groups[victim];
	if (g->parent_id) {
		struct model_group *p = model_group_find(m, g->cpu, g->parent_id);

		if (p && p->nr_children)
			p->nr_children--;
	}
	m->groups[victim] = m->groups[m->nr_groups - 1];
	m->nr_groups--;
	m->groups_evicted++;
	return ghash_rebuild(m, m->ghash_cap);
}

/*
 * The group @id on CPU @cpu, created (with its ancestors) when new; its
 * parent is @parent_id when known (0: the root until a record says
 * otherwise).  NULL when the table is full of groups in use.
 */
struct model_group *model_group_get(struct model *m, int cpu, uint64_t id, uint64_t parent_id,
				     int depth)
{
	struct model_group *g = model_group_find(m, cpu, id);
	size_t max = m->opts.max_groups ? m->opts.max_groups : MODEL_MAX_GROUPS;
	size_t j;

	if (g || !id || depth > 32)
		return g;
	if (parent_id == id)
		parent_id = 0;
	if (parent_id && !model_group_get(m, cpu, parent_id, 0, depth + 1))
		parent_id = 0;
	if (m->nr_groups >= max && group_evict_one(m, model_group_find(m, cpu, parent_id)))
		return NULL;
	if (m->nr_groups == m->cap_groups) {
		size_t cap = m->cap_groups ? m->cap_groups * 2 : 16;
		struct model_group *ng = realloc(m->groups, cap * sizeof(*ng));

		if (!ng)
			return NULL;
		m->groups = ng;
		m->cap_groups = cap;
	}
	if ((m->nr_groups + 1) * 2 > m->ghash_cap &&
	    ghash_rebuild(m, m->ghash_cap ? m->ghash_cap * 2 : 64))
		return NULL;
	g = &m->groups[m->nr_groups];
	memset(g, 0, sizeof(*g));
	g->id = id;
	g->cpu = cpu;
	g->parent_id = parent_id;
	g->shares = 1024;
	g->last_ns = m->now_ns;
	pelt_cfs_init(&g->cfs);
	g->cfs.version = m->cpus[cpu].cfs.version;
	j = group_hash(cpu, id) & (m->ghash_cap - 1);
	while (m->ghash[j])
		j = (j + 1) & (m->ghash_cap - 1);
	m->ghash[j] = (int32_t)(++m->nr_groups);
	if (parent_id) {
		struct model_group *p = model_group_find(m, cpu, parent_id);

		if (p)
			p->nr_children++;
	}
	/* online_fair_sched_group(): the new entity is attached at once */
	g = model_group_find(m, cpu, id);
	{
		struct model_group *p = model_group_find(m, cpu, parent_id);

		pelt_attach(p ? &p->cfs : &m->cpus[cpu].cfs, &g->se, g->shares);
		g->se_attached = true;
	}
	return g;
}

/* The wire's group id as the model keeps it: 0 for the root group. */
uint64_t model_tg_internal(uint64_t wire)
{
	return wire == IMB_TG_ROOT ? 0 : wire;
}

/* Whether the running task of @c is in @g or below (cfs_rq->curr != NULL). */
bool model_group_is_curr(const struct model *m, const struct model_cpu *c,
			  const struct model_group *g)
{
	const struct model_task *t;
	uint64_t id;

	if (c->curr <= 0 || !c->fair_curr)
		return false;
	t = model_task_find(m, c->curr);
	if (!t)
		return false;
	id = t->q_group;
	for (int depth = 0; id && depth < 32; depth++) {
		const struct model_group *p;

		if (id == g->id)
			return true;
		p = model_group_find(m, c->cpu, id);
		if (!p)
			break;
		id = p->parent_id;
	}
	return false;
}

/* The run queue of group @id on @cpu (0 or not in the table: the root). */
struct pelt_cfs *model_group_cfs(struct model *m, int cpu, uint64_t id)
{
	struct model_group *g = model_group_find(m, cpu, id);

	return g ? &g->cfs : &m->cpus[cpu].cfs;
}

void model_group_mark_propagate(struct model *m, int cpu, uint64_t id)
{
	struct model_group *g = model_group_find(m, cpu, id);

	if (g)
		g->propagate = true;
}

/*
 * Account one queued entity of weight @w on group @id's run queue (or the
 * root).  @walk: the kernel walks the hierarchy for it (an enqueue), so
 * each group entity's runnable weight takes its run queue's new count
 * (se_update_runnable()); without, the entities keep their old weight.
 */
void model_chain_enqueue(struct model *m, int cpu, uint64_t id, unsigned long w, bool walk)
{
	bool level = true;

	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		g->h_nr_runnable++;
		if (walk)
			g->se_runnable = g->h_nr_runnable;
		if (level) {
			g->nr_queued++;
			g->weight += w;
			level = g->nr_queued == 1;	/* its entity is queued now */
			w = g->shares;
		}
		id = g->parent_id;
	}
	if (level)
		m->cpus[cpu].root_weight += w;
}

/*
 * A queued entity of group @id's run queue (or the root's) changes weight
 * from @from to @to (reweight_entity(): a task reniced while queued, a
 * group entity's new shares); the levels above keep theirs until their
 * group's shares are computed again.
 */
void model_chain_reweight(struct model *m, int cpu, uint64_t id, unsigned long from, unsigned long to)
{
	struct model_group *g = model_group_find(m, cpu, id);

	model_weight_swap(g ? &g->weight : &m->cpus[cpu].root_weight, from, to);
}

/* Take one queued entity off (see model_chain_enqueue()). */
void model_chain_dequeue(struct model *m, int cpu, uint64_t id, unsigned long w, bool walk)
{
	bool level = true;
	struct model_cpu *c = &m->cpus[cpu];

	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		if (g->h_nr_runnable)
			g->h_nr_runnable--;
		if (walk)
			g->se_runnable = g->h_nr_runnable;
		if (level) {
			if (g->nr_queued)
				g->nr_queued--;
			g->weight = g->weight > w ? g->weight - w : 0;
			level = g->nr_queued == 0;
			w = g->shares;
		}
		id = g->parent_id;
	}
	if (level)
		c->root_weight = c->root_weight > w ? c->root_weight - w : 0;
}

/* The lower-bound clamp of a propagated sum (see pelt.c: u32 before 7.0). */
static uint64_t prop_clamp(enum pelt_version v, uint64_t sum, unsigned long avg)
{
	uint64_t floor = (uint64_t)avg * PELT_MIN_DIVIDER;

	if (v < PELT_V7_0) {
		uint32_t s = (uint32_t)sum, f = (uint32_t)floor;

		return s > f ? s : f;
	}
	return sum > floor ? sum : floor;
}

static void add_signed_ul(unsigned long *p, long d)
{
	long r = (long)*p + d;

	*p = r < 0 ? 0 : (unsigned long)r;
}

static void add_signed_u64(uint64_t *p, int64_t d)
{
	int64_t r = (int64_t)*p + d;

	*p = r < 0 ? 0 : (uint64_t)r;
}

/*
 * propagate_entity_load_avg(): the group entity takes its run queue's util
 * and runnable (update_tg_cfs_util/_runnable), and its load from the
 * propagated runnable sum (update_tg_cfs_load); the parent run queue @pcfs
 * takes the differences.
 */
static void group_propagate(struct model_group *g, struct pelt_cfs *pcfs)
{
	struct pelt_avg *se = &g->se, *gsa = &g->cfs.avg, *psa = &pcfs->avg;
	uint32_t divider = PELT_MIN_DIVIDER + psa->period_contrib;
	int64_t rsum = g->cfs.prop_runnable_sum;
	long delta;

	pcfs->prop_runnable_sum += rsum;	/* add_tg_cfs_propagate() */

	delta = (long)gsa->util_avg - (long)se->util_avg;
	if (delta) {
		uint32_t nsum = (uint32_t)(gsa->util_avg * divider);
		int64_t dsum = (int64_t)nsum - (int64_t)se->util_sum;

		se->util_avg = gsa->util_avg;
		se->util_sum = nsum;
		add_signed_ul(&psa->util_avg, delta);
		{
			int64_t r = (int64_t)psa->util_sum + dsum;

			psa->util_sum = r < 0 ? 0 : (uint32_t)r;
		}
		if (psa->util_sum < (uint32_t)(psa->util_avg * PELT_MIN_DIVIDER))
			psa->util_sum = (uint32_t)(psa->util_avg * PELT_MIN_DIVIDER);
	}

	/*
	 * update_tg_cfs_runnable() computes the entity's new sum in a u32
	 * (every version read, 7.0 included): past 2^32 / divider, a group
	 * runnable_avg of ~90,000 (about 88 tasks runnable at once in one
	 * group on one CPU), it wraps, the entity's next own update derives
	 * a small runnable_avg from it and the parent's swings by tens of
	 * thousands.  The kernel's values do that, so the model does too.
	 */
	delta = (long)gsa->runnable_avg - (long)se->runnable_avg;
	if (delta) {
		uint64_t nsum = (uint32_t)((uint64_t)gsa->runnable_avg * divider);
		int64_t dsum = (int64_t)nsum - (int64_t)se->runnable_sum;

		se->runnable_avg = gsa->runnable_avg;
		se->runnable_sum = nsum;
		add_signed_ul(&psa->runnable_avg, delta);
		add_signed_u64(&psa->runnable_sum, dsum);
		psa->runnable_sum = prop_clamp(pcfs->version, psa->runnable_sum, psa->runnable_avg);
	}

	if (rsum) {
		int64_t running, lsum;
		unsigned long lavg, w = g->shares;

		g->cfs.prop_runnable_sum = 0;
		if (rsum >= 0) {
			rsum += (int64_t)se->load_sum;
			if (rsum > (int64_t)divider)
				rsum = divider;
		} else {
			uint64_t ls = 0;

			if (g->weight)
				ls = gsa->load_sum / g->weight;
			rsum = (int64_t)(se->load_sum < ls ? se->load_sum : ls);
		}
		running = se->util_sum >> 10;
		if (rsum < running)
			rsum = running;
		lsum = (int64_t)w * rsum;
		lavg = (unsigned long)(lsum / divider);
		delta = (long)lavg - (long)se->load_avg;
		if (delta) {
			int64_t dsum = lsum - (int64_t)w * (int64_t)se->load_sum;

			se->load_sum = (uint64_t)rsum;
			se->load_avg = lavg;
			add_signed_ul(&psa->load_avg, delta);
			add_signed_u64(&psa->load_sum, dsum);
			psa->load_sum = prop_clamp(pcfs->version, psa->load_sum, psa->load_avg);
		}
	}
}

/*
 * update_cfs_rq_load_avg() of a run queue at PELT time @now, never moving
 * its clock back: the engine's clock for a CPU is an estimate that may
 * run a few microseconds ahead of the kernel's, and a kernel record's
 * last_update_time is then older than the engine's.  Updating with it
 * would take the kernel's "time went backwards" path, which restarts the
 * run queue's period phase at @now and leaves every later average
 * recomputed at other boundaries than the kernel's.
 */
void model_rq_pelt_update(struct pelt_cfs *cfs, uint64_t now, unsigned long weight_sum,
			   unsigned int h_nr_runnable, int curr)
{
	if (now < cfs->avg.last_update_time)
		now = cfs->avg.last_update_time;
	pelt_cfs_update(cfs, now, weight_sum, h_nr_runnable, curr);
}

/*
 * model_rq_pelt_update() of CPU @c's root run queue with its counts: @cfs
 * is &c->cfs, or a copy of it to be brought forward without moving the
 * engine (the --plain-events comparison, model_cpu_compare()).
 */
void model_root_update(const struct model_cpu *c, struct pelt_cfs *cfs, uint64_t now)
{
	model_rq_pelt_update(cfs, now, c->root_weight, c->nr_queued, c->curr > 0 && c->fair_curr);
}

/* update_cfs_rq_load_avg() of a group's run queue at PELT time @now. */
static void group_cfs_update(struct model *m, struct model_group *g, uint64_t now)
{
	const struct model_cpu *c = &m->cpus[g->cpu];

	if (g->cfs.removed_nr)
		g->propagate = true;
	model_rq_pelt_update(&g->cfs, now, g->weight, g->h_nr_runnable, model_group_is_curr(m, c, g));
}

/*
 * update_cfs_group(): the entity's weight, shares * this CPU's load over
 * the group's load on all CPUs (tg->load_avg), within [2, shares].
 */
static void group_reweight(struct model *m, struct model_group *g, struct pelt_cfs *pcfs)
{
	unsigned long tg_shares = 1024, load, tg_weight = 0, shares;

	if (!g->weight)
		return;
	load = g->weight > g->cfs.avg.load_avg ? (unsigned long)g->weight : g->cfs.avg.load_avg;
	for (int i = 0; i < m->nr_cpus; i++) {
		const struct model_group *o = model_group_find(m, i, g->id);

		if (o && o != g)
			tg_weight += o->cfs.avg.load_avg;
	}
	tg_weight += load;
	shares = tg_shares * load / (tg_weight ? tg_weight : 1);
	if (shares < 2)
		shares = 2;
	if (shares > tg_shares)
		shares = tg_shares;
	if (shares == g->shares)
		return;
	/* reweight_entity(): requeue with the new weight, rescale load_avg */
	if (g->nr_queued)
		model_chain_reweight(m, g->cpu, g->parent_id, g->shares, shares);
	if (g->se_attached) {
		uint32_t div = PELT_MIN_DIVIDER + g->se.period_contrib;

		add_signed_ul(&pcfs->avg.load_avg, -(long)g->se.load_avg);
		g->se.load_avg = (unsigned long)((uint64_t)shares * g->se.load_sum / div);
		pcfs->avg.load_avg += g->se.load_avg;
	}
	g->shares = shares;
	g->se.weight = shares;
}

/*
 * update_load_avg(parent, group se, UPDATE_TG) after the group's own run
 * queue update: the entity's own accumulation (on_rq while anything is
 * queued in it, runnable weight its run queue's h_nr_runnable as of the
 * last walk through it (se->runnable_weight), running while one of its
 * tasks runs), the parent's, then the propagation and, the first time,
 * the attach.
 */
static void group_se_update(struct model *m, struct model_group *g, uint64_t now)
{
	struct model_cpu *c = &m->cpus[g->cpu];
	struct model_group *pg = model_group_find(m, g->cpu, g->parent_id);
	struct pelt_cfs *pcfs = pg ? &pg->cfs : &c->cfs;
	bool curr = model_group_is_curr(m, c, g);

	if (g->se_attached && now >= g->se.last_update_time)
		pelt_se_update(&g->se, now, g->shares, g->nr_queued > 0 || g->nr_held > 0,
			       (int)g->se_runnable, curr);
	if (pg)
		group_cfs_update(m, pg, now);
	else
		model_root_update(c, &c->cfs, now);
	if (g->propagate && g->se_attached) {
		g->propagate = false;
		if (pg)
			pg->propagate = true;
		group_propagate(g, pcfs);
	}
	if (!g->se_attached) {
		pelt_attach(pcfs, &g->se, g->shares);
		if (pg)
			pg->propagate = true;
		g->se_attached = true;
		g->propagate = false;
		g->cfs.prop_runnable_sum = 0;
	}
	group_reweight(m, g, pcfs);
}

/*
 * Add @d to h_nr_runnable of group @id on @cpu and of its ancestors, with
 * no walk (set_delayed(), clear_delayed()), or with @d 0 and @walk the
 * runnable weights of their entities refreshed (a walk that changed no
 * count).
 */
void model_chain_runnable(struct model *m, int cpu, uint64_t id, int d, bool walk)
{
	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		if (d > 0 || g->h_nr_runnable >= (uint32_t)-d)
			g->h_nr_runnable += (uint32_t)d;
		if (walk)
			g->se_runnable = g->h_nr_runnable;
		id = g->parent_id;
	}
}

/*
 * A delayed task leaves the model's counts when it blocks, but the kernel
 * keeps it queued until it is picked or woken: its group's entity, and
 * every ancestor's, stays queued in the parent (with the weight and
 * runnable weight of the last walk) even where nothing else is queued
 * there.  @d: +1 when the task's counts come off, -1 when its delay ends.
 */
void model_chain_hold(struct model *m, int cpu, uint64_t id, int d)
{
	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		if (d > 0 || g->nr_held)
			g->nr_held += (uint32_t)d;
		id = g->parent_id;
	}
}

/* Whether group @id on @cpu and each ancestor count at least one runnable task. */
bool model_chain_counts(const struct model *m, int cpu, uint64_t id)
{
	for (int depth = 0; id && depth < 32; depth++) {
		const struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		if (!g->h_nr_runnable)
			return false;
		id = g->parent_id;
	}
	return true;
}

/* update_cfs_rq_load_avg() of group @id's run queue alone (0: the root). */
void model_level_update(struct model *m, int cpu, uint64_t id, uint64_t now)
{
	struct model_group *g = id ? model_group_find(m, cpu, id) : NULL;
	struct model_cpu *c = &m->cpus[cpu];

	if (g)
		group_cfs_update(m, g, now);
	else
		model_root_update(c, &c->cfs, now);
}

/*
 * Update group @id on @cpu and its ancestors bottom-up up to group @stop's
 * run queue, whose entity and parents are left alone; @stop 0 (or not an
 * ancestor): every level and the root.
 */
void model_path_update_to(struct model *m, int cpu, uint64_t id, uint64_t stop, uint64_t now)
{
	struct model_cpu *c = &m->cpus[cpu];

	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		g->last_ns = m->now_ns;
		group_cfs_update(m, g, now);
		if (id == stop)
			return;
		group_se_update(m, g, now);
		id = g->parent_id;
	}
	model_root_update(c, &c->cfs, now);
}

/* Update group @id on @cpu and its ancestors bottom-up, then the root. */
void model_path_update(struct model *m, int cpu, uint64_t id, uint64_t now)
{
	model_path_update_to(m, cpu, id, 0, now);
}

/* The lowest run queue on the paths of groups @a and @b on @cpu (0: the root). */
uint64_t model_group_common(const struct model *m, int cpu, uint64_t a, uint64_t b)
{
	uint64_t chain[32];
	int n = 0;

	for (uint64_t id = a; id && n < 32;) {
		const struct model_group *g = model_group_find(m, cpu, id);

		chain[n++] = id;
		if (!g)
			break;
		id = g->parent_id;
	}
	for (int depth = 0; b && depth < 32; depth++) {
		const struct model_group *g;

		for (int i = 0; i < n; i++)
			if (chain[i] == b)
				return b;
		if (!(g = model_group_find(m, cpu, b)))
			break;
		b = g->parent_id;
	}
	return 0;
}

/* The task's averages now belong to group @id's run queue (reference counts). */
void model_task_set_att(struct model *m, struct model_task *t, uint64_t id)
{
	struct model_group *g;

	if (t->att_group == id)
		return;
	if (t->att_group && t->att_cpu >= 0 && t->att_cpu < m->nr_cpus) {
		g = model_group_find(m, t->att_cpu, t->att_group);
		if (g && g->nr_tasks)
			g->nr_tasks--;
	}
	t->att_group = id;
	t->att_cpu = t->cpu;
	if (id && (g = model_group_find(m, t->cpu, id)))
		g->nr_tasks++;
}

/* The group a task on @cpu goes to now: its known group if the table has room. */
uint64_t model_task_place(struct model *m, struct model_task *t, int cpu)
{
	if (!t->group || !m->has_groups)
		return 0;
	if (!model_group_get(m, cpu, t->group, 0, 0)) {
		m->groups_overflow++;
		return 0;
	}
	return t->group;
}

/* Drop every empty group whose averages have decayed (window ends). */
int model_group_evict_idle(struct model *m)
{
	size_t n = m->nr_groups;

	while (group_evict_one(m, NULL) == 0)
		;
	if (m->nr_groups == n)
		return 0;
	if (m->cap_groups > 16 && m->nr_groups * 4 < m->cap_groups) {
		size_t cap = m->cap_groups;
		struct model_group *ng;

		while (cap > 16 && m->nr_groups * 4 < cap)
			cap /= 2;
		ng = realloc(m->groups, cap * sizeof(*ng));
		if (ng) {
			m->groups = ng;
			m->cap_groups = cap;
		}
	}
	return 0;
}

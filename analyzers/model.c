// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model.c - drive the system model (model.h) from the event stream.
 *
 * Each event first brings the affected CPU's root run queue and task
 * entities up to the event's time with their old state (the kernel's own
 * order: update_load_avg() before the enqueue, dequeue or switch), then
 * applies the state change.  CPU time comes from sched_stat_runtime where
 * the source has it (the same clock_task deltas the kernel adds to the
 * thread's own CPU time), else from switch intervals; runnable time is
 * bounded by wake-ups and blocking switches, which every source records.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define DEFAULT_MAX_TASKS 65536

static uint32_t pid_hash(int32_t pid)
{
	return (uint32_t)pid * 2654435761u;
}

static int hash_rebuild(struct model *m, size_t cap)
{
	int32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_tasks; i++) {
		size_t j = pid_hash(m->tasks[i].pid) & (cap - 1);

		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (int32_t)(i + 1);
	}
	free(m->hash);
	m->hash = h;
	m->hash_cap = cap;
	return 0;
}

struct model_task *model_task_find(const struct model *m, int32_t pid)
{
	size_t j;

	if (!m->hash_cap)
		return NULL;
	j = pid_hash(pid) & (m->hash_cap - 1);
	while (m->hash[j]) {
		struct model_task *t = &m->tasks[m->hash[j] - 1];

		if (t->pid == pid)
			return t;
		j = (j + 1) & (m->hash_cap - 1);
	}
	return NULL;
}

static int cpu_grow(struct model *m, int cpu)
{
	struct model_cpu *c;
	int n = cpu + 1;

	if (cpu < 0 || cpu >= MODEL_MAX_CPUS)
		return -ERANGE;
	if (n <= m->nr_cpus)
		return 0;
	c = realloc(m->cpus, (size_t)n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (int i = m->nr_cpus; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].cpu = i;
		c[i].curr = -1;
		c[i].capacity = m->opts.capacity[i] ? m->opts.capacity[i] : 1024;
		c[i].last_ns = m->now_ns;
		c[i].idle_since_ns = m->now_ns;
		pelt_cfs_init(&c[i].cfs);
		c[i].cfs.version = m->opts.pelt_version ? (enum pelt_version)(m->opts.pelt_version - 1)
							: PELT_VERSION_DEFAULT;
	}
	m->cpus = c;
	m->nr_cpus = n;
	return 0;
}

struct model *model_new(const struct model_opts *opts)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (opts)
		m->opts = *opts;
	if (!m->opts.max_tasks)
		m->opts.max_tasks = DEFAULT_MAX_TASKS;
	if (hash_rebuild(m, 1024) || (m->opts.nr_cpus > 0 && cpu_grow(m, m->opts.nr_cpus - 1))) {
		model_free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	free(m->cpus);
	free(m->tasks);
	free(m->hash);
	free(m->groups);
	free(m->ghash);
	free(m->tgid_hint);
	free(m);
}

static void task_set_att(struct model *m, struct model_task *t, uint64_t id);

/* Drop the dead task seen longest ago to make room; -ENOSPC if none. */
static int task_evict_one(struct model *m)
{
	size_t victim = SIZE_MAX;

	for (size_t i = 0; i < m->nr_tasks; i++) {
		if (m->tasks[i].state != MODEL_TASK_DEAD)
			continue;
		if (victim == SIZE_MAX || m->tasks[i].last_ns < m->tasks[victim].last_ns)
			victim = i;
	}
	if (victim == SIZE_MAX)
		return -ENOSPC;
	task_set_att(m, &m->tasks[victim], 0);
	m->tasks[victim] = m->tasks[m->nr_tasks - 1];
	m->nr_tasks--;
	m->evicted++;
	return hash_rebuild(m, m->hash_cap);
}

static int32_t tgid_hint_find(const struct model *m, int32_t pid)
{
	size_t j;

	if (!m->tgid_hint_cap)
		return 0;
	j = pid_hash(pid) & (m->tgid_hint_cap - 1);
	while (m->tgid_hint[2 * j]) {
		if (m->tgid_hint[2 * j] == pid)
			return m->tgid_hint[2 * j + 1];
		j = (j + 1) & (m->tgid_hint_cap - 1);
	}
	return 0;
}

int model_tgid_hint(struct model *m, int32_t pid, int32_t tgid)
{
	struct model_task *t;
	size_t j;

	if (pid <= 0 || tgid <= 0)
		return 0;
	if ((m->nr_tgid_hints + 1) * 2 > m->tgid_hint_cap) {
		size_t cap = m->tgid_hint_cap ? m->tgid_hint_cap * 2 : 1024;
		int32_t *h = calloc(cap * 2, sizeof(*h));

		if (!h)
			return -ENOMEM;
		for (size_t i = 0; i < m->tgid_hint_cap; i++) {
			int32_t p = m->tgid_hint[2 * i];

			if (!p)
				continue;
			j = pid_hash(p) & (cap - 1);
			while (h[2 * j])
				j = (j + 1) & (cap - 1);
			h[2 * j] = p;
			h[2 * j + 1] = m->tgid_hint[2 * i + 1];
		}
		free(m->tgid_hint);
		m->tgid_hint = h;
		m->tgid_hint_cap = cap;
	}
	j = pid_hash(pid) & (m->tgid_hint_cap - 1);
	while (m->tgid_hint[2 * j] && m->tgid_hint[2 * j] != pid)
		j = (j + 1) & (m->tgid_hint_cap - 1);
	if (!m->tgid_hint[2 * j])
		m->nr_tgid_hints++;
	m->tgid_hint[2 * j] = pid;
	m->tgid_hint[2 * j + 1] = tgid;
	m->has_tgids = true;
	t = model_task_find(m, pid);
	if (t)
		t->tgid = tgid;
	return 0;
}

int32_t model_task_job_pid(const struct model *m, const struct model_task *t)
{
	if (t->tgid)
		return t->tgid;
	if (!m->has_tgids && t->parent_pid > 0)
		return t->parent_pid;
	return t->pid;
}

static struct model_task *task_get(struct model *m, int32_t pid, uint64_t ts)
{
	struct model_task *t = model_task_find(m, pid);
	size_t j;

	if (t)
		return t;
	if (m->nr_tasks >= m->opts.max_tasks && task_evict_one(m))
		return NULL;
	if (m->nr_tasks == m->cap_tasks) {
		size_t cap = m->cap_tasks ? m->cap_tasks * 2 : 256;
		struct model_task *nt = realloc(m->tasks, cap * sizeof(*nt));

		if (!nt)
			return NULL;
		m->tasks = nt;
		m->cap_tasks = cap;
	}
	if ((m->nr_tasks + 1) * 2 > m->hash_cap && hash_rebuild(m, m->hash_cap * 2))
		return NULL;
	t = &m->tasks[m->nr_tasks];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->cpu = -1;
	t->prio = 120;
	t->fair = true;
	t->first_ns = t->last_ns = t->state_ns = ts;
	t->tgid = tgid_hint_find(m, pid);
	j = pid_hash(pid) & (m->hash_cap - 1);
	while (m->hash[j])
		j = (j + 1) & (m->hash_cap - 1);
	m->hash[j] = (int32_t)(++m->nr_tasks);
	return t;
}

static void task_set_tgid(struct model *m, struct model_task *t, int32_t tgid)
{
	if (tgid <= 0)
		return;
	t->tgid = tgid;
	m->has_tgids = true;
}

static void task_set_prio(struct model_task *t, int prio)
{
	if (prio < 0 && prio != -1)
		return;
	t->prio = prio;
	t->fair = prio >= 100 || prio == -1 ? prio >= 100 : true;
	t->nice = imb_prio_to_nice(prio);
}

static void task_note(struct model_task *t, const char *comm, int prio, uint64_t ts)
{
	if (comm && comm[0])
		memcpy(t->comm, comm, IMB_COMM_LEN);
	if (prio >= 0)
		task_set_prio(t, prio);
	t->last_ns = ts;
}

static void cpu_offset_bound(struct model_cpu *c, int64_t bound, uint64_t ts)
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

	/* a new offset estimate must not move the clock backwards */
	if (now < c->pelt_last)
		now = c->pelt_last;
	c->pelt_last = now;
	return now;
}

static unsigned long task_weight(const struct model_task *t)
{
	return pelt_nice_to_weight(t->nice);
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
static void cpu_account(struct model_cpu *c, uint64_t ts)
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

/*
 * Task groups.  Each (CPU, group) has a run queue (cfs) and an entity (se)
 * queued on its parent's run queue, as in the kernel with
 * CONFIG_FAIR_GROUP_SCHED.  A task's averages are attached to its group's
 * run queue; the root run queue sees them only through the group entity,
 * whose averages follow the group's run queue at each update of the entity
 * (propagate_entity_load_avg()).  Pointers into the table are valid until
 * the next group_get().
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

	if (g->nr_queued || g->h_nr_runnable || g->nr_tasks || g->nr_children)
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
static struct model_group *group_get(struct model *m, int cpu, uint64_t id, uint64_t parent_id,
				     int depth)
{
	struct model_group *g = model_group_find(m, cpu, id);
	size_t max = m->opts.max_groups ? m->opts.max_groups : MODEL_MAX_GROUPS;
	size_t j;

	if (g || !id || depth > 32)
		return g;
	if (parent_id == id)
		parent_id = 0;
	if (parent_id && !group_get(m, cpu, parent_id, 0, depth + 1))
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
static uint64_t tg_internal(uint64_t wire)
{
	return wire == IMB_TG_ROOT ? 0 : wire;
}

/* Whether the running task of @c is in @g or below (cfs_rq->curr != NULL). */
static bool group_is_curr(const struct model *m, const struct model_cpu *c,
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
static struct pelt_cfs *group_cfs(struct model *m, int cpu, uint64_t id)
{
	struct model_group *g = model_group_find(m, cpu, id);

	return g ? &g->cfs : &m->cpus[cpu].cfs;
}

static void group_mark_propagate(struct model *m, int cpu, uint64_t id)
{
	struct model_group *g = model_group_find(m, cpu, id);

	if (g)
		g->propagate = true;
}

/* Account one queued entity of weight @w on group @id's run queue (or the root). */
static void chain_enqueue(struct model *m, int cpu, uint64_t id, unsigned long w)
{
	bool level = true;

	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		g->h_nr_runnable++;
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

static void chain_dequeue(struct model *m, int cpu, uint64_t id, unsigned long w)
{
	bool level = true;
	struct model_cpu *c = &m->cpus[cpu];

	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		if (g->h_nr_runnable)
			g->h_nr_runnable--;
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

	delta = (long)gsa->runnable_avg - (long)se->runnable_avg;
	if (delta) {
		uint64_t nsum = (uint64_t)gsa->runnable_avg * divider;
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
static void rq_pelt_update(struct pelt_cfs *cfs, uint64_t now, unsigned long weight_sum,
			   unsigned int h_nr_runnable, int curr)
{
	if (now < cfs->avg.last_update_time)
		now = cfs->avg.last_update_time;
	pelt_cfs_update(cfs, now, weight_sum, h_nr_runnable, curr);
}

/* update_cfs_rq_load_avg() of a group's run queue at PELT time @now. */
static void group_cfs_update(struct model *m, struct model_group *g, uint64_t now)
{
	const struct model_cpu *c = &m->cpus[g->cpu];

	if (g->cfs.removed_nr)
		g->propagate = true;
	rq_pelt_update(&g->cfs, now, g->weight, g->h_nr_runnable, group_is_curr(m, c, g));
}

/*
 * update_cfs_group(): the entity's weight, shares * this CPU's load over
 * the group's load on all CPUs (tg->load_avg), within [2, shares].
 */
static void group_reweight(struct model *m, struct model_group *g, struct pelt_cfs *pcfs)
{
	unsigned long tg_shares = 1024, load, tg_weight = 0, shares;
	struct model_group *pg;

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
	if (g->nr_queued) {
		pg = model_group_find(m, g->cpu, g->parent_id);
		if (pg)
			pg->weight = pg->weight + shares > g->shares ? pg->weight + shares - g->shares : 0;
		else
			m->cpus[g->cpu].root_weight = m->cpus[g->cpu].root_weight + shares > g->shares ?
				m->cpus[g->cpu].root_weight + shares - g->shares : 0;
	}
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
 * queued in it, runnable weight h_nr_runnable, running while one of its
 * tasks runs), the parent's, then the propagation and, the first time,
 * the attach.
 */
static void group_se_update(struct model *m, struct model_group *g, uint64_t now)
{
	struct model_cpu *c = &m->cpus[g->cpu];
	struct model_group *pg = model_group_find(m, g->cpu, g->parent_id);
	struct pelt_cfs *pcfs = pg ? &pg->cfs : &c->cfs;
	bool curr = group_is_curr(m, c, g);

	if (g->se_attached && now >= g->se.last_update_time)
		pelt_se_update(&g->se, now, g->shares, g->nr_queued > 0, (int)g->h_nr_runnable, curr);
	if (pg)
		group_cfs_update(m, pg, now);
	else
		rq_pelt_update(&c->cfs, now, c->root_weight, c->nr_queued, c->curr > 0 && c->fair_curr);
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

/* Update group @id on @cpu and its ancestors bottom-up, then the root. */
static void path_update(struct model *m, int cpu, uint64_t id, uint64_t now)
{
	struct model_cpu *c = &m->cpus[cpu];

	for (int depth = 0; id && depth < 32; depth++) {
		struct model_group *g = model_group_find(m, cpu, id);

		if (!g)
			break;
		g->last_ns = m->now_ns;
		group_cfs_update(m, g, now);
		group_se_update(m, g, now);
		id = g->parent_id;
	}
	rq_pelt_update(&c->cfs, now, c->root_weight, c->nr_queued, c->curr > 0 && c->fair_curr);
}

/* The task's averages now belong to group @id's run queue (reference counts). */
static void task_set_att(struct model *m, struct model_task *t, uint64_t id)
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
static uint64_t task_place(struct model *m, struct model_task *t, int cpu)
{
	if (!t->group || !m->has_groups)
		return 0;
	if (!group_get(m, cpu, t->group, 0, 0)) {
		m->groups_overflow++;
		return 0;
	}
	return t->group;
}

/* Bring a CPU's root run queue's PELT up to @ts with its current state. */
static void cpu_pelt_update(struct model_cpu *c, uint64_t ts)
{
	rq_pelt_update(&c->cfs, pelt_now(c, ts), c->root_weight, c->nr_queued,
			c->curr > 0 && c->fair_curr);
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
		path_update(m, cpu, 0, now);
		return;
	}
	if (t->att_group && t->att_cpu == cpu && t->att_group != t->group)
		path_update(m, cpu, t->att_group, now);
	if (t->q_group && t->cpu == cpu && t->q_group != t->group)
		path_update(m, cpu, t->q_group, now);
	path_update(m, cpu, t->group, now);
}

/* detach_entity_load_avg() from the run queue holding the task's averages */
static void task_detach_avg(struct model *m, struct model_task *t)
{
	int cpu = t->att_group ? t->att_cpu : t->cpu;

	if (cpu < 0 || cpu >= m->nr_cpus)
		return;
	pelt_detach(group_cfs(m, cpu, t->att_group), &t->avg);
	group_mark_propagate(m, cpu, t->att_group);
	task_set_att(m, t, 0);
}

/* remove_entity_load_avg(): applied at that run queue's next update */
static void task_remove_avg(struct model *m, struct model_task *t)
{
	int cpu = t->att_group ? t->att_cpu : t->cpu;

	if (cpu < 0 || cpu >= m->nr_cpus)
		return;
	pelt_remove(group_cfs(m, cpu, t->att_group), &t->avg);
	task_set_att(m, t, 0);
}

/* Bring a task's entity up to @ts with its current state. */
static void task_pelt_update(struct model *m, struct model_task *t, uint64_t ts)
{
	struct model_cpu *c;
	bool on_rq;

	if (!t->fair || !t->pelt_valid || t->cpu < 0 || t->cpu >= m->nr_cpus)
		return;
	c = &m->cpus[t->cpu];
	on_rq = t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED;
	pelt_se_update(&t->avg, pelt_now(c, ts), task_weight(t), on_rq, on_rq,
		       t->state == MODEL_TASK_RUNNING);
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
	if (t->fair) {
		if (c->nr_queued)
			c->nr_queued--;
		c->weight = c->weight > task_weight(t) ? c->weight - task_weight(t) : 0;
		chain_dequeue(m, t->cpu, t->q_group, task_weight(t));
		t->q_group = 0;
	}
	if (c->curr == t->pid) {
		c->curr = 0;
		c->idle_since_ns = t->state_ns;
	}
}

static void cpu_enqueue(struct model *m, struct model_task *t)
{
	struct model_cpu *c = &m->cpus[t->cpu];

	c->nr_running++;
	if (t->fair) {
		c->nr_queued++;
		c->weight += task_weight(t);
		t->q_group = task_place(m, t, t->cpu);
		chain_enqueue(m, t->cpu, t->q_group, task_weight(t));
	}
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
		task_set_att(m, t, 0);	/* averages reset without a detach */
	id = task_place(m, t, t->cpu);
	cfs = group_cfs(m, t->cpu, id);
	if (t->state == MODEL_TASK_UNKNOWN && t->pelt_valid) {
		/*
		 * First sight of a task whose averages came from the kernel's
		 * own record: it was attached here before the model saw it, so
		 * the kernel's values the model was seeded with hold it.
		 */
		task_set_att(m, t, id);
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
			pelt_init(&t->avg, task_weight(t));
			pelt_post_init(&t->avg, task_weight(t), cfs, c->capacity);
		} else {
			memset(&t->avg, 0, sizeof(t->avg));
		}
		t->pelt_valid = true;
	}
	pelt_attach(cfs, &t->avg, task_weight(t));
	group_mark_propagate(m, t->cpu, id);
	task_set_att(m, t, id);
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
			task_pelt_update(m, old, ts);
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
 * exact (blocked tasks that the kernel keeps queued count in it).  Without
 * records: the engine's run queue.
 */
static const struct pelt_cfs *post_init_cfs(struct model *m, const struct model_task *t, int cpu,
					    uint64_t id)
{
	struct model_group *g = model_group_find(m, cpu, id);
	struct model_cpu *c = &m->cpus[cpu];
	struct pelt_cfs *k = &m->post_init_k;
	uint64_t util, load;

	if (m->opts.plain_events)
		return group_cfs(m, cpu, id);
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
		return group_cfs(m, cpu, id);
	}
	*k = *group_cfs(m, cpu, id);
	k->avg.util_avg = (unsigned long)util;
	k->avg.load_avg = (unsigned long)load;
	return k;
}

/*
 * Put task @t on CPU @cpu as queued at @ts (wake-up, new task, migration
 * in); if the CPU is idle it starts running at once.
 */
static void task_enqueue(struct model *m, struct model_task *t, int cpu, uint64_t ts, bool fresh)
{
	struct model_cpu *c;

	if (cpu_grow(m, cpu))
		return;
	c = &m->cpus[cpu];
	cpu_account(c, ts);
	m->fresh_pid = 0;
	if (fresh && !t->pelt_valid && t->fair) {
		/*
		 * post_init_entity_util_avg() reads the run queue's util as of
		 * its last update, before the enqueue updates it.
		 */
		uint64_t id = task_place(m, t, cpu);

		pelt_init(&m->fresh_init, task_weight(t));
		pelt_post_init(&m->fresh_init, task_weight(t), post_init_cfs(m, t, cpu, id), c->capacity);
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
		task_pelt_update(m, t, ts);
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
	task_pelt_update(m, t, ts);
	if (c->curr <= 0)
		cpu_set_curr(m, c, t, ts);
	if (m->has_groups)
		task_path_update(m, t, cpu, ts);	/* the attach propagates up */
}

/* The task is gone: remove its contribution, as remove_entity_load_avg(). */
static void task_kill(struct model *m, struct model_task *t, uint64_t ts)
{
	task_account(t, ts);
	if (t->fair && t->pelt_valid && !t->attach_pending && t->cpu >= 0 && t->cpu < m->nr_cpus)
		task_remove_avg(m, t);
	task_set_att(m, t, 0);
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
static void task_exit_autogroup(struct model *m, struct model_task *t, int cpu, uint64_t ts)
{
	bool queued = t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED;
	uint64_t old = t->att_group ? t->att_group : t->q_group;

	if (!m->has_groups || !t->fair || !(old & IMB_TG_AUTOGROUP) || t->cpu != cpu)
		return;
	if (queued) {
		chain_dequeue(m, cpu, t->q_group, task_weight(t));
		t->q_group = 0;
	}
	if (t->pelt_valid && t->att_group)
		task_detach_avg(m, t);
	path_update(m, cpu, old, pelt_now(&m->cpus[cpu], ts));
	t->group = 0;
	if (t->pelt_valid) {
		pelt_attach(&m->cpus[cpu].cfs, &t->avg, task_weight(t));
		task_set_att(m, t, 0);
	}
	if (queued)
		chain_enqueue(m, cpu, 0, task_weight(t));
}

static void ev_switch(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_switch *s = &ev->sw;
	uint64_t ts = ev->ts_ns;
	struct model_task *prev = NULL, *next = NULL;
	struct model_cpu *c;

	if (cpu_grow(m, ev->cpu))
		return;
	c = &m->cpus[ev->cpu];
	cpu_account(c, ts);
	if (s->next_group && s->next_pid > 0)
		m->has_groups = true;
	/* put_prev / set_next: update_load_avg() on both tasks' paths */
	task_path_update(m, s->prev_pid > 0 ? model_task_find(m, s->prev_pid) : NULL, ev->cpu, ts);
	if (s->next_pid > 0 && m->has_groups)
		task_path_update(m, model_task_find(m, s->next_pid), ev->cpu, ts);

	if (!model_pid_is_idle(s->prev_pid)) {
		prev = task_get(m, s->prev_pid, ts);
		if (prev) {
			task_note(prev, s->prev_comm, s->prev_prio, ts);
			task_set_tgid(m, prev, s->prev_tgid);
			/* first sight, or the trace missed how it got here */
			task_queue_here(m, prev, ev->cpu, ts);
			if (c->curr != prev->pid) {
				/*
				 * It was running here although we did not see it
				 * start (this kernel's tracefs drops the switch out
				 * of idle on CPU 1): it started no earlier than this
				 * CPU's last switch, nor than it was queued here.
				 */
				if (c->switch_ns > prev->state_ns && c->switch_ns < ts)
					task_account(prev, c->switch_ns);
				if (c->curr > 0)
					cpu_set_curr(m, c, NULL, ts);
				c->curr = prev->pid;
				c->fair_curr = prev->fair;
				prev->state = MODEL_TASK_RUNNING;
			}
			task_pelt_update(m, prev, ts);
			task_account(prev, ts);
			if (m->has_groups)
				task_path_update(m, prev, ev->cpu, ts);
			if (s->prev_state != IMB_STATE_RUNNING && s->prev_state != IMB_STATE_PREEMPTED &&
			    (prev->exited || s->prev_state == 0x10 || s->prev_state == 0x20))
				task_exit_autogroup(m, prev, ev->cpu, ts);
			if (prev->fair) {
				m->switch_out_fair++;
				if (s->prev_state != IMB_STATE_RUNNING &&
				    s->prev_state != IMB_STATE_PREEMPTED)
					m->switch_out_blocked++;
			}
			if (s->prev_state == IMB_STATE_RUNNING || s->prev_state == IMB_STATE_PREEMPTED) {
				prev->state = MODEL_TASK_QUEUED;
			} else {
				/* blocked: dequeue; its entity stays attached, decaying */
				cpu_unqueue(m, prev);
				prev->state = MODEL_TASK_SLEEPING;
				prev->state_ns = ts;
				if (prev->exited || s->prev_state == 0x10 || s->prev_state == 0x20)
					task_kill(m, prev, ts);
			}
		}
	}
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

	if (model_pid_is_idle(s->next_pid)) {
		c->idle_since_ns = ts;
		return;
	}
	next = task_get(m, s->next_pid, ts);
	if (!next)
		return;
	task_note(next, s->next_comm, s->next_prio, ts);
	task_set_tgid(m, next, s->next_tgid);
	if (s->next_cgroup)
		next->cgroup = s->next_cgroup;
	if (s->next_group)
		next->group = tg_internal(s->next_group);
	task_queue_here(m, next, ev->cpu, ts);
	if (next->fair && m->has_groups && next->cpu == ev->cpu &&
	    (next->q_group != task_place(m, next, ev->cpu) ||
	     (next->pelt_valid && next->att_group != next->q_group))) {
		/* in another group than the model had it (sched_move_task()) */
		next->state = MODEL_TASK_QUEUED;
		cpu_unqueue(m, next);
		if (next->pelt_valid)
			task_detach_avg(m, next);
		task_path_update(m, next, ev->cpu, ts);
		task_pelt_attach(m, next, ts, false);
		cpu_enqueue(m, next);
	}
	task_pelt_update(m, next, ts);
	task_account(next, ts);	/* it waited until now */
	c->curr = next->pid;
	c->fair_curr = next->fair;
	next->state = MODEL_TASK_RUNNING;
	if (m->has_groups)
		task_path_update(m, next, ev->cpu, ts);
}

static void ev_wakeup(struct model *m, const struct imb_event *ev, bool fresh)
{
	const struct imb_ev_wakeup *w = &ev->wakeup;
	struct model_task *t = task_get(m, w->pid, ev->ts_ns);
	int cpu = w->target_cpu >= 0 ? w->target_cpu : ev->cpu;

	if (!t)
		return;
	task_note(t, w->comm, w->prio, ev->ts_ns);
	task_set_tgid(m, t, w->tgid);
	if (fresh && t->state == MODEL_TASK_UNKNOWN)
		t->pelt_valid = false;
	task_enqueue(m, t, cpu, ev->ts_ns, fresh);
}

static void ev_migrate(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_migrate *mg = &ev->migrate;
	struct model_task *t = task_get(m, mg->pid, ev->ts_ns);
	uint64_t ts = ev->ts_ns;

	if (!t || cpu_grow(m, mg->dest_cpu) || cpu_grow(m, mg->orig_cpu))
		return;
	task_note(t, mg->comm, mg->prio, ts);
	t->migrations++;
	t->win_migrations++;
	t->win_seen = true;
	if (t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED) {
		struct model_cpu *src = &m->cpus[t->cpu >= 0 ? t->cpu : mg->orig_cpu];

		/* a queued task moved by the balancer: detach, attach at dest */
		cpu_account(src, ts);
		task_path_update(m, t, src->cpu, ts);
		task_pelt_update(m, t, ts);
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

			cpu_account(dst, ts);
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
				pelt_se_update(&t->avg, pelt_now(src, ts), task_weight(t), 0, 0, 0);
			t->attach_pending = true;
		}
	}
}

static void ev_fork(struct model *m, const struct imb_event *ev)
{
	struct model_task *t = task_get(m, ev->fork.child_pid, ev->ts_ns);

	if (!t)
		return;
	task_note(t, ev->fork.child_comm, -1, ev->ts_ns);
	task_set_att(m, t, 0);
	t->pelt_valid = false;
	t->attach_pending = false;
	{
		const struct model_task *p = model_task_find(m, ev->fork.parent_pid);

		if (p && p != t)
			t->group = p->group;	/* a child starts in its parent's group */
	}
	t->parent_pid = ev->fork.parent_pid;
	task_set_tgid(m, t, ev->fork.child_tgid);
}

static void ev_exit(struct model *m, const struct imb_event *ev)
{
	struct model_task *t = model_task_find(m, ev->exit.pid);
	uint64_t ts = ev->ts_ns;

	if (!t)
		return;
	task_note(t, ev->exit.comm, ev->exit.prio, ts);
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
	struct model_task *t = task_get(m, ev->runtime.pid, ev->ts_ns);
	uint64_t ts = ev->ts_ns;
	struct model_cpu *c;

	if (!t || cpu_grow(m, ev->cpu))
		return;
	t->last_ns = ts;
	t->has_runtime = true;
	m->has_runtime_events = true;
	t->runtime_ns += ev->runtime.runtime_ns;
	t->win_runtime_ns += ev->runtime.runtime_ns;
	t->win_seen = true;
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
	cpu_account(c, ts);
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
		cpu_pelt_update(c, ts);
		if (c->curr != t->pid)
			cpu_set_curr(m, c, t, ts);
	}
	/* update_curr() at a tick is also a PELT update instant */
	task_pelt_update(m, t, ts);
	task_path_update(m, t, ev->cpu, ts);
}

static void err_add(struct model_err_hist *h, uint64_t engine, uint64_t kernel)
{
	uint64_t d = engine > kernel ? engine - kernel : kernel - engine;

	h->samples++;
	if (d > h->max_abs)
		h->max_abs = d;
	h->bucket[d < MODEL_ERR_BUCKETS ? d : MODEL_ERR_BUCKETS]++;
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
static void cpu_compare(struct model *m, struct model_cpu *c)
{
	const struct imb_ev_pelt_cfs *k = &c->cmp_k;

	c->cmp_pending = false;
	err_add(&m->err_cpu[MODEL_SIG_UTIL], c->cfs.avg.util_avg, k->util_avg);
	err_add(&m->err_cpu[MODEL_SIG_RUNNABLE], c->cfs.avg.runnable_avg, k->runnable_avg);
	err_add(&m->err_cpu[MODEL_SIG_LOAD], c->cfs.avg.load_avg, k->load_avg);
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

/* Whether applying @ev can change the model's run queues of CPU @cpu. */
static bool ev_touches_cpu(const struct imb_event *ev, int cpu)
{
	if (ev->kind == IMB_EV_VRUNTIME)
		return false;
	if (ev->cpu == cpu || ev_attach_cpu(ev) == cpu)
		return true;
	return ev->kind == IMB_EV_MIGRATE && ev->migrate.dest_cpu == cpu;
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
static int cpu_compare_pending(struct model *m, const struct imb_event *ev)
{
	int after = -1, acpu = ev_attach_cpu(ev);
	uint64_t lut = ev_pelt_lut(ev);

	for (int i = 0; i < m->nr_cpus; i++) {
		struct model_cpu *c = &m->cpus[i];

		if (!c->cmp_pending || !ev_touches_cpu(ev, i))
			continue;
		if (lut && lut == c->cmp_k.last_update_time)
			continue;	/* the same update: a record of its end */
		if (i == acpu && ev->ts_ns - c->cmp_ns <= 50000)
			after = i;
		else
			cpu_compare(m, c);
	}
	return after;
}

/*
 * A kernel record of a group's run queue.  The first one seeds the group
 * (and its entity, taken as in step with it, as propagation keeps it);
 * later ones are the instants of the kernel's own updates of that group,
 * among them the lazy ones of update_blocked_averages() that no other
 * event shows: pelt_cfs_tp fires only from update_cfs_rq_load_avg() that
 * crossed a period, or from an attach, detach or propagation, and each of
 * their callers goes on to update the group's entity in its parent, so the
 * model applies removed load and propagates there.
 */
/* The engine's error against the group's last kernel record, now. */
static void group_compare(struct model *m, struct model_group *g)
{
	g->k_pending = g->k_after = false;
	g->k_compared++;
	err_add(&m->err_group[MODEL_SIG_UTIL], g->cfs.avg.util_avg, g->k_avg[MODEL_SIG_UTIL]);
	err_add(&m->err_group[MODEL_SIG_RUNNABLE], g->cfs.avg.runnable_avg,
		g->k_avg[MODEL_SIG_RUNNABLE]);
	err_add(&m->err_group[MODEL_SIG_LOAD], g->cfs.avg.load_avg, g->k_avg[MODEL_SIG_LOAD]);
	g->k_err[MODEL_SIG_UTIL] = (int64_t)g->cfs.avg.util_avg - (int64_t)g->k_avg[MODEL_SIG_UTIL];
	g->k_err[MODEL_SIG_RUNNABLE] = (int64_t)g->cfs.avg.runnable_avg -
				       (int64_t)g->k_avg[MODEL_SIG_RUNNABLE];
	g->k_err[MODEL_SIG_LOAD] = (int64_t)g->cfs.avg.load_avg - (int64_t)g->k_avg[MODEL_SIG_LOAD];
}

/*
 * Keep a group's kernel values; with @compare, the engine's error against
 * them, taken as for the CPUs (cpu_compare_pending()): the engine has just
 * been brought to the record's PELT instant, but the kernel fires
 * pelt_cfs_tp inside an enqueue's attach, before the wake-up that tells
 * the model of it, so the comparison waits for the next event.
 */
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
		g->k_pending = false;	/* stays in gpend[]: dropped there when found not pending */
		return;
	}
	if (g->k_pending)
		return;			/* the newer values replace the waiting ones */
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

/*
 * Before applying @ev: each group record waiting is compared now, or, when
 * @ev is an enqueue-type change of its CPU within 50 us, after @ev
 * (group_compare_after()).  PELT records of the same update wait on.
 */
static bool group_compare_pending(struct model *m, const struct imb_event *ev)
{
	int acpu = ev_attach_cpu(ev), n = 0;
	bool after = false;

	if (ev->kind == IMB_EV_PELT_SE || ev->kind == IMB_EV_VRUNTIME || ev->kind == IMB_EV_PELT_CFS)
		return false;
	for (int i = 0; i < m->nr_gpend; i++) {
		struct model_group *g = model_group_find(m, m->gpend[i].cpu, m->gpend[i].id);

		if (!g || !g->k_pending)
			continue;	/* evicted, or re-seeded */
		if (g->cpu == acpu && ev->ts_ns - g->k_ns <= 50000) {
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

/* After applying the event: compare the records group_compare_pending() kept. */
static void group_compare_after(struct model *m)
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

static void ev_pelt_cfs_group(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_pelt_cfs *k = &ev->pelt_cfs;
	uint64_t id = k->cgroup_id, parent = tg_internal(k->parent_id);
	struct model_group *g;

	if (k->parent_id)
		m->has_groups = true;	/* a source that names groups */
	if (!m->has_groups || !id || id == IMB_TG_ROOT)
		return;
	g = group_get(m, ev->cpu, id, parent, 0);
	if (!g) {
		m->groups_overflow++;
		return;
	}
	if (k->parent_id && g->parent_id != parent && !g->nr_queued && !g->se_attached &&
	    !g->nr_children && (!parent || group_get(m, ev->cpu, parent, 0, 0))) {
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

		/* the detach of the current task's autogroup exit: apply it now */
		if (t && t->exited && t->q_group == id) {
			group_kernel_note(m, g, ev, false);
			task_exit_autogroup(m, t, ev->cpu, ev->ts_ns);
			return;
		}
	}
	if (k->last_update_time > g->cfs.avg.last_update_time) {
		/* with the count the kernel integrated with (see ev_pelt_cfs()) */
		if (g->cfs.removed_nr)
			g->propagate = true;
		pelt_cfs_update(&g->cfs, k->last_update_time, g->weight, k->h_nr_runnable,
				group_is_curr(m, &m->cpus[ev->cpu], g));
		path_update(m, ev->cpu, id, k->last_update_time);
	}
	group_kernel_note(m, g, ev, true);
}

static void ev_pelt_cfs(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_pelt_cfs *k = &ev->pelt_cfs;
	struct model_cpu *c;

	if (cpu_grow(m, ev->cpu))
		return;
	if (!k->root) {
		ev_pelt_cfs_group(m, ev);
		return;
	}
	m->has_kernel_pelt = true;
	c = &m->cpus[ev->cpu];
	if (ev->flags & IMB_EVF_RQ_CLOCKS)
		cpu_offset_bound(c, (int64_t)k->last_update_time - (int64_t)ev->ts_ns, ev->ts_ns);
	cpu_account(c, ev->ts_ns);
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
		 * The kernel fires pelt_cfs_tp inside an enqueue's attach,
		 * before the wake-up or migration tracepoint that tells us
		 * of it: compare after the next event if that one is such a
		 * change of this CPU within 50 us (cpu_compare_pending()).
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

	if (!m->has_groups || !k->cgroup_id || k->cgroup_id == IMB_TG_ROOT ||
	    ev->cpu < 0 || ev->cpu >= m->nr_cpus)
		return;
	g = model_group_find(m, ev->cpu, k->cgroup_id);
	if (!g || !g->kseeded || !g->se_attached)
		return;
	if (k->last_update_time < g->cfs.avg.last_update_time)
		return;
	path_update(m, ev->cpu, g->id, k->last_update_time);
	/* the entity as the update left it: compared as the tasks' are */
	err_add(&m->err_group_se[MODEL_SIG_UTIL], g->se.util_avg, k->util_avg);
	err_add(&m->err_group_se[MODEL_SIG_RUNNABLE], g->se.runnable_avg, k->runnable_avg);
	err_add(&m->err_group_se[MODEL_SIG_LOAD], g->se.load_avg, k->load_avg);
}

static void ev_pelt_se(struct model *m, const struct imb_event *ev)
{
	const struct imb_ev_pelt_se *k = &ev->pelt_se;
	struct model_task *t;

	if (k->pid <= 0) {
		ev_pelt_se_group(m, ev);
		return;
	}
	m->has_kernel_pelt = true;
	t = task_get(m, k->pid, ev->ts_ns);
	if (!t)
		return;
	task_set_tgid(m, t, k->tgid);
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
	if (k->parent_id) {
		m->has_groups = true;
		t->group = tg_internal(k->parent_id);
	}
	if (!t->kavg_ns || !t->pelt_valid) {
		pelt_from_kernel(&t->avg, task_weight(t), k->last_update_time, k->load_sum, k->runnable_sum,
				 k->util_sum, k->period_contrib, k->load_avg, k->runnable_avg,
				 k->util_avg);
		t->avg.weight = task_weight(t);	/* detach and remove need it */
		t->pelt_valid = true;
		/* in the kernel's values of its group's run queue already */
		if (t->cpu == ev->cpu && m->has_groups)
			task_set_att(m, t, task_place(m, t, t->cpu));
	} else if (t->cpu >= 0 && t->cpu < m->nr_cpus) {
		bool on_rq = t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED;

		pelt_se_update(&t->avg, k->last_update_time, task_weight(t), on_rq, on_rq,
			       t->state == MODEL_TASK_RUNNING);
		err_add(&m->err_task[MODEL_SIG_UTIL], t->avg.util_avg, k->util_avg);
		err_add(&m->err_task[MODEL_SIG_RUNNABLE], t->avg.runnable_avg, k->runnable_avg);
		err_add(&m->err_task[MODEL_SIG_LOAD], t->avg.load_avg, k->load_avg);
	}
kernel:
	pelt_from_kernel(&t->kavg, task_weight(t), k->last_update_time, k->load_sum, k->runnable_sum,
			 k->util_sum, k->period_contrib, k->load_avg, k->runnable_avg, k->util_avg);
	t->kavg_ns = ev->ts_ns;
}

/*
 * --plain-events: a kernel record is only a reference.  The engine, fed
 * by the sched events alone, is brought to the record's event time with
 * its own state and compared; group records are skipped (the engine has
 * no groups then).  A root record waits like the others for the event
 * that changes its CPU (cpu_compare_pending()).
 */
static void ev_pelt_plain(struct model *m, const struct imb_event *ev)
{
	uint64_t ts = ev->ts_ns;

	if (ev->cpu < 0 || ev->cpu >= m->nr_cpus)
		return;
	if (ev->kind == IMB_EV_PELT_CFS && ev->pelt_cfs.root) {
		struct model_cpu *c = &m->cpus[ev->cpu];

		m->has_kernel_pelt = true;
		cpu_account(c, ts);
		cpu_pelt_update(c, ts);
		c->kcfs = ev->pelt_cfs;
		c->kcfs_ns = ts;
		if (ts - m->t0_ns < MODEL_PLAIN_WARMUP_NS)
			return;
		c->cmp_pending = true;
		c->cmp_ns = ts;
		c->cmp_k = ev->pelt_cfs;
	} else if (ev->kind == IMB_EV_PELT_SE && ev->pelt_se.pid > 0) {
		const struct imb_ev_pelt_se *k = &ev->pelt_se;
		struct model_task *t = model_task_find(m, k->pid);

		m->has_kernel_pelt = true;
		if (!t || !t->fair || !t->pelt_valid || t->cpu != ev->cpu ||
		    ts - t->first_ns < MODEL_PLAIN_WARMUP_NS || ts - m->t0_ns < MODEL_PLAIN_WARMUP_NS)
			return;
		task_pelt_update(m, t, ts);
		err_add(&m->err_task[MODEL_SIG_UTIL], t->avg.util_avg, k->util_avg);
		err_add(&m->err_task[MODEL_SIG_RUNNABLE], t->avg.runnable_avg, k->runnable_avg);
		err_add(&m->err_task[MODEL_SIG_LOAD], t->avg.load_avg, k->load_avg);
	}
}

int model_event(struct model *m, const struct imb_event *ev)
{
	struct imb_event e;
	bool gcmp_after;
	int cmp_after;

	if (ev->kind >= IMB_EV__COUNT)
		return -EINVAL;
	if (!m->events)
		m->t0_ns = m->now_ns = m->win_start_ns = ev->ts_ns;
	if (ev->ts_ns < m->now_ns) {
		m->out_of_order++;
		e = *ev;
		e.ts_ns = m->now_ns;
		ev = &e;
	}
	if (m->opts.plain_events &&
	    ((ev->flags & IMB_EVF_RQ_CLOCKS) || (ev->kind == IMB_EV_SWITCH && ev->sw.next_group))) {
		if (ev != &e) {
			e = *ev;
			ev = &e;
		}
		e.flags &= ~IMB_EVF_RQ_CLOCKS;
		if (e.kind == IMB_EV_SWITCH)
			e.sw.next_group = 0;
	}
	m->now_ns = ev->ts_ns;
	m->events++;
	m->win_events++;
	m->kind_count[ev->kind]++;
	if (ev->cpu >= 0 && ev->cpu < MODEL_MAX_CPUS) {
		if (cpu_grow(m, ev->cpu))
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
			cpu_offset_bound(&m->cpus[ev->cpu],
					 (int64_t)ev->clock_pelt_ns - (int64_t)ev->ts_ns, ev->ts_ns);
	}

	cmp_after = m->has_kernel_pelt ? cpu_compare_pending(m, ev) : -1;
	gcmp_after = m->nr_gpend ? group_compare_pending(m, ev) : false;
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
			ev_pelt_plain(m, ev);
		else
			ev_pelt_cfs(m, ev);
		break;
	case IMB_EV_PELT_SE:
		if (m->opts.plain_events)
			ev_pelt_plain(m, ev);
		else
			ev_pelt_se(m, ev);
		break;
	case IMB_EV_VRUNTIME:
		if (ev->cpu >= 0 && ev->cpu < m->nr_cpus)
			m->cpus[ev->cpu].kvruntime = ev->vruntime.vruntime_ref;
		break;
	case IMB_EV_LOST:
		m->lost_events += ev->lost.count ? ev->lost.count : 1;
		m->win_lost += ev->lost.count ? ev->lost.count : 1;
		break;
	default:
		break;		/* waking, NUMA: read by the analyzers */
	}
	if (cmp_after >= 0)
		cpu_compare(m, &m->cpus[cmp_after]);
	if (gcmp_after)
		group_compare_after(m);
	return 0;
}

void model_advance(struct model *m, uint64_t now_ns)
{
	if (now_ns < m->now_ns)
		now_ns = m->now_ns;
	for (int i = 0; i < m->nr_cpus; i++)
		if (m->cpus[i].cmp_pending)
			cpu_compare(m, &m->cpus[i]);
	for (int i = 0; i < m->nr_cpus; i++) {
		cpu_account(&m->cpus[i], now_ns);
		cpu_pelt_update(&m->cpus[i], now_ns);
	}
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		if (t->state == MODEL_TASK_RUNNING || t->state == MODEL_TASK_QUEUED)
			task_pelt_update(m, t, now_ns);
		task_account(t, now_ns);
	}
	m->now_ns = now_ns;
}

void model_window_reset(struct model *m, uint64_t now_ns)
{
	for (int i = 0; i < m->nr_cpus; i++) {
		m->cpus[i].win_busy_ns = 0;
		m->cpus[i].nr_running_area = 0;
	}
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		t->win_switch_run_ns = t->win_runtime_ns = 0;
		t->win_runnable_ns = 0;
		t->win_migrations = 0;
		t->win_seen = false;
	}
	m->win_start_ns = now_ns;
	m->win_events = m->win_lost = 0;
}

/* Drop every empty group whose averages have decayed (window ends). */
static int group_evict_idle(struct model *m)
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

int model_evict_dead(struct model *m, uint64_t before_ns)
{
	size_t n = 0, cap;

	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		if (t->state == MODEL_TASK_DEAD && t->last_ns < before_ns) {
			task_set_att(m, t, 0);	/* a group's count never outlives its task */
			m->evicted++;
			continue;
		}
		if (n != i)
			m->tasks[n] = *t;
		n++;
	}
	/* after the tasks: a group the evicted tasks held can go in this pass */
	if (m->nr_groups && group_evict_idle(m))
		return -ENOMEM;
	if (n == m->nr_tasks)
		return 0;
	m->nr_tasks = n;
	/* give memory back after a burst of short-lived tasks */
	cap = m->cap_tasks;
	while (cap > 256 && n * 4 < cap)
		cap /= 2;
	if (cap != m->cap_tasks) {
		struct model_task *nt = realloc(m->tasks, cap * sizeof(*nt));

		if (nt) {
			m->tasks = nt;
			m->cap_tasks = cap;
		}
	}
	cap = m->hash_cap;
	while (cap > 1024 && n * 8 < cap)
		cap /= 2;
	return hash_rebuild(m, cap);
}

uint64_t model_task_run_ns(const struct model_task *t)
{
	return t->has_runtime ? t->runtime_ns : t->switch_run_ns;
}

uint64_t model_task_wait_ns(const struct model_task *t)
{
	uint64_t run = model_task_run_ns(t);

	return t->runnable_ns > run ? t->runnable_ns - run : 0;
}

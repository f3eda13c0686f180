// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * overload.c - the load balancer's view of each CPU and group of CPUs.
 *
 * After every event the model's state holds until the next one, so this
 * analyzer classifies every CPU and every group of CPUs (the CPU itself,
 * its LLC, its NUMA node, the whole machine; levels that would repeat a
 * lower one are left out) with the kernel's group_is_overloaded() and
 * group_has_capacity() (doc/pelt.md §7), and charges the time to the next
 * event to what it found.  The window's CPU rows get the time fraction
 * each CPU spent overloaded, its class at the window end and the time it
 * sat idle while another CPU had a task waiting (work-conservation
 * violations; per level in the evidence).  Affinity is not in the event
 * stream, so a waiter that may not run on the idle CPU is counted too.
 *
 * Inputs per CPU: nr_running (all classes), capacity, the engine's root
 * util_avg (capped at capacity; util_est is not modelled, so a CPU whose
 * tasks just slept looks emptier than the kernel sees it) and runnable_avg.
 *
 * Every group is classified twice:
 *  - fixed: the kernel's tests, capacity x pct < runnable x 100;
 *  - scaled: the article's proposal, the runnable test's threshold scaled
 *    by the number of tasks: capacity x pct x f < runnable x 100 with
 *    f = max(1, (1 + nr_running / group_weight) / 2).  f is the
 *    runnable/util ratio that nr equal tasks per CPU reach when they all
 *    wake together (the k-th waits for k-1 others: mean (nr + 1) / 2), so
 *    queueing caused by simultaneous wake-ups alone no longer reads as
 *    overload, while nr always-runnable tasks on one CPU still do
 *    (nr x 1024 > 1.17 x 1024 x (nr + 1) / 2 for every nr >= 2).
 * Windows where the two disagree most of the time get an info finding
 * with the runnable/util ratio, the mean nr_running and whether the
 * wake-ups of the CPU's tasks came together (another task of the same
 * process woke within 100 us) or staggered: the N versus N^2 effect.
 *
 * A group is overloaded in a window when it spent at least
 * overload_min_fraction of it overloaded (fixed threshold); consecutive
 * such windows spanning overload_min_ns make one `overload` finding.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "finding_util.h"
#include "wake_ring.h"

enum ovl_level { OVL_CPU, OVL_CORE, OVL_LLC, OVL_NODE, OVL_MACHINE, OVL__COUNT };

static const char *const ovl_level_name[OVL__COUNT] = { "cpu", "core", "llc", "node",
							  "machine" };

struct ovl_episode {
	struct finding_episode f;
	uint64_t over_ns, len_ns;	/* sums over the episode's windows */
	uint64_t iww_ns[OVL__COUNT];	/* members' idle-with-waiters time per level, episode */
};

struct ovl_group {
	int level;		/* enum ovl_level */
	int gid;		/* CPU, LLC or node id; 0 for the machine */
	int first, count;	/* members: grp_cpus[first .. first + count) */
	/* sums over the members, kept up to date as members change */
	uint64_t cap, util, runnable, nr;
	int nr_waiting_cpus;	/* members with nr_running > 1 */
	/* classification in force since @since */
	int type, type_scaled;
	uint64_t since;
	/* window accumulators */
	uint64_t over_ns, over_scaled_ns, disagree_ns;
	struct ovl_episode ep, dis;
};

struct ovl_cpu {
	/* the CPU's contribution to its groups, as of its last change */
	uint64_t cap, util, runnable, nr;
	bool idle, waiters;
	uint64_t since;			/* when these values were taken */
	bool iww_on[OVL__COUNT];	/* idle while a group sibling has waiters, since: */
	uint64_t iww_since[OVL__COUNT];
	uint64_t iww_ns[OVL__COUNT];	/* idle while a group sibling had waiters */
	double runnable_area, util_area, nr_area;	/* integrals over the window */
	uint32_t wakeups, simultaneous;
	int grp[OVL__COUNT];		/* its group per level, -1 none */
};


struct ovl_state {
	struct analyzer_config cfg;
	uint64_t min_ns;		/* sustained time for a finding */
	int nr_cpus;			/* CPUs the groups were built for */
	struct ovl_cpu *cpus;
	struct ovl_group *groups;
	size_t nr_groups;
	bool has_level[OVL__COUNT];	/* levels built (a level repeating another is not) */
	int *grp_cpus;
	uint64_t last_ns;
	uint64_t next_full_ns;		/* next resync of every CPU */
	bool started;
	uint64_t next_id;
	struct wake_ring wakes;
	/* whole run */
	uint64_t *run_over_ns;		/* per group */
	uint64_t (*run_iww_ns)[OVL__COUNT];	/* per CPU and level: idle with waiters */
	uint64_t run_ns;
};

static void ovl_configure(void *state, const struct analyzer_config *cfg)
{
	struct ovl_state *s = state;

	s->cfg = *cfg;
	s->min_ns = cfg->overload_min_ns ? cfg->overload_min_ns : 2 * cfg->window_ns;
}

static void *ovl_create(const struct analyzer_config *cfg)
{
	struct ovl_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	ovl_configure(s, cfg);
	return s;
}

static void ovl_destroy(void *state)
{
	struct ovl_state *s = state;

	if (!s)
		return;
	free(s->cpus);
	free(s->groups);
	free(s->grp_cpus);
	free(s->run_over_ns);
	free(s->run_iww_ns);
	free(s);
}

static int cfg_llc(const struct analyzer_config *cfg, int cpu)
{
	return cpu < 1024 ? cfg->llc_of[cpu] : 0;
}

static int cfg_core(const struct analyzer_config *cfg, int cpu)
{
	return cpu < 1024 ? cfg->core_of[cpu] : 0;
}

static int cfg_node(const struct analyzer_config *cfg, int cpu)
{
	return cpu < 1024 && cfg->nr_nodes > 1 ? cfg->cpu_node[cpu] : 0;
}

/* Does grouping CPUs by @a give the same sets as grouping them by @b? */
static bool same_partition(const int *a, const int *b, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if ((a[i] == a[j]) != (b[i] == b[j]))
				return false;
	return true;
}

/* Each CPU's id at each level: itself, its core, LLC and node, and 0 for the machine. */
static void ovl_level_keys(const struct ovl_state *s, int *const key[OVL__COUNT], int n)
{
	for (int i = 0; i < n; i++) {
		key[OVL_CPU][i] = i;
		key[OVL_CORE][i] = cfg_core(&s->cfg, i);
		key[OVL_LLC][i] = cfg_llc(&s->cfg, i);
		key[OVL_NODE][i] = cfg_node(&s->cfg, i);
		key[OVL_MACHINE][i] = 0;
	}
}

/* Which levels get groups: CPUs always, the machine when it has two CPUs or more. */
static void ovl_pick_levels(const struct ovl_state *s, int *const key[OVL__COUNT], int n,
			    bool use[OVL__COUNT])
{
	use[OVL_CPU] = true;
	use[OVL_MACHINE] = n > 1;
	/* a level is kept when it differs from every level kept below it */
	for (int l = OVL_CORE; l <= OVL_NODE; l++) {
		use[l] = true;
		for (int k = 0; k < l; k++)
			if (use[k] && same_partition(key[l], key[k], n))
				use[l] = false;
		if (same_partition(key[l], key[OVL_MACHINE], n))
			use[l] = false;
	}
	/* LLCs that are the nodes (or a topology without LLCs): call them nodes */
	if (use[OVL_LLC] && s->cfg.nr_nodes > 1 && same_partition(key[OVL_LLC], key[OVL_NODE], n)) {
		use[OVL_LLC] = false;
		use[OVL_NODE] = true;
	}
}

/*
 * The groups of the kept levels, level by level, each in the order of its
 * first CPU, into @g; their CPUs into @gc and each CPU's group per level
 * into @c (-1 at a level not kept).  Returns the number of groups.
 */
static size_t ovl_make_groups(int *const key[OVL__COUNT], const bool use[OVL__COUNT], int n,
			      struct ovl_group *g, int *gc, struct ovl_cpu *c)
{
	size_t ng = 0, ncpus = 0;

	for (int i = 0; i < n; i++)
		for (int l = 0; l < OVL__COUNT; l++)
			c[i].grp[l] = -1;
	for (int l = 0; l < OVL__COUNT; l++) {
		if (!use[l])
			continue;
		for (int i = 0; i < n; i++) {
			bool seen = false;

			for (int k = 0; k < i; k++)
				if (key[l][k] == key[l][i])
					seen = true;
			if (seen)
				continue;
			g[ng].level = l;
			g[ng].gid = key[l][i];
			g[ng].first = (int)ncpus;
			for (int k = i; k < n; k++) {
				if (key[l][k] != key[l][i])
					continue;
				gc[ncpus++] = k;
				g[ng].count++;
				c[k].grp[l] = (int)ng;
			}
			ng++;
		}
	}
	return ng;
}

/*
 * The episodes of the groups that survive (same level and id), and their
 * run's overload time into @ro.
 */
static void ovl_keep_episodes(const struct ovl_state *s, struct ovl_group *g, size_t ng,
			      uint64_t *ro)
{
	for (size_t i = 0; i < ng; i++)
		for (size_t j = 0; j < s->nr_groups; j++)
			if (s->groups[j].level == g[i].level && s->groups[j].gid == g[i].gid) {
				g[i].ep = s->groups[j].ep;
				g[i].dis = s->groups[j].dis;
				ro[i] = s->run_over_ns[j];
			}
}

/* (Re)build the groups for @n CPUs; the window accumulators restart. */
static int ovl_build(struct ovl_state *s, int n)
{
	int *key[OVL__COUNT] = { NULL };
	size_t maxg = (size_t)n * OVL__COUNT + 1;
	struct ovl_group *g = calloc(maxg, sizeof(*g));
	int *gc = calloc(maxg * (size_t)n + 1, sizeof(*gc));
	struct ovl_cpu *c = calloc((size_t)n, sizeof(*c));
	uint64_t *ro = calloc(maxg, sizeof(*ro));
	uint64_t (*riww)[OVL__COUNT] = calloc((size_t)n, sizeof(*riww));
	bool use[OVL__COUNT];
	size_t ng;
	int rc = -1;

	for (int l = 0; l < OVL__COUNT; l++)
		key[l] = calloc((size_t)n, sizeof(int));
	if (!g || !gc || !c || !ro || !riww)
		goto out;
	for (int l = 0; l < OVL__COUNT; l++)
		if (!key[l])
			goto out;
	ovl_level_keys(s, key, n);
	ovl_pick_levels(s, key, n, use);
	ng = ovl_make_groups(key, use, n, g, gc, c);
	ovl_keep_episodes(s, g, ng, ro);
	free(s->groups);
	free(s->grp_cpus);
	free(s->cpus);
	free(s->run_over_ns);
	if (s->run_iww_ns)
		memcpy(riww, s->run_iww_ns, (size_t)(s->nr_cpus < n ? s->nr_cpus : n) * sizeof(*riww));
	free(s->run_iww_ns);
	s->run_iww_ns = riww;
	riww = NULL;
	s->groups = g;
	s->grp_cpus = gc;
	s->cpus = c;
	s->run_over_ns = ro;
	s->nr_groups = ng;
	s->nr_cpus = n;
	memcpy(s->has_level, use, sizeof(use));
	g = NULL;
	gc = NULL;
	c = NULL;
	ro = NULL;
	rc = 0;
out:
	for (int l = 0; l < OVL__COUNT; l++)
		free(key[l]);
	free(g);
	free(gc);
	free(c);
	free(ro);
	free(riww);
	return rc;
}

/*
 * The imbalance_pct the kernel would classify @g with: that of the domain
 * balancing between groups of its level (sd_init(): 110 for SMT, whose
 * groups are CPUs when cores are known; 117 for MC/LLC, whose groups are
 * cores or CPUs; the package and NUMA levels get the default, 117 since
 * v5.10, 125 before).
 * The machine group gets the pct of the top level built.
 */
static unsigned int ovl_pct(const struct ovl_state *s, const struct ovl_group *g)
{
	int l = g->level;

	if (l == OVL_MACHINE)
		l = s->has_level[OVL_NODE] ? OVL_NODE : s->has_level[OVL_LLC] ? OVL_LLC :
			s->has_level[OVL_CORE] ? OVL_CORE : OVL_CPU;
	if (l == OVL_NODE)
		return s->cfg.imbalance_pct_numa;
	if (l == OVL_LLC)
		return s->cfg.imbalance_pct_pkg;
	if (l == OVL_CPU && s->has_level[OVL_CORE])
		return s->cfg.imbalance_pct_smt;	/* SMT siblings: balanced by the SMT domain */
	return s->cfg.imbalance_pct;
}

/* The kernel's group_classify() restricted to what we model (doc/pelt.md §7). */
static void ovl_classify(const struct ovl_state *s, struct ovl_group *g, int *type,
			 int *type_scaled)
{
	uint64_t pct = ovl_pct(s, g);
	uint64_t cap = g->cap, util = g->util, runnable = g->runnable, nr = g->nr;
	unsigned int w = (unsigned int)g->count;
	double f = (1.0 + (double)nr / w) / 2.0;
	bool over, over_s, has, has_s;

	if (f < 1.0)
		f = 1.0;
	/* group_is_overloaded */
	over = nr > w && (cap * 100 < util * pct || cap * pct < runnable * 100);
	over_s = nr > w && (cap * 100 < util * pct || (double)cap * pct * f < (double)runnable * 100);
	/* group_has_capacity */
	has = nr < w || (!(cap * pct < runnable * 100) && cap * 100 > util * pct);
	has_s = nr < w || (!((double)cap * pct * f < (double)runnable * 100) && cap * 100 > util * pct);
	*type = over ? IMB_GROUP_OVERLOADED : has ? IMB_GROUP_HAS_SPARE : IMB_GROUP_FULLY_BUSY;
	*type_scaled = over_s ? IMB_GROUP_OVERLOADED :
		has_s ? IMB_GROUP_HAS_SPARE : IMB_GROUP_FULLY_BUSY;
}

/* Charge a group's class from its last change up to @now. */
static void ovl_group_accrue(struct ovl_group *g, uint64_t now)
{
	uint64_t dt = now > g->since ? now - g->since : 0;

	if (g->type == IMB_GROUP_OVERLOADED)
		g->over_ns += dt;
	if (g->type_scaled == IMB_GROUP_OVERLOADED)
		g->over_scaled_ns += dt;
	if (g->type != g->type_scaled)
		g->disagree_ns += dt;
	g->since = now;
}

static void ovl_cpu_accrue(struct ovl_cpu *c, uint64_t now)
{
	double dt = now > c->since ? (double)(now - c->since) : 0;

	c->runnable_area += (double)c->runnable * dt;
	c->util_area += (double)c->util * dt;
	c->nr_area += (double)c->nr * dt;
	c->since = now;
}

/* Idle-with-waiters state of CPU @ci at level @l; charge the old one. */
static void ovl_iww_update(struct ovl_state *s, int ci, int l, uint64_t now)
{
	struct ovl_cpu *c = &s->cpus[ci];
	const struct ovl_group *g = &s->groups[c->grp[l]];
	bool on = c->idle && g->nr_waiting_cpus > 0;

	if (c->iww_on[l] && now > c->iww_since[l])
		c->iww_ns[l] += now - c->iww_since[l];
	c->iww_since[l] = now;
	c->iww_on[l] = on;
}

/* CPU @ci may have changed: move its contribution in every group it is in. */
static void ovl_cpu_refresh(struct ovl_state *s, const struct model *m, int ci, uint64_t now)
{
	struct ovl_cpu *c = &s->cpus[ci];
	const struct model_cpu *mc = &m->cpus[ci];
	uint64_t u = mc->cfs.avg.util_avg, cap = mc->capacity;
	uint64_t util = u < cap ? u : cap, runnable = mc->cfs.avg.runnable_avg;
	uint64_t nr = mc->nr_running;
	bool idle = mc->curr == 0, waiters = nr > 1;

	if (cap == c->cap && util == c->util && runnable == c->runnable && nr == c->nr &&
	    idle == c->idle)
		return;
	ovl_cpu_accrue(c, now);
	for (int l = 0; l < OVL__COUNT; l++) {
		struct ovl_group *g;
		bool had;
		int type, type_s;

		if (c->grp[l] < 0)
			continue;
		g = &s->groups[c->grp[l]];
		had = g->nr_waiting_cpus > 0;
		g->cap += cap - c->cap;
		g->util += util - c->util;
		g->runnable += runnable - c->runnable;
		g->nr += nr - c->nr;
		g->nr_waiting_cpus += (int)waiters - (int)c->waiters;
		ovl_classify(s, g, &type, &type_s);
		if (type != g->type || type_s != g->type_scaled) {
			ovl_group_accrue(g, now);
			g->type = type;
			g->type_scaled = type_s;
		}
		if (l != OVL_CPU && had != (g->nr_waiting_cpus > 0))
			for (int i = 0; i < g->count; i++)
				if (s->grp_cpus[g->first + i] != ci)
					ovl_iww_update(s, s->grp_cpus[g->first + i], l, now);
	}
	c->cap = cap;
	c->util = util;
	c->runnable = runnable;
	c->nr = nr;
	c->waiters = waiters;
	c->idle = idle;
	for (int l = OVL_CORE; l < OVL__COUNT; l++)
		if (c->grp[l] >= 0)
			ovl_iww_update(s, ci, l, now);
}

/* Bring every accumulator up to @now (window ends). */
static void ovl_accrue_all(struct ovl_state *s, uint64_t now)
{
	for (size_t i = 0; i < s->nr_groups; i++)
		ovl_group_accrue(&s->groups[i], now);
	for (int i = 0; i < s->nr_cpus; i++) {
		ovl_cpu_accrue(&s->cpus[i], now);
		for (int l = OVL_CORE; l < OVL__COUNT; l++)
			if (s->cpus[i].grp[l] >= 0)
				ovl_iww_update(s, i, l, now);
	}
}

static void ovl_note_wakeup(struct ovl_state *s, const struct model *m, const struct imb_event *ev)
{
	const struct model_task *t = model_task_find(m, ev->wakeup.pid);
	int cpu = ev->wakeup.target_cpu >= 0 ? ev->wakeup.target_cpu : ev->cpu;
	int32_t job = t ? model_task_job_pid(m, t) : ev->wakeup.pid;
	bool together = wake_ring_note(&s->wakes, ev->ts_ns, ev->wakeup.pid, job,
				       s->cfg.simultaneous_ns);

	if (cpu >= 0 && cpu < s->nr_cpus) {
		s->cpus[cpu].wakeups++;
		s->cpus[cpu].simultaneous += together;
	}
}

static void ovl_touch(struct ovl_state *s, const struct model *m, int cpu, uint64_t now)
{
	if (cpu >= 0 && cpu < s->nr_cpus && cpu < m->nr_cpus)
		ovl_cpu_refresh(s, m, cpu, now);
}

static void ovl_event(void *state, const struct model *m, const struct imb_event *ev)
{
	struct ovl_state *s = state;
	uint64_t now = ev->ts_ns;

	if (!s->started) {
		s->started = true;
		s->last_ns = now;
	}
	if (m->nr_cpus != s->nr_cpus) {
		ovl_accrue_all(s, now);
		if (ovl_build(s, m->nr_cpus))
			return;
		for (size_t i = 0; i < s->nr_groups; i++)
			s->groups[i].since = now;
		for (int i = 0; i < s->nr_cpus; i++) {
			s->cpus[i].since = now;
			ovl_cpu_refresh(s, m, i, now);
		}
	}
	/*
	 * Only the CPUs an event names change in the model; every CPU is
	 * re-read each millisecond of trace time all the same, for the model's
	 * repairs of missed events on other CPUs.
	 */
	if (now >= s->next_full_ns) {
		for (int i = 0; i < s->nr_cpus; i++)
			ovl_cpu_refresh(s, m, i, now);
		s->next_full_ns = now + 1000000ull;
	} else {
		ovl_touch(s, m, ev->cpu, now);
		switch (ev->kind) {
		case IMB_EV_WAKEUP:
		case IMB_EV_WAKEUP_NEW:
			ovl_touch(s, m, ev->wakeup.target_cpu, now);
			break;
		case IMB_EV_MIGRATE:
			ovl_touch(s, m, ev->migrate.orig_cpu, now);
			ovl_touch(s, m, ev->migrate.dest_cpu, now);
			break;
		default:
			break;
		}
	}
	if (ev->kind == IMB_EV_WAKEUP || ev->kind == IMB_EV_WAKEUP_NEW)
		ovl_note_wakeup(s, m, ev);
	s->last_ns = now;
}

static void ovl_subject(const struct ovl_group *g, char *buf, size_t len)
{
	if (g->level == OVL_MACHINE)
		snprintf(buf, len, "machine");
	else
		snprintf(buf, len, "%s%d", ovl_level_name[g->level], g->gid);
}

/* Level whose idle-with-waiters time a group reports: its own, the machine's for a CPU. */
static int ovl_iww_level(const struct ovl_group *g)
{
	return g->level == OVL_CPU ? OVL_MACHINE : g->level;
}

/* Sum of the members' idle-with-waiters time of this window, per level. */
static void ovl_group_iww(const struct ovl_state *s, const struct ovl_group *g,
			  uint64_t sum[OVL__COUNT])
{
	memset(sum, 0, sizeof(uint64_t) * OVL__COUNT);
	for (int i = 0; i < g->count; i++)
		for (int l = OVL_CORE; l < OVL__COUNT; l++)
			sum[l] += s->cpus[s->grp_cpus[g->first + i]].iww_ns[l];
}

/*
 * Numbers of the group's CPUs for the evidence: work conservation over the
 * episode @ep, the rest over the last window.
 */
static void ovl_evidence(const struct ovl_state *s, const struct ovl_group *g,
			 const struct ovl_episode *ep, uint64_t len, struct evb *e)
{
	double ra = 0, ua = 0, na = 0;
	uint64_t win[OVL__COUNT];
	uint32_t wk = 0, sim = 0;
	char cpus[160], lv[160];
	size_t o = 0, lo = 0;

	cpus[0] = lv[0] = '\0';
	for (int i = 0; i < g->count; i++) {
		const struct ovl_cpu *c = &s->cpus[s->grp_cpus[g->first + i]];

		ra += c->runnable_area;
		ua += c->util_area;
		na += c->nr_area;
		wk += c->wakeups;
		sim += c->simultaneous;
		if (o < sizeof(cpus) - 8)
			o += (size_t)snprintf(cpus + o, sizeof(cpus) - o, "%s%d", i ? "," : "",
					      s->grp_cpus[g->first + i]);
	}
	ovl_group_iww(s, g, win);
	evb_add(e, "\"level\":\"%s\"", ovl_level_name[g->level]);
	evb_add(e, "\"cpus\":[%s]", cpus);
	evb_add(e, "\"imbalance_pct\":%u", ovl_pct(s, g));
	evb_add(e, "\"overloaded_fraction\":%.4f", len ? (double)g->over_ns / (double)len : 0);
	evb_add(e, "\"overloaded_fraction_scaled\":%.4f",
		len ? (double)g->over_scaled_ns / (double)len : 0);
	evb_add(e, "\"mean_nr_running\":%.3f", len ? na / (double)len : 0);
	evb_add(e, "\"runnable_util_ratio\":%.3f", ua > 0 ? ra / ua : 0);
	evb_add(e, "\"wakeups\":%u", wk);
	evb_add(e, "\"wakeups_simultaneous_pct\":%.1f", wk ? 100.0 * sim / wk : 0);
	evb_add(e, "\"simultaneous_ns\":%llu", (unsigned long long)s->cfg.simultaneous_ns);
	evb_add(e, "\"idle_with_waiters_ns\":%llu", (unsigned long long)ep->iww_ns[ovl_iww_level(g)]);
	evb_add(e, "\"idle_with_waiters_window_ns\":%llu",
		(unsigned long long)win[ovl_iww_level(g)]);
	for (int l = OVL_CORE; l < OVL__COUNT; l++) {
		bool have = false;

		for (int i = 0; i < g->count; i++)
			have = have || s->cpus[s->grp_cpus[g->first + i]].grp[l] >= 0;
		if (have && lo + 40 < sizeof(lv))
			lo += (size_t)snprintf(lv + lo, sizeof(lv) - lo, "%s\"%s\":%llu",
					       lo ? "," : "", ovl_level_name[l],
					       (unsigned long long)ep->iww_ns[l]);
	}
	evb_add(e, "\"idle_with_waiters_ns_by_level\":{%s}", lv);
	evb_add(e, "\"affinity\":\"not in the stream: waiters that may not run on the "
		"idle CPU are counted too\"");
	evb_add(e, "\"scaled_threshold\":\"capacity*pct*max(1,(1+nr/weight)/2) < runnable*100\"");
	evb_add(e, "\"util\":\"util_avg (util_est not modelled)\"");
}

/* The episode's finding, built into its last version and published (open). */
static void ovl_finding(struct ovl_state *s, struct ovl_group *g, struct ovl_episode *ep,
			bool disagree, const struct imb_window *w, struct finding_list *out)
{
	struct imb_finding *f = &ep->f.last;
	struct evb e;
	char subj[48];
	double frac = ep->len_ns ? (double)ep->over_ns / (double)ep->len_ns : 0;
	uint64_t len = w->t_end_ns - w->t_start_ns;

	ovl_subject(g, subj, sizeof(subj));
	finding_init(f, ep->f.id, "overload", disagree ? IMB_SEV_INFO : IMB_SEV_WARNING,
		     ep->f.start_ns, ep->f.end_ns);
	f->value = frac;
	f->threshold = disagree ? s->cfg.disagreement_min_fraction : s->cfg.overload_min_fraction;
	if (disagree) {
		snprintf(f->subject, sizeof(f->subject), "%s threshold", subj);
		snprintf(f->summary, sizeof(f->summary),
			 "%s: the fixed runnable threshold and the nr_running-scaled one disagree "
			 "%.0f%% of the time (fixed overloaded %.0f%%, scaled %.0f%% in the last "
			 "window)", subj, 100 * frac,
			 len ? 100.0 * g->over_ns / len : 0, len ? 100.0 * g->over_scaled_ns / len : 0);
	} else {
		snprintf(f->subject, sizeof(f->subject), "%s", subj);
		snprintf(f->summary, sizeof(f->summary),
			 "%s classified overloaded by the load balancer's test (imbalance_pct %u) "
			 "%.0f%% of the time for %.1f s", subj, ovl_pct(s, g), 100 * frac,
			 (double)(ep->f.end_ns - ep->f.start_ns) / 1e9);
	}
	evb_init(&e, f->evidence, sizeof(f->evidence));
	evb_add(&e, "\"episode_fraction\":%.4f", frac);
	evb_add(&e, "\"min_fraction\":%.3f", disagree ? s->cfg.disagreement_min_fraction :
		s->cfg.overload_min_fraction);
	evb_add(&e, "\"min_ns\":%llu", (unsigned long long)s->min_ns);
	ovl_evidence(s, g, ep, len, &e);
	evb_close(&e);
	finding_episode_publish(&ep->f, out);
}

/*
 * One full window of episode @ep of group @g (@disagree: the thresholds'
 * disagreement, else overload): extended while @hit, published once it
 * spans min_ns, ended at the first window without @hit.
 */
static void ovl_episode_step(struct ovl_state *s, struct ovl_group *g, struct ovl_episode *ep,
			     bool disagree, bool hit, uint64_t over_ns,
			     const uint64_t iww[OVL__COUNT], const struct imb_window *w,
			     struct finding_list *out)
{
	if (!hit) {
		finding_episode_end(&ep->f, out);
		return;
	}
	if (finding_episode_extend(&ep->f, FINDING_SRC_OVERLOAD, &s->next_id, w->t_start_ns,
				   w->t_end_ns)) {
		ep->over_ns = ep->len_ns = 0;
		memset(ep->iww_ns, 0, sizeof(ep->iww_ns));
	}
	ep->over_ns += over_ns;
	ep->len_ns += w->t_end_ns - w->t_start_ns;
	for (int l = 0; l < OVL__COUNT; l++)
		ep->iww_ns[l] += iww[l];
	if (ep->f.end_ns - ep->f.start_ns >= s->min_ns)
		ovl_finding(s, g, ep, disagree, w, out);
}

/* A CPU row's idle-with-waiters columns from @iww (per level); absent levels unknown. */
static void ovl_cpu_row_iww(const struct ovl_state *s, int ci, const uint64_t iww[OVL__COUNT],
			    struct imb_cpu_sample *r)
{
	const struct ovl_cpu *c = &s->cpus[ci];

	r->idle_with_waiters_ns = c->grp[OVL_MACHINE] >= 0 ? iww[OVL_MACHINE] : 0;
	r->idle_with_waiters_llc_ns = c->grp[OVL_LLC] >= 0 ? iww[OVL_LLC] : IMB_UNKNOWN;
	r->idle_with_waiters_node_ns = c->grp[OVL_NODE] >= 0 ? iww[OVL_NODE] : IMB_UNKNOWN;
}

static void ovl_window(void *state, const struct model *m, struct imb_window *w,
		       struct finding_list *out)
{
	struct ovl_state *s = state;
	uint64_t len = w->t_end_ns - w->t_start_ns;
	bool full = len * 2 >= s->cfg.window_ns;	/* a short last window decides nothing */

	if (m->nr_cpus != s->nr_cpus)
		return;		/* grows at the next event */
	for (int i = 0; i < s->nr_cpus; i++)
		ovl_cpu_refresh(s, m, i, w->t_end_ns);	/* model_advance() moved them */
	ovl_accrue_all(s, w->t_end_ns);
	s->run_ns += len;
	for (size_t i = 0; i < w->nr_cpus && (int)i < s->nr_cpus; i++) {
		struct imb_cpu_sample *r = &w->cpus[i];
		const struct ovl_group *g = &s->groups[s->cpus[i].grp[OVL_CPU]];

		r->group_type = g->type;
		r->group_type_scaled = g->type_scaled;
		r->overloaded_fraction = len ? (double)g->over_ns / (double)len : 0;
		ovl_cpu_row_iww(s, (int)i, s->cpus[i].iww_ns, r);
		for (int l = 0; l < OVL__COUNT; l++)
			s->run_iww_ns[i][l] += s->cpus[i].iww_ns[l];
	}
	for (size_t i = 0; i < s->nr_groups; i++) {
		struct ovl_group *g = &s->groups[i];
		double of = len ? (double)g->over_ns / (double)len : 0;
		double df = len ? (double)g->disagree_ns / (double)len : 0;
		uint64_t iww[OVL__COUNT];

		s->run_over_ns[i] += g->over_ns;
		ovl_group_iww(s, g, iww);
		if (full) {
			ovl_episode_step(s, g, &g->ep, false, of >= s->cfg.overload_min_fraction,
					 g->over_ns, iww, w, out);
			ovl_episode_step(s, g, &g->dis, true, df >= s->cfg.disagreement_min_fraction,
					 g->disagree_ns, iww, w, out);
		}
		g->over_ns = g->over_scaled_ns = g->disagree_ns = 0;
	}
	for (int i = 0; i < s->nr_cpus; i++) {
		struct ovl_cpu *c = &s->cpus[i];

		memset(c->iww_ns, 0, sizeof(c->iww_ns));
		c->runnable_area = c->util_area = c->nr_area = 0;
		c->wakeups = c->simultaneous = 0;
	}
}

static void ovl_finish(void *state, const struct model *m, struct imb_window *summary,
		       struct finding_list *out)
{
	struct ovl_state *s = state;

	(void)m;
	/* the run's CPU rows: whole-run overloaded fraction */
	for (size_t i = 0; i < summary->nr_cpus && (int)i < s->nr_cpus; i++) {
		int gi = s->cpus[i].grp[OVL_CPU];

		summary->cpus[i].group_type = s->groups[gi].type;
		summary->cpus[i].group_type_scaled = s->groups[gi].type_scaled;
		summary->cpus[i].overloaded_fraction =
			s->run_ns ? (double)s->run_over_ns[gi] / (double)s->run_ns : 0;
		ovl_cpu_row_iww(s, (int)i, s->run_iww_ns[i], &summary->cpus[i]);
	}
	/* episodes still open end with the run */
	for (size_t i = 0; i < s->nr_groups; i++) {
		struct ovl_group *g = &s->groups[i];

		finding_episode_end(&g->ep.f, out);
		finding_episode_end(&g->dis.f, out);
	}
}

const struct analyzer_ops overload_analyzer = {
	.name = "overload",
	.create = ovl_create,
	.destroy = ovl_destroy,
	.configure = ovl_configure,
	.event = ovl_event,
	.window = ovl_window,
	.finish = ovl_finish,
};

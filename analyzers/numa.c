// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * numa.c - NUMA balancing moves against the load balancer's view.
 *
 * With more than one node (cfg->nr_nodes, cfg->cpu_node), each
 * sched_move_numa / sched_swap_numa is checked against the runnable-based
 * classification of its source and destination nodes at that moment, as
 * task_numa_migrate's numa_classify() computes it (doc/pelt.md §8: over the
 * node's CPUs, nr_running = fair tasks, capacity, util_avg capped per CPU,
 * runnable_avg; pct = 100 + (imbalance_pct - 100) / 2, 108 by default):
 * a move onto a node that test calls overloaded is a conflict.  Tasks
 * bounced between the two policies (doc/pelt.md §8: a balancer move across nodes
 * undone by a NUMA move within 1 s, or a NUMA move undone by a balancer
 * move within 1 s) are counted per task; repeated sched_stick_numa too.
 * Findings `numa_conflict`: per destination node with at least two moves
 * onto it while overloaded, and per task with at least two bounces.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "finding_util.h"

#define NUMA_MAX_NODES 64

enum { NC_SPARE, NC_BUSY, NC_OVERLOADED };
static const char *const nc_name[] = { "has_spare", "fully_busy", "overloaded" };

struct numa_node_stats {
	uint64_t cap, util, runnable, load;
	unsigned int nr, weight;
	int type;
};

struct numa_task {
	int32_t pid;
	uint64_t numa_ts;		/* last move/swap naming it */
	int numa_src, numa_dst;
	uint64_t lb_ts;			/* last other cross-node move */
	int lb_src, lb_dst;
	uint32_t bounces, sticks, reported;
	uint64_t first_bounce_ns, last_bounce_ns;
	struct imb_finding f;
	bool flagged, open;
};

struct numa_dst {
	uint32_t moves, onto_overloaded, reported;
	uint64_t first_ns, last_ns;
	struct numa_node_stats src_at, dst_at;	/* at the last conflicting move */
	int src_nid;
	struct imb_finding f;
	bool flagged, open;
};

struct numa_state {
	struct analyzer_config cfg;
	unsigned int pct;
	struct numa_task *tasks;
	size_t nr, cap;
	struct numa_dst nodes[NUMA_MAX_NODES];
	uint64_t moves, swaps, sticks, conflicts;
	uint64_t next_id;
};

static void numa_configure(void *state, const struct analyzer_config *cfg)
{
	struct numa_state *s = state;
	unsigned int ip;

	s->cfg = *cfg;
	ip = cfg->imbalance_pct_numa ? cfg->imbalance_pct_numa : 117;
	s->pct = 100 + (ip > 100 ? (ip - 100) / 2 : 0);
}

static void *numa_create(const struct analyzer_config *cfg)
{
	struct numa_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	numa_configure(s, cfg);
	return s;
}

static void numa_destroy(void *state)
{
	struct numa_state *s = state;

	if (!s)
		return;
	free(s->tasks);
	free(s);
}

static int numa_node_of(const struct numa_state *s, int cpu)
{
	return cpu >= 0 && cpu < 1024 ? s->cfg.cpu_node[cpu] : -1;
}

static void numa_classify(const struct numa_state *s, const struct model *m, int nid,
			  struct numa_node_stats *st)
{
	uint64_t pct = s->pct;

	memset(st, 0, sizeof(*st));
	for (int i = 0; i < m->nr_cpus; i++) {
		const struct model_cpu *c = &m->cpus[i];
		uint64_t u = c->cfs.avg.util_avg;

		if (numa_node_of(s, i) != nid)
			continue;
		st->weight++;
		st->cap += c->capacity;
		st->util += u < c->capacity ? u : c->capacity;
		st->runnable += c->cfs.avg.runnable_avg;
		st->load += c->cfs.avg.load_avg;
		st->nr += c->nr_queued;
	}
	if (st->nr > st->weight &&
	    (st->cap * 100 < st->util * pct || st->cap * pct < st->runnable * 100))
		st->type = NC_OVERLOADED;
	else if (st->nr < st->weight ||
		 (st->cap * 100 > st->util * pct && st->cap * pct > st->runnable * 100))
		st->type = NC_SPARE;
	else
		st->type = NC_BUSY;
}

static struct numa_task *numa_task_get(struct numa_state *s, int32_t pid)
{
	/* few tasks move between nodes: a linear table is enough */
	for (size_t i = 0; i < s->nr; i++)
		if (s->tasks[i].pid == pid)
			return &s->tasks[i];
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct numa_task *n = realloc(s->tasks, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->tasks = n;
		s->cap = cap;
	}
	memset(&s->tasks[s->nr], 0, sizeof(s->tasks[0]));
	s->tasks[s->nr].pid = pid;
	return &s->tasks[s->nr++];
}

static struct numa_task *numa_task_find(struct numa_state *s, int32_t pid)
{
	for (size_t i = 0; i < s->nr; i++)
		if (s->tasks[i].pid == pid)
			return &s->tasks[i];
	return NULL;
}

static void numa_bounce(struct numa_task *t, uint64_t ts)
{
	if (!t->bounces++)
		t->first_bounce_ns = ts;
	t->last_bounce_ns = ts;
}

static void numa_moved(struct numa_state *s, const struct model *m, uint64_t ts, int32_t pid,
		       int src, int dst)
{
	struct numa_task *t = numa_task_get(s, pid);
	struct numa_node_stats a, b;

	if (!t || src < 0 || dst < 0 || src == dst)
		return;
	if (t->lb_ts && ts - t->lb_ts <= s->cfg.numa_undo_ns && t->lb_src == dst && t->lb_dst == src)
		numa_bounce(t, ts);	/* balancer moved it off, NUMA brings it back */
	t->numa_ts = ts;
	t->numa_src = src;
	t->numa_dst = dst;
	if (dst >= NUMA_MAX_NODES)
		return;
	numa_classify(s, m, src, &a);
	numa_classify(s, m, dst, &b);
	s->nodes[dst].moves++;
	if (b.type == NC_OVERLOADED) {
		struct numa_dst *d = &s->nodes[dst];

		if (!d->onto_overloaded)
			d->first_ns = ts;
		d->onto_overloaded++;
		d->last_ns = ts;
		d->src_at = a;
		d->dst_at = b;
		d->src_nid = src;
		s->conflicts++;
	}
}

static void numa_event(void *state, const struct model *m, const struct imb_event *ev)
{
	struct numa_state *s = state;
	const struct imb_ev_numa *n = &ev->numa;
	struct numa_task *t;

	if (s->cfg.nr_nodes <= 1)
		return;
	switch (ev->kind) {
	case IMB_EV_NUMA_MOVE:
		s->moves++;
		numa_moved(s, m, ev->ts_ns, n->src_pid, n->src_nid, n->dst_nid);
		break;
	case IMB_EV_NUMA_SWAP:
		s->swaps++;
		numa_moved(s, m, ev->ts_ns, n->src_pid, n->src_nid, n->dst_nid);
		if (n->dst_pid > 0)
			numa_moved(s, m, ev->ts_ns, n->dst_pid, n->dst_nid, n->src_nid);
		break;
	case IMB_EV_NUMA_STICK:
		s->sticks++;
		t = numa_task_get(s, n->src_pid);
		if (t)
			t->sticks++;
		break;
	case IMB_EV_MIGRATE: {
		int a = numa_node_of(s, ev->migrate.orig_cpu), b = numa_node_of(s, ev->migrate.dest_cpu);

		if (a == b || a < 0 || b < 0)
			break;
		t = numa_task_find(s, ev->migrate.pid);
		if (t && t->numa_ts && ev->ts_ns - t->numa_ts <= s->cfg.numa_link_ns && t->numa_dst == b)
			break;	/* the NUMA move itself */
		if (!t)
			t = numa_task_get(s, ev->migrate.pid);
		if (!t)
			break;
		if (t->numa_ts && ev->ts_ns - t->numa_ts <= s->cfg.numa_undo_ns && t->numa_dst == a &&
		    t->numa_src == b)
			numa_bounce(t, ev->ts_ns);	/* NUMA moved it here, the balancer takes it back */
		t->lb_ts = ev->ts_ns;
		t->lb_src = a;
		t->lb_dst = b;
		break;
	}
	default:
		break;
	}
}

static void numa_stats_json(struct evb *e, const char *key, int nid,
			    const struct numa_node_stats *st)
{
	evb_add(e, "\"%s\":{\"node\":%d,\"class\":\"%s\",\"nr_running\":%u,\"cpus\":%u,"
		"\"capacity\":%llu,\"util\":%llu,\"runnable\":%llu,\"load\":%llu}", key, nid,
		nc_name[st->type], st->nr, st->weight, (unsigned long long)st->cap,
		(unsigned long long)st->util, (unsigned long long)st->runnable,
		(unsigned long long)st->load);
}

static void numa_window(void *state, const struct model *m, struct imb_window *w,
			struct finding_list *out)
{
	struct numa_state *s = state;

	(void)m;
	(void)w;
	if (s->cfg.nr_nodes <= 1)
		return;
	for (int nid = 0; nid < NUMA_MAX_NODES; nid++) {
		struct numa_dst *d = &s->nodes[nid];
		struct imb_finding *f = &d->f;
		struct evb e;

		if (d->onto_overloaded < s->cfg.numa_min_count || d->onto_overloaded == d->reported)
			continue;
		if (!d->flagged)
			f->id = finding_id_make(FINDING_SRC_NUMA, ++s->next_id);
		finding_init(f, f->id, "numa_conflict", IMB_SEV_WARNING, d->first_ns, d->last_ns);
		snprintf(f->subject, sizeof(f->subject), "node %d", nid);
		f->value = d->onto_overloaded;
		f->threshold = s->cfg.numa_min_count;
		f->open = true;
		snprintf(f->summary, sizeof(f->summary),
			 "NUMA balancing moved %u of %u tasks onto node %d while its runnable-based "
			 "classification (numa_classify, pct %u) called it overloaded", d->onto_overloaded,
			 d->moves, nid, s->pct);
		evb_init(&e, f->evidence, sizeof(f->evidence));
		evb_add(&e, "\"moves_onto_node\":%u", d->moves);
		evb_add(&e, "\"onto_overloaded\":%u", d->onto_overloaded);
		evb_add(&e, "\"pct\":%u", s->pct);
		evb_add(&e, "\"imbalance_pct_numa\":%u", s->cfg.imbalance_pct_numa);
		evb_add(&e, "\"min_count\":%u", s->cfg.numa_min_count);
		evb_add(&e, "\"link_ns\":%llu", (unsigned long long)s->cfg.numa_link_ns);
		numa_stats_json(&e, "last_source", d->src_nid, &d->src_at);
		numa_stats_json(&e, "last_destination", nid, &d->dst_at);
		evb_add(&e, "\"numa_moves\":%llu,\"numa_swaps\":%llu,\"numa_sticks\":%llu",
			(unsigned long long)s->moves, (unsigned long long)s->swaps,
			(unsigned long long)s->sticks);
		evb_add(&e, "\"util\":\"util_avg (util_est not modelled)\"");
		evb_close(&e);
		d->flagged = d->open = true;
		d->reported = d->onto_overloaded;
		finding_list_add(out, f);
	}
	for (size_t i = 0; i < s->nr; i++) {
		struct numa_task *t = &s->tasks[i];
		struct imb_finding *f = &t->f;
		const struct model_task *mt;
		struct evb e;

		if (t->bounces < s->cfg.numa_min_count || t->bounces == t->reported)
			continue;
		mt = model_task_find(m, t->pid);
		if (!t->flagged)
			f->id = finding_id_make(FINDING_SRC_NUMA, ++s->next_id);
		finding_init(f, f->id, "numa_conflict", IMB_SEV_WARNING, t->first_bounce_ns,
			     t->last_bounce_ns);
		snprintf(f->subject, sizeof(f->subject), "pid %d (%.15s)", t->pid,
			 mt ? mt->comm : "?");
		f->value = t->bounces;
		f->threshold = s->cfg.numa_min_count;
		f->open = true;
		snprintf(f->summary, sizeof(f->summary),
			 "pid %d was bounced between nodes %u times: one of the load balancer and "
			 "NUMA balancing undid the other's move within %.0f ms", t->pid, t->bounces,
			 (double)s->cfg.numa_undo_ns / 1e6);
		evb_init(&e, f->evidence, sizeof(f->evidence));
		evb_add(&e, "\"pid\":%d", t->pid);
		evb_add(&e, "\"bounces\":%u", t->bounces);
		evb_add(&e, "\"sticks\":%u", t->sticks);
		evb_add(&e, "\"undo_window_ns\":%llu", (unsigned long long)s->cfg.numa_undo_ns);
		evb_add(&e, "\"min_count\":%u", s->cfg.numa_min_count);
		evb_add(&e, "\"last_numa_move\":[%d,%d]", t->numa_src, t->numa_dst);
		evb_add(&e, "\"last_other_move\":[%d,%d]", t->lb_src, t->lb_dst);
		evb_close(&e);
		t->flagged = t->open = true;
		t->reported = t->bounces;
		finding_list_add(out, f);
	}
}

static void numa_finish(void *state, const struct model *m, struct imb_window *summary,
			struct finding_list *out)
{
	struct numa_state *s = state;

	(void)m;
	(void)summary;
	for (int nid = 0; nid < NUMA_MAX_NODES; nid++)
		if (s->nodes[nid].open) {
			s->nodes[nid].open = s->nodes[nid].f.open = false;
			finding_list_add(out, &s->nodes[nid].f);
		}
	for (size_t i = 0; i < s->nr; i++)
		if (s->tasks[i].open) {
			s->tasks[i].open = s->tasks[i].f.open = false;
			finding_list_add(out, &s->tasks[i].f);
		}
}

const struct analyzer_ops numa_analyzer = {
	.name = "numa",
	.create = numa_create,
	.destroy = numa_destroy,
	.configure = numa_configure,
	.event = numa_event,
	.window = numa_window,
	.finish = numa_finish,
};

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapshot.c - refcounted hand-over of windows to readers (snapshot.h).
 *
 * A published window is wrapped in a node with an atomic refcount; the
 * holder owns one reference per ring slot.  The mutex guards only pointer
 * swaps and the small tables, never formatting, so the pipeline's publish
 * costs a few hundred nanoseconds however slow the readers are.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snapshot.h"

struct snap_node {
	struct snapshot_window pub;	/* first: readers get &node->pub */
	int refs;			/* atomic */
};

struct snapshot {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct snap_node **ring;	/* history, ring[(head + i) % cap] */
	size_t cap, head, count;
	uint64_t seq;
	struct snapshot_status st;
	struct imb_finding *findings;	/* latest state per id */
	size_t nr_findings, max_findings;
	uint64_t kick;
	struct group_rows *groups;	/* latest task-group listing, NULL none */
	uint64_t groups_seq;
};

static void node_put(struct snap_node *n)
{
	if (n && __atomic_sub_fetch(&n->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		imb_window_free((struct imb_window *)n->pub.w);
		free(n);
	}
}

struct snapshot *snapshot_new(size_t history, size_t max_findings)
{
	struct snapshot *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;

	if (!s)
		return NULL;
	s->cap = history ? history : SNAPSHOT_DEFAULT_HISTORY;
	s->max_findings = max_findings ? max_findings : SNAPSHOT_DEFAULT_FINDINGS;
	s->ring = calloc(s->cap, sizeof(*s->ring));
	s->findings = calloc(s->max_findings, sizeof(*s->findings));
	if (!s->ring || !s->findings) {
		free(s->ring);
		free(s->findings);
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	return s;
}

void snapshot_free(struct snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->count; i++)
		node_put(s->ring[(s->head + i) % s->cap]);
	group_rows_put(s->groups);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s->ring);
	free(s->findings);
	free(s);
}

void snapshot_set_info(struct snapshot *s, const struct snapshot_info *info)
{
	pthread_mutex_lock(&s->lock);
	s->st.info = *info;
	pthread_mutex_unlock(&s->lock);
}

/* count a finding the first time its id is seen; keep its latest state */
static void snapshot_note_finding(struct snapshot *s, const struct imb_finding *f)
{
	size_t i, victim = 0;

	for (i = 0; i < s->nr_findings; i++)
		if (s->findings[i].id == f->id && !strcmp(s->findings[i].kind, f->kind))
			break;
	if (i < s->nr_findings) {
		s->findings[i] = *f;
		return;
	}
	s->st.findings_total++;
	for (size_t k = 0; k <= s->st.nr_counts; k++) {
		struct metrics_finding_count *c = &s->st.counts[k];

		if (k == s->st.nr_counts) {
			if (k == SNAPSHOT_MAX_KINDS)
				break;
			memset(c, 0, sizeof(*c));
			memcpy(c->kind, f->kind, sizeof(c->kind));
			c->kind[sizeof(c->kind) - 1] = '\0';
			c->severity = f->severity;
			s->st.nr_counts++;
		}
		if (!strncmp(c->kind, f->kind, sizeof(c->kind)) && c->severity == f->severity) {
			c->count++;
			break;
		}
	}
	if (s->nr_findings < s->max_findings) {
		s->findings[s->nr_findings++] = *f;
		return;
	}
	/* full: replace the closed finding that ended first (else the oldest) */
	for (i = 1; i < s->nr_findings; i++) {
		const struct imb_finding *a = &s->findings[i], *v = &s->findings[victim];

		if ((v->open && !a->open) || (v->open == a->open && a->t_end_ns < v->t_end_ns))
			victim = i;
	}
	s->findings[victim] = *f;
}

static void pelt_sig(struct metrics_pelt_sig *g, const struct model_err_hist *h)
{
	g->samples = h->samples;
	g->max = h->max_abs;
	g->median = model_err_quantile(h, 0.5);
	g->p95 = model_err_quantile(h, 0.95);
	g->sum = 0;
	for (size_t i = 0; i <= MODEL_ERR_BUCKETS; i++)
		g->sum += (uint64_t)h->bucket[i] * i;
}

_Static_assert(METRICS_PELT_ERR_CLAMP == MODEL_ERR_BUCKETS, "clamp is the overflow bucket");
_Static_assert(METRICS_PELT_SIGNALS == MODEL_SIG__COUNT, "one summary per model signal");

void snapshot_set_pelt(struct snapshot *s, const struct model *m)
{
	struct metrics_pelt p = { .kernel_reference = m->has_kernel_pelt };

	/* the quantile walks happen here, outside the lock */
	for (int i = 0; i < MODEL_SIG__COUNT; i++) {
		pelt_sig(&p.cpu[i], &m->err_cpu[i]);
		pelt_sig(&p.task[i], &m->err_task[i]);
		pelt_sig(&p.group[i], &m->err_group[i]);
		pelt_sig(&p.group_se[i], &m->err_group_se[i]);
	}
	pelt_expect_get(m, &p.expected);
	pthread_mutex_lock(&s->lock);
	s->st.pelt = p;
	pthread_mutex_unlock(&s->lock);
}

int snapshot_publish(struct snapshot *s, struct imb_window *w)
{
	struct snap_node *n = calloc(1, sizeof(*n)), *old = NULL;

	if (!n) {
		imb_window_free(w);
		return -ENOMEM;
	}
	n->pub.w = w;
	n->refs = 1;
	pthread_mutex_lock(&s->lock);
	n->pub.seq = ++s->seq;
	if (s->count == s->cap) {
		old = s->ring[s->head];
		s->head = (s->head + 1) % s->cap;
		s->count--;
	}
	s->ring[(s->head + s->count) % s->cap] = n;
	s->count++;
	s->st.seq = n->pub.seq;
	s->st.windows++;
	s->st.events_total += w->events;
	s->st.lost_events_total += w->lost_events;
	s->st.lost_events_last = w->lost_events;
	s->st.windows_with_lost += w->lost_events != 0;
	for (size_t i = 0; i < w->nr_findings; i++)
		snapshot_note_finding(s, &w->findings[i]);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	node_put(old);
	return 0;
}

void snapshot_set_groups(struct snapshot *s, struct group_rows *rows)
{
	struct group_rows *old;

	pthread_mutex_lock(&s->lock);
	old = s->groups;
	s->groups = rows;
	s->groups_seq++;
	pthread_mutex_unlock(&s->lock);
	group_rows_put(old);
}

const struct group_rows *snapshot_groups_acquire(struct snapshot *s, uint64_t *seq)
{
	const struct group_rows *r;

	pthread_mutex_lock(&s->lock);
	r = group_rows_get(s->groups);
	if (seq)
		*seq = s->groups_seq;
	pthread_mutex_unlock(&s->lock);
	return r;
}

const struct snapshot_window *snapshot_acquire(struct snapshot *s)
{
	struct snap_node *n = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->count) {
		n = s->ring[(s->head + s->count - 1) % s->cap];
		__atomic_add_fetch(&n->refs, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&s->lock);
	return n ? &n->pub : NULL;
}

void snapshot_release(const struct snapshot_window *sw)
{
	/* pub is the first member of the node */
	node_put((struct snap_node *)(void *)sw);
}

size_t snapshot_history(struct snapshot *s, const struct snapshot_window **out, size_t max)
{
	size_t n, first;

	pthread_mutex_lock(&s->lock);
	n = s->count < max ? s->count : max;
	first = s->count - n;
	for (size_t i = 0; i < n; i++) {
		struct snap_node *nd = s->ring[(s->head + first + i) % s->cap];

		__atomic_add_fetch(&nd->refs, 1, __ATOMIC_RELAXED);
		out[i] = &nd->pub;
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

static int finding_newer(const void *a, const void *b)
{
	const struct imb_finding *x = a, *y = b;

	if (x->t_end_ns != y->t_end_ns)
		return x->t_end_ns < y->t_end_ns ? 1 : -1;
	return x->id < y->id ? 1 : x->id > y->id ? -1 : 0;
}

int snapshot_findings(struct snapshot *s, uint64_t since, struct imb_finding **out, size_t *n)
{
	struct imb_finding *arr;
	size_t k = 0;

	pthread_mutex_lock(&s->lock);
	arr = malloc((s->nr_findings ? s->nr_findings : 1) * sizeof(*arr));
	if (!arr) {
		pthread_mutex_unlock(&s->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nr_findings; i++)
		if (s->findings[i].t_end_ns >= since)
			arr[k++] = s->findings[i];
	pthread_mutex_unlock(&s->lock);
	qsort(arr, k, sizeof(*arr), finding_newer);
	*out = arr;
	*n = k;
	return 0;
}

void snapshot_status_get(struct snapshot *s, struct snapshot_status *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
}

uint64_t snapshot_wait(struct snapshot *s, uint64_t after_seq, int timeout_ms)
{
	struct timespec ts;
	uint64_t seq, kick;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&s->lock);
	kick = s->kick;
	while (s->seq <= after_seq && s->kick == kick)
		if (pthread_cond_timedwait(&s->cond, &s->lock, &ts))
			break;
	seq = s->seq;
	pthread_mutex_unlock(&s->lock);
	return seq;
}

void snapshot_kick(struct snapshot *s)
{
	pthread_mutex_lock(&s->lock);
	s->kick++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

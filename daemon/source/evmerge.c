// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evmerge.c - binary min-heap over (timestamp, stream) for merging
 * time-ordered streams (evmerge.h).  Advancing the top stream is one
 * sift-down (evmerge_update_top), the common case of a merge.
 */
#include <errno.h>
#include <stdlib.h>

#include "daemon/source/evmerge.h"

static inline int ent_less(const struct evmerge_ent *a, const struct evmerge_ent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->id < b->id);
}

int evmerge_init(struct evmerge *m, uint32_t cap)
{
	m->n = 0;
	m->cap = cap;
	m->h = calloc(cap ? cap : 1, sizeof(*m->h));
	return m->h ? 0 : -ENOMEM;
}

void evmerge_free(struct evmerge *m)
{
	free(m->h);
	m->h = NULL;
	m->n = m->cap = 0;
}

static void sift_down(struct evmerge *m, uint32_t i)
{
	struct evmerge_ent x = m->h[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= m->n)
			break;
		if (c + 1 < m->n && ent_less(&m->h[c + 1], &m->h[c]))
			c++;
		if (!ent_less(&m->h[c], &x))
			break;
		m->h[i] = m->h[c];
		i = c;
	}
	m->h[i] = x;
}

void evmerge_push(struct evmerge *m, uint32_t id, uint64_t ts)
{
	struct evmerge_ent x = { ts, id };
	uint32_t i = m->n++;

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (!ent_less(&x, &m->h[p]))
			break;
		m->h[i] = m->h[p];
		i = p;
	}
	m->h[i] = x;
}

void evmerge_update_top(struct evmerge *m, uint64_t ts)
{
	m->h[0].ts = ts;
	sift_down(m, 0);
}

void evmerge_pop(struct evmerge *m)
{
	if (!--m->n)
		return;
	m->h[0] = m->h[m->n];
	sift_down(m, 0);
}

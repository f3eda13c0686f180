/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evmerge.h - the k-way merge of time-ordered streams: a binary min-heap
 * of stream numbers keyed by (timestamp, stream number), so equal times
 * come out lowest stream first, as libtracecmd's own merge does.  The
 * caller owns the streams; the heap only says which one is next.
 */
#ifndef IMB_EVMERGE_H
#define IMB_EVMERGE_H

#include <stdint.h>

struct evmerge_ent {
	uint64_t ts;
	uint32_t id;
};

struct evmerge {
	uint32_t n, cap;
	struct evmerge_ent *h;
};

/* Room for @cap streams; returns 0 or -ENOMEM. */
int evmerge_init(struct evmerge *m, uint32_t cap);
void evmerge_free(struct evmerge *m);

/* Add stream @id whose next item has time @ts. */
void evmerge_push(struct evmerge *m, uint32_t id, uint64_t ts);

/* The stream whose item comes next (the heap is not empty). */
static inline uint32_t evmerge_top(const struct evmerge *m)
{
	return m->h[0].id;
}

/* The top stream's next item now has time @ts. */
void evmerge_update_top(struct evmerge *m, uint64_t ts);

/* The top stream is exhausted. */
void evmerge_pop(struct evmerge *m);

#endif /* IMB_EVMERGE_H */

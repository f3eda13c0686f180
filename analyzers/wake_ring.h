/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wake_ring.h - the last wake-ups, to tell whether a wake-up came together
 * with another of the same job (the overload analyzer's "simultaneous
 * wake-ups": queueing they cause alone is not the balancer's fault).
 *
 * The rule: a wake-up is together with another when one of the last
 * WAKE_RING wake-ups was of another task of the same job and at most
 * @window ns before it (times compared as unsigned differences, so one
 * from the future is never together).
 */
#ifndef IMB_WAKE_RING_H
#define IMB_WAKE_RING_H

#include <stdbool.h>
#include <stdint.h>

#define WAKE_RING 64

struct wake_ring {
	struct {
		uint64_t ts;
		int32_t pid, job;	/* pid 0: an empty slot */
	} w[WAKE_RING];
	unsigned int pos;		/* the next slot written */
	unsigned int unsorted;		/* wake-ups to come before the ring is in time order again */
};

/*
 * wake_ring_note - note a wake-up of @pid (job @job) at @ts; returns
 * whether it came together with another.  Newest first: in a ring in time
 * order the first wake-up older than the window ends the search (every one
 * before it is older still); one that came out of order makes the ring
 * searched whole until it has left it.  The answers are those of a search
 * of the whole ring.
 */
static inline bool wake_ring_note(struct wake_ring *r, uint64_t ts, int32_t pid, int32_t job,
				  uint64_t window)
{
	unsigned int last = (r->pos + WAKE_RING - 1) % WAKE_RING;
	bool together = false;

	for (unsigned int k = 1; k <= WAKE_RING && !together; k++) {
		unsigned int i = (r->pos + WAKE_RING - k) % WAKE_RING;

		if (!r->unsorted && (!r->w[i].pid || (ts >= r->w[i].ts && ts - r->w[i].ts > window)))
			break;
		together = r->w[i].pid && r->w[i].pid != pid && r->w[i].job == job &&
			   ts - r->w[i].ts <= window;
	}
	if (r->w[last].pid && ts < r->w[last].ts)
		r->unsorted = WAKE_RING;
	else if (r->unsorted)
		r->unsorted--;
	r->w[r->pos].ts = ts;
	r->w[r->pos].pid = pid;
	r->w[r->pos].job = job;
	r->pos = (r->pos + 1) % WAKE_RING;
	return together;
}

#endif /* IMB_WAKE_RING_H */

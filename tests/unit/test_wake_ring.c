// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_wake_ring.c - the overload analyzer's ring of the last wake-ups
 * (analyzers/wake_ring.h) answers as a search of the whole ring would:
 * long random runs of wake-ups in time order, with equal times, with gaps
 * longer than the window and with some out of order, against a plain
 * search of the last WAKE_RING wake-ups.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzers/wake_ring.h"
#include "tests/unit/tap.h"

#define WINDOW 100000ull

struct plain {
	struct {
		uint64_t ts;
		int32_t pid, job;
	} w[WAKE_RING];
	unsigned int n, pos;
};

static bool plain_note(struct plain *p, uint64_t ts, int32_t pid, int32_t job)
{
	bool together = false;

	for (unsigned int i = 0; i < p->n; i++)
		if (p->w[i].pid != pid && p->w[i].job == job && ts - p->w[i].ts <= WINDOW)
			together = true;
	p->w[p->pos].ts = ts;
	p->w[p->pos].pid = pid;
	p->w[p->pos].job = job;
	p->pos = (p->pos + 1) % WAKE_RING;
	if (p->n < WAKE_RING)
		p->n++;
	return together;
}

/* @steps wake-ups; @back: one in this many goes back in time (0: none) */
static void run(unsigned int seed, unsigned int steps, unsigned int back, unsigned int gap_us)
{
	static struct wake_ring r;
	static struct plain p;
	uint64_t ts = 1000000000ull;
	unsigned int differ = 0, together = 0, backs = 0;

	memset(&r, 0, sizeof(r));
	memset(&p, 0, sizeof(p));
	srand(seed);
	for (unsigned int i = 0; i < steps; i++) {
		uint64_t at;
		int32_t pid = 1 + rand() % 12, job = 1 + pid % 3;
		bool a, b;

		ts += (uint64_t)(rand() % (gap_us + 1)) * 1000;
		at = ts;
		if (back && rand() % back == 0) {
			at = ts - (uint64_t)(rand() % 500) * 1000;
			backs++;
		}
		a = wake_ring_note(&r, at, pid, job, WINDOW);
		b = plain_note(&p, at, pid, job);
		differ += a != b;
		together += b;
	}
	ok(!differ && together > steps / 20 && together < steps,
	   "seed %u, gaps up to %u us, %u out of order: %u of %u together, %u answers differ",
	   seed, gap_us, backs, together, steps, differ);
}

int main(void)
{
	run(1, 200000, 0, 60);
	run(2, 200000, 0, 400);
	run(3, 200000, 50, 60);
	run(4, 200000, 500, 200);
	run(5, 200000, 3, 30);
	run(6, 200000, 0, 0);		/* every wake-up at one time */
	return tap_done();
}

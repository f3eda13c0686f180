/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progress.h - a one-line progress display on a terminal for long offline
 * work: events read, rate, share of the recording's span done and the
 * time left, redrawn in place at most five times a second.  Nothing at all
 * when the output is not a terminal.
 */
#ifndef IMB_PROGRESS_H
#define IMB_PROGRESS_H

#include <stdint.h>

struct progress {
	int fd;
	const char *name;
	uint64_t n;			/* events seen */
	uint64_t first, last;		/* the span, when known */
	uint64_t t0, next_ns;		/* start, next redraw (monotonic ns) */
	int drawn;			/* a line is on the screen */
};

/* Start for @name on @fd; false (and nothing will be shown) when @fd is not a tty. */
int progress_start(struct progress *p, int fd, const char *name);

/* The recording's first and last event times, for the share done and the ETA. */
void progress_span(struct progress *p, uint64_t first_ns, uint64_t last_ns);

void progress_tick(struct progress *p, uint64_t ts_ns);

/* One event at time @ts_ns; cheap except every 16,384th event. */
static inline void progress_event(struct progress *p, uint64_t ts_ns)
{
	if (!(++p->n & 0x3fff))
		progress_tick(p, ts_ns);
}

/* Clear the line. */
void progress_end(struct progress *p);

#endif /* IMB_PROGRESS_H */

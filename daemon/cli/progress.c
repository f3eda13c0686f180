// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * progress.c - the progress line of `imbalanced analyze` on a terminal
 * (progress.h): "imbalanced: FILE: 12.3 M events, 2.10 M events/s, 45 %,
 * 6 s left", rewritten with a carriage return and cleared at the end.  The
 * share done is the time of the last event read within the recording's
 * span (the source knows the first and last times before it reads).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/cli/progress.h"

#define PROGRESS_EVERY_NS 200000000ull	/* first line after this, then at this pace */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int progress_start(struct progress *p, int fd, const char *name)
{
	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (!isatty(fd))
		return 0;
	p->fd = fd;
	p->name = name;
	p->t0 = now_ns();
	p->next_ns = p->t0 + PROGRESS_EVERY_NS;
	return 1;
}

void progress_span(struct progress *p, uint64_t first_ns, uint64_t last_ns)
{
	p->first = first_ns;
	p->last = last_ns;
}

void progress_tick(struct progress *p, uint64_t ts_ns)
{
	uint64_t t;
	double el, rate;
	char line[512];
	int len;

	if (p->fd < 0)
		return;
	t = now_ns();
	if (t < p->next_ns)
		return;
	p->next_ns = t + PROGRESS_EVERY_NS;
	el = (double)(t - p->t0) / 1e9;
	rate = el > 0 ? (double)p->n / el : 0;
	len = snprintf(line, sizeof(line), "\r\033[Kimbalanced: %s: %.1f M events, %.2f M events/s",
		       p->name, (double)p->n / 1e6, rate / 1e6);
	if (p->last > p->first && ts_ns >= p->first && len < (int)sizeof(line)) {
		double f = (double)(ts_ns - p->first) / (double)(p->last - p->first);

		if (f > 1)
			f = 1;
		len += snprintf(line + len, sizeof(line) - (size_t)len, ", %.0f %%", 100 * f);
		if (f > 0.01 && len < (int)sizeof(line))
			len += snprintf(line + len, sizeof(line) - (size_t)len, ", %.0f s left",
					el * (1 - f) / f);
	}
	if (len >= (int)sizeof(line))
		len = (int)sizeof(line) - 1;
	if (write(p->fd, line, (size_t)len) == len)
		p->drawn = 1;
}

void progress_end(struct progress *p)
{
	static const char clear[] = "\r\033[K";

	if (p->fd >= 0 && p->drawn && write(p->fd, clear, sizeof(clear) - 1) < 0)
		p->drawn = 0;
	p->drawn = 0;
	p->fd = -1;
}

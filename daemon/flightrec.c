// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * flightrec.c - a bounded ring of the most recent events (flightrec.h).
 *
 * Adding is a copy into a fixed ring plus dropping events older than the
 * window from its tail: no allocation, no system call.  A dump writes the
 * ring oldest first in the text event format through zlib, so `imbalanced
 * analyze FILE.events.gz` reads it back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "analyzers/event_text.h"
#include "daemon/flightrec.h"

struct flightrec {
	uint64_t window_ns;
	size_t cap, head, n;	/* ring: n events ending before head */
	struct imb_event ev[];
};

struct flightrec *flightrec_new(unsigned int seconds, size_t max_events)
{
	struct flightrec *fr;

	if (!seconds || !max_events) {
		errno = EINVAL;
		return NULL;
	}
	fr = calloc(1, sizeof(*fr) + max_events * sizeof(fr->ev[0]));
	if (!fr)
		return NULL;
	fr->window_ns = (uint64_t)seconds * 1000000000ull;
	fr->cap = max_events;
	return fr;
}

void flightrec_free(struct flightrec *fr)
{
	free(fr);
}

size_t flightrec_count(const struct flightrec *fr)
{
	return fr->n;
}

void flightrec_add(struct flightrec *fr, const struct imb_event *ev)
{
	size_t tail;

	fr->ev[fr->head] = *ev;
	fr->head = (fr->head + 1) % fr->cap;
	if (fr->n < fr->cap)
		fr->n++;
	/* drop what fell out of the time window */
	while (fr->n > 1) {
		tail = (fr->head + fr->cap - fr->n) % fr->cap;
		if (ev->ts_ns - fr->ev[tail].ts_ns <= fr->window_ns)
			break;
		fr->n--;
	}
}

/* File names: keep [A-Za-z0-9_-], turn the rest into '_'. */
static void sanitize(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++) {
		char c = src[i];

		dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '-' || c == '_' ? c : '_';
	}
	dst[i] = 0;
}

int flightrec_dump(const struct flightrec *fr, const char *dir, const char *tag, char *path,
		   size_t len, char *err)
{
	char tmp[4096], safe[96], stamp[32], line[EVENT_TEXT_MAX_LINE];
	struct timespec now;
	struct tm tm;
	gzFile gz;
	int fd, rc = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	sanitize(safe, sizeof(safe), tag);
	if ((size_t)snprintf(path, len, "%s/flight-%s-%09ld-%s.events.gz", dir, stamp,
			     (long)now.tv_nsec, safe) >= len ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, 256, "%.100s: path too long", dir);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, 256, "%.200s: %s", tmp, strerror(errno));
		return rc;
	}
	gz = gzdopen(dup(fd), "wb6");
	if (!gz) {
		close(fd);
		unlink(tmp);
		snprintf(err, 256, "%.200s: out of memory", tmp);
		return -ENOMEM;
	}
	if (gzprintf(gz, "%s\n", event_text_header()) <= 0)
		rc = -EIO;
	for (size_t i = 0; !rc && i < fr->n; i++) {
		const struct imb_event *ev = &fr->ev[(fr->head + fr->cap - fr->n + i) % fr->cap];
		int n = event_text_format(ev, line, sizeof(line));

		if (n < 0)
			continue;
		line[n] = '\n';
		if (gzwrite(gz, line, (unsigned int)n + 1) != n + 1)
			rc = -EIO;
	}
	if (gzclose(gz) != Z_OK)
		rc = -EIO;
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		snprintf(err, 256, "%.200s: %s", tmp, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

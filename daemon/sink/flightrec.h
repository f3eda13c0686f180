/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flightrec.h - the flight recorder: the last seconds of raw events kept
 * in memory, written to a file when an alert fires so the evidence of a
 * production alert can be replayed with `imbalanced analyze`.
 *
 * One thread adds events and asks for dumps; the dumps' compression and
 * fsync run in a worker thread started at the first asynchronous dump.
 */
#ifndef IMB_FLIGHTREC_H
#define IMB_FLIGHTREC_H

#include <stddef.h>
#include <stdint.h>

#include "analyzers/event.h"

struct flightrec;

/**
 * flightrec_new - keep up to @seconds of events, at most @max_events
 *
 * The ring is allocated here, once; adding never allocates.  Returns the
 * recorder (free with flightrec_free()) or NULL with errno.
 */
struct flightrec *flightrec_new(unsigned int seconds, size_t max_events);

/** flightrec_free - write the queued dumps, stop the worker; accepts NULL */
void flightrec_free(struct flightrec *fr);

/** flightrec_add - record one event (drops the oldest when full) */
void flightrec_add(struct flightrec *fr, const struct imb_event *ev);

/** flightrec_count - events held now */
size_t flightrec_count(const struct flightrec *fr);

/**
 * flightrec_dump - write the held events as gzip-compressed text events
 * into @dir, named flight-<UTC time>-<ns>-<tag>.events.gz, now, in this
 * thread (a dump of 250k events takes about half a second: the pipeline
 * uses flightrec_dump_async())
 * @path: receives the file's path
 *
 * The file is written under a temporary name, fsync'd and renamed; then
 * the oldest flight-*.events.gz files in @dir beyond the keep limit
 * (flightrec_set_keep()) are deleted.
 * Returns 0 or -errno with @err (256 bytes) filled.
 */
int flightrec_dump(struct flightrec *fr, const char *dir, const char *tag, char *path,
		   size_t len, char *err);

/* Files kept in the state directory, and dumps queued at most. */
#define FLIGHTREC_DEFAULT_KEEP	20
#define FLIGHTREC_MAX_QUEUED	2	/* each a copy of up to max_events events */

/** flightrec_set_keep - keep at most @keep dump files (0 = the default) */
void flightrec_set_keep(struct flightrec *fr, unsigned int keep);

/**
 * flightrec_dump_async - copy the held events and have a worker thread
 * write them as flightrec_dump() would
 * @path: receives the path the file will have once written
 *
 * Costs the pipeline a copy of the ring (about 5 ms for 250k events), not
 * the compression and fsync.  At most FLIGHTREC_MAX_QUEUED dumps wait or
 * are being written; past that the dump is refused.  Returns a sequence
 * number (> 0) for flightrec_dump_result(), or -EBUSY (queue full),
 * -ENOMEM, -ENAMETOOLONG, -EAGAIN (no thread) with @err filled.
 */
int64_t flightrec_dump_async(struct flightrec *fr, const char *dir, const char *tag,
			     char *path, size_t len, char *err);

/**
 * flightrec_dump_result - how dump @seq went: 1 still queued or being
 * written, 0 written, -errno failed, -ESTALE: too old to remember (the
 * last 16 are)
 */
int flightrec_dump_result(struct flightrec *fr, int64_t seq);

struct flightrec_stats {
	uint64_t written, failed, refused;	/* asynchronous dumps */
	uint64_t last_write_ns;			/* how long the last one took */
	uint64_t last_copy_ns;			/* its copy in the caller */
	char last_error[256];
};

/** flightrec_stats_get - counters of the asynchronous dumps */
void flightrec_stats_get(struct flightrec *fr, struct flightrec_stats *st);

/** flightrec_flush - wait until every queued dump is written */
void flightrec_flush(struct flightrec *fr);

#endif /* IMB_FLIGHTREC_H */

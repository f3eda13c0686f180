/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * flightrec.h - the flight recorder: the last seconds of raw events kept
 * in memory, written to a file when an alert fires so the evidence of a
 * production alert can be replayed with `imbalanced analyze`.
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

/** flightrec_free - accepts NULL */
void flightrec_free(struct flightrec *fr);

/** flightrec_add - record one event (drops the oldest when full) */
void flightrec_add(struct flightrec *fr, const struct imb_event *ev);

/** flightrec_count - events held now */
size_t flightrec_count(const struct flightrec *fr);

/**
 * flightrec_dump - write the held events as gzip-compressed text events
 * into @dir, named flight-<UTC time>-<tag>.events.gz
 * @path: receives the file's path
 *
 * The file is written under a temporary name, fsync'd and renamed.
 * Returns 0 or -errno with @err (256 bytes) filled.
 */
int flightrec_dump(const struct flightrec *fr, const char *dir, const char *tag, char *path,
		   size_t len, char *err);

#endif /* IMB_FLIGHTREC_H */

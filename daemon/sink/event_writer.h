/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * event_writer.h - a live event stream into a file, in the text event
 * format (doc/event-format.md), plain or gzip-compressed.
 *
 * `run --record` and `record` write through it; `analyze` and
 * `run --replay` read the result back (source_text.c reads both forms).
 * A name ending in ".gz" is compressed; "-" is standard output.  A write
 * error is kept and reported once, at close.
 */
#ifndef IMB_EVENT_WRITER_H
#define IMB_EVENT_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzers/event.h"

#define EVENT_WRITER_ERR_LEN	256

struct event_writer;

/**
 * event_writer_open - create @path and write the format's header line
 * @clobber: replace an existing file; false: fail with EEXIST instead
 * @err: EVENT_WRITER_ERR_LEN bytes, "PATH: reason" on failure
 *
 * Returns the writer, or NULL with errno set.
 */
struct event_writer *event_writer_open(const char *path, bool clobber, char *err);

/**
 * event_writer_put - append one event as a text line
 *
 * Returns 0, or -errno of the first write error (kept: later calls do
 * nothing and return it too).
 */
int event_writer_put(struct event_writer *w, const struct imb_event *ev);

/** event_writer_count - the events written so far */
uint64_t event_writer_count(const struct event_writer *w);

/** event_writer_gzip - the file is gzip-compressed */
bool event_writer_gzip(const struct event_writer *w);

/**
 * event_writer_close - flush, close and free; accepts NULL (returns 0)
 * @err: EVENT_WRITER_ERR_LEN bytes, "PATH: reason" on failure; may be NULL
 *
 * Returns 0 when every event reached the file, else -errno.
 */
int event_writer_close(struct event_writer *w, char *err);

#endif /* IMB_EVENT_WRITER_H */

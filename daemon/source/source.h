/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * source.h - the one small interface every event source implements.
 *
 * A source turns what it reads (a trace.dat file, a text file, the BPF ring
 * buffer, tracefs per-CPU buffers) into struct imb_event and hands each one,
 * in time order across CPUs, to a callback.  Offline sources read a whole
 * file in one call; live sources are opened once and polled.
 *
 * Error convention: functions return 0 or -errno; on error they write a
 * one-line reason into err (without the "imbalanced: FILE: " prefix, which
 * the caller adds) and never print anything themselves.
 */
#ifndef IMB_SOURCE_H
#define IMB_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/event.h"

/* Called once per event, in time order.  Return < 0 to stop the source. */
typedef int (*imb_event_fn)(const struct imb_event *ev, void *ctx);

struct source_info {
	char format[16];	/* "trace.dat", "text", "bpf", "tracefs" */
	char clock[16];		/* trace clock: "perf", "mono", "local", ... ("" unknown) */
	int nr_cpus;		/* CPUs the recording covers */
	bool truncated;		/* input was cut off inside its event data */
	uint64_t events;	/* events delivered to the callback */
	uint64_t lost_events;	/* events the kernel reported lost (also sent as IMB_EV_LOST) */
	char warning[256];	/* one-line warning for the user ("" none) */
	/* the recording's first and last event times, when the source knows
	 * them before it delivers events (for progress), else 0 */
	uint64_t first_ts_ns, last_ts_ns;
};

#define SOURCE_ERR_LEN 256

/**
 * source_tracedat_read - read every sched event of a trace.dat file
 * @path: the file
 * @fn, @ctx: receives each event in time order
 * @info: filled in (format, clock, nr_cpus, truncated, counts)
 * @err: SOURCE_ERR_LEN bytes, receives the reason on failure
 *
 * A file cut off inside its event data is read up to the cut: returns 0
 * with info->truncated set and info->warning filled.  Returns -errno
 * (-ENOENT, -EINVAL for "not a trace.dat", -ENODATA for "no sched_switch",
 * ...) with @err filled otherwise.  A negative return of @fn stops reading
 * and is returned.
 */
int source_tracedat_read(const char *path, imb_event_fn fn, void *ctx,
			 struct source_info *info, char *err);

/*
 * source_tracedat_segment - records per segment when a compressed file is
 * read in segments (memory bound, see daemon/source/tracedat.c); 0 restores the
 * default.  For tests, which use small segments to check the joins.
 */
void source_tracedat_segment(unsigned int records);

/**
 * source_text_read - read a file in the text event format (README)
 * @path: the file, "-" for standard input
 *
 * Same contract as source_tracedat_read(); a line that does not parse is an
 * error naming its line number and field.
 */
int source_text_read(const char *path, imb_event_fn fn, void *ctx,
		     struct source_info *info, char *err);

/**
 * source_text_sniff - true when @path looks like the text format (first
 * non-blank byte '#' or a digit) or is gzip (our flight-recorder dumps);
 * false for anything else, e.g. a trace.dat
 */
bool source_text_sniff(const char *path);

#endif /* IMB_SOURCE_H */

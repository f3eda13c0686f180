/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * source.h - the one interface every event source implements.
 *
 * A source turns what it reads (a trace.dat file, a text file, the BPF ring
 * buffer, tracefs per-CPU buffers) into struct imb_event and hands each one,
 * in time order across CPUs, to a callback.  Every source is a struct
 * source: opened by source_file_open() (a file: the reader that fits it)
 * or live_source_open() (live.h: BPF, else tracefs), then driven only
 * through its struct source_ops, so its callers never branch on which
 * source is active.  What only some sources have (events held back to
 * order them, the kernel's PELT hooks) is an op that is NULL where a
 * source lacks it, and a capability bit in source.caps.
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
	char reader[96];	/* how a file was read, for --verbose ("" not said) */
	/* the recording's first and last event times, when the source knows
	 * them before it delivers events (for progress), else 0 */
	uint64_t first_ts_ns, last_ts_ns;
};

#define SOURCE_ERR_LEN 256

/* struct source.caps: what a source is and has */
enum {
	SOURCE_LIVE		= 1u << 0,	/* the running kernel, polled until closed */
	SOURCE_KERNEL_PELT	= 1u << 1,	/* can hook the kernel's own PELT updates */
	SOURCE_LOSES_EVENTS	= 1u << 2,	/* the kernel may drop events while it reads */
};

/* What source_ops.next returns besides -errno and a negative return of fn. */
enum {
	SOURCE_MORE = 0,	/* more events may come: call again */
	SOURCE_END = 1,		/* the input ended: every event was delivered */
};

/*
 * struct source_ops - what a source does.
 * @next: deliver the next batch of events to @fn, in time order, waiting
 *	at most @timeout_ms for one (a live source: what arrived; a file: the
 *	whole file in one batch, since its reader pushes every event in one
 *	call, trace.dat's from child processes).
 *	Returns SOURCE_MORE, SOURCE_END, a negative return of @fn (delivery
 *	stops there), or -errno with @err (SOURCE_ERR_LEN) filled when the
 *	source can say why ("" otherwise).
 * @info: format, clock, CPUs, the counts of events delivered and of events
 *	the kernel reported lost, warnings.
 * @watermark: every event older than this has been delivered (windows may
 *	close up to it); NULL for a source that does not hold events back.
 * @drain: deliver everything still held (at stop); NULL: nothing is held.
 * @held_bytes: memory the source holds to put events in time order (it
 *	keeps it while a backlog lasts); NULL for a source without such a buffer.
 * @pelt_hooks: where the kernel's PELT values come from, in words, into
 *	@buf; NULL for a source without them (no SOURCE_KERNEL_PELT).
 * @close: stop and free; every resource of the source is gone after.
 */
struct source_ops {
	int (*next)(void *impl, int timeout_ms, imb_event_fn fn, void *ctx, char *err);
	void (*info)(void *impl, struct source_info *info);
	uint64_t (*watermark)(const void *impl);
	void (*drain)(void *impl, imb_event_fn fn, void *ctx);
	uint64_t (*held_bytes)(const void *impl);
	void (*pelt_hooks)(const void *impl, char *buf, size_t len);
	void (*close)(void *impl);
};

/*
 * struct source - an open source: its name ("bpf", "tracefs", "trace.dat",
 * "text"), its SOURCE_* capability bits, its ops and their state.
 */
struct source {
	const char *name;
	unsigned int caps;
	const struct source_ops *ops;
	void *impl;
};

/**
 * source_file_open - the offline source that reads @path
 * @src: filled in
 * @path: a trace.dat, a file in the text event format (or gzip of one),
 *	"-" for the text format on standard input
 * @err: SOURCE_ERR_LEN bytes, receives the reason on failure
 *
 * Picks the reader by the file's first bytes (source_text_sniff()); the
 * file itself is read by the first source_ops.next, which reports its
 * errors.  Returns 0, or -ENOMEM with @err filled.
 */
int source_file_open(struct source *src, const char *path, char *err);

/**
 * source_watermark - every event older than this has been delivered;
 * UINT64_MAX for a source that holds nothing back or is not open
 */
uint64_t source_watermark(const struct source *src);

/** source_drain - deliver what @src still holds, if anything and open */
void source_drain(struct source *src, imb_event_fn fn, void *ctx);

/** source_info_get - @src's struct source_info (zeroed when it is not open) */
void source_info_get(struct source *src, struct source_info *info);

/** source_close - close @src if open (accepts a zeroed one) and zero it */
void source_close(struct source *src);

/*
 * The file readers behind source_file_open().  Callers outside
 * daemon/source/ open a struct source instead; tests and fuzz targets call
 * the readers directly.
 */

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

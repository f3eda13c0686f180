/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracefs.h - the live tracefs source, the fallback when BPF cannot
 * load.
 *
 * It records the scheduler's trace events in a tracefs instance of its own
 * ("imbalanced-<pid>"), reads the per-CPU raw ring buffers one sub-buffer
 * per read(2), and hands every record, as struct imb_event, to a callback in
 * timestamp order across CPUs (a k-way merge that holds back the newest few
 * milliseconds so a CPU whose events are still being committed cannot break
 * the order).  Events the kernel dropped become IMB_EV_LOST events.  The
 * top-level tracefs buffer and its settings are never touched; closing the
 * source destroys the instance and unmounts tracefs only if it mounted it.
 *
 * Only daemon/source/tracefs.c includes libtracefs; the records' fields
 * are decoded by sched_fields.c, as the trace.dat source's are.
 */
#ifndef IMB_SOURCE_TRACEFS_H
#define IMB_SOURCE_TRACEFS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/source/source.h"

/* Defaults (the one place they live). */
#define SOURCE_TRACEFS_CLOCK		"mono"	/* same clock as bpf_ktime_get_ns() */
#define SOURCE_TRACEFS_BUFFER_KB	8192	/* per-CPU ring buffer */
#define SOURCE_TRACEFS_HOLDBACK_NS	5000000	/* merge hold-back window */
#define SOURCE_TRACEFS_WAKE_PERCENT	5	/* poll wakes when a buffer is this full */
#define SOURCE_TRACEFS_INSTANCE_PREFIX	"imbalanced-"

struct source_tracefs_opts {
	const char *clock;	/* trace_clock of the instance, NULL: "mono" */
	unsigned int buffer_kb;	/* per-CPU ring buffer size, 0: default */
	uint64_t holdback_ns;	/* merge hold-back, 0: default */
	unsigned int wake_percent; /* buffer_percent of the instance, 0: default */
	bool no_numa;		/* do not enable the NUMA events */
	uint32_t events;	/* (1u << enum imb_ev_kind) bits to enable, 0: all */
};

struct source_tracefs_stats {
	uint64_t events;	/* events delivered to the callback (incl. LOST) */
	uint64_t lost_events;	/* events the kernel reported lost */
	uint64_t lost_unknown;	/* sub-buffers that flagged a loss without a count */
	uint64_t subbufs;	/* sub-buffers read */
	uint64_t bytes;		/* bytes read from the per-CPU buffers */
	uint64_t skipped;	/* records of events this source does not convert */
	uint64_t order_fixups;	/* records older than one already delivered */
	uint64_t dropped_kernel; /* sum of per_cpu "dropped events" at last check */
	uint64_t overrun_kernel; /* sum of per_cpu "overrun" at last check */
	bool mounted;		/* the source mounted tracefs itself */
	int nr_cpus;		/* per-CPU buffers read */
	char clock[16];		/* trace clock in use */
	char instance[64];	/* instance name */
};

struct source_tracefs;

/**
 * source_tracefs_open - set up an instance and start recording
 * @opts: settings, NULL for the defaults
 * @err: SOURCE_ERR_LEN bytes, receives the reason on failure
 *
 * Mounts tracefs if it is not mounted, creates the instance
 * "imbalanced-<pid>", sets its clock and buffer size, enables the sched
 * events (the NUMA ones where the kernel has them) and turns tracing on.
 * Field offsets are looked up here, once.
 *
 * Returns the source (free with source_tracefs_close()), or NULL with errno
 * set and @err filled; on failure everything done so far is undone.
 */
struct source_tracefs *source_tracefs_open(const struct source_tracefs_opts *opts,
					   char *err);

/**
 * source_tracefs_poll - deliver the events recorded so far
 * @s: the source
 * @timeout_ms: wait at most this long for data (0: do not wait, <0: forever)
 * @fn, @ctx: receives each event, in time order across CPUs
 *
 * Events younger than the hold-back window stay queued for the next call.
 * Returns the number of events delivered (>= 0), a negative return of @fn
 * (which stops delivery; the remaining events stay queued), or -errno.
 */
int source_tracefs_poll(struct source_tracefs *s, int timeout_ms,
			imb_event_fn fn, void *ctx);

/**
 * source_tracefs_drain - stop recording and deliver everything left
 * @s: the source
 * @fn, @ctx: receives each event, in time order across CPUs
 *
 * Turns tracing off in the instance, then delivers all queued and buffered
 * events ignoring the hold-back window (for a clean shutdown).
 * Returns the number delivered, a negative return of @fn, or -errno.
 */
int source_tracefs_drain(struct source_tracefs *s, imb_event_fn fn, void *ctx);

/**
 * source_tracefs_stats - counters and settings of the source
 * @s: the source
 * @st: filled in
 *
 * Reads the kernel's per-CPU "overrun"/"dropped events" counters of the
 * instance (a few reads; not for every event).
 */
void source_tracefs_stats(struct source_tracefs *s, struct source_tracefs_stats *st);

/**
 * source_tracefs_info - the source described as struct source_info
 */
void source_tracefs_info(struct source_tracefs *s, struct source_info *info);

/**
 * source_tracefs_close - stop, destroy the instance, unmount if we mounted
 * @s: the source, NULL is fine
 *
 * Returns 0, or the first -errno met while undoing (everything is still
 * attempted and @s is freed).
 */
int source_tracefs_close(struct source_tracefs *s);

/**
 * source_tracefs_cleanup_stale - remove instances of dead daemons
 * @removed: if not NULL, receives how many instances were removed
 *
 * Destroys every tracefs instance named "imbalanced-<pid>" whose pid is not
 * a live process (left behind by a daemon killed with SIGKILL).  Does not
 * mount tracefs: returns 0 when it is not mounted.  Returns 0 or -errno.
 */
int source_tracefs_cleanup_stale(int *removed);

#endif /* IMB_SOURCE_TRACEFS_H */

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bpf.h - the live BPF event source.
 *
 * Loads bpf/imbalance.bpf.c (CO-RE, tp_btf programs on the scheduler and
 * PELT tracepoints), drains its ring buffer, turns each wire record into a
 * struct imb_event and delivers them in timestamp order.  The ring buffer is
 * filled by all CPUs and only approximately ordered, so events are held in
 * a small reorder buffer for `reorder_ns` before they are delivered; ring
 * buffer reservations that failed in the kernel come out as IMB_EV_LOST
 * events, one per CPU and poll.
 *
 * Timestamps are CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns()).
 */
#ifndef IMB_SOURCE_BPF_H
#define IMB_SOURCE_BPF_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/source/group_names.h"
#include "daemon/source/pelt_hook.h"
#include "daemon/source/source.h"

#define SOURCE_BPF_RINGBUF_DEFAULT	(8u << 20)	/* bytes */
#define SOURCE_BPF_REORDER_DEFAULT	(2u * 1000 * 1000)	/* ns */
#define SOURCE_BPF_WAKEUP_DEFAULT	(1u << 20)	/* bytes (see bpf_configure()) */
#define SOURCE_BPF_POLL_BUDGET		16384u		/* records read per poll at most */

/* Bit of source_bpf_opts.events for an enum imb_ev_kind. */
#define SOURCE_BPF_EV(kind)	(1u << (kind))

struct source_bpf_opts {
	uint32_t ringbuf_bytes;		/* 0: default; rounded up to a power of two */
	uint32_t events;		/* SOURCE_BPF_EV() bits; 0: every kind the kernel has */
	uint64_t pelt_se_min_interval_ns;	/* per-task rate limit of pelt_se; 0: none */
	uint64_t reorder_ns;		/* hold events this long to order them; 0: default */
	uint32_t wakeup_bytes;		/* wake the reader when this much waits (at most a
					 * quarter of the ring); 0: default,
					 * UINT32_MAX: on every record.  Below it, events wait
					 * for the poll timeout. */
	struct group_names *group_names;	/* receives task groups' cgroup paths (owned by
					 * the caller, outlives the source); NULL: none sent */
	uint64_t group_path_interval_ns;	/* resend each group's path after this; 0: once */
	bool runtime_all;		/* every sched_stat_runtime; false: only where it may be
					 * the tick (the run-time counters in switch and tick
					 * records hold the others' run time) */
};

struct source_bpf_stats {
	uint64_t events;		/* delivered to the callback */
	uint64_t records;		/* wire records read from the ring buffer */
	uint64_t lost;			/* records the kernel could not reserve, all CPUs, and skipped */
	uint64_t skipped;		/* ... of them: program runs the kernel skipped (recursion) */
	uint64_t late;			/* records older than one already delivered (ts raised) */
	uint64_t unreported;		/* switches the kernel did not report, recovered
					 * from sched_exit_tp (delivered as switches) */
	uint64_t held;			/* records waiting in the reorder buffer now */
	uint64_t held_bytes;		/* memory the reorder buffer holds (its capacity) */
	uint64_t group_paths;		/* group path records read (not events) */
	uint64_t group_paths_bad;	/* of those, garbled ones dropped */
	int nr_cpus;			/* entries of lost_cpu */
	const uint64_t *lost_cpu;	/* lost per CPU; owned by the source, valid until close */
	uint32_t attached;		/* SOURCE_BPF_EV() bits of the kinds attached */
	uint64_t hook_records;		/* PELT records from the update_load_avg() hook */
};

struct source_bpf;

/**
 * source_bpf_open - load and attach the BPF programs
 * @opts: knobs, NULL for the defaults
 * @err: SOURCE_ERR_LEN bytes, receives the one-line reason on failure
 *
 * Programs whose tracepoint the kernel lacks (NUMA ones, sched_stat_runtime,
 * ...) are not loaded.  Returns the source (free with source_bpf_close()),
 * or NULL with errno set: EPERM (not permitted), ENOENT (no kernel BTF or a
 * required tracepoint missing), or what libbpf reported.
 */
struct source_bpf *source_bpf_open(const struct source_bpf_opts *opts, char *err);

/**
 * source_bpf_poll - wait up to @timeout_ms for events and deliver them
 * @fn, @ctx: receives each event whose time is older than the reorder window
 *
 * Reads at most SOURCE_BPF_POLL_BUDGET records, so that a reader that has
 * fallen behind still returns to its caller (windows, watchdog, signals)
 * several times a second.
 *
 * Returns the number of events delivered (>= 0), a negative return of @fn
 * (delivery stops there; undelivered events stay held), or -errno.
 */
int source_bpf_poll(struct source_bpf *s, int timeout_ms, imb_event_fn fn, void *ctx);

/**
 * source_bpf_watermark - every event stamped before this has been delivered
 *
 * CLOCK_MONOTONIC ns; a caller closing windows by the wall clock must not
 * close past it, or the events still in the ring would come late.
 */
uint64_t source_bpf_watermark(const struct source_bpf *s);

/**
 * source_bpf_flush - deliver every held event now (at shutdown)
 *
 * Returns the number delivered or a negative return of @fn.
 */
int source_bpf_flush(struct source_bpf *s, imb_event_fn fn, void *ctx);

/** source_bpf_stats - counters so far; @st->lost_cpu points into @s */
void source_bpf_stats(const struct source_bpf *s, struct source_bpf_stats *st);

/**
 * source_bpf_pelt_hook - whether the update_load_avg() hook feeds the PELT
 * records (@st->usable: attached), or why not (@st->reason)
 */
void source_bpf_pelt_hook(const struct source_bpf *s, struct pelt_hook_status *st);

/** source_bpf_info - fill a struct source_info ("bpf", clock "mono") */
void source_bpf_info(const struct source_bpf *s, struct source_info *info);

/**
 * source_bpf_close - detach every program, free everything
 *
 * Accepts NULL.  Held events are dropped: call source_bpf_flush() first.
 */
void source_bpf_close(struct source_bpf *s);

#endif /* IMB_SOURCE_BPF_H */

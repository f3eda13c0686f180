/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * live.h - one interface over the live event sources (BPF, tracefs).
 *
 * The daemon opens a live source with live_source_open(), which tries BPF
 * and falls back to tracefs as the configuration asks, and from then on
 * only calls through struct live_source_ops: it never branches on which
 * source is active.  What only one source has (BPF's PELT hook mode) is a
 * capability: an op that is NULL where the source lacks it.
 */
#ifndef IMB_SOURCE_LIVE_H
#define IMB_SOURCE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/source/group_names.h"
#include "daemon/source/source.h"

/*
 * struct live_source_ops - what a live source does.
 * @poll: wait up to @timeout_ms and deliver what arrived, in time order;
 *	0 or -errno.
 * @watermark: every event older than this has been delivered (windows may
 *	close up to it); UINT64_MAX for a source that does not hold events back.
 * @drain: deliver everything still held (at stop).
 * @info: events, lost events, format, clock.
 * @pelt_hooks: where the kernel's PELT values come from, in words, into
 *	@buf; NULL for a source without them.
 * @held_bytes: memory the source holds to put events in time order (it
 *	keeps it while a backlog lasts); NULL for a source without such a buffer.
 * @close: detach and free; every resource of the source is gone after.
 */
struct live_source_ops {
	int (*poll)(void *impl, int timeout_ms, imb_event_fn fn, void *ctx);
	uint64_t (*watermark)(const void *impl);
	void (*drain)(void *impl, imb_event_fn fn, void *ctx);
	void (*info)(void *impl, struct source_info *info);
	void (*pelt_hooks)(const void *impl, char *buf, size_t len);
	uint64_t (*held_bytes)(const void *impl);
	void (*close)(void *impl);
};

/* struct live_source - an open live source: its name ("bpf", "tracefs"), ops, state. */
struct live_source {
	const char *name;
	const struct live_source_ops *ops;
	void *impl;
};

/* What the caller asks of the sources. */
struct live_source_opts {
	int prefer;			/* LIVE_SOURCE_AUTO, _BPF or _TRACEFS */
	uint64_t events;		/* SOURCE_BPF_EV() bits of the events to attach */
	bool no_numa;			/* leave the NUMA events out */
	size_t ringbuf_bytes;		/* BPF ring buffer */
	uint64_t pelt_se_min_interval_ns;	/* BPF: pelt_se records per task at most this often */
	uint64_t group_path_interval_ns;	/* BPF: group path resend interval */
	struct group_names *group_names;	/* BPF fills it; NULL: no paths */
	unsigned int tracefs_buffer_kb;	/* tracefs per-CPU buffer */
	/* one line for the log: the BPF source's failure before the fallback */
	void (*log_fallback)(void *ctx, const char *why);
	void (*log_stale)(void *ctx, int removed);	/* stale tracefs instances removed */
	void *log_ctx;
};

enum { LIVE_SOURCE_AUTO, LIVE_SOURCE_BPF, LIVE_SOURCE_TRACEFS };

/**
 * live_source_open - open BPF, or tracefs where BPF cannot load and
 * @o->prefer allows it.
 * Return: 0 with @ls filled, or -errno with @err (SOURCE_ERR_LEN) saying
 * why no source could be had.
 */
int live_source_open(struct live_source *ls, const struct live_source_opts *o, char *err);

/** live_source_close - close @ls if open (accepts a zeroed one) */
void live_source_close(struct live_source *ls);

#endif /* IMB_SOURCE_LIVE_H */

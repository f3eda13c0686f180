/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * live.h - opening a live event source (BPF, else tracefs).
 *
 * The daemon opens a live source with live_source_open(), which tries BPF
 * and falls back to tracefs as the configuration asks, and from then on
 * only calls through its struct source_ops (source.h), as for a file: it
 * never branches on which source is active.
 */
#ifndef IMB_SOURCE_LIVE_H
#define IMB_SOURCE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/source/group_names.h"
#include "daemon/source/source.h"

/* What the caller asks of the sources. */
struct live_source_opts {
	int prefer;			/* LIVE_SOURCE_AUTO, _BPF or _TRACEFS */
	uint64_t events;		/* SOURCE_BPF_EV() bits of the events to attach */
	bool no_numa;			/* leave the NUMA events out */
	bool runtime_all;		/* BPF: every sched_stat_runtime (source_bpf_opts) */
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
 * Return: 0 with @ls filled (SOURCE_LIVE in its caps; close it with
 * source_close()), or -errno with @err (SOURCE_ERR_LEN) saying why no
 * source could be had.
 */
int live_source_open(struct source *ls, const struct live_source_opts *o, char *err);

#endif /* IMB_SOURCE_LIVE_H */

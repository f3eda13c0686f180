// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * live.c - the live sources behind struct source_ops (source.h): the BPF
 * and tracefs sources' functions as ops, and the choice between them at
 * open (live.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/source/bpf.h"
#include "daemon/source/live.h"
#include "daemon/source/pelt_hook.h"
#include "daemon/source/tracefs.h"
#include "daemon/util.h"

/* a live source never ends: delivered counts become SOURCE_MORE */
static int bpf_next(void *impl, int timeout_ms, imb_event_fn fn, void *ctx, char *err)
{
	int rc = source_bpf_poll(impl, timeout_ms, fn, ctx);

	(void)err;
	return rc < 0 ? rc : SOURCE_MORE;
}

static uint64_t bpf_watermark(const void *impl)
{
	return source_bpf_watermark(impl);
}

static void bpf_drain(void *impl, imb_event_fn fn, void *ctx)
{
	source_bpf_flush(impl, fn, ctx);
}

static void bpf_info(void *impl, struct source_info *info)
{
	source_bpf_info(impl, info);
}

static void bpf_pelt_hooks(const void *impl, char *buf, size_t len)
{
	struct source_bpf_stats st;
	struct pelt_hook_status hs;

	source_bpf_stats(impl, &st);
	source_bpf_pelt_hook(impl, &hs);
	pelt_hook_describe(&hs, st.attached & (SOURCE_BPF_EV(IMB_EV_PELT_CFS) |
					       SOURCE_BPF_EV(IMB_EV_PELT_SE)), buf, len);
}

static uint64_t bpf_held_bytes(const void *impl)
{
	struct source_bpf_stats st;

	source_bpf_stats(impl, &st);
	return st.held_bytes;
}

static void bpf_close(void *impl)
{
	source_bpf_close(impl);
}

static const struct source_ops bpf_ops = {
	.next = bpf_next,
	.info = bpf_info,
	.watermark = bpf_watermark,
	.drain = bpf_drain,
	.held_bytes = bpf_held_bytes,
	.pelt_hooks = bpf_pelt_hooks,
	.close = bpf_close,
};

static int tracefs_next(void *impl, int timeout_ms, imb_event_fn fn, void *ctx, char *err)
{
	int rc = source_tracefs_poll(impl, timeout_ms, fn, ctx);

	(void)err;
	return rc < 0 ? rc : SOURCE_MORE;
}

static void tracefs_drain(void *impl, imb_event_fn fn, void *ctx)
{
	source_tracefs_drain(impl, fn, ctx);
}

static void tracefs_info(void *impl, struct source_info *info)
{
	source_tracefs_info(impl, info);
}

static void tracefs_close(void *impl)
{
	source_tracefs_close(impl);
}

static const struct source_ops tracefs_ops = {
	.next = tracefs_next,
	.info = tracefs_info,
	.watermark = NULL,	/* hands events over in order as it reads them */
	.drain = tracefs_drain,
	.held_bytes = NULL,	/* hands events over as it reads them */
	.pelt_hooks = NULL,	/* the PELT tracepoints have no tracefs event */
	.close = tracefs_close,
};

static void *bpf_open(const struct live_source_opts *o, char *err)
{
	struct source_bpf_opts bo = {
		.ringbuf_bytes = o->ringbuf_bytes,
		.pelt_se_min_interval_ns = o->pelt_se_min_interval_ns,
		.group_path_interval_ns = o->group_path_interval_ns,
		.group_names = o->group_names,
		.events = o->events,
		.runtime_all = o->runtime_all,
	};

	if (o->no_numa)
		bo.events &= ~(SOURCE_BPF_EV(IMB_EV_NUMA_MOVE) | SOURCE_BPF_EV(IMB_EV_NUMA_SWAP) |
			       SOURCE_BPF_EV(IMB_EV_NUMA_STICK));
	return source_bpf_open(&bo, err);
}

static void *tracefs_open(const struct live_source_opts *o, char *err)
{
	struct source_tracefs_opts to = {
		.buffer_kb = o->tracefs_buffer_kb,
		.no_numa = o->no_numa,
		.events = o->events,
	};
	int removed = 0;

	if (source_tracefs_cleanup_stale(&removed) == 0 && removed && o->log_stale)
		o->log_stale(o->log_ctx, removed);
	return source_tracefs_open(&to, err);
}

int live_source_open(struct source *ls, const struct live_source_opts *o, char *err)
{
	char berr[SOURCE_ERR_LEN] = "", terr[SOURCE_ERR_LEN] = "";

	memset(ls, 0, sizeof(*ls));
	if (o->prefer != LIVE_SOURCE_TRACEFS) {
		ls->impl = bpf_open(o, berr);
		if (ls->impl) {
			ls->name = "bpf";
			ls->caps = SOURCE_LIVE | SOURCE_KERNEL_PELT | SOURCE_LOSES_EVENTS;
			ls->ops = &bpf_ops;
			return 0;
		}
		if (o->prefer == LIVE_SOURCE_BPF) {
			err_set(err, "BPF source: %s", berr);
			return -ENOTSUP;
		}
		if (o->log_fallback)
			o->log_fallback(o->log_ctx, berr);
	}
	ls->impl = tracefs_open(o, terr);
	if (!ls->impl) {
		err_set(err, "no event source: %s%s%s", berr[0] ? berr : "",
			berr[0] ? "; tracefs: " : "", terr);
		return -ENOTSUP;
	}
	ls->name = "tracefs";
	ls->caps = SOURCE_LIVE | SOURCE_LOSES_EVENTS;
	ls->ops = &tracefs_ops;
	return 0;
}

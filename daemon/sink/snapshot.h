/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.h - hand-over of published windows from the pipeline thread to
 * HTTP readers.
 *
 * The pipeline calls snapshot_publish() at each window end; the holder
 * takes ownership of the window, wraps it in a refcounted immutable
 * snapshot and swaps it in under a mutex.  Readers take a reference with
 * snapshot_acquire() and drop it with snapshot_release(), so a slow reader
 * never blocks the pipeline and never sees a window being freed.  The
 * holder also keeps a bounded ring of recent windows (history for the
 * dashboard when there is no store), the latest state of recent findings,
 * run totals, and a condition variable stream clients wait on.
 */
#ifndef IMB_SNAPSHOT_H
#define IMB_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "analyzers/model.h"
#include "analyzers/window.h"
#include "daemon/sink/group_rows.h"
#include "daemon/sink/metrics.h"

#define SNAPSHOT_DEFAULT_HISTORY	300	/* windows */
#define SNAPSHOT_DEFAULT_FINDINGS	1000	/* latest state per finding id */
#define SNAPSHOT_MAX_KINDS		32	/* distinct (kind, severity) counters */

struct snapshot;

struct snapshot_window {
	const struct imb_window *w;	/* immutable while referenced */
	uint64_t seq;			/* 1, 2, ... in publish order */
};

struct snapshot_info {
	char source[32];		/* "bpf", "tracefs", ... */
	char kernel[64];
	char host[64];
	uint32_t nr_cpus;
	uint64_t window_ns;
	uint64_t started_ns;		/* wall clock (CLOCK_REALTIME) */
};

struct snapshot_status {
	struct snapshot_info info;
	uint64_t seq;			/* of the latest window, 0 = none yet */
	uint64_t windows;
	uint64_t events_total;
	uint64_t lost_events_total;
	uint64_t lost_events_last;	/* in the latest window */
	uint64_t windows_with_lost;	/* windows that reported lost events */
	struct metrics_pelt pelt;	/* engine vs kernel, since start */
	uint64_t findings_total;	/* distinct findings seen */
	size_t nr_counts;
	struct metrics_finding_count counts[SNAPSHOT_MAX_KINDS];
};

/**
 * snapshot_new - an empty holder
 * @history: windows kept for history (0 = default)
 * @max_findings: finding states kept (0 = default)
 * Returns the holder (free with snapshot_free()) or NULL with errno set.
 */
struct snapshot *snapshot_new(size_t history, size_t max_findings);
/** snapshot_free - drop the holder's references; readers' refs stay valid */
void snapshot_free(struct snapshot *s);
/** snapshot_set_info - describe the run (copied) */
void snapshot_set_info(struct snapshot *s, const struct snapshot_info *info);
/**
 * snapshot_set_pelt - the engine's error against the kernel's own PELT
 * values since start, summarised from the model's histograms, and the
 * error to expect for its kind of load (copied; the pipeline thread calls
 * it before snapshot_publish())
 */
void snapshot_set_pelt(struct snapshot *s, const struct model *m);
/**
 * snapshot_publish - make @w the latest window; the holder owns @w from
 * now on (it is freed with imb_window_free() when the last reference goes)
 * Returns 0 or -ENOMEM (then @w has been freed).
 */
int snapshot_publish(struct snapshot *s, struct imb_window *w);
/**
 * snapshot_set_groups - make @rows the latest task-group listing; the
 * holder takes over the caller's reference (dropped when replaced)
 */
void snapshot_set_groups(struct snapshot *s, struct group_rows *rows);
/**
 * snapshot_groups_acquire - reference the latest listing (drop it with
 * group_rows_put()); NULL before the first
 * @seq: optional, receives the listing's number (1, 2, ... in set order)
 */
const struct group_rows *snapshot_groups_acquire(struct snapshot *s, uint64_t *seq);
/** snapshot_acquire - reference the latest window; NULL before the first */
const struct snapshot_window *snapshot_acquire(struct snapshot *s);
/** snapshot_release - drop a reference; accepts NULL */
void snapshot_release(const struct snapshot_window *sw);
/**
 * snapshot_history - reference up to @max recent windows, oldest first
 * Returns how many were stored in @out; release each.
 */
size_t snapshot_history(struct snapshot *s, const struct snapshot_window **out, size_t max);
/**
 * snapshot_findings - copies of the kept findings with t_end_ns >= @since,
 * newest first; @out is freed by the caller with free()
 */
int snapshot_findings(struct snapshot *s, uint64_t since, struct imb_finding **out, size_t *n);
/** snapshot_status_get - totals and info */
void snapshot_status_get(struct snapshot *s, struct snapshot_status *st);
/**
 * snapshot_wait - wait until a window newer than @after_seq is published,
 * snapshot_kick() is called, or @timeout_ms passes
 * Returns the latest seq.
 */
uint64_t snapshot_wait(struct snapshot *s, uint64_t after_seq, int timeout_ms);
/** snapshot_kick - wake every waiter (used at shutdown) */
void snapshot_kick(struct snapshot *s);

#endif /* IMB_SNAPSHOT_H */

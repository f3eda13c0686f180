/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics.h - Prometheus text exposition (format 0.0.4) of a window.
 *
 * Pure formatting: the caller gathers the latest window, run totals,
 * finding counts and (optionally) process figures into struct
 * metrics_input; metrics_format() writes the text.  Every family has HELP
 * and TYPE lines, names carry units and `_total` for counters, label
 * values are escaped.  metrics_process_read() is the one function here
 * that does I/O (/proc/self).
 */
#ifndef IMB_METRICS_H
#define IMB_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/pelt_expect.h"
#include "analyzers/window.h"

struct metrics_finding_count {
	char kind[24];
	int severity;			/* enum imb_severity */
	uint64_t count;			/* findings opened since start */
};

struct metrics_process {
	uint64_t rss_bytes;
	double cpu_seconds;
	double start_time_seconds;	/* Unix time */
	uint64_t open_fds;
};

/* One signal's absolute error, engine vs kernel, cumulative since start. */
struct metrics_pelt_sig {
	uint64_t samples;
	uint64_t median;
	uint64_t p95;
	uint64_t max;
	uint64_t sum;			/* errors of METRICS_PELT_ERR_CLAMP and more count as that */
};

#define METRICS_PELT_ERR_CLAMP	2048	/* MODEL_ERR_BUCKETS: the histograms' last exact bucket + 1 */
#define METRICS_PELT_SIGNALS	3	/* util_avg, runnable_avg, load_avg */

struct metrics_pelt {
	bool kernel_reference;		/* the stream carries the kernel's values */
	struct metrics_pelt_sig cpu[METRICS_PELT_SIGNALS];
	struct metrics_pelt_sig task[METRICS_PELT_SIGNALS];
	struct metrics_pelt_sig group[METRICS_PELT_SIGNALS];	/* task groups' run queues */
	struct metrics_pelt_sig group_se[METRICS_PELT_SIGNALS];	/* task groups' entities */
	struct pelt_expect expected;	/* expected error of the CPU signals; .load NULL: not set */
};

/* "util_avg", "runnable_avg", "load_avg" */
extern const char *const metrics_pelt_signal_names[METRICS_PELT_SIGNALS];

struct metrics_input {
	const struct imb_window *w;	/* latest window; NULL when none yet */
	const struct metrics_pelt *pelt;	/* NULL or no samples: no PELT error family */
	uint64_t events_total;
	uint64_t lost_events_total;
	uint64_t windows_total;
	const struct metrics_finding_count *findings;
	size_t nr_findings;
	const struct metrics_process *proc;	/* NULL to omit process_* */
	uint64_t db_size_bytes;		/* 0 = no store */
	const char *version;
};

/**
 * metrics_format - write the exposition of @in
 * @out: receives a NUL-terminated buffer the caller frees with free()
 * @len: its length
 * Returns 0 or -ENOMEM.
 */
int metrics_format(const struct metrics_input *in, char **out, size_t *len);

/**
 * metrics_format_dynamic - @prefix (the text of metrics_format() with no
 * process figures and no store size, e.g. cached for a window) followed by
 * the families that change between windows: the store size and process_*
 * @out: receives a NUL-terminated buffer the caller frees with free()
 * Returns 0 or -ENOMEM.
 */
int metrics_format_dynamic(const char *prefix, size_t prefix_len,
			   const struct metrics_process *proc, uint64_t db_size_bytes,
			   char **out, size_t *len);

/** metrics_process_read - figures of this process from /proc; 0 or -errno */
int metrics_process_read(struct metrics_process *p);

/**
 * metrics_heap_bytes - bytes this process has allocated and not yet freed
 *
 * The allocator's own count (glibc's mallinfo2(), or AddressSanitizer's
 * under the sanitizers): memory the program holds, unlike RSS, which keeps
 * pages an allocator has not returned.  It walks the allocator's free
 * lists under its locks: for a status line, not for every request.
 */
uint64_t metrics_heap_bytes(void);

#endif /* IMB_METRICS_H */

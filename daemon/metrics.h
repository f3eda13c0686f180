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

#include <stddef.h>
#include <stdint.h>

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

struct metrics_input {
	const struct imb_window *w;	/* latest window; NULL when none yet */
	const struct imb_window *const *history; /* recent windows for PELT error, may be NULL */
	size_t nr_history;
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

/** metrics_process_read - figures of this process from /proc; 0 or -errno */
int metrics_process_read(struct metrics_process *p);

#endif /* IMB_METRICS_H */

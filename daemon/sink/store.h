/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h - the SQLite store: runs, per-window samples, findings, alerts.
 *
 * One writer connection (owned by the pipeline thread) commits each window
 * in one BEGIN IMMEDIATE transaction with statements prepared at open.
 * Readers (HTTP threads, `serve`) open their own read-only connections with
 * store_reader_open().  The schema is versioned with PRAGMA user_version
 * and migrated step by step at open, each step in its own transaction.
 *
 * Retention: per-window rows are kept raw_days (default 7); every finished
 * minute is downsampled into *_1m tables as the data arrives, and those are
 * kept minute_days (default 90).  Expired rows are deleted a bounded batch
 * per commit, so writes never stop for a long purge.  Ages are measured on
 * the injectable clock (default CLOCK_REALTIME): a row's wall time is its
 * run's started_ns plus its offset from the run's first window.
 *
 * Only store.c includes <sqlite3.h>.
 */
#ifndef IMB_STORE_H
#define IMB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "analyzers/window.h"

#define STORE_SCHEMA_VERSION 4

/* Defaults, in one place. */
#define STORE_DEFAULT_RAW_DAYS		7
#define STORE_DEFAULT_MINUTE_DAYS	90
#define STORE_DEFAULT_MAX_TASKS		16	/* busiest task rows per window; bounds growth */
#define STORE_DEFAULT_MAX_JOBS		16	/* most unfair job rows per window (jobs of >= 2 tasks) */
#define STORE_DEFAULT_PURGE_BATCH	2000	/* rows per table per commit */
#define STORE_DEFAULT_BUSY_MS		5000
#define STORE_BOUND_WINDOWS		60	/* raw windows per commit over max_bytes */
#define STORE_BOUND_MINUTES		10	/* minutes of rows per commit, after raw */
#define STORE_BOUND_VACUUM_PAGES	256	/* pages given back per commit */

struct store;
struct store_reader;

struct store_opts {
	uint32_t raw_days;		/* 0 = default */
	uint32_t minute_days;		/* 0 = default */
	uint32_t max_tasks_per_window;	/* 0 = default; busiest tasks first */
	uint32_t max_jobs_per_window;	/* 0 = default; most unfair jobs first */
	uint32_t purge_batch;		/* 0 = default */
	uint32_t busy_timeout_ms;	/* 0 = default */
	uint64_t max_bytes;		/* soft size bound, 0 = none (see store_window_commit) */
	int max_version;		/* 0 = latest; tests build old schemas */
	uint64_t (*clock_ns)(void *ctx);	/* wall clock; NULL = CLOCK_REALTIME */
	void *clock_ctx;
};

struct store_run_info {
	uint64_t started_ns;		/* wall clock; 0 = now (store clock) */
	const char *source;		/* "bpf", "tracefs", "trace.dat", "text" */
	const char *host;		/* NULL = gethostname() */
	const char *kernel;		/* NULL = uname -r */
	uint32_t nr_cpus;
	uint64_t window_ns;
};

/**
 * store_open - open or create the database at @path and migrate it
 * @opts: NULL for defaults
 * @err: receives a static reason on failure (may be NULL)
 *
 * Returns a handle (free with store_close()) or NULL with errno set.
 */
struct store *store_open(const char *path, const struct store_opts *opts,
			 const char **err);
/** store_close - finalize statements and close; accepts NULL */
void store_close(struct store *s);
/** store_schema_version - PRAGMA user_version of the open database */
int store_schema_version(struct store *s);
/**
 * store_run_begin - insert a run row
 * Returns the run id (> 0) or -errno.
 */
int64_t store_run_begin(struct store *s, const struct store_run_info *info);
/**
 * store_window_commit - write one window (samples, findings) in one
 * transaction, downsample finished minutes and purge a batch of expired rows
 *
 * With max_bytes set, while the live pages plus the WAL exceed it, each
 * commit also deletes the oldest rows: up to STORE_BOUND_WINDOWS raw
 * windows already downsampled, or when there are none, up to
 * STORE_BOUND_MINUTES minutes of rows (findings and alerts stay).  Freed pages
 * are reused; a database created by this version (incremental
 * auto_vacuum) also gives up to STORE_BOUND_VACUUM_PAGES pages beyond the
 * bound back per commit.
 * Returns 0 or -errno (-EBUSY when the database stayed locked).
 */
int store_window_commit(struct store *s, int64_t run_id, const struct imb_window *w);
/**
 * store_findings_commit - upsert the final state of a run's findings (the
 * summary of `analyze`: closed episodes, whole-run findings) in one
 * transaction.  Returns 0 or -errno.
 */
int store_findings_commit(struct store *s, int64_t run_id, const struct imb_finding *f, size_t n);
/**
 * store_alert_insert - record an alert transition ("fired"/"recovered")
 * with its evidence: the flight-recorder file, the condition's kind,
 * subject and start, and the findings row it is about (@a->finding.id, or
 * when 0, the run's latest finding of that kind and subject still open or
 * ended after the condition began; none leaves finding_id NULL).
 * Returns 0 or -errno.
 */
int store_alert_insert(struct store *s, int64_t run_id, const struct imb_alert *a);
/** store_size_bytes - database file plus WAL, in bytes (0 on error) */
uint64_t store_size_bytes(struct store *s);
/** store_last_error - static text of the last SQLite error on this handle */
const char *store_last_error(struct store *s);

/* ---- read side (one reader per thread) ---- */

/**
 * store_reader_open - read-only connection to @path
 * Returns a handle (free with store_reader_close()) or NULL with errno set
 * (ENOENT when the file is missing, EPROTO when the schema is too old/new).
 */
struct store_reader *store_reader_open(const char *path, const char **err);
void store_reader_close(struct store_reader *r);

struct store_status {
	int64_t run_id;			/* latest run, 0 when none */
	uint64_t started_ns;
	char source[32];
	char host[64];
	char kernel[64];
	uint32_t nr_cpus;
	uint64_t window_ns;
	uint64_t windows;		/* committed windows in the run */
	uint64_t events;		/* summed over the run's kept windows */
	uint64_t lost_events;
	uint64_t first_t_ns, last_t_ns;	/* window ends */
	uint64_t findings;		/* rows in findings (all runs) */
	int schema_version;
};

/** store_reader_status - latest run and totals; 0, -ENOENT (no run) or -errno */
int store_reader_status(struct store_reader *r, struct store_status *st);
/**
 * store_reader_latest_window - rebuild the latest committed window (cpus,
 * tasks, jobs; no findings) of the latest run
 * @out: receives a window the caller frees with imb_window_free()
 * Returns 0, -ENOENT when there is no window, or -errno.
 */
int store_reader_latest_window(struct store_reader *r, struct imb_window **out);

struct store_finding_query {
	uint64_t since_ns;		/* t_end_ns >= since */
	const char *kind;		/* NULL = any */
	int severity;			/* -1 = any, else at least this */
	size_t limit;			/* 0 = 1000 */
};

/**
 * store_reader_findings - findings matching @q, newest first
 * @out: receives an array the caller frees with free()
 */
int store_reader_findings(struct store_reader *r, const struct store_finding_query *q,
			  struct imb_finding **out, size_t *n);

struct store_alert {
	int64_t run_id;
	/* finding: kind, subject, severity, value, threshold, summary;
	 * id = run-local finding id (0 none), t_start_ns = condition start,
	 * t_end_ns = the alert's t_ns; evidence_file "" when none */
	struct imb_alert alert;
};

/**
 * store_reader_alerts - alerts with t_ns >= @since_ns, newest first, at
 * most @limit (0 = 1000)
 * @out: array the caller frees with free()
 */
int store_reader_alerts(struct store_reader *r, uint64_t since_ns, size_t limit,
			struct store_alert **out, size_t *n);

struct store_point {
	uint64_t t_ns;
	int32_t series;			/* cpu number, or index into keys */
	double value;
};

/**
 * store_metric_valid - whether @metric is a timeseries metric
 * Returns 1 for per-CPU, 2 for per-job, 3 for per-window metrics, 0 unknown.
 */
int store_metric_valid(const char *metric);

struct store_series_query {
	const char *metric;		/* store_metric_valid() */
	int cpu;			/* -1 = all (per-CPU metrics) */
	const char *job;		/* NULL = all (per-job metrics) */
	uint64_t since_ns, until_ns;	/* until 0 = no limit */
	size_t limit;			/* 0 = 100000 points */
};

/**
 * store_reader_timeseries - points of the latest run, oldest first; raw
 * rows when they cover @since, else 1-minute averages
 * @out: array the caller frees with free()
 * @keys: for per-job metrics, the job keys (series indexes into it); the
 *	  caller frees each and the array; NULL for other metrics
 * @minute: set to 1 when the points are 1-minute averages
 */
int store_reader_timeseries(struct store_reader *r, const struct store_series_query *q,
			    struct store_point **out, size_t *n,
			    char ***keys, size_t *nkeys, int *minute);

#endif /* IMB_STORE_H */

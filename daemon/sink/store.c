// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * store.c - the SQLite store (see store.h for the contract).
 *
 * Writer: WAL, synchronous=NORMAL (a crash loses at most the last commits,
 * never consistency), one BEGIN IMMEDIATE per window, every statement
 * prepared once at open and reset after use.  Schema steps live in
 * migrations[]; each runs with its user_version bump in one transaction.
 * Downsampling runs as minutes complete; purging deletes at most
 * purge_batch rows per table per commit.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store.h"
#include "daemon/util.h"

#define NS_PER_MIN	60000000000LL
#define NS_PER_DAY	86400000000000LL
#define DOWNSAMPLE_MAX_MINUTES 10	/* per commit, to catch up gradually */

/* ---- schema ---- */

static const char *const migrations[] = {
	/* 0 -> 1: the core tables of doc/interfaces.md, jobs and alerts */
	"CREATE TABLE runs(id INTEGER PRIMARY KEY, started_ns INTEGER NOT NULL,"
	" source TEXT, host TEXT, kernel TEXT, nr_cpus INTEGER, window_ns INTEGER);"
	"CREATE TABLE cpu_samples(run_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
	" cpu INTEGER NOT NULL, util_avg INTEGER, runnable_avg INTEGER, load_avg INTEGER,"
	" nr_running INTEGER, capacity INTEGER, group_type INTEGER,"
	" kernel_util_avg INTEGER, kernel_runnable_avg INTEGER, kernel_load_avg INTEGER,"
	" vruntime INTEGER);"
	"CREATE INDEX cpu_samples_t ON cpu_samples(run_id, t_ns);"
	"CREATE TABLE task_samples(run_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
	" pid INTEGER, tgid INTEGER, comm TEXT, cpu INTEGER, run_ns INTEGER, wait_ns INTEGER,"
	" migrations INTEGER, util_avg INTEGER, runnable_avg INTEGER, load_avg INTEGER);"
	"CREATE INDEX task_samples_t ON task_samples(run_id, t_ns);"
	"CREATE TABLE job_samples(run_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
	" key TEXT, kind TEXT, tasks INTEGER, unfairness REAL, mean_deviation REAL,"
	" max_deviation REAL);"
	"CREATE INDEX job_samples_t ON job_samples(run_id, t_ns);"
	"CREATE TABLE findings(id INTEGER PRIMARY KEY, run_id INTEGER, t_start_ns INTEGER,"
	" t_end_ns INTEGER, kind TEXT, severity TEXT, subject TEXT, value REAL,"
	" threshold REAL, summary TEXT, evidence TEXT);"
	"CREATE TABLE alerts(id INTEGER PRIMARY KEY, run_id INTEGER, t_ns INTEGER,"
	" state TEXT, kind TEXT, severity TEXT, subject TEXT, value REAL, threshold REAL,"
	" summary TEXT);",

	/* 1 -> 2: a row per window, the remaining window.h fields, finding
	 * identity within a run (so updates of an open finding upsert) */
	"CREATE TABLE windows(run_id INTEGER NOT NULL, t_start_ns INTEGER NOT NULL,"
	" t_ns INTEGER NOT NULL, events INTEGER, lost_events INTEGER);"
	"CREATE UNIQUE INDEX windows_t ON windows(run_id, t_ns);"
	"INSERT INTO windows SELECT run_id, t_ns, t_ns, NULL, NULL FROM cpu_samples"
	" GROUP BY run_id, t_ns;"
	"ALTER TABLE cpu_samples ADD COLUMN group_type_scaled INTEGER;"
	"ALTER TABLE cpu_samples ADD COLUMN overloaded_fraction REAL;"
	"ALTER TABLE cpu_samples ADD COLUMN vruntime_rate REAL;"
	"ALTER TABLE cpu_samples ADD COLUMN busy_ns INTEGER;"
	"ALTER TABLE cpu_samples ADD COLUMN idle_with_waiters_ns INTEGER;"
	"ALTER TABLE task_samples ADD COLUMN nice INTEGER;"
	"ALTER TABLE task_samples ADD COLUMN share REAL;"
	"ALTER TABLE task_samples ADD COLUMN fair_share REAL;"
	"ALTER TABLE job_samples ADD COLUMN jain_index REAL;"
	"ALTER TABLE findings ADD COLUMN run_finding_id INTEGER;"
	"ALTER TABLE findings ADD COLUMN open INTEGER NOT NULL DEFAULT 0;"
	"UPDATE findings SET run_finding_id = id;"
	"CREATE UNIQUE INDEX findings_run_fid ON findings(run_id, run_finding_id);"
	"CREATE INDEX findings_t ON findings(t_end_ns);"
	"ALTER TABLE alerts ADD COLUMN finding_id INTEGER;"
	"ALTER TABLE runs ADD COLUMN t0_ns INTEGER;"
	"UPDATE runs SET t0_ns = (SELECT min(t_ns) FROM windows WHERE run_id = runs.id);",

	/* 2 -> 3: 1-minute downsampled tables; existing rows are downsampled
	 * incrementally by the next commits */
	"CREATE TABLE cpu_samples_1m(run_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
	" cpu INTEGER NOT NULL, util_avg REAL, runnable_avg REAL, load_avg REAL,"
	" nr_running REAL, capacity REAL, group_type INTEGER, overloaded_fraction REAL,"
	" kernel_util_avg REAL, kernel_runnable_avg REAL, kernel_load_avg REAL,"
	" vruntime_rate REAL, n INTEGER, PRIMARY KEY(run_id, t_ns, cpu));"
	"CREATE TABLE job_samples_1m(run_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
	" key TEXT NOT NULL, unfairness REAL, mean_deviation REAL, max_deviation REAL,"
	" jain_index REAL, n INTEGER, PRIMARY KEY(run_id, t_ns, key));"
	"CREATE TABLE windows_1m(run_id INTEGER NOT NULL, t_ns INTEGER NOT NULL,"
	" events INTEGER, lost_events INTEGER, n INTEGER, PRIMARY KEY(run_id, t_ns));"
	"ALTER TABLE runs ADD COLUMN downsampled_ns INTEGER;",

	/* 3 -> 4: an alert's evidence: the flight-recorder file and the
	 * identity of what it is about (kind and subject are there already;
	 * finding_id is the run-local id of the findings row when one matched) */
	"ALTER TABLE alerts ADD COLUMN evidence_file TEXT;"
	"ALTER TABLE alerts ADD COLUMN finding_t_start_ns INTEGER;"
	"UPDATE alerts SET finding_id = NULL WHERE finding_id = 0;"
	"CREATE INDEX alerts_t ON alerts(t_ns);",
};

_Static_assert(ARRAY_SIZE(migrations) == STORE_SCHEMA_VERSION,
	       "one migration per schema version");

/* ---- writer ---- */

enum {
	ST_BEGIN, ST_COMMIT, ST_ROLLBACK,
	ST_RUN, ST_RUN_T0,
	ST_WINDOW, ST_CPU, ST_TASK, ST_JOB, ST_FINDING, ST_ALERT, ST_ALERT_FINDING,
	ST_RUNS_SCAN,
	ST_DS_CPU, ST_DS_JOB, ST_DS_WIN, ST_DS_MARK,
	ST_PURGE_CPU, ST_PURGE_TASK, ST_PURGE_JOB, ST_PURGE_WIN,
	ST_PURGE_CPU1M, ST_PURGE_JOB1M, ST_PURGE_WIN1M,
	ST_PURGE_FINDINGS, ST_PURGE_ALERTS,
	ST_PAGES, ST_FREEPAGES,
	ST_OLDEST_RAW, ST_OLDEST_1M,
	ST__MAX
};

static const char *const writer_sql[ST__MAX] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_RUN] = "INSERT INTO runs(started_ns, source, host, kernel, nr_cpus, window_ns)"
		   " VALUES(?,?,?,?,?,?)",
	[ST_RUN_T0] = "UPDATE runs SET t0_ns = ?2 WHERE id = ?1 AND t0_ns IS NULL",
	[ST_WINDOW] = "INSERT OR REPLACE INTO windows(run_id, t_start_ns, t_ns, events, lost_events)"
		      " VALUES(?,?,?,?,?)",
	[ST_CPU] = "INSERT INTO cpu_samples(run_id, t_ns, cpu, util_avg, runnable_avg, load_avg,"
		   " nr_running, capacity, group_type, kernel_util_avg, kernel_runnable_avg,"
		   " kernel_load_avg, vruntime, group_type_scaled, overloaded_fraction,"
		   " vruntime_rate, busy_ns, idle_with_waiters_ns)"
		   " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_TASK] = "INSERT INTO task_samples(run_id, t_ns, pid, tgid, comm, cpu, run_ns, wait_ns,"
		    " migrations, util_avg, runnable_avg, load_avg, nice, share, fair_share)"
		    " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_JOB] = "INSERT INTO job_samples(run_id, t_ns, key, kind, tasks, unfairness,"
		   " mean_deviation, max_deviation, jain_index) VALUES(?,?,?,?,?,?,?,?,?)",
	[ST_FINDING] = "INSERT INTO findings(run_id, run_finding_id, t_start_ns, t_end_ns, kind,"
		       " severity, subject, value, threshold, summary, evidence, open)"
		       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"
		       " ON CONFLICT(run_id, run_finding_id) DO UPDATE SET"
		       " t_end_ns = excluded.t_end_ns, severity = excluded.severity,"
		       " value = excluded.value, threshold = excluded.threshold,"
		       " summary = excluded.summary, evidence = excluded.evidence,"
		       " open = excluded.open",
	[ST_ALERT] = "INSERT INTO alerts(run_id, t_ns, state, kind, severity, subject, value,"
		     " threshold, summary, finding_id, evidence_file, finding_t_start_ns)"
		     " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
	/* the analyzer's finding on the same thing, open or ended after the
	 * condition began: a job's finding says "job KEY", the alert "KEY" */
	[ST_ALERT_FINDING] = "SELECT run_finding_id FROM findings WHERE run_id = ?1 AND kind = ?2"
			     " AND (subject = ?3 OR subject = 'job ' || ?3 OR kind = 'lost_events')"
			     " AND (open OR t_end_ns >= ?4) ORDER BY t_end_ns DESC, id DESC LIMIT 1",
	[ST_RUNS_SCAN] = "SELECT id, started_ns, t0_ns, coalesce(downsampled_ns, 0),"
			 " (SELECT max(t_ns) FROM windows w WHERE w.run_id = runs.id)"
			 " FROM runs WHERE t0_ns IS NOT NULL AND (id = ?1"
			 " OR EXISTS(SELECT 1 FROM windows w WHERE w.run_id = runs.id)"
			 " OR EXISTS(SELECT 1 FROM windows_1m m WHERE m.run_id = runs.id))"
			 " ORDER BY id DESC LIMIT 64",
	[ST_DS_CPU] = "INSERT OR REPLACE INTO cpu_samples_1m SELECT run_id,"
		      " (t_ns / 60000000000) * 60000000000 AS m, cpu, avg(util_avg),"
		      " avg(runnable_avg), avg(load_avg), avg(nr_running), avg(capacity),"
		      " max(group_type), avg(overloaded_fraction), avg(kernel_util_avg),"
		      " avg(kernel_runnable_avg), avg(kernel_load_avg), avg(vruntime_rate), count(*)"
		      " FROM cpu_samples WHERE run_id = ?1 AND t_ns >= ?2 AND t_ns < ?3"
		      " GROUP BY m, cpu",
	[ST_DS_JOB] = "INSERT OR REPLACE INTO job_samples_1m SELECT run_id,"
		      " (t_ns / 60000000000) * 60000000000 AS m, key, avg(unfairness),"
		      " avg(mean_deviation), max(max_deviation), avg(jain_index), count(*)"
		      " FROM job_samples WHERE run_id = ?1 AND t_ns >= ?2 AND t_ns < ?3"
		      " GROUP BY m, key",
	[ST_DS_WIN] = "INSERT OR REPLACE INTO windows_1m SELECT run_id,"
		      " (t_ns / 60000000000) * 60000000000 AS m, sum(events), sum(lost_events),"
		      " count(*) FROM windows WHERE run_id = ?1 AND t_ns >= ?2 AND t_ns < ?3"
		      " GROUP BY m",
	[ST_DS_MARK] = "UPDATE runs SET downsampled_ns = ?2 WHERE id = ?1",
#define PURGE(t) "DELETE FROM " t " WHERE rowid IN (SELECT rowid FROM " t \
		 " WHERE run_id = ?1 AND t_ns < ?2 LIMIT ?3)"
	[ST_PURGE_CPU] = PURGE("cpu_samples"),
	[ST_PURGE_TASK] = PURGE("task_samples"),
	[ST_PURGE_JOB] = PURGE("job_samples"),
	[ST_PURGE_WIN] = PURGE("windows"),
	[ST_PURGE_CPU1M] = PURGE("cpu_samples_1m"),
	[ST_PURGE_JOB1M] = PURGE("job_samples_1m"),
	[ST_PURGE_WIN1M] = PURGE("windows_1m"),
	[ST_PURGE_ALERTS] = PURGE("alerts"),
#undef PURGE
	[ST_PURGE_FINDINGS] = "DELETE FROM findings WHERE rowid IN (SELECT rowid FROM findings"
			      " WHERE run_id = ?1 AND t_end_ns < ?2 AND open = 0 LIMIT ?3)",
	[ST_PAGES] = "PRAGMA page_count",
	[ST_FREEPAGES] = "PRAGMA freelist_count",
	/*
	 * Size bound: the oldest run holding raw windows, the end of its
	 * first ?1 windows (never past what is downsampled); then the same
	 * for minute rows.  Both walk the (run_id, t_ns) indexes.
	 */
	[ST_OLDEST_RAW] = "SELECT r.id, min(coalesce(r.downsampled_ns, 0), coalesce((SELECT t_ns"
			  " FROM windows w WHERE w.run_id = r.id ORDER BY t_ns LIMIT 1 OFFSET ?1),"
			  " (SELECT max(t_ns) + 1 FROM windows w WHERE w.run_id = r.id))),"
			  " (SELECT min(t_ns) FROM windows w WHERE w.run_id = r.id)"
			  " FROM runs r WHERE r.id = (SELECT run_id FROM windows ORDER BY run_id, t_ns"
			  " LIMIT 1)",
	[ST_OLDEST_1M] = "SELECT r.id, coalesce((SELECT t_ns FROM windows_1m m WHERE m.run_id = r.id"
			 " ORDER BY t_ns LIMIT 1 OFFSET ?1), (SELECT max(t_ns) + 1 FROM windows_1m m"
			 " WHERE m.run_id = r.id)), 0 FROM runs r WHERE r.id = (SELECT run_id FROM"
			 " windows_1m ORDER BY run_id, t_ns LIMIT 1)",
};

struct store {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *st[ST__MAX];
	struct store_opts o;
	int64_t page_size;
	uint32_t *order;		/* task index scratch, amortized */
	size_t order_cap;
	const struct imb_task_sample *sort_tasks;
};

static uint64_t store_clock_realtime(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int store_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK: case SQLITE_DONE: case SQLITE_ROW: return 0;
	case SQLITE_BUSY: case SQLITE_LOCKED: return -EBUSY;
	case SQLITE_NOMEM: return -ENOMEM;
	case SQLITE_READONLY: case SQLITE_PERM: case SQLITE_AUTH: return -EACCES;
	case SQLITE_FULL: return -ENOSPC;
	case SQLITE_CANTOPEN: return -ENOENT;
	case SQLITE_NOTADB: case SQLITE_CORRUPT: return -EILSEQ;
	case SQLITE_IOERR: return -EIO;
	case SQLITE_CONSTRAINT: return -EEXIST;
	default: return -EPROTO;
	}
}

static int64_t u2i(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

static int db_version(sqlite3 *db)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int store_migrate(sqlite3 *db, int target, const char **err)
{
	int v = db_version(db);
	char sql[64];

	if (v < 0) {
		*err = "cannot read schema version";
		return -EILSEQ;
	}
	if (v > STORE_SCHEMA_VERSION) {
		*err = "database schema is newer than this imbalanced";
		return -EPROTO;
	}
	while (v < target) {
		int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, migrations[v], NULL, NULL, NULL);
		if (rc == SQLITE_OK) {
			snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
			rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			*err = "schema migration failed";
			return store_errno(rc);
		}
		v++;
	}
	return 0;
}

static void store_opts_defaults(struct store_opts *o)
{
	if (!o->raw_days)
		o->raw_days = STORE_DEFAULT_RAW_DAYS;
	if (!o->minute_days)
		o->minute_days = STORE_DEFAULT_MINUTE_DAYS;
	if (!o->max_tasks_per_window)
		o->max_tasks_per_window = STORE_DEFAULT_MAX_TASKS;
	if (!o->max_jobs_per_window)
		o->max_jobs_per_window = STORE_DEFAULT_MAX_JOBS;
	if (!o->purge_batch)
		o->purge_batch = STORE_DEFAULT_PURGE_BATCH;
	if (!o->busy_timeout_ms)
		o->busy_timeout_ms = STORE_DEFAULT_BUSY_MS;
	if (!o->clock_ns)
		o->clock_ns = store_clock_realtime;
}

/* The connection's journal and vacuum settings; an SQLite code, *@err set on failure. */
static int store_pragmas(struct store *s, const char **err)
{
	int rc;

	/*
	 * A new file gets incremental auto_vacuum, so the size bound can give
	 * pages back; it can only be chosen before the first table, so older
	 * databases keep reusing their free pages instead.
	 */
	rc = sqlite3_exec(s->db, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
				  " PRAGMA foreign_keys = OFF;", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		*err = rc == SQLITE_NOTADB ? "not a database" : "cannot enable WAL";
		return rc;
	}
	if (s->o.max_bytes) {
		/* keep the WAL a small part of the bound: checkpoint and
		 * truncate it at 1/16 of it (at most SQLite's default 1000 pages) */
		char sql[128];
		uint64_t lim = s->o.max_bytes / 16;

		snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit = %llu;"
			 " PRAGMA wal_autocheckpoint = %llu", (unsigned long long)lim,
			 (unsigned long long)(lim / 4096 < 16 ? 16 : lim / 4096 > 1000 ? 1000 :
					      lim / 4096));
		rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			*err = "cannot set the WAL limits";
			return rc;
		}
	}
	return SQLITE_OK;
}

/* The database's page size, 4096 when it cannot be read. */
static int64_t db_page_size(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t size = 4096;

	if (sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			size = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return size;
}

/* The writer's statements, kept for the connection's life; an SQLite code. */
static int store_prepare_writer(struct store *s, const char **err)
{
	for (int i = 0; i < ST__MAX; i++) {
		int rc = sqlite3_prepare_v3(s->db, writer_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					    &s->st[i], NULL);

		if (rc != SQLITE_OK) {
			*err = "cannot prepare statements";
			return rc;
		}
	}
	return SQLITE_OK;
}

struct store *store_open(const char *path, const struct store_opts *opts, const char **err)
{
	const char *dummy;
	struct store *s;
	int rc, target;

	if (!err)
		err = &dummy;
	s = calloc(1, sizeof(*s));
	if (!s) {
		*err = "out of memory";
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		s->o = *opts;
	store_opts_defaults(&s->o);
	target = s->o.max_version > 0 && s->o.max_version < STORE_SCHEMA_VERSION ?
		 s->o.max_version : STORE_SCHEMA_VERSION;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		*err = "out of memory";
		errno = ENOMEM;
		return NULL;
	}

	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		*err = "cannot open database";
		goto fail;
	}
	sqlite3_busy_timeout(s->db, (int)s->o.busy_timeout_ms);
	rc = store_pragmas(s, err);
	if (rc != SQLITE_OK)
		goto fail;
	rc = store_migrate(s->db, target, err);
	if (rc) {
		store_close(s);
		errno = -rc;
		return NULL;
	}
	s->page_size = db_page_size(s->db);
	if (target == STORE_SCHEMA_VERSION) {
		rc = store_prepare_writer(s, err);
		if (rc != SQLITE_OK)
			goto fail;
	}
	return s;
fail:
	errno = -store_errno(rc);
	if (!errno)
		errno = EIO;
	store_close(s);
	return NULL;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST__MAX; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	free(s->order);
	free(s->path);
	free(s);
}

int store_schema_version(struct store *s)
{
	return db_version(s->db);
}

const char *store_last_error(struct store *s)
{
	return s && s->db ? sqlite3_errmsg(s->db) : "no database";
}

/* step a prepared statement to completion, then reset it */
static int st_run(sqlite3_stmt *st)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : store_errno(rc);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s, size_t max)
{
	if (s)
		sqlite3_bind_text(st, i, s, (int)strnlen(s, max), SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_known(sqlite3_stmt *st, int i, uint64_t v)
{
	if (v == IMB_UNKNOWN)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, u2i(v));
}

int64_t store_run_begin(struct store *s, const struct store_run_info *info)
{
	sqlite3_stmt *st = s->st[ST_RUN];
	struct utsname un;
	char host[256];
	int rc;

	if (!st)
		return -EPROTO;
	sqlite3_bind_int64(st, 1, u2i(info->started_ns ? info->started_ns :
				      s->o.clock_ns(s->o.clock_ctx)));
	bind_text(st, 2, info->source, 64);
	if (info->host) {
		bind_text(st, 3, info->host, 255);
	} else {
		if (gethostname(host, sizeof(host)))
			strcpy(host, "unknown");
		host[sizeof(host) - 1] = '\0';
		bind_text(st, 3, host, 255);
	}
	if (info->kernel)
		bind_text(st, 4, info->kernel, 255);
	else if (!uname(&un))
		bind_text(st, 4, un.release, sizeof(un.release));
	sqlite3_bind_int64(st, 5, info->nr_cpus);
	sqlite3_bind_int64(st, 6, u2i(info->window_ns));
	rc = st_run(st);
	if (rc)
		return rc;
	return sqlite3_last_insert_rowid(s->db);
}

static int task_busier(const void *a, const void *b, void *ctx)
{
	const struct imb_task_sample *t = ctx;
	const struct imb_task_sample *x = &t[*(const uint32_t *)a];
	const struct imb_task_sample *y = &t[*(const uint32_t *)b];
	uint64_t bx = x->run_ns + x->wait_ns, by = y->run_ns + y->wait_ns;

	return bx < by ? 1 : bx > by ? -1 : 0;
}

/* order_grow - room for @n indexes in s->order */
static int order_grow(struct store *s, size_t n)
{
	uint32_t *o;

	if (s->order_cap >= n)
		return 0;
	o = realloc(s->order, n * sizeof(*o));
	if (!o)
		return -ENOMEM;
	s->order = o;
	s->order_cap = n;
	return 0;
}

static int job_more_unfair(const void *a, const void *b, void *ctx)
{
	const struct imb_job_sample *j = ctx;
	double x = j[*(const uint32_t *)a].unfairness, y = j[*(const uint32_t *)b].unfairness;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * The jobs worth a row: a job of one task is never unfair (and its task
 * has its own row when it is busy), so only jobs of two or more tasks, the
 * most unfair first, at most max_jobs_per_window.  On a host with dozens
 * of single-threaded processes this is what bounds the store's growth.
 */
static int store_write_jobs(struct store *s, int64_t run_id, const struct imb_window *w)
{
	sqlite3_stmt *st = s->st[ST_JOB];
	size_t n = 0, keep;
	int rc;

	if ((rc = order_grow(s, w->nr_jobs)))
		return rc;
	for (size_t i = 0; i < w->nr_jobs; i++)
		if (w->jobs[i].tasks >= 2)
			s->order[n++] = (uint32_t)i;
	keep = n;
	if (n > s->o.max_jobs_per_window) {
		keep = s->o.max_jobs_per_window;
		qsort_r(s->order, n, sizeof(*s->order), job_more_unfair, w->jobs);
	}
	for (size_t k = 0; k < keep; k++) {
		const struct imb_job_sample *j = &w->jobs[s->order[k]];

		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_int64(st, 2, u2i(w->t_end_ns));
		bind_text(st, 3, j->key, sizeof(j->key));
		bind_text(st, 4, j->kind, sizeof(j->kind));
		sqlite3_bind_int64(st, 5, j->tasks);
		sqlite3_bind_double(st, 6, j->unfairness);
		sqlite3_bind_double(st, 7, j->mean_deviation);
		sqlite3_bind_double(st, 8, j->max_deviation);
		sqlite3_bind_double(st, 9, j->jain_index);
		if ((rc = st_run(st)))
			return rc;
	}
	return 0;
}

static int store_write_tasks(struct store *s, int64_t run_id, const struct imb_window *w)
{
	size_t n = w->nr_tasks, keep = n;
	sqlite3_stmt *st = s->st[ST_TASK];
	int rc;

	if (n > s->o.max_tasks_per_window) {
		keep = s->o.max_tasks_per_window;
		if ((rc = order_grow(s, n)))
			return rc;
		for (size_t i = 0; i < n; i++)
			s->order[i] = (uint32_t)i;
		qsort_r(s->order, n, sizeof(*s->order), task_busier, w->tasks);
	}
	for (size_t k = 0; k < keep; k++) {
		const struct imb_task_sample *t = &w->tasks[keep == n ? k : s->order[k]];

		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_int64(st, 2, u2i(w->t_end_ns));
		sqlite3_bind_int(st, 3, t->pid);
		sqlite3_bind_int(st, 4, t->tgid);
		bind_text(st, 5, t->comm, IMB_COMM_LEN);
		sqlite3_bind_int(st, 6, t->cpu);
		sqlite3_bind_int64(st, 7, u2i(t->run_ns));
		sqlite3_bind_int64(st, 8, u2i(t->wait_ns));
		sqlite3_bind_int64(st, 9, t->migrations);
		sqlite3_bind_int64(st, 10, u2i(t->util_avg));
		sqlite3_bind_int64(st, 11, u2i(t->runnable_avg));
		sqlite3_bind_int64(st, 12, u2i(t->load_avg));
		sqlite3_bind_int(st, 13, t->nice);
		sqlite3_bind_double(st, 14, t->share);
		sqlite3_bind_double(st, 15, t->fair_share);
		rc = st_run(st);
		if (rc)
			return rc;
	}
	return 0;
}

static int store_write_finding(struct store *s, int64_t run_id, const struct imb_finding *f)
{
	sqlite3_stmt *st = s->st[ST_FINDING];

	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, u2i(f->id));
	sqlite3_bind_int64(st, 3, u2i(f->t_start_ns));
	sqlite3_bind_int64(st, 4, u2i(f->t_end_ns));
	bind_text(st, 5, f->kind, sizeof(f->kind));
	bind_text(st, 6, imb_severity_name(f->severity), 16);
	bind_text(st, 7, f->subject, sizeof(f->subject));
	sqlite3_bind_double(st, 8, f->value);
	sqlite3_bind_double(st, 9, f->threshold);
	bind_text(st, 10, f->summary, sizeof(f->summary));
	bind_text(st, 11, f->evidence[0] ? f->evidence : NULL, sizeof(f->evidence));
	sqlite3_bind_int(st, 12, f->open);
	return st_run(st);
}

static int store_write_window(struct store *s, int64_t run_id, const struct imb_window *w)
{
	sqlite3_stmt *st;
	int rc;

	st = s->st[ST_RUN_T0];
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, u2i(w->t_start_ns));
	if ((rc = st_run(st)))
		return rc;

	st = s->st[ST_WINDOW];
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, u2i(w->t_start_ns));
	sqlite3_bind_int64(st, 3, u2i(w->t_end_ns));
	sqlite3_bind_int64(st, 4, u2i(w->events));
	sqlite3_bind_int64(st, 5, u2i(w->lost_events));
	if ((rc = st_run(st)))
		return rc;

	st = s->st[ST_CPU];
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];

		sqlite3_bind_int64(st, 1, run_id);
		sqlite3_bind_int64(st, 2, u2i(w->t_end_ns));
		sqlite3_bind_int(st, 3, c->cpu);
		sqlite3_bind_int64(st, 4, u2i(c->util_avg));
		sqlite3_bind_int64(st, 5, u2i(c->runnable_avg));
		sqlite3_bind_int64(st, 6, u2i(c->load_avg));
		sqlite3_bind_int64(st, 7, c->nr_running);
		sqlite3_bind_int64(st, 8, c->capacity);
		sqlite3_bind_int(st, 9, c->group_type);
		bind_known(st, 10, c->kernel_util_avg);
		bind_known(st, 11, c->kernel_runnable_avg);
		bind_known(st, 12, c->kernel_load_avg);
		sqlite3_bind_int64(st, 13, u2i(c->vruntime));
		sqlite3_bind_int(st, 14, c->group_type_scaled);
		sqlite3_bind_double(st, 15, c->overloaded_fraction);
		sqlite3_bind_double(st, 16, c->vruntime_rate);
		sqlite3_bind_int64(st, 17, u2i(c->busy_ns));
		sqlite3_bind_int64(st, 18, u2i(c->idle_with_waiters_ns));
		if ((rc = st_run(st)))
			return rc;
	}
	if ((rc = store_write_tasks(s, run_id, w)))
		return rc;
	if ((rc = store_write_jobs(s, run_id, w)))
		return rc;
	for (size_t i = 0; i < w->nr_findings; i++)
		if ((rc = store_write_finding(s, run_id, &w->findings[i])))
			return rc;
	return 0;
}

static int st_range(struct store *s, int which, int64_t run, int64_t a, int64_t b)
{
	sqlite3_stmt *st = s->st[which];

	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, a);
	sqlite3_bind_int64(st, 3, b);
	return st_run(st);
}

static int64_t floor_min(int64_t t)
{
	return t / NS_PER_MIN * NS_PER_MIN;
}

static int64_t st_int(struct store *s, int which)
{
	sqlite3_stmt *st = s->st[which];
	int64_t v = -1;

	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return v;
}

static uint64_t wal_bytes(const struct store *s)
{
	char wal[PATH_MAX];
	struct stat sb;

	snprintf(wal, sizeof(wal), "%s-wal", s->path);
	return stat(wal, &sb) ? 0 : (uint64_t)sb.st_size;
}

/* the oldest run with rows and where a batch of them ends, or 0 */
static int oldest_batch(struct store *s, int which, int64_t n, int64_t *run, int64_t *cut,
			int64_t *first)
{
	sqlite3_stmt *st = s->st[which];
	int rc;

	sqlite3_bind_int64(st, 1, n - 1);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*run = sqlite3_column_int64(st, 0);
		*cut = sqlite3_column_int64(st, 1);
		*first = sqlite3_column_int64(st, 2);
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : store_errno(rc);
}

/*
 * Delete a batch of one run's rows before @cut from the tables of @which;
 * the last one (windows, windows_1m) says where the oldest rows are, so
 * it goes only once the others have nothing left before @cut: no orphans.
 */
static int bound_purge(struct store *s, const int *which, size_t n, int64_t run, int64_t cut,
		       int64_t batch)
{
	bool full = false;
	int rc;

	for (size_t k = 0; k + 1 < n; k++) {
		if ((rc = st_range(s, which[k], run, cut, batch)))
			return rc;
		full |= sqlite3_changes(s->db) >= batch;
	}
	return full ? 0 : st_range(s, which[n - 1], run, cut, batch);
}

/*
 * The size bound (max_bytes): the live pages (page_count - freelist) plus
 * the WAL.  Over it, delete the oldest rows, raw windows first (only what
 * is downsampled already), then minute rows, one batch per table per
 * commit; freed pages are reused, and with incremental auto_vacuum (new
 * databases) the pages beyond the bound go back to the file system.
 */
static int store_bound(struct store *s)
{
	int64_t max = u2i(s->o.max_bytes), pages, freep, used, run = 0, cut = 0, first = 0;
	int64_t batch = s->o.purge_batch;
	int rc;

	if (!max)
		return 0;
	pages = st_int(s, ST_PAGES);
	freep = st_int(s, ST_FREEPAGES);
	if (pages < 0 || freep < 0)
		return -EIO;
	used = (pages - freep) * s->page_size + u2i(wal_bytes(s));
	if (used > max) {
		static const int raw[] = { ST_PURGE_CPU, ST_PURGE_TASK, ST_PURGE_JOB, ST_PURGE_WIN };
		static const int old[] = { ST_PURGE_CPU1M, ST_PURGE_JOB1M, ST_PURGE_WIN1M };

		rc = oldest_batch(s, ST_OLDEST_RAW, STORE_BOUND_WINDOWS, &run, &cut, &first);
		if (rc < 0)
			return rc;
		/* a cut at or below the run's first window (nothing downsampled
		 * yet) deletes nothing raw: minute rows go instead */
		if (rc && cut > first) {
			rc = bound_purge(s, raw, 4, run, cut, batch);
		} else {
			rc = oldest_batch(s, ST_OLDEST_1M, STORE_BOUND_MINUTES, &run, &cut, &first);
			if (rc > 0)
				rc = bound_purge(s, old, 3, run, cut, batch);
		}
		if (rc < 0)
			return rc;
		freep = st_int(s, ST_FREEPAGES);
	}
	/* give back the free pages beyond the bound (no-op unless incremental) */
	if (pages * s->page_size > max && freep > 0) {
		int64_t n = (pages * s->page_size - max) / s->page_size + 1;

		if (n > freep)
			n = freep;
		if (n > STORE_BOUND_VACUUM_PAGES)
			n = STORE_BOUND_VACUUM_PAGES;
		char sql[64];

		/* a pragma takes no parameter: the count is formatted in */
		snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%lld)", (long long)n);
		return store_errno(sqlite3_exec(s->db, sql, NULL, NULL, NULL));
	}
	return 0;
}

/* Downsample finished minutes and purge expired rows, a bounded amount. */
static int store_maintain(struct store *s, int64_t cur_run)
{
	sqlite3_stmt *scan = s->st[ST_RUNS_SCAN];
	int64_t now = u2i(s->o.clock_ns(s->o.clock_ctx));
	int64_t raw_age = (int64_t)s->o.raw_days * NS_PER_DAY;
	int64_t min_age = (int64_t)s->o.minute_days * NS_PER_DAY;
	int64_t batch = s->o.purge_batch;
	struct { int64_t id, started, t0, ds, last; } runs[64];
	int nr = 0, rc = 0;

	sqlite3_bind_int64(scan, 1, cur_run);
	while (nr < 64 && sqlite3_step(scan) == SQLITE_ROW) {
		runs[nr].id = sqlite3_column_int64(scan, 0);
		runs[nr].started = sqlite3_column_int64(scan, 1);
		runs[nr].t0 = sqlite3_column_int64(scan, 2);
		runs[nr].ds = sqlite3_column_int64(scan, 3);
		runs[nr].last = sqlite3_column_int64(scan, 4);
		nr++;
	}
	sqlite3_reset(scan);

	for (int i = 0; i < nr && !rc; i++) {
		int64_t from = runs[i].ds, to, cut;

		if (from < floor_min(runs[i].t0))
			from = floor_min(runs[i].t0);
		/* the current run's last minute is still filling */
		to = floor_min(runs[i].last);
		if (runs[i].id != cur_run)
			to += NS_PER_MIN;
		if (to > from + DOWNSAMPLE_MAX_MINUTES * NS_PER_MIN)
			to = from + DOWNSAMPLE_MAX_MINUTES * NS_PER_MIN;
		if (to > from && runs[i].last) {
			rc = st_range(s, ST_DS_CPU, runs[i].id, from, to);
			if (!rc)
				rc = st_range(s, ST_DS_JOB, runs[i].id, from, to);
			if (!rc)
				rc = st_range(s, ST_DS_WIN, runs[i].id, from, to);
			if (!rc) {
				sqlite3_bind_int64(s->st[ST_DS_MARK], 1, runs[i].id);
				sqlite3_bind_int64(s->st[ST_DS_MARK], 2, to);
				rc = st_run(s->st[ST_DS_MARK]);
				runs[i].ds = to;
			}
		}
		if (rc)
			break;
		/* trace time t expires when started + (t - t0) < now - age */
		cut = runs[i].t0 + (now - raw_age - runs[i].started);
		if (cut > runs[i].ds)
			cut = runs[i].ds;	/* never drop what is not downsampled */
		if (cut > runs[i].t0) {
			static const int raw[] = { ST_PURGE_CPU, ST_PURGE_TASK, ST_PURGE_JOB,
						   ST_PURGE_WIN };

			for (size_t k = 0; k < 4 && !rc; k++)
				rc = st_range(s, raw[k], runs[i].id, cut, batch);
		}
		cut = runs[i].t0 + (now - min_age - runs[i].started);
		if (!rc && cut > runs[i].t0) {
			static const int old[] = { ST_PURGE_CPU1M, ST_PURGE_JOB1M, ST_PURGE_WIN1M,
						   ST_PURGE_FINDINGS, ST_PURGE_ALERTS };

			for (size_t k = 0; k < 5 && !rc; k++)
				rc = st_range(s, old[k], runs[i].id, cut, batch);
		}
	}
	if (!rc)
		rc = store_bound(s);
	return rc;
}

int store_window_commit(struct store *s, int64_t run_id, const struct imb_window *w)
{
	int rc;

	if (!s->st[ST_BEGIN])
		return -EPROTO;
	rc = st_run(s->st[ST_BEGIN]);
	if (rc)
		return rc;
	rc = store_write_window(s, run_id, w);
	if (!rc)
		rc = store_maintain(s, run_id);
	if (!rc)
		rc = st_run(s->st[ST_COMMIT]);
	if (rc)
		st_run(s->st[ST_ROLLBACK]);
	return rc;
}

int store_alert_insert(struct store *s, int64_t run_id, const struct imb_alert *a)
{
	const struct imb_finding *f = &a->finding;
	sqlite3_stmt *st = s->st[ST_ALERT];
	int64_t fid = u2i(f->id);
	int rc;

	if (!st)
		return -EPROTO;
	if (!fid) {
		sqlite3_stmt *q = s->st[ST_ALERT_FINDING];

		sqlite3_bind_int64(q, 1, run_id);
		bind_text(q, 2, f->kind, sizeof(f->kind));
		bind_text(q, 3, f->subject, sizeof(f->subject));
		sqlite3_bind_int64(q, 4, u2i(f->t_start_ns));
		rc = sqlite3_step(q);
		if (rc == SQLITE_ROW)
			fid = sqlite3_column_int64(q, 0);
		sqlite3_reset(q);
		sqlite3_clear_bindings(q);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return store_errno(rc);
	}
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int64(st, 2, u2i(a->t_ns));
	bind_text(st, 3, a->state, sizeof(a->state));
	bind_text(st, 4, f->kind, sizeof(f->kind));
	bind_text(st, 5, imb_severity_name(f->severity), 16);
	bind_text(st, 6, f->subject, sizeof(f->subject));
	sqlite3_bind_double(st, 7, f->value);
	sqlite3_bind_double(st, 8, f->threshold);
	bind_text(st, 9, f->summary, sizeof(f->summary));
	if (fid)
		sqlite3_bind_int64(st, 10, fid);
	bind_text(st, 11, a->evidence_file[0] ? a->evidence_file : NULL, sizeof(a->evidence_file));
	sqlite3_bind_int64(st, 12, u2i(f->t_start_ns));
	return st_run(st);
}

int store_findings_commit(struct store *s, int64_t run_id, const struct imb_finding *f, size_t n)
{
	int rc;

	if (!s->st[ST_BEGIN])
		return -EPROTO;
	rc = st_run(s->st[ST_BEGIN]);
	for (size_t i = 0; !rc && i < n; i++)
		rc = store_write_finding(s, run_id, &f[i]);
	if (!rc)
		rc = st_run(s->st[ST_COMMIT]);
	if (rc)
		st_run(s->st[ST_ROLLBACK]);
	return rc;
}

uint64_t store_size_bytes(struct store *s)
{
	char wal[PATH_MAX];
	struct stat sb;
	uint64_t total = 0;

	if (!stat(s->path, &sb))
		total += (uint64_t)sb.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", s->path);
	if (!stat(wal, &sb))
		total += (uint64_t)sb.st_size;
	return total;
}

/* ---- reader ---- */

enum {
	RD_STATUS, RD_LATEST, RD_CPUS, RD_TASKS, RD_JOBS, RD_FINDINGS, RD_NFINDINGS,
	RD_ALERTS,
	RD__MAX
};

static const char *const reader_sql[RD__MAX] = {
	[RD_STATUS] = "SELECT r.id, r.started_ns, r.source, r.host, r.kernel, r.nr_cpus,"
		      " r.window_ns, count(w.t_ns), coalesce(sum(w.events), 0),"
		      " coalesce(sum(w.lost_events), 0), min(w.t_ns), max(w.t_ns)"
		      " FROM runs r LEFT JOIN windows w ON w.run_id = r.id"
		      " WHERE r.id = (SELECT max(id) FROM runs) GROUP BY r.id",
	[RD_LATEST] = "SELECT run_id, t_start_ns, t_ns, events, lost_events FROM windows"
		      " WHERE run_id = (SELECT max(id) FROM runs) ORDER BY t_ns DESC LIMIT 1",
	[RD_CPUS] = "SELECT cpu, util_avg, runnable_avg, load_avg, nr_running, capacity,"
		    " group_type, kernel_util_avg, kernel_runnable_avg, kernel_load_avg, vruntime,"
		    " group_type_scaled, overloaded_fraction, vruntime_rate, busy_ns,"
		    " idle_with_waiters_ns FROM cpu_samples WHERE run_id = ?1 AND t_ns = ?2"
		    " ORDER BY cpu",
	[RD_TASKS] = "SELECT pid, tgid, comm, cpu, nice, run_ns, wait_ns, migrations, share,"
		     " fair_share, util_avg, runnable_avg, load_avg FROM task_samples"
		     " WHERE run_id = ?1 AND t_ns = ?2",
	[RD_JOBS] = "SELECT key, kind, tasks, unfairness, mean_deviation, max_deviation,"
		    " jain_index FROM job_samples WHERE run_id = ?1 AND t_ns = ?2",
	[RD_FINDINGS] = "SELECT run_finding_id, kind, severity, t_start_ns, t_end_ns, subject,"
			" value, threshold, summary, evidence, open FROM findings"
			" WHERE t_end_ns >= ?1 AND (?2 IS NULL OR kind = ?2)"
			" AND CASE severity WHEN 'info' THEN 0 WHEN 'warning' THEN 1"
			" WHEN 'critical' THEN 2 ELSE 0 END >= ?3"
			" ORDER BY t_end_ns DESC, id DESC LIMIT ?4",
	[RD_NFINDINGS] = "SELECT count(*) FROM findings",
	[RD_ALERTS] = "SELECT t_ns, state, kind, severity, subject, value, threshold, summary,"
		      " coalesce(finding_id, 0), coalesce(finding_t_start_ns, 0),"
		      " coalesce(evidence_file, ''), run_id FROM alerts WHERE t_ns >= ?1"
		      " ORDER BY t_ns DESC, id DESC LIMIT ?2",
};

struct store_reader {
	sqlite3 *db;
	sqlite3_stmt *st[RD__MAX];
};

struct store_reader *store_reader_open(const char *path, const char **err)
{
	struct store_reader *r;
	const char *dummy;
	struct stat sb;
	int rc;

	if (!err)
		err = &dummy;
	if (stat(path, &sb)) {
		*err = "no such database";
		return NULL;	/* errno from stat */
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		*err = "out of memory";
		errno = ENOMEM;
		return NULL;
	}
	rc = sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		*err = "cannot open database";
		goto fail;
	}
	sqlite3_busy_timeout(r->db, STORE_DEFAULT_BUSY_MS);
	if (db_version(r->db) != STORE_SCHEMA_VERSION) {
		*err = db_version(r->db) < 0 ? "not a database" :
		       "database schema version differs (open it once with run or analyze --db)";
		store_reader_close(r);
		errno = EPROTO;
		return NULL;
	}
	for (int i = 0; i < RD__MAX; i++) {
		rc = sqlite3_prepare_v3(r->db, reader_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					&r->st[i], NULL);
		if (rc != SQLITE_OK) {
			*err = "cannot prepare queries";
			goto fail;
		}
	}
	return r;
fail:
	errno = -store_errno(rc) ? -store_errno(rc) : EIO;
	store_reader_close(r);
	return NULL;
}

void store_reader_close(struct store_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < RD__MAX; i++)
		sqlite3_finalize(r->st[i]);
	sqlite3_close(r->db);
	free(r);
}

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t size)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(dst, size, "%s", t ? (const char *)t : "");
}

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	int64_t v = sqlite3_column_int64(st, i);

	return v < 0 ? 0 : (uint64_t)v;
}

static uint64_t col_known(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? IMB_UNKNOWN : col_u64(st, i);
}

int store_reader_status(struct store_reader *r, struct store_status *out)
{
	sqlite3_stmt *st = r->st[RD_STATUS];
	int rc;

	memset(out, 0, sizeof(*out));
	out->schema_version = db_version(r->db);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->run_id = sqlite3_column_int64(st, 0);
		out->started_ns = col_u64(st, 1);
		col_text(st, 2, out->source, sizeof(out->source));
		col_text(st, 3, out->host, sizeof(out->host));
		col_text(st, 4, out->kernel, sizeof(out->kernel));
		out->nr_cpus = (uint32_t)sqlite3_column_int(st, 5);
		out->window_ns = col_u64(st, 6);
		out->windows = col_u64(st, 7);
		out->events = col_u64(st, 8);
		out->lost_events = col_u64(st, 9);
		out->first_t_ns = col_u64(st, 10);
		out->last_t_ns = col_u64(st, 11);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? -ENOENT : store_errno(rc);
	st = r->st[RD_NFINDINGS];
	if (sqlite3_step(st) == SQLITE_ROW)
		out->findings = col_u64(st, 0);
	sqlite3_reset(st);
	return 0;
}

/* grow *arr to hold n+1 elements of size sz */
static int grow(void **arr, size_t *cap, size_t n, size_t sz)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*arr, c * sz);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

static void fill_cpu_row(sqlite3_stmt *st, void *row)
{
	struct imb_cpu_sample *c = row;

	c->cpu = sqlite3_column_int(st, 0);
	c->util_avg = col_u64(st, 1);
	c->runnable_avg = col_u64(st, 2);
	c->load_avg = col_u64(st, 3);
	c->nr_running = (uint32_t)sqlite3_column_int(st, 4);
	c->capacity = (uint32_t)sqlite3_column_int(st, 5);
	c->group_type = sqlite3_column_int(st, 6);
	c->kernel_util_avg = col_known(st, 7);
	c->kernel_runnable_avg = col_known(st, 8);
	c->kernel_load_avg = col_known(st, 9);
	c->vruntime = col_u64(st, 10);
	c->group_type_scaled = sqlite3_column_int(st, 11);
	c->overloaded_fraction = sqlite3_column_double(st, 12);
	c->vruntime_rate = sqlite3_column_double(st, 13);
	c->busy_ns = col_u64(st, 14);
	c->idle_with_waiters_ns = col_u64(st, 15);
}

static void fill_task_row(sqlite3_stmt *st, void *row)
{
	struct imb_task_sample *t = row;

	t->pid = sqlite3_column_int(st, 0);
	t->tgid = sqlite3_column_int(st, 1);
	col_text(st, 2, t->comm, sizeof(t->comm));
	t->cpu = sqlite3_column_int(st, 3);
	t->nice = sqlite3_column_int(st, 4);
	t->run_ns = col_u64(st, 5);
	t->wait_ns = col_u64(st, 6);
	t->migrations = (uint32_t)sqlite3_column_int(st, 7);
	t->share = sqlite3_column_double(st, 8);
	t->fair_share = sqlite3_column_double(st, 9);
	t->util_avg = col_u64(st, 10);
	t->runnable_avg = col_u64(st, 11);
	t->load_avg = col_u64(st, 12);
}

static void fill_job_row(sqlite3_stmt *st, void *row)
{
	struct imb_job_sample *j = row;

	col_text(st, 0, j->key, sizeof(j->key));
	col_text(st, 1, j->kind, sizeof(j->kind));
	j->tasks = (uint32_t)sqlite3_column_int(st, 2);
	j->unfairness = sqlite3_column_double(st, 3);
	j->mean_deviation = sqlite3_column_double(st, 4);
	j->max_deviation = sqlite3_column_double(st, 5);
	j->jain_index = sqlite3_column_double(st, 6);
}

/*
 * The rows @st selects for window (@run, @t_end_ns), each zeroed and then
 * filled by @fill, appended to *@arr (*@nr rows of @size bytes); 0 or -ENOMEM.
 */
static int read_window_rows(sqlite3_stmt *st, int64_t run, uint64_t t_end_ns, void **arr,
			    size_t *nr, size_t size, void (*fill)(sqlite3_stmt *st, void *row))
{
	size_t cap = 0;
	int rc = 0;

	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, u2i(t_end_ns));
	while (sqlite3_step(st) == SQLITE_ROW) {
		void *row;

		if (grow(arr, &cap, *nr, size)) {
			rc = -ENOMEM;
			break;
		}
		row = (char *)*arr + (*nr)++ * size;
		memset(row, 0, size);
		fill(st, row);
	}
	sqlite3_reset(st);
	return rc;
}

int store_reader_latest_window(struct store_reader *r, struct imb_window **out)
{
	sqlite3_stmt *st = r->st[RD_LATEST];
	struct imb_window *w;
	int64_t run;
	int rc;

	*out = NULL;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		return rc == SQLITE_DONE ? -ENOENT : store_errno(rc);
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		sqlite3_reset(st);
		return -ENOMEM;
	}
	run = sqlite3_column_int64(st, 0);
	w->t_start_ns = col_u64(st, 1);
	w->t_end_ns = col_u64(st, 2);
	w->events = col_u64(st, 3);
	w->lost_events = col_u64(st, 4);
	sqlite3_reset(st);

	if (read_window_rows(r->st[RD_CPUS], run, w->t_end_ns, (void **)&w->cpus, &w->nr_cpus,
			     sizeof(*w->cpus), fill_cpu_row) ||
	    read_window_rows(r->st[RD_TASKS], run, w->t_end_ns, (void **)&w->tasks,
			     &w->nr_tasks, sizeof(*w->tasks), fill_task_row) ||
	    read_window_rows(r->st[RD_JOBS], run, w->t_end_ns, (void **)&w->jobs, &w->nr_jobs,
			     sizeof(*w->jobs), fill_job_row)) {
		imb_window_free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

int store_reader_findings(struct store_reader *r, const struct store_finding_query *q,
			  struct imb_finding **out, size_t *n)
{
	sqlite3_stmt *st = r->st[RD_FINDINGS];
	struct imb_finding *arr = NULL;
	size_t cap = 0, nr = 0;
	char sev[16];
	int rc;

	sqlite3_bind_int64(st, 1, u2i(q->since_ns));
	bind_text(st, 2, q->kind, 64);
	sqlite3_bind_int(st, 3, q->severity < 0 ? 0 : q->severity);
	sqlite3_bind_int64(st, 4, q->limit ? (int64_t)q->limit : 1000);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct imb_finding *f;

		if (grow((void **)&arr, &cap, nr, sizeof(*f))) {
			sqlite3_reset(st);
			free(arr);
			return -ENOMEM;
		}
		f = &arr[nr++];
		memset(f, 0, sizeof(*f));
		f->id = col_u64(st, 0);
		col_text(st, 1, f->kind, sizeof(f->kind));
		col_text(st, 2, sev, sizeof(sev));
		f->severity = imb_severity_parse(sev);
		if (f->severity < 0)
			f->severity = IMB_SEV_INFO;
		f->t_start_ns = col_u64(st, 3);
		f->t_end_ns = col_u64(st, 4);
		col_text(st, 5, f->subject, sizeof(f->subject));
		f->value = sqlite3_column_double(st, 6);
		f->threshold = sqlite3_column_double(st, 7);
		col_text(st, 8, f->summary, sizeof(f->summary));
		col_text(st, 9, f->evidence, sizeof(f->evidence));
		f->open = sqlite3_column_int(st, 10);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		free(arr);
		return store_errno(rc);
	}
	*out = arr;
	*n = nr;
	return 0;
}

int store_reader_alerts(struct store_reader *r, uint64_t since_ns, size_t limit,
			struct store_alert **out, size_t *n)
{
	sqlite3_stmt *st = r->st[RD_ALERTS];
	struct store_alert *arr = NULL;
	size_t cap = 0, nr = 0;
	char sev[16];
	int rc;

	*out = NULL;
	*n = 0;
	sqlite3_bind_int64(st, 1, u2i(since_ns));
	sqlite3_bind_int64(st, 2, limit ? (int64_t)limit : 1000);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_alert *al;
		struct imb_finding *f;

		if (grow((void **)&arr, &cap, nr, sizeof(*al))) {
			sqlite3_reset(st);
			free(arr);
			return -ENOMEM;
		}
		al = &arr[nr++];
		memset(al, 0, sizeof(*al));
		f = &al->alert.finding;
		al->alert.t_ns = col_u64(st, 0);
		col_text(st, 1, al->alert.state, sizeof(al->alert.state));
		col_text(st, 2, f->kind, sizeof(f->kind));
		col_text(st, 3, sev, sizeof(sev));
		f->severity = imb_severity_parse(sev);
		if (f->severity < 0)
			f->severity = IMB_SEV_INFO;
		col_text(st, 4, f->subject, sizeof(f->subject));
		f->value = sqlite3_column_double(st, 5);
		f->threshold = sqlite3_column_double(st, 6);
		col_text(st, 7, f->summary, sizeof(f->summary));
		f->id = col_u64(st, 8);
		f->t_start_ns = col_u64(st, 9);
		f->t_end_ns = al->alert.t_ns;
		f->open = !strcmp(al->alert.state, "fired");
		col_text(st, 10, al->alert.evidence_file, sizeof(al->alert.evidence_file));
		al->run_id = sqlite3_column_int64(st, 11);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		free(arr);
		return store_errno(rc);
	}
	*out = arr;
	*n = nr;
	return 0;
}

static const char *const cpu_metrics[] = {
	"util_avg", "runnable_avg", "load_avg", "nr_running", "capacity", "group_type",
	"overloaded_fraction", "kernel_util_avg", "kernel_runnable_avg", "kernel_load_avg",
	"vruntime_rate",
};
static const char *const job_metrics[] = {
	"unfairness", "mean_deviation", "max_deviation", "jain_index",
};
static const char *const window_metrics[] = { "events", "lost_events" };

static int in_list(const char *m, const char *const *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m, l[i]))
			return 1;
	return 0;
}

int store_metric_valid(const char *m)
{
	if (!m)
		return 0;
	if (in_list(m, cpu_metrics, ARRAY_SIZE(cpu_metrics)))
		return 1;
	if (in_list(m, job_metrics, ARRAY_SIZE(job_metrics)))
		return 2;
	if (in_list(m, window_metrics, ARRAY_SIZE(window_metrics)))
		return 3;
	return 0;
}

/* The latest run (0: none), the oldest raw window it still keeps and its t0; 0 or -errno. */
static int series_latest_run(struct store_reader *r, int64_t *run, int64_t *raw_min, int64_t *t0)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(r->db, "SELECT r.id, (SELECT min(t_start_ns) FROM windows w"
				" WHERE w.run_id = r.id), coalesce(r.t0_ns, 0) FROM runs r"
				" ORDER BY r.id DESC LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_errno(rc);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*run = sqlite3_column_int64(st, 0);
		*raw_min = sqlite3_column_int64(st, 1);
		*t0 = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return 0;
}

/*
 * The statement that selects @q's points of @run (metric of @kind, from the
 * per-minute tables when @use_1m), bound; 0 or -errno.
 */
static int series_prepare(struct store_reader *r, const struct store_series_query *q, int kind,
			  int use_1m, int64_t run, size_t limit, sqlite3_stmt **st)
{
	const char *sfx = use_1m ? "_1m" : "";
	char sql[512];
	int rc;

	if (kind == 1)
		snprintf(sql, sizeof(sql), "SELECT t_ns, cpu, %s FROM cpu_samples%s"
			 " WHERE run_id = ?1 AND t_ns >= ?2 AND t_ns <= ?3"
			 " AND (?4 < 0 OR cpu = ?4) AND %s IS NOT NULL"
			 " ORDER BY t_ns, cpu LIMIT ?5", q->metric, sfx, q->metric);
	else if (kind == 2)
		snprintf(sql, sizeof(sql), "SELECT t_ns, key, %s FROM job_samples%s"
			 " WHERE run_id = ?1 AND t_ns >= ?2 AND t_ns <= ?3"
			 " AND (?6 IS NULL OR key = ?6) ORDER BY t_ns, key LIMIT ?5",
			 q->metric, sfx);
	else
		snprintf(sql, sizeof(sql), "SELECT t_ns, 0, %s FROM windows%s"
			 " WHERE run_id = ?1 AND t_ns >= ?2 AND t_ns <= ?3"
			 " ORDER BY t_ns LIMIT ?5", q->metric, sfx);
	rc = sqlite3_prepare_v2(r->db, sql, -1, st, NULL);
	if (rc != SQLITE_OK)
		return store_errno(rc);
	sqlite3_bind_int64(*st, 1, run);
	sqlite3_bind_int64(*st, 2, u2i(q->since_ns));
	sqlite3_bind_int64(*st, 3, q->until_ns ? u2i(q->until_ns) : INT64_MAX);
	sqlite3_bind_int(*st, 4, q->cpu);
	sqlite3_bind_int64(*st, 5, (int64_t)limit);
	bind_text(*st, 6, q->job, 64);
	return 0;
}

/* The points read so far and the job keys they name. */
struct series_rows {
	struct store_point *pts;
	size_t cap, nr;
	char **ks;		/* the keys; *keys is set to it after each key added */
	size_t kcap;
	char ***keys;		/* the caller's; NULL: job series are all 0 */
	size_t *nkeys;
};

/* The series number of job key @k: its place in the keys, added when new; -ENOMEM. */
static int series_job_key(struct series_rows *t, const char *k)
{
	size_t i;

	if (!k)
		k = "";
	for (i = 0; i < (t->keys ? *t->nkeys : 0); i++)
		if (!strcmp(t->ks[i], k))
			break;
	if (t->keys && i == *t->nkeys) {
		if (grow((void **)&t->ks, &t->kcap, *t->nkeys, sizeof(*t->ks)) ||
		    !(t->ks[*t->nkeys] = strdup(k)))
			return -ENOMEM;
		*t->keys = t->ks;
		(*t->nkeys)++;
	}
	return (int32_t)i;
}

/* The rows of @st as points; the last sqlite3_step() code (SQLITE_DONE: all read), or -ENOMEM. */
static int series_read_rows(sqlite3_stmt *st, int kind, struct series_rows *t)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_point *p;
		int32_t series = sqlite3_column_int(st, 1);

		if (kind == 2) {
			series = series_job_key(t, (const char *)sqlite3_column_text(st, 1));
			if (series < 0)
				return -ENOMEM;
		}
		if (grow((void **)&t->pts, &t->cap, t->nr, sizeof(*p)))
			return -ENOMEM;
		p = &t->pts[t->nr++];
		p->t_ns = col_u64(st, 0);
		p->series = series;
		p->value = sqlite3_column_double(st, 2);
	}
	return rc;
}

int store_reader_timeseries(struct store_reader *r, const struct store_series_query *q,
			    struct store_point **out, size_t *n,
			    char ***keys, size_t *nkeys, int *minute)
{
	int kind = store_metric_valid(q->metric);
	struct series_rows t = { .keys = keys, .nkeys = nkeys };
	int64_t run = 0, raw_min = 0, t0 = 0;
	size_t limit = q->limit ? q->limit : 100000;
	sqlite3_stmt *st;
	int rc, use_1m;

	*out = NULL;
	*n = 0;
	if (keys) {
		*keys = NULL;
		*nkeys = 0;
	}
	*minute = 0;
	if (!kind)
		return -EINVAL;	/* metric is whitelisted: only listed names reach SQL */
	rc = series_latest_run(r, &run, &raw_min, &t0);
	if (rc)
		return rc;
	if (!run)
		return 0;
	/* minute rows only when raw rows were purged from the asked range */
	use_1m = raw_min == 0 || (raw_min > t0 && (int64_t)q->since_ns < raw_min);

	for (int pass = 0; pass < 2; pass++) {
		rc = series_prepare(r, q, kind, use_1m, run, limit, &st);
		if (rc)
			return rc;
		rc = series_read_rows(st, kind, &t);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			free(t.pts);
			return rc < 0 ? rc : store_errno(rc);
		}
		/* no raw rows in range (expired): fall back to minutes once */
		if (t.nr || use_1m)
			break;
		use_1m = 1;
	}
	*out = t.pts;
	*n = t.nr;
	*minute = use_1m;
	return 0;
}

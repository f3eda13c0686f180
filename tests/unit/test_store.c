// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_store.c - the SQLite store: schema migrations from every earlier
 * version, window commits, finding upserts, retention and downsampling on
 * a fake clock, the read API, and kill -9 of a writer mid-stream.
 *
 * The test inspects the database with sqlite3 directly: it is the ground
 * truth the store must agree with.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "daemon/sink/store.h"
#include "tests/unit/tap.h"

#define SEC 1000000000ULL
#define DAY (86400ULL * SEC)

static uint64_t fake_now;

static uint64_t fake_clock(void *ctx)
{
	(void)ctx;
	return fake_now;
}

static char dir[] = "/tmp/imb-store-XXXXXX";

static const char *db_path(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static long long q1(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return -2;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_type(st, 0) == SQLITE_NULL ? -3 :
			    sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	} else {
		printf("# sql error: %s\n", sqlite3_errmsg(db));
	}
	sqlite3_close(db);
	return v;
}

static const char *qtext(const char *path, const char *sql)
{
	static char buf[128];
	sqlite3 *db;
	sqlite3_stmt *st;

	strcpy(buf, "(error)");
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		return buf;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			snprintf(buf, sizeof(buf), "%s", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return buf;
}

static int exec(const char *path, const char *sql)
{
	sqlite3 *db;
	int rc;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		printf("# sql error: %s\n", sqlite3_errmsg(db));
	sqlite3_close(db);
	return rc;
}

/* A window ending at t with 2 CPUs, ntasks tasks, 1 job, nf findings. */
static struct imb_window *mk_window(uint64_t t, size_t ntasks, int unknown_kernel)
{
	struct imb_window *w = calloc(1, sizeof(*w));

	w->t_start_ns = t - SEC;
	w->t_end_ns = t;
	w->events = 1000;
	w->lost_events = 1;
	w->nr_cpus = 2;
	w->cpus = calloc(2, sizeof(*w->cpus));
	for (int c = 0; c < 2; c++) {
		struct imb_cpu_sample *s = &w->cpus[c];

		s->cpu = c;
		s->util_avg = 500 + c * 100;
		s->runnable_avg = 700 + c * 100;
		s->load_avg = 900;
		s->nr_running = 2;
		s->capacity = 1024;
		s->group_type = c ? IMB_GROUP_OVERLOADED : IMB_GROUP_FULLY_BUSY;
		s->kernel_util_avg = unknown_kernel ? IMB_UNKNOWN : 510;
		s->kernel_runnable_avg = unknown_kernel ? IMB_UNKNOWN : 710;
		s->kernel_load_avg = IMB_UNKNOWN;
		s->vruntime = 123456;
	}
	w->nr_tasks = ntasks;
	w->tasks = calloc(ntasks ? ntasks : 1, sizeof(*w->tasks));
	for (size_t i = 0; i < ntasks; i++) {
		struct imb_task_sample *k = &w->tasks[i];

		k->pid = 100 + (int)i;
		k->tgid = 100;
		snprintf(k->comm, sizeof(k->comm), "hog%zu", i);
		k->run_ns = (i + 1) * 1000;	/* the last tasks are the busiest */
		k->share = 0.1;
		k->fair_share = 0.2;
	}
	w->nr_jobs = 1;
	w->jobs = calloc(1, sizeof(*w->jobs));
	strcpy(w->jobs[0].key, "pid:100");
	strcpy(w->jobs[0].kind, "process");
	w->jobs[0].tasks = 3;
	w->jobs[0].unfairness = 0.25;
	return w;
}

static void add_finding(struct imb_window *w, uint64_t id, const char *kind, int sev, int open)
{
	struct imb_finding *f;

	w->findings = realloc(w->findings, (w->nr_findings + 1) * sizeof(*f));
	f = &w->findings[w->nr_findings++];
	memset(f, 0, sizeof(*f));
	f->id = id;
	snprintf(f->kind, sizeof(f->kind), "%s", kind);
	f->severity = sev;
	f->t_start_ns = w->t_start_ns;
	f->t_end_ns = w->t_end_ns;
	snprintf(f->subject, sizeof(f->subject), "cpu1");
	f->value = 0.5;
	f->threshold = 0.2;
	snprintf(f->summary, sizeof(f->summary), "cpu1 overloaded");
	snprintf(f->evidence, sizeof(f->evidence), "{\"runnable_avg\":800}");
	f->open = open;
}

static struct store *open_fake(const char *name, int max_version, uint32_t batch)
{
	struct store_opts o = { .clock_ns = fake_clock, .max_version = max_version,
				.purge_batch = batch, .max_tasks_per_window = 8 };
	const char *err = NULL;
	struct store *s = store_open(db_path(name), &o, &err);

	if (!s)
		printf("# store_open %s: %s (%s)\n", name, err, strerror(errno));
	return s;
}

/* Two windows commit; the second updates the first's finding and adds one. */
static void commit_two_windows(struct store *s, int64_t run)
{
	struct imb_window *w;

	w = mk_window(10 * SEC, 20, 1);
	add_finding(w, 1, "overload", IMB_SEV_WARNING, 1);
	is_int(store_window_commit(s, run, w), 0, "first window commits");
	imb_window_free(w);
	w = mk_window(11 * SEC, 20, 0);
	add_finding(w, 1, "overload", IMB_SEV_CRITICAL, 0);
	add_finding(w, 2, "unfairness", IMB_SEV_INFO, 1);
	is_int(store_window_commit(s, run, w), 0, "second window commits");
	imb_window_free(w);
}

/* The rows the two windows left, read with plain SQL. */
static void check_committed_rows(struct store *s, const char *p)
{
	is_int(q1(p, "SELECT count(*) FROM cpu_samples"), 4, "one cpu row per CPU per window");
	is_int(q1(p, "SELECT count(*) FROM cpu_samples WHERE t_ns = 10000000000 AND kernel_util_avg IS NULL"),
	       2, "kernel_* are NULL when IMB_UNKNOWN");
	is_int(q1(p, "SELECT kernel_util_avg FROM cpu_samples WHERE t_ns = 11000000000 AND cpu = 0"),
	       510, "kernel_* stored when known");
	is_int(q1(p, "SELECT count(*) FROM task_samples WHERE t_ns = 10000000000"), 8,
	       "task rows capped at max_tasks_per_window");
	is_int(q1(p, "SELECT min(pid) FROM task_samples"), 112, "the busiest tasks are the ones kept");
	is_int(q1(p, "SELECT count(*) FROM findings"), 2, "an updated finding upserts, not duplicates");
	is_int(q1(p, "SELECT count(*) FROM findings WHERE run_finding_id = 1 AND severity = 'critical'"
		  " AND open = 0 AND t_end_ns = 11000000000"), 1, "the finding row holds its latest state");
	ok(store_size_bytes(s) > 0, "size reported (%llu bytes)", (unsigned long long)store_size_bytes(s));
	is_int(q1(p, "PRAGMA user_version"), STORE_SCHEMA_VERSION, "user_version is the schema version");
}

/* The reader's findings query and its severity, kind and since filters. */
static void check_reader_findings(struct store_reader *r)
{
	struct store_finding_query fq = { .since_ns = 0, .kind = NULL, .severity = -1 };
	struct imb_finding *fs = NULL;
	size_t nf = 0;

	is_int(store_reader_findings(r, &fq, &fs, &nf), 0, "findings read");
	is_int(nf, 2, "two findings");
	free(fs);
	fq.severity = IMB_SEV_WARNING;
	store_reader_findings(r, &fq, &fs, &nf);
	ok(nf == 1 && !strcmp(fs[0].kind, "overload") && fs[0].severity == IMB_SEV_CRITICAL &&
	   !strcmp(fs[0].evidence, "{\"runnable_avg\":800}"),
	   "severity filter: at least warning; evidence kept");
	free(fs);
	fq.severity = -1;
	fq.kind = "unfairness";
	store_reader_findings(r, &fq, &fs, &nf);
	ok(nf == 1 && fs[0].open, "kind filter");
	free(fs);
	fq.kind = NULL;
	fq.since_ns = 12 * SEC;
	store_reader_findings(r, &fq, &fs, &nf);
	is_int(nf, 0, "since filter");
	free(fs);
}

/* A reader opened beside the writer: status, latest window, findings, series. */
static void check_reader(const char *p, int64_t run)
{
	struct store_reader *r = store_reader_open(p, NULL);
	struct store_series_query sq = { .metric = "runnable_avg", .cpu = 1 };
	struct store_status st;
	struct imb_window *got = NULL;
	struct store_point *pts = NULL;
	size_t np = 0;
	int minute;

	ok(r != NULL, "reader opens while the writer is open");
	if (!r)
		return;
	is_int(store_reader_status(r, &st), 0, "status reads");
	ok(st.run_id == run && st.windows == 2 && st.events == 2000 && st.lost_events == 2 &&
	   !strcmp(st.kernel, "6.18"), "status: run, windows, events, lost, kernel");
	is_int(store_reader_latest_window(r, &got), 0, "latest window rebuilt");
	ok(got && got->t_end_ns == 11 * SEC && got->nr_cpus == 2 && got->nr_tasks == 8 &&
	   got->nr_jobs == 1 && got->cpus[1].runnable_avg == 800 &&
	   got->cpus[0].kernel_load_avg == IMB_UNKNOWN && !strcmp(got->jobs[0].key, "pid:100"),
	   "latest window has the committed values");
	imb_window_free(got);
	check_reader_findings(r);
	is_int(store_reader_timeseries(r, &sq, &pts, &np, NULL, NULL, &minute), 0, "timeseries reads");
	ok(np == 2 && !minute && pts[0].t_ns == 10 * SEC && pts[1].value == 800 && pts[0].series == 1,
	   "timeseries: cpu 1 runnable_avg, raw, in time order");
	free(pts);
	sq.metric = "util_avg; DROP TABLE runs";
	is_int(store_reader_timeseries(r, &sq, &pts, &np, NULL, NULL, &minute), -EINVAL,
	       "metric names are whitelisted");
	ok(store_metric_valid("unfairness") == 2 && !store_metric_valid("bogus"),
	   "store_metric_valid classifies metrics");
	store_reader_close(r);
}

static void test_commit_and_read(void)
{
	const char *p = db_path("basic.db");
	struct store_run_info ri = { .source = "text", .host = "h", .kernel = "6.18",
				     .nr_cpus = 2, .window_ns = SEC };
	struct store *s = open_fake("basic.db", 0, 0);
	int64_t run;

	fake_now = 1000 * DAY;
	ok(s != NULL, "a new database opens");
	if (!s)
		return;
	is_int(store_schema_version(s), STORE_SCHEMA_VERSION, "new database is at the latest schema");
	ok(!strcmp(qtext(p, "PRAGMA journal_mode"), "wal"), "the database is in WAL mode");
	run = store_run_begin(s, &ri);
	ok(run > 0, "run begins with id %lld", (long long)run);

	commit_two_windows(s, run);
	check_committed_rows(s, p);
	check_reader(p, run);
	store_close(s);
	ok(store_reader_open(db_path("missing.db"), NULL) == NULL && errno == ENOENT,
	   "reader refuses a missing file with ENOENT");
}

/* A version @from database holding a run's rows as a version-@from writer left them. */
static void build_old_database(const char *name, const char *p, int from)
{
	struct store *s = open_fake(name, from, 0);

	is_int(s ? store_schema_version(s) : -1, from, "built a version %d database", from);
	store_close(s);
	/* data as a version-N writer would have left it */
	exec(p, "INSERT INTO runs(id, started_ns, source, host, kernel, nr_cpus, window_ns)"
		" VALUES(1, 86400000000000000, 'tracefs', 'old', '6.1', 2, 1000000000);"
		"INSERT INTO cpu_samples(run_id, t_ns, cpu, util_avg, runnable_avg, load_avg,"
		" nr_running, capacity, group_type) VALUES(1, 5000000000, 0, 111, 222, 333, 1, 1024, 0),"
		" (1, 5000000000, 1, 444, 555, 666, 3, 1024, 6);"
		"INSERT INTO job_samples(run_id, t_ns, key, kind, tasks, unfairness)"
		" VALUES(1, 5000000000, 'comm:hog', 'comm', 2, 0.5);"
		"INSERT INTO findings(run_id, t_start_ns, t_end_ns, kind, severity, subject, value,"
		" threshold, summary) VALUES(1, 4000000000, 5000000000, 'overload', 'warning',"
		" 'cpu1', 3, 1, 'old finding');");
	exec(p, "INSERT INTO alerts(run_id, t_ns, state, kind, severity, subject, value,"
		" threshold, summary) VALUES(1, 5000000000, 'fired', 'overload', 'warning',"
		" 'cpu1', 3, 1, 'old alert');");
	if (from >= 2)
		exec(p, "INSERT INTO windows VALUES(1, 4000000000, 5000000000, 77, 0);"
			"UPDATE runs SET t0_ns = 4000000000;"
			"UPDATE findings SET run_finding_id = 7;"
			"UPDATE alerts SET finding_id = 0;");
}

/* The old run's rows after migration, in SQL and through the reader. */
static void check_migrated_rows(const char *p, int from)
{
	struct store_reader *r;
	struct imb_window *w = NULL;
	struct store_alert *al = NULL;
	size_t na = 0;

	is_int(q1(p, "SELECT count(*) FROM cpu_samples WHERE run_id = 1"), 2,
	       "v%d: cpu rows kept", from);
	is_int(q1(p, "SELECT count(*) FROM windows WHERE run_id = 1"), 1,
	       "v%d: window row present after migration", from);
	is_int(q1(p, "SELECT count(*) FROM findings WHERE run_finding_id IS NOT NULL"), 1,
	       "v%d: findings got a run-local id", from);
	r = store_reader_open(p, NULL);
	ok(r && store_reader_latest_window(r, &w) == 0 && w->nr_cpus == 2 &&
	   w->cpus[1].runnable_avg == 555 && w->nr_jobs == 1,
	   "v%d: migrated data reads through the reader", from);
	imb_window_free(w);
	ok(r && store_reader_alerts(r, 0, 0, &al, &na) == 0 && na == 1 &&
	   !strcmp(al[0].alert.state, "fired") &&
	   !strcmp(al[0].alert.finding.subject, "cpu1") &&
	   al[0].alert.finding.id == 0 && al[0].alert.evidence_file[0] == 0 &&
	   al[0].alert.t_ns == 5 * SEC,
	   "v%d: the old alert reads back, with no evidence file or finding link",
	   from);
	free(al);
	store_reader_close(r);
}

/* A new run after migration works and old minutes get downsampled. */
static void check_new_run_after_migration(struct store *s, const char *p, int from)
{
	struct store_run_info ri = { .source = "text", .nr_cpus = 2, .window_ns = SEC };
	int64_t run = store_run_begin(s, &ri);
	struct imb_window *nw = mk_window(100 * SEC, 3, 1);

	struct imb_alert a = { .state = "fired", .t_ns = 100 * SEC,
			       .evidence_file = "/var/lib/imbalanced/flight-x.events.gz" };

	add_finding(nw, 3, "overload", IMB_SEV_WARNING, 1);
	is_int(store_window_commit(s, run, nw), 0, "v%d: commits after migration", from);
	imb_window_free(nw);
	snprintf(a.finding.kind, sizeof(a.finding.kind), "overload");
	snprintf(a.finding.subject, sizeof(a.finding.subject), "cpu1");
	a.finding.t_start_ns = 97 * SEC;
	is_int(store_alert_insert(s, run, &a), 0, "v%d: an alert inserts after migration",
	       from);
	is_int(q1(p, "SELECT count(*) FROM alerts WHERE finding_id = 3 AND"
		  " finding_t_start_ns = 97000000000 AND evidence_file ="
		  " '/var/lib/imbalanced/flight-x.events.gz'"), 1,
	       "v%d: the new alert row links its finding and evidence file", from);
	if (from > 0)
		is_int(q1(p, "SELECT count(*) FROM cpu_samples_1m WHERE run_id = 1"), 2,
		       "v%d: the old run's minute is downsampled", from);
}

static void test_migrations(void)
{
	for (int from = 0; from < STORE_SCHEMA_VERSION; from++) {
		char name[32];
		const char *p;
		struct store *s;

		snprintf(name, sizeof(name), "mig%d.db", from);
		p = db_path(name);
		fake_now = 1000 * DAY;
		if (from > 0)
			build_old_database(name, p, from);
		s = open_fake(name, 0, 0);
		ok(s && store_schema_version(s) == STORE_SCHEMA_VERSION,
		   "version %d database migrates to %d", from, STORE_SCHEMA_VERSION);
		if (!s)
			continue;
		if (from > 0)
			check_migrated_rows(p, from);
		check_new_run_after_migration(s, p, from);
		store_close(s);
		ok(!strcmp(qtext(p, "PRAGMA integrity_check"), "ok"), "v%d: integrity_check ok", from);
	}
}

static void test_retention(void)
{
	const char *p = db_path("ret.db");
	struct store *s = open_fake("ret.db", 0, 50);
	struct store_run_info ri = { .source = "bpf", .nr_cpus = 2, .window_ns = SEC };
	uint64_t t0 = 1000 * SEC;
	int64_t run;
	long long raw_before, n1m;
	int rc = 0, commits;

	fake_now = 2000 * DAY;
	ri.started_ns = fake_now;
	run = store_run_begin(s, &ri);
	/* 3 minutes of 1 s windows; clock advances with trace time */
	for (int i = 1; i <= 180 && !rc; i++) {
		struct imb_window *w = mk_window(t0 + i * SEC, 2, 1);

		fake_now = ri.started_ns + i * SEC;
		rc = store_window_commit(s, run, w);
		imb_window_free(w);
	}
	is_int(rc, 0, "180 windows commit");
	raw_before = q1(p, "SELECT count(*) FROM cpu_samples");
	is_int(raw_before, 360, "all raw rows kept while young");
	/* t0 = 1000 s = minute 16 + 40 s: minutes [960,1020) [1020,1080) [1080,1140) finished */
	n1m = q1(p, "SELECT count(*) FROM cpu_samples_1m");
	is_int(n1m, 6, "finished minutes are downsampled as they complete (3 minutes x 2 CPUs)");
	is_int(q1(p, "SELECT n FROM cpu_samples_1m WHERE t_ns = 1020000000000 AND cpu = 0"), 60,
	       "a full minute averages 60 windows");
	is_int(q1(p, "SELECT CAST(runnable_avg AS INTEGER) FROM cpu_samples_1m WHERE t_ns = 1020000000000 AND cpu = 1"),
	       800, "minute rows hold the average");
	is_int(q1(p, "SELECT count(*) FROM job_samples_1m"), 3, "job minutes downsampled");

	/* 8 days later (the daemon was idle): raw rows expire, in batches */
	fake_now = ri.started_ns + 8 * DAY;
	{
		struct imb_window *w = mk_window(t0 + 8 * DAY, 2, 1);

		store_window_commit(s, run, w);
		imb_window_free(w);
	}
	ok(q1(p, "SELECT count(*) FROM cpu_samples") > 2 &&
	   q1(p, "SELECT count(*) FROM cpu_samples") < raw_before,
	   "one commit purges only a batch of expired rows (%lld left)",
	   q1(p, "SELECT count(*) FROM cpu_samples"));
	for (commits = 1; commits < 50 &&
	     q1(p, "SELECT count(*) FROM cpu_samples WHERE t_ns < 2000000000000") > 0; commits++) {
		struct imb_window *w = mk_window(t0 + 8 * DAY + commits * SEC, 2, 1);

		fake_now = ri.started_ns + 8 * DAY + commits * SEC;
		store_window_commit(s, run, w);
		imb_window_free(w);
	}
	is_int(q1(p, "SELECT count(*) FROM cpu_samples WHERE t_ns < 2000000000000"), 0,
	       "raw rows older than 7 days are gone after %d commits", commits);
	ok(q1(p, "SELECT count(*) FROM cpu_samples") >= 2, "new raw rows are kept");
	is_int(q1(p, "SELECT count(*) FROM task_samples WHERE t_ns < 2000000000000"), 0,
	       "expired task rows are gone too");
	ok(q1(p, "SELECT count(*) FROM cpu_samples_1m WHERE t_ns < 2000000000000") >= 6,
	   "their minute rows are kept");
	{
		struct store_reader *r = store_reader_open(p, NULL);
		struct store_series_query sq = { .metric = "util_avg", .cpu = 0, .since_ns = t0,
						 .until_ns = t0 + 300 * SEC };
		struct store_point *pts = NULL;
		size_t np = 0;
		int minute = 0;

		ok(r && store_reader_timeseries(r, &sq, &pts, &np, NULL, NULL, &minute) == 0 &&
		   minute == 1 && np >= 3 && pts[0].value == 500,
		   "timeseries over the expired range answers from minute rows");
		free(pts);
		store_reader_close(r);
	}
	/* 91 days: minute rows expire too */
	for (int i = 0; i < 20; i++) {
		struct imb_window *w = mk_window(t0 + 91 * DAY + i * SEC, 2, 1);

		fake_now = ri.started_ns + 91 * DAY + i * SEC;
		store_window_commit(s, run, w);
		imb_window_free(w);
	}
	is_int(q1(p, "SELECT count(*) FROM cpu_samples_1m WHERE t_ns < 2000000000000"), 0,
	       "minute rows older than 90 days are gone");
	store_close(s);
}

/* Alerts carry their evidence: the flight-recorder file and the finding. */
static void test_alert_evidence(void)
{
	const char *p = db_path("alerts.db");
	struct store *s = open_fake("alerts.db", 0, 0);
	struct store_run_info ri = { .source = "bpf", .nr_cpus = 2, .window_ns = SEC };
	struct store_reader *r;
	struct store_alert *al = NULL;
	struct imb_window *w;
	struct imb_alert a;
	size_t na = 0;
	int64_t run;

	fake_now = 1000 * DAY;
	if (!s)
		return;
	run = store_run_begin(s, &ri);
	w = mk_window(10 * SEC, 2, 1);
	add_finding(w, 1, "overload", IMB_SEV_WARNING, 0);	/* cpu1, 9..10 s, closed */
	add_finding(w, 2, "unfairness", IMB_SEV_WARNING, 1);
	snprintf(w->findings[1].subject, sizeof(w->findings[1].subject), "job pid:100");
	store_window_commit(s, run, w);
	imb_window_free(w);

	memset(&a, 0, sizeof(a));
	snprintf(a.state, sizeof(a.state), "fired");
	a.t_ns = 10 * SEC;
	snprintf(a.finding.kind, sizeof(a.finding.kind), "unfairness");
	snprintf(a.finding.subject, sizeof(a.finding.subject), "pid:100");	/* the job key */
	a.finding.t_start_ns = 7 * SEC;
	snprintf(a.evidence_file, sizeof(a.evidence_file), "/state/flight-1.events.gz");
	is_int(store_alert_insert(s, run, &a), 0, "an alert with evidence inserts");
	/* an overload that began after the closed finding ended: no link */
	snprintf(a.finding.kind, sizeof(a.finding.kind), "overload");
	snprintf(a.finding.subject, sizeof(a.finding.subject), "cpu1");
	a.finding.t_start_ns = 10 * SEC + 1;
	a.evidence_file[0] = 0;
	a.t_ns = 11 * SEC;
	store_alert_insert(s, run, &a);
	/* ...and one that overlaps it links to it */
	a.finding.t_start_ns = 9 * SEC;
	a.t_ns = 12 * SEC;
	snprintf(a.state, sizeof(a.state), "recovered");
	store_alert_insert(s, run, &a);
	/* an explicit finding id wins */
	a.finding.id = 2;
	a.t_ns = 13 * SEC;
	store_alert_insert(s, run, &a);
	store_close(s);

	is_int(q1(p, "SELECT count(*) FROM alerts WHERE finding_id IS NULL"), 1,
	       "an alert with no matching finding has finding_id NULL");
	r = store_reader_open(p, NULL);
	ok(r && store_reader_alerts(r, 0, 0, &al, &na) == 0 && na == 4, "four alerts read back");
	if (na == 4) {
		ok(al[3].alert.t_ns == 10 * SEC && al[3].alert.finding.id == 2 &&
		   al[3].alert.finding.t_start_ns == 7 * SEC &&
		   !strcmp(al[3].alert.evidence_file, "/state/flight-1.events.gz") &&
		   !strcmp(al[3].alert.finding.subject, "pid:100") && al[3].run_id == run &&
		   al[3].alert.finding.open,
		   "oldest last: the job alert links the job's finding (\"job pid:100\") and its file");
		ok(al[2].alert.finding.id == 0 && !al[2].alert.evidence_file[0],
		   "the overload that began after the finding ended is not linked to it");
		ok(al[1].alert.finding.id == 1 && !strcmp(al[1].alert.state, "recovered") &&
		   !al[1].alert.finding.open, "the overlapping overload links finding 1");
		ok(al[0].alert.finding.id == 2, "an explicit finding id is kept");
	}
	free(al);
	ok(r && store_reader_alerts(r, 12 * SEC, 1, &al, &na) == 0 && na == 1 &&
	   al[0].alert.t_ns == 13 * SEC, "since and limit apply");
	free(al);
	store_reader_close(r);
}

static long long file_size(const char *p)
{
	char wal[300];
	long long n = 0;
	FILE *f;

	snprintf(wal, sizeof(wal), "%s-wal", p);
	for (int i = 0; i < 2; i++) {
		f = fopen(i ? wal : p, "rb");
		if (!f)
			continue;
		fseek(f, 0, SEEK_END);
		n += ftell(f);
		fclose(f);
	}
	return n;
}

/*
 * The size bound: with max_bytes, 12 minutes of windows (3.5 MB of pages
 * unbounded) stay near the bound, the oldest raw rows going first and only
 * once downsampled; a tighter bound then takes the oldest minute rows,
 * STORE_BOUND_MINUTES per commit.  Done on a new database (incremental auto_vacuum: the
 * file itself shrinks to the bound) and on one created without it (free
 * pages are reused: the file stops growing).
 */
#define NWIN 720

/* Commit NWIN windows from @t0 on; @max_seen gets the peak size after the first quarter. */
static int commit_past_bound(struct store *s, const char *p, int64_t run, uint64_t t0,
			     uint64_t started_ns, long long *max_seen)
{
	int rc = 0, i;

	for (i = 1; i <= NWIN && !rc; i++) {
		struct imb_window *w = mk_window(t0 + i * SEC, 64, 1);

		fake_now = started_ns + i * SEC;
		rc = store_window_commit(s, run, w);
		imb_window_free(w);
		if (i > NWIN / 4 && file_size(p) > *max_seen)
			*max_seen = file_size(p);
	}
	return rc;
}

/* After NWIN windows: the file near the bound, the oldest raw rows gone once downsampled. */
static void check_raw_rows_bounded(const char *p, const char *name, int old_file, uint64_t bound,
				   uint64_t t0, int rc, long long max_seen)
{
	is_int(rc, 0, "%d windows commit under a %llu byte bound", NWIN, (unsigned long long)bound);
	diag("%s: after %d windows: file+WAL %lld bytes (peak after the first quarter %lld),"
	     " %lld raw windows, %lld minute rows, live %lld bytes", name, NWIN, file_size(p), max_seen,
	     q1(p, "SELECT count(*) FROM windows"), q1(p, "SELECT count(*) FROM windows_1m"),
	     q1(p, "SELECT (SELECT page_count FROM pragma_page_count) -"
		   " (SELECT freelist_count FROM pragma_freelist_count)") * 4096);
	ok(q1(p, "SELECT (SELECT page_count FROM pragma_page_count) -"
		 " (SELECT freelist_count FROM pragma_freelist_count)") * 4096 <= (long long)bound,
	   "the live pages are within the bound");
	if (old_file)
		ok(max_seen <= (long long)bound * 2,
		   "without auto_vacuum the file stops growing near the bound (peak %lld)", max_seen);
	else
		ok(file_size(p) <= (long long)(bound + bound / 4),
		   "with incremental auto_vacuum the file is near the bound (%lld)", file_size(p));
	ok(q1(p, "SELECT count(*) FROM windows") < NWIN &&
	   q1(p, "SELECT count(*) FROM windows") >= 60,
	   "the oldest raw windows are gone, the newest minute kept (%lld)",
	   q1(p, "SELECT count(*) FROM windows"));
	is_int(q1(p, "SELECT max(t_ns) FROM windows"), (long long)(t0 + NWIN * SEC),
	       "the latest window is there");
	is_int(q1(p, "SELECT count(*) - ((max(t_ns) - min(t_ns)) / 1000000000 + 1) FROM windows"), 0,
	       "the raw windows kept are one run of consecutive windows");
	is_int(q1(p, "SELECT sum(n) FROM windows_1m"), NWIN - 1,
	       "every deleted raw window had been downsampled first (minute rows count them all)");
	is_int(q1(p, "SELECT count(*) FROM task_samples WHERE t_ns < (SELECT min(t_ns) FROM windows)"),
	       0, "their task rows are gone with them");
	is_int(q1(p, "SELECT count(*) FROM cpu_samples_1m"), 2 * NWIN / 60,
	       "every finished minute is kept downsampled (%d minutes x 2 CPUs)", NWIN / 60);
}

/*
 * Under a bound tighter than the data, 60 more windows: the oldest minute
 * rows go, a batch per commit.  @rc is the first phase's result.
 */
static void check_minute_rows_purged(struct store *s, const char *p, int64_t run, uint64_t t0,
				     uint64_t started_ns, int rc)
{
	long long first_1m = q1(p, "SELECT min(t_ns) FROM cpu_samples_1m");
	long long n1m = q1(p, "SELECT count(*) FROM cpu_samples_1m");
	long long prev_n = n1m, prev_min = first_1m, max_drop = 0, n, mn;
	int order_ok = 1, i;

	for (i = NWIN + 1; i <= NWIN + 60 && !rc; i++) {
		struct imb_window *w = mk_window(t0 + i * SEC, 64, 1);

		fake_now = started_ns + i * SEC;
		rc = store_window_commit(s, run, w);
		imb_window_free(w);
		n = q1(p, "SELECT count(*) FROM cpu_samples_1m");
		mn = q1(p, "SELECT min(t_ns) FROM cpu_samples_1m");
		if (prev_n - n > max_drop)
			max_drop = prev_n - n;
		/* what is left: the newest minutes, none missing between */
		if (n > 0 && (mn < prev_min ||
			      q1(p, "SELECT count(*) - 2 * ((max(t_ns) - min(t_ns)) / 60000000000"
				    " + 1) FROM cpu_samples_1m") != 0))
			order_ok = 0;
		prev_n = n;
		if (n > 0)
			prev_min = mn;
	}
	is_int(rc, 0, "commits go on under a bound smaller than the data");
	ok(q1(p, "SELECT count(*) FROM cpu_samples_1m") < n1m,
	   "minute rows go once no raw row can (%lld of %lld left)",
	   q1(p, "SELECT count(*) FROM cpu_samples_1m"), n1m);
	ok(max_drop > 0 && max_drop <= 2 * STORE_BOUND_MINUTES,
	   "a commit deletes at most %d minutes (%lld rows of 2 CPUs)", STORE_BOUND_MINUTES,
	   max_drop);
	ok(order_ok, "the oldest minute rows go first");
	is_int(q1(p, "SELECT max(t_ns) FROM windows"), (long long)(t0 + (NWIN + 60) * SEC),
	       "the newest window is kept");
}

static void test_size_bound(int old_file)
{
	const char *name = old_file ? "bound-old.db" : "bound.db";
	const char *p = db_path(name);
	const uint64_t bound = 1 << 20;
	struct store_opts o = { .clock_ns = fake_clock, .max_tasks_per_window = 64,
				.max_bytes = bound };
	struct store_run_info ri = { .source = "bpf", .nr_cpus = 2, .window_ns = SEC };
	struct store *s;
	uint64_t t0 = 6000 * SEC;
	long long max_seen = 0;
	int rc;
	int64_t run;

	if (old_file)	/* a file that had a table before this version: no auto_vacuum */
		exec(p, "PRAGMA auto_vacuum = NONE; CREATE TABLE other(a);");
	s = store_open(p, &o, NULL);
	if (!s) {
		ok(0, "%s opens", name);
		return;
	}
	is_int(q1(p, "PRAGMA auto_vacuum"), old_file ? 0 : 2,
	       old_file ? "an old file keeps auto_vacuum off" : "a new file has incremental auto_vacuum");
	fake_now = 3000 * DAY;
	ri.started_ns = fake_now;
	run = store_run_begin(s, &ri);
	rc = commit_past_bound(s, p, run, t0, ri.started_ns, &max_seen);
	check_raw_rows_bounded(p, name, old_file, bound, t0, rc, max_seen);
	store_close(s);

	/* a tighter bound: now the oldest minute rows go, a batch per commit */
	o.max_bytes = 64 << 10;
	o.purge_batch = 1000;
	s = store_open(p, &o, NULL);
	check_minute_rows_purged(s, p, run, t0, ri.started_ns, rc);
	store_close(s);
	ok(!strcmp(qtext(p, "PRAGMA integrity_check"), "ok"), "%s: integrity_check ok", name);
}

/* child: commit windows forever, report each committed window end on fd */
static void writer_child(int fd)
{
	struct store *s = store_open(db_path("kill.db"), NULL, NULL);
	struct store_run_info ri = { .source = "text", .nr_cpus = 2, .window_ns = SEC };
	int64_t run;

	if (!s)
		_exit(2);
	run = store_run_begin(s, &ri);
	for (uint64_t i = 1;; i++) {
		struct imb_window *w = mk_window(i * SEC, 200, 1);

		if (store_window_commit(s, run, w))
			_exit(3);
		imb_window_free(w);
		if (write(fd, &i, sizeof(i)) != sizeof(i))
			_exit(4);
	}
}

static void test_kill9(void)
{
	const char *p = db_path("kill.db");
	uint64_t last = 0, v;
	int fds[2], status;
	pid_t pid;
	long long nwin;

	if (pipe(fds))
		return;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		writer_child(fds[1]);
	}
	close(fds[1]);
	while (last < 150 && read(fds[0], &v, sizeof(v)) == sizeof(v))
		last = v;
	kill(pid, SIGKILL);
	/* drain what the child reported before it died */
	while (read(fds[0], &v, sizeof(v)) == sizeof(v))
		last = v;
	close(fds[0]);
	waitpid(pid, &status, 0);
	ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "writer killed with SIGKILL mid-stream");
	{
		sqlite3 *db;
		sqlite3_stmt *st;
		char res[64] = "";

		sqlite3_open_v2(p, &db, SQLITE_OPEN_READWRITE, NULL);
		sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL);
		if (sqlite3_step(st) == SQLITE_ROW)
			snprintf(res, sizeof(res), "%s", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		sqlite3_close(db);
		ok(!strcmp(res, "ok"), "integrity_check after kill -9: %s", res);
	}
	nwin = q1(p, "SELECT count(*) FROM windows");
	ok(nwin >= (long long)last, "every reported window is committed (%lld >= %llu)",
	   nwin, (unsigned long long)last);
	is_int(q1(p, "SELECT count(*) FROM windows w WHERE (SELECT count(*) FROM cpu_samples c"
		  " WHERE c.run_id = w.run_id AND c.t_ns = w.t_ns) != 2 OR (SELECT count(*) FROM"
		  " task_samples k WHERE k.run_id = w.run_id AND k.t_ns = w.t_ns) != 16"), 0,
	       "every committed window is whole (2 cpu rows, 16 task rows)");
	{
		struct store *s = store_open(p, NULL, NULL);

		ok(s != NULL, "the database reopens for writing after the kill");
		store_close(s);
	}
}

/*
 * Job rows: jobs of one task are never unfair and are not stored; of the
 * others the most unfair STORE_DEFAULT_MAX_JOBS are.
 */
static void test_job_rows(void)
{
	const char *p = db_path("jobs.db");
	struct store_run_info ri = { .source = "text", .host = "h", .kernel = "6.18",
				     .nr_cpus = 2, .window_ns = SEC };
	struct store *s = open_fake("jobs.db", 0, 0);
	struct imb_window *w;
	size_t nj = 2 * STORE_DEFAULT_MAX_JOBS + 40;
	int64_t run;
	char want[32];

	fake_now = 1000 * DAY;
	ok(s != NULL, "jobs: database opens");
	if (!s)
		return;
	run = store_run_begin(s, &ri);
	w = mk_window(10 * SEC, 4, 1);
	free(w->jobs);
	w->nr_jobs = nj;
	w->jobs = calloc(nj, sizeof(*w->jobs));
	for (size_t i = 0; i < nj; i++) {
		struct imb_job_sample *j = &w->jobs[i];

		snprintf(j->key, sizeof(j->key), "process:%zu", 1000 + i);
		strcpy(j->kind, "process");
		/* the first 40: one task each, with a (meaningless) high value */
		j->tasks = i < 40 ? 1 : 2 + (uint32_t)(i % 3);
		j->unfairness = i < 40 ? 0.99 : (double)(i - 40) / (double)nj;
	}
	ok(!store_window_commit(s, run, w), "jobs: a window of %zu jobs commits", nj);
	imb_window_free(w);
	store_close(s);
	snprintf(want, sizeof(want), "%d", STORE_DEFAULT_MAX_JOBS);
	ok(!strcmp(qtext(p, "SELECT count(*) FROM job_samples"), want),
	   "jobs: %s rows kept of %zu jobs (got %s)", want, nj, qtext(p, "SELECT count(*) FROM job_samples"));
	ok(!strcmp(qtext(p, "SELECT count(*) FROM job_samples WHERE tasks < 2"), "0"),
	   "jobs: no row for a job of one task");
	snprintf(want, sizeof(want), "process:%zu", 1000 + nj - STORE_DEFAULT_MAX_JOBS);
	ok(!strcmp(qtext(p, "SELECT key FROM job_samples ORDER BY unfairness LIMIT 1"), want),
	   "jobs: the most unfair are kept (least unfair kept %s, want %s)",
	   qtext(p, "SELECT key FROM job_samples ORDER BY unfairness LIMIT 1"), want);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_commit_and_read();
	test_job_rows();
	test_migrations();
	test_retention();
	test_alert_evidence();
	test_size_bound(0);
	test_size_bound(1);
	test_kill9();
	if (!getenv("KEEP_TMP")) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			diag("could not remove %s", dir);
	}
	return tap_done();
}

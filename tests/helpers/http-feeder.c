// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http-feeder.c - a real HTTP server fed with synthetic windows, for the
 * HTTP, dashboard and benchmark tests (the pipeline is wired elsewhere).
 *
 *   http-feeder [--listen ADDR:PORT] [--interval-ms N] [--cpus N]
 *               [--tasks N] [--db FILE] [--token-file F] [--allow-remote]
 *   http-feeder --make-db FILE [--windows N] [--cpus N] [--tasks N]
 *   http-feeder --serve FILE [--listen ADDR:PORT]
 *
 * Live mode publishes a window every interval through the snapshot holder
 * (and commits it to --db when given); --make-db writes a fixture database
 * through the store and exits; --serve serves a database like `imbalanced
 * serve`.  Prints "port N" once listening; stops on SIGTERM/SIGINT.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sink/http.h"
#include "daemon/sink/snapshot.h"
#include "daemon/sink/store.h"

#define SEC 1000000000ULL

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The CPUs of window @i: CPU 1 overloaded in bursts, the others busy or spare. */
static void synth_cpus(struct imb_window *w, uint64_t i, int ncpus, uint64_t window_ns)
{
	double phase = (double)i / 10.0;

	w->nr_cpus = (size_t)ncpus;
	w->cpus = calloc((size_t)ncpus, sizeof(*w->cpus));
	for (int c = 0; c < ncpus; c++) {
		struct imb_cpu_sample *s = &w->cpus[c];
		double load = c == 1 ? 2.0 + sin(phase) : 0.6 + 0.3 * sin(phase + c);

		s->cpu = c;
		s->util_avg = (uint64_t)(1024 * fmin(1.0, load * 0.8));
		s->runnable_avg = (uint64_t)(1024 * load);
		s->load_avg = s->runnable_avg;
		s->nr_running = (uint32_t)ceil(load);
		s->capacity = 1024;
		s->group_type = load > 1.5 ? IMB_GROUP_OVERLOADED :
				load > 0.9 ? IMB_GROUP_FULLY_BUSY : IMB_GROUP_HAS_SPARE;
		s->group_type_scaled = s->group_type;
		s->overloaded_fraction = load > 1.5 ? 0.8 : 0.0;
		s->kernel_util_avg = s->util_avg + (i % 3);
		s->kernel_runnable_avg = s->runnable_avg - (i % 2);
		s->kernel_load_avg = IMB_UNKNOWN;
		s->vruntime = i * 1000000 * (uint64_t)(c + 1);
		s->vruntime_rate = 1.0 / (c + 1);
		s->busy_ns = window_ns * 9 / 10;
	}
}

/* @ntasks hogs of one process, each with a smaller share than the one before. */
static void synth_tasks(struct imb_window *w, int ncpus, int ntasks, uint64_t window_ns)
{
	w->nr_tasks = (size_t)ntasks;
	w->tasks = calloc((size_t)(ntasks ? ntasks : 1), sizeof(*w->tasks));
	for (int k = 0; k < ntasks; k++) {
		struct imb_task_sample *t = &w->tasks[k];

		t->pid = 1000 + k;
		t->tgid = 1000;
		snprintf(t->comm, sizeof(t->comm), "hog-%d", k);
		t->cpu = k % ncpus;
		t->run_ns = window_ns / (uint64_t)(k + 2);
		t->wait_ns = window_ns / 4;
		t->migrations = (uint32_t)(k % 3);
		t->share = (double)t->run_ns / (double)window_ns;
		t->fair_share = (double)ncpus / ntasks > 1 ? 1 : (double)ncpus / ntasks;
		t->util_avg = (uint64_t)(1024 * t->share);
		t->runnable_avg = t->util_avg + 100;
		t->load_avg = t->runnable_avg;
	}
}

/* The hogs' job, its unfairness swinging with @i, and a job whose key needs escaping. */
static void synth_jobs(struct imb_window *w, uint64_t i, int ntasks)
{
	w->nr_jobs = 2;
	w->jobs = calloc(2, sizeof(*w->jobs));
	strcpy(w->jobs[0].key, "pid:1000");
	strcpy(w->jobs[0].kind, "process");
	w->jobs[0].tasks = (uint32_t)ntasks;
	w->jobs[0].unfairness = 0.5 + 0.3 * sin((double)i / 10.0);
	w->jobs[0].mean_deviation = 0.2;
	w->jobs[0].max_deviation = 0.4;
	w->jobs[0].jain_index = 0.8;
	strcpy(w->jobs[1].key, "comm:\"quoted\"\\job");
	strcpy(w->jobs[1].kind, "comm");
	w->jobs[1].tasks = 1;
}

/* A finding opens every 10 windows and closes 3 windows later. */
static void synth_finding(struct imb_window *w, uint64_t i, int ncpus, uint64_t window_ns)
{
	struct imb_finding *f;

	if (i % 10 > 3)
		return;
	f = calloc(1, sizeof(*f));
	f->id = i / 10 + 1;
	strcpy(f->kind, i % 20 < 10 ? "overload" : "unfairness");
	f->severity = i % 20 < 10 ? IMB_SEV_WARNING : IMB_SEV_CRITICAL;
	f->t_start_ns = 1000 * SEC + (i - i % 10) * window_ns;
	f->t_end_ns = w->t_end_ns;
	snprintf(f->subject, sizeof(f->subject), i % 20 < 10 ? "cpu1" : "job pid:1000");
	f->value = 2.5;
	f->threshold = 1.17;
	snprintf(f->summary, sizeof(f->summary), "%s: runnable_avg %llu above capacity",
		 f->subject, (unsigned long long)w->cpus[ncpus > 1].runnable_avg);
	snprintf(f->evidence, sizeof(f->evidence),
		 "{\"runnable_avg\":%llu,\"nr_running\":%u}",
		 (unsigned long long)w->cpus[ncpus > 1].runnable_avg,
		 w->cpus[ncpus > 1].nr_running);
	f->open = i % 10 != 3;
	w->findings = f;
	w->nr_findings = 1;
}

/* Window @i: CPU 1 overloaded in bursts, one job of @ntasks hogs. */
static struct imb_window *synth_window(uint64_t i, int ncpus, int ntasks, uint64_t window_ns)
{
	struct imb_window *w = calloc(1, sizeof(*w));

	w->t_start_ns = 1000 * SEC + i * window_ns;
	w->t_end_ns = w->t_start_ns + window_ns;
	w->events = 5000 + i % 7;
	w->lost_events = i % 50 == 49;
	synth_cpus(w, i, ncpus, window_ns);
	synth_tasks(w, ncpus, ntasks, window_ns);
	synth_jobs(w, i, ntasks);
	synth_finding(w, i, ncpus, window_ns);
	return w;
}

static int make_db(const char *path, int windows, int ncpus, int ntasks)
{
	const char *err = NULL;
	struct store *s = store_open(path, NULL, &err);
	struct store_run_info ri = { .source = "text", .host = "fixture", .kernel = "6.18.0-test",
				     .nr_cpus = (uint32_t)ncpus, .window_ns = SEC };
	int64_t run;
	int rc = 0;

	if (!s) {
		fprintf(stderr, "http-feeder: %s: %s\n", path, err);
		return 1;
	}
	run = store_run_begin(s, &ri);
	for (int i = 0; i < windows && !rc && run > 0; i++) {
		struct imb_window *w = synth_window((uint64_t)i, ncpus, ntasks, SEC);

		rc = store_window_commit(s, run, w);
		imb_window_free(w);
	}
	if (rc || run <= 0)
		fprintf(stderr, "http-feeder: %s: %s\n", path, store_last_error(s));
	store_close(s);
	return rc || run <= 0;
}

/* the model whose error histograms the feeder fills (nothing else of it is used) */
static struct model *pelt_model;
#define err_cpu (pelt_model->err_cpu)
#define err_task (pelt_model->err_task)

static void hist_add(struct model_err_hist *h, uint64_t d)
{
	h->samples++;
	if (d > h->max_abs)
		h->max_abs = d;
	h->bucket[d < MODEL_ERR_BUCKETS ? d : MODEL_ERR_BUCKETS]++;
}

/*
 * The engine-vs-kernel error histograms the model keeps live: CPU util and
 * runnable from the synthetic kernel values (util off by i % 3, runnable
 * by i % 2), a task util error of 3 per task, no load reference.
 */
static void synth_pelt_errors(const struct imb_window *w)
{
	for (size_t c = 0; c < w->nr_cpus; c++) {
		const struct imb_cpu_sample *s = &w->cpus[c];

		hist_add(&err_cpu[MODEL_SIG_UTIL], s->kernel_util_avg - s->util_avg);
		hist_add(&err_cpu[MODEL_SIG_RUNNABLE], s->runnable_avg - s->kernel_runnable_avg);
	}
	for (size_t t = 0; t < w->nr_tasks; t++)
		hist_add(&err_task[MODEL_SIG_UTIL], 3);
}

/* What the command line asks for. */
struct feeder_args {
	struct http_opts o;
	const char *make, *serve, *db;
	int interval_ms, ncpus, ntasks, windows;
};

/* The options into @fa; 0 or the exit status. */
static int parse_args(int argc, char **argv, struct feeder_args *fa)
{
	*fa = (struct feeder_args){ .o = { .listen = "127.0.0.1:0" }, .interval_ms = 200,
				    .ncpus = 2, .ntasks = 8, .windows = 60 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--allow-remote")) {
			fa->o.allow_remote = true;
			continue;
		}
		if (!v) {
			fprintf(stderr, "http-feeder: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "--listen")) fa->o.listen = v;
		else if (!strcmp(a, "--interval-ms")) fa->interval_ms = atoi(v);
		else if (!strcmp(a, "--cpus")) fa->ncpus = atoi(v);
		else if (!strcmp(a, "--tasks")) fa->ntasks = atoi(v);
		else if (!strcmp(a, "--windows")) fa->windows = atoi(v);
		else if (!strcmp(a, "--db")) fa->db = v;
		else if (!strcmp(a, "--make-db")) fa->make = v;
		else if (!strcmp(a, "--serve")) fa->serve = v;
		else if (!strcmp(a, "--token-file")) fa->o.token_file = v;
		else {
			fprintf(stderr, "http-feeder: unknown option %s\n", a);
			return 2;
		}
	}
	if (fa->ncpus < 1 || fa->ntasks < 0 || fa->interval_ms < 1)
		return 2;
	return 0;
}

/* Live mode's snapshot holder and model, and the store with its run when --db; 0 or 1. */
static int live_backend(const struct feeder_args *fa, struct http_backend *be,
			struct store **store, int64_t *run)
{
	struct snapshot_info info = { .source = "synthetic", .kernel = "6.18.0-test",
				      .host = "feeder", .nr_cpus = (uint32_t)fa->ncpus,
				      .window_ns = (uint64_t)fa->interval_ms * 1000000ULL };
	struct store_run_info ri = { .source = "synthetic", .nr_cpus = (uint32_t)fa->ncpus,
				     .window_ns = SEC };
	const char *err = NULL;

	be->snap = snapshot_new(0, 0);
	pelt_model = model_new(NULL);
	if (!be->snap || !pelt_model)
		return 1;
	pelt_model->has_kernel_pelt = true;
	snapshot_set_info(be->snap, &info);
	if (!fa->db)
		return 0;
	*store = store_open(fa->db, NULL, &err);
	if (!*store) {
		fprintf(stderr, "http-feeder: %s: %s\n", fa->db, err);
		return 1;
	}
	*run = store_run_begin(*store, &ri);
	be->db_path = fa->db;
	return 0;
}

/* Until SIGTERM/SIGINT: in live mode, a window every interval, published and stored. */
static void feed(const struct feeder_args *fa, struct http_backend *be, struct store *store,
		 int64_t run)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (uint64_t i = 0; !stop; i++) {
		struct timespec ts = { fa->interval_ms / 1000,
				       (long)(fa->interval_ms % 1000) * 1000000L };

		if (be->snap) {
			struct imb_window *w = synth_window(i, fa->ncpus, fa->ntasks, SEC);

			if (store && store_window_commit(store, run, w))
				fprintf(stderr, "http-feeder: %s: %s\n", fa->db,
					store_last_error(store));
			synth_pelt_errors(w);
			snapshot_set_pelt(be->snap, pelt_model);
			snapshot_publish(be->snap, w);
		}
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	struct http_backend be = { .version = "test-feeder" };
	struct feeder_args fa;
	struct store *store = NULL;
	struct http_server *h;
	const char *err = NULL;
	int64_t run = 0;
	int rc;

	rc = parse_args(argc, argv, &fa);
	if (rc)
		return rc;
	if (fa.make)
		return make_db(fa.make, fa.windows, fa.ncpus, fa.ntasks);
	if (fa.serve)
		be.db_path = fa.serve;
	else if (live_backend(&fa, &be, &store, &run))
		return 1;
	h = http_start(&fa.o, &be, &err);
	if (!h) {
		fprintf(stderr, "http-feeder: %s: %s (%s)\n", fa.o.listen, err, strerror(errno));
		return 1;
	}
	printf("port %d\n", http_port(h));
	fflush(stdout);
	feed(&fa, &be, store, run);
	http_stop(h);
	store_close(store);
	snapshot_free(be.snap);
	model_free(pelt_model);
	return 0;
}

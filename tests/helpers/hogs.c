// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hogs.c - a workload with known ground truth for the scheduler analyzers.
 *
 * It starts N named threads ("hog0".."hogN-1") together behind a barrier.
 * Each thread either spins for the whole run (busy mode) or, with
 * --period-ms/--duty, consumes duty% of every period in CPU time and sleeps
 * until the next period on an absolute clock_nanosleep deadline (periodic
 * mode).  Just before exiting, each thread reads its own
 * CLOCK_THREAD_CPUTIME_ID; the program then prints, per thread, its tid,
 * comm, CPU time and wall time, and the unfairness 1 - min(cpu)/max(cpu).
 * Those numbers are what a recorded trace of the run must reproduce.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HOGS_MAX_THREADS 1024
#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_MSEC 1000000ULL

struct hog {
	pthread_t thread;
	int index;
	int tid;
	int nice;
	int set_nice;		/* apply nice before the barrier */
	char comm[16];
	uint64_t cpu_ns;	/* own CLOCK_THREAD_CPUTIME_ID at exit */
	uint64_t wall_ns;	/* barrier release to exit, CLOCK_MONOTONIC */
	int err;		/* 0 or -errno from the thread */
};

static struct {
	uint64_t run_ns;	/* total run length */
	uint64_t period_ns;	/* 0: busy mode */
	uint64_t budget_ns;	/* CPU time per period */
	uint64_t start_ns;	/* common start, set by main before release */
	pthread_barrier_t barrier;
} cfg;

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};
	return ts;
}

/* hog_spin_busy - spin on the CPU until the monotonic clock reaches @end_ns. */
static void hog_spin_busy(uint64_t end_ns)
{
	while (clock_ns(CLOCK_MONOTONIC) < end_ns)
		;
}

/*
 * hog_spin_periodic - each period, spin until the thread has used its budget
 * of CPU time (or the period is over, when it could not get the CPU), then
 * sleep to the next period start on an absolute deadline.
 *
 * The spin watches the vDSO monotonic clock and reads the thread CPU clock
 * only when the wall time spun covers what is left of the budget: every
 * CLOCK_THREAD_CPUTIME_ID read of a running thread is a syscall that makes
 * the kernel account runtime, i.e. emit a sched_stat_runtime event, and a
 * tight loop on it floods the trace with millions of them.
 */
static int hog_spin_periodic(uint64_t start_ns, uint64_t end_ns)
{
	uint64_t period_start = start_ns;

	while (period_start < end_ns) {
		uint64_t next = period_start + cfg.period_ns;
		uint64_t stop = next < end_ns ? next : end_ns;
		uint64_t cpu_goal = clock_ns(CLOCK_THREAD_CPUTIME_ID) +
				    cfg.budget_ns;
		struct timespec ts;
		int ret;

		for (;;) {
			uint64_t now = clock_ns(CLOCK_MONOTONIC);
			uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
			uint64_t left;

			if (cpu >= cpu_goal || now >= stop)
				break;
			left = cpu_goal - cpu;
			hog_spin_busy(now + left < stop ? now + left : stop);
		}
		if (next >= end_ns)
			break;
		ts = ns_to_ts(next);
		do {
			ret = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
					      &ts, NULL);
		} while (ret == EINTR);
		if (ret)
			return -ret;
		period_start = next;
	}
	return 0;
}

static void *hog_main(void *arg)
{
	struct hog *h = arg;
	uint64_t start, end;

	h->tid = (int)syscall(SYS_gettid);
	/* Name ourselves so the name is in place before the first switch. */
	pthread_setname_np(pthread_self(), h->comm);
	if (h->set_nice && setpriority(PRIO_PROCESS, (id_t)h->tid, h->nice))
		h->err = -errno;

	pthread_barrier_wait(&cfg.barrier);
	start = cfg.start_ns;
	end = start + cfg.run_ns;

	if (!h->err) {
		if (cfg.period_ns)
			h->err = hog_spin_periodic(start, end);
		else
			hog_spin_busy(end);
	}

	h->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	h->wall_ns = clock_ns(CLOCK_MONOTONIC) - start;
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: hogs [OPTION]...\n"
"Run named CPU-hog threads with known CPU times (ground truth for traces).\n"
"\n"
"  -t, --threads N      number of threads (1..%d, default 1)\n"
"  -s, --seconds T      run length in seconds, may be fractional (default 3)\n"
"  -p, --period-ms P    periodic mode: period in milliseconds\n"
"  -d, --duty PCT       periodic mode: CPU time per period, percent (1..100)\n"
"  -n, --nice LIST      comma-separated nice value per thread (-20..19);\n"
"                       a shorter list leaves the rest at the process nice\n"
"  -j, --json           print JSON instead of a table\n"
"  -h, --help           show this help\n"
"\n"
"Without --period-ms each thread spins for the whole run. With it, each\n"
"thread consumes duty%% of every period in its own CPU time and sleeps until\n"
"the next period (absolute deadlines). Threads are named hog0..hogN-1 and\n"
"start together. At the end the per-thread tid, comm, CPU time\n"
"(CLOCK_THREAD_CPUTIME_ID read by the thread itself) and wall time are\n"
"printed, plus unfairness = 1 - min(cpu)/max(cpu).\n"
"\n"
"JSON: {\"pid\":P,\"threads\":[{\"tid\":T,\"comm\":\"hog0\",\"cpu_ns\":C,\n"
"       \"wall_ns\":W},...],\"unfairness\":U}\n"
"Exit status: 0 ok, 1 runtime error, 2 bad usage.\n",
		HOGS_MAX_THREADS);
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_seconds(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > 86400)
		return -EINVAL;
	*out = (uint64_t)(v * (double)NSEC_PER_SEC);
	return 0;
}

static int parse_nice_list(const char *s, struct hog *hogs, int n)
{
	char *copy = strdup(s), *save = NULL, *tok;
	int i = 0, ret = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), i++) {
		long v;

		if (i >= n || parse_long(tok, -20, 19, &v)) {
			ret = -EINVAL;
			break;
		}
		hogs[i].nice = (int)v;
		hogs[i].set_nice = 1;
	}
	free(copy);
	return ret;
}

static void print_results(const struct hog *hogs, int n, double unfairness,
			  int json)
{
	int i;

	if (json) {
		printf("{\"pid\":%d,\"threads\":[", (int)getpid());
		for (i = 0; i < n; i++)
			printf("%s{\"tid\":%d,\"comm\":\"%s\",\"cpu_ns\":%" PRIu64
			       ",\"wall_ns\":%" PRIu64 "}",
			       i ? "," : "", hogs[i].tid, hogs[i].comm,
			       hogs[i].cpu_ns, hogs[i].wall_ns);
		printf("],\"unfairness\":%.6f}\n", unfairness);
		return;
	}
	printf("pid %d\n%-8s %-16s %14s %14s\n", (int)getpid(), "tid", "comm",
	       "cpu_ns", "wall_ns");
	for (i = 0; i < n; i++)
		printf("%-8d %-16s %14" PRIu64 " %14" PRIu64 "\n", hogs[i].tid,
		       hogs[i].comm, hogs[i].cpu_ns, hogs[i].wall_ns);
	printf("unfairness %.6f\n", unfairness);
}

/* What the command line asks for besides cfg's run length. */
struct hogs_args {
	long threads, period_ms, duty;
	const char *nice_list;
	int json;
};

/* The command line went through: go on (any other value is the exit status). */
#define HOGS_GO (-1)

/* One option from getopt_long(); HOGS_GO or the exit status. */
static int parse_option(int c, struct hogs_args *a)
{
	switch (c) {
	case 't':
		if (parse_long(optarg, 1, HOGS_MAX_THREADS, &a->threads)) {
			fprintf(stderr, "hogs: --threads: expected 1..%d, got '%s'\n",
				HOGS_MAX_THREADS, optarg);
			return 2;
		}
		break;
	case 's':
		if (parse_seconds(optarg, &cfg.run_ns)) {
			fprintf(stderr, "hogs: --seconds: expected a positive number up to 86400, got '%s'\n",
				optarg);
			return 2;
		}
		break;
	case 'p':
		if (parse_long(optarg, 1, 60000, &a->period_ms)) {
			fprintf(stderr, "hogs: --period-ms: expected 1..60000, got '%s'\n",
				optarg);
			return 2;
		}
		break;
	case 'd':
		if (parse_long(optarg, 1, 100, &a->duty)) {
			fprintf(stderr, "hogs: --duty: expected 1..100, got '%s'\n",
				optarg);
			return 2;
		}
		break;
	case 'n':
		a->nice_list = optarg;
		break;
	case 'j':
		a->json = 1;
		break;
	case 'h':
		usage(stdout);
		return 0;
	default:
		usage(stderr);
		return 2;
	}
	return HOGS_GO;
}

/* The command line into @a and cfg (run length, period, budget); HOGS_GO or the exit status. */
static int parse_args(int argc, char **argv, struct hogs_args *a)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "seconds", required_argument, NULL, 's' },
		{ "period-ms", required_argument, NULL, 'p' },
		{ "duty", required_argument, NULL, 'd' },
		{ "nice", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	*a = (struct hogs_args){ .threads = 1 };
	cfg.run_ns = 3 * NSEC_PER_SEC;
	while ((c = getopt_long(argc, argv, "t:s:p:d:n:jh", opts, NULL)) != -1)
		if ((ret = parse_option(c, a)) != HOGS_GO)
			return ret;
	if (optind < argc) {
		fprintf(stderr, "hogs: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (!a->period_ms != !a->duty) {
		fprintf(stderr, "hogs: --period-ms and --duty go together\n");
		return 2;
	}
	cfg.period_ns = (uint64_t)a->period_ms * NSEC_PER_MSEC;
	cfg.budget_ns = cfg.period_ns * (uint64_t)a->duty / 100;
	return HOGS_GO;
}

/* Start the @n threads behind the barrier, then release them together; exits on failure. */
static void start_hogs(struct hog *hogs, long n)
{
	for (int i = 0; i < n; i++) {
		int ret;

		hogs[i].index = i;
		snprintf(hogs[i].comm, sizeof(hogs[i].comm), "hog%d", i);
		ret = pthread_create(&hogs[i].thread, NULL, hog_main, &hogs[i]);
		if (ret) {
			/* Threads already started wait on the barrier forever. */
			fprintf(stderr, "hogs: thread %d: %s\n", i, strerror(ret));
			exit(1);
		}
	}
	/* Written before the barrier, so every thread sees it after. */
	cfg.start_ns = clock_ns(CLOCK_MONOTONIC);
	pthread_barrier_wait(&cfg.barrier);
}

/* Wait for the @n threads; their unfairness into *@unfairness, 1 when one failed. */
static int join_hogs(struct hog *hogs, long n, double *unfairness)
{
	uint64_t min_cpu = UINT64_MAX, max_cpu = 0;
	int failed = 0;

	for (int i = 0; i < n; i++) {
		pthread_join(hogs[i].thread, NULL);
		if (hogs[i].err) {
			fprintf(stderr, "hogs: %s: %s\n", hogs[i].comm,
				strerror(-hogs[i].err));
			failed = 1;
		}
		if (hogs[i].cpu_ns < min_cpu)
			min_cpu = hogs[i].cpu_ns;
		if (hogs[i].cpu_ns > max_cpu)
			max_cpu = hogs[i].cpu_ns;
	}
	*unfairness = max_cpu ? 1.0 - (double)min_cpu / (double)max_cpu : 0.0;
	return failed;
}

int main(int argc, char **argv)
{
	struct hogs_args a;
	struct hog *hogs;
	double unfairness;
	int ret, failed;

	ret = parse_args(argc, argv, &a);
	if (ret != HOGS_GO)
		return ret;
	hogs = calloc((size_t)a.threads, sizeof(*hogs));
	if (!hogs) {
		fprintf(stderr, "hogs: out of memory\n");
		return 1;
	}
	if (a.nice_list && parse_nice_list(a.nice_list, hogs, (int)a.threads)) {
		fprintf(stderr, "hogs: --nice: expected up to %ld comma-separated values in -20..19, got '%s'\n",
			a.threads, a.nice_list);
		free(hogs);
		return 2;
	}

	ret = pthread_barrier_init(&cfg.barrier, NULL, (unsigned)a.threads + 1);
	if (ret) {
		fprintf(stderr, "hogs: barrier: %s\n", strerror(ret));
		free(hogs);
		return 1;
	}
	start_hogs(hogs, a.threads);
	failed = join_hogs(hogs, a.threads, &unfairness);
	pthread_barrier_destroy(&cfg.barrier);

	print_results(hogs, (int)a.threads, unfairness, a.json);
	free(hogs);
	return failed;
}

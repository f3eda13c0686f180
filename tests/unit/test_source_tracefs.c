// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_source_tracefs.c - the live tracefs source against the real kernel.
 *
 * Opens the source, runs three busy threads for about 2 s that measure their
 * own CPU time, and checks that the sched_stat_runtime the source delivers
 * adds up to each thread's own figure within 2 %, that events arrive in time
 * order, that closing removes the instance and leaves the top-level tracefs
 * settings as they were, and that stale instances of dead daemons are
 * removed.  Needs root and tracefs; skips (TAP) only when the kernel has no
 * tracefs.
 *
 * With "--measure SECONDS" it is a measuring tool instead: it drains the
 * source for that long and prints events/s and losses (run a load beside it).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <signal.h>

#include "daemon/source/tracefs.h"
#include "tests/unit/tap.h"

#define TRACING "/sys/kernel/tracing"
#define NHOGS 3
#define HOG_NS 2000000000ull
#define PID_SLOTS 65536

struct hog {
	pthread_t th;
	pid_t tid;
	uint64_t cpu_ns;
};

struct acc {
	uint64_t runtime[PID_SLOTS];	/* by pid % PID_SLOTS (3 tids: enough) */
	int32_t owner[PID_SLOTS];
	char fork_comm[PID_SLOTS][IMB_COMM_LEN];	/* child_comm by child pid */
	uint64_t events, last_ts, disorder, switches, lost, kinds[IMB_EV__COUNT];
};

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *hog_run(void *arg)
{
	struct hog *h = arg;
	uint64_t end = now_ns(CLOCK_MONOTONIC) + HOG_NS;
	volatile uint64_t x = 0;

	h->tid = (pid_t)syscall(SYS_gettid);
	while (now_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i;
	h->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* Many short sleeps: a burst of switches and wake-ups, for ~300 ms. */
static void *churn_run(void *arg)
{
	struct timespec ts = { 0, 20000 };

	for (int i = 0; i < 3000; i++)
		nanosleep(&ts, NULL);
	return arg;
}

static int on_event(const struct imb_event *ev, void *ctx)
{
	struct acc *a = ctx;

	a->events++;
	if (ev->ts_ns < a->last_ts)
		a->disorder++;
	a->last_ts = ev->ts_ns;
	if (ev->kind < IMB_EV__COUNT)
		a->kinds[ev->kind]++;
	if (ev->kind == IMB_EV_RUNTIME && ev->runtime.pid > 0) {
		unsigned int k = (unsigned int)ev->runtime.pid % PID_SLOTS;

		if (a->owner[k] == 0 || a->owner[k] == ev->runtime.pid) {
			a->owner[k] = ev->runtime.pid;
			a->runtime[k] += ev->runtime.runtime_ns;
		}
	}
	if (ev->kind == IMB_EV_FORK && ev->fork.child_pid > 0)
		memcpy(a->fork_comm[(unsigned int)ev->fork.child_pid % PID_SLOTS],
		       ev->fork.child_comm, IMB_COMM_LEN);
	if (ev->kind == IMB_EV_LOST)
		a->lost += ev->lost.count;
	return 0;
}

static char *slurp(const char *path)
{
	static char bufs[8][4096];
	static int next;
	char *b = bufs[next++ % 8];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		snprintf(b, 4096, "<%s>", strerror(errno));
		return b;
	}
	n = fread(b, 1, 4095, f);
	b[n] = 0;
	fclose(f);
	return b;
}

static const char *const top_files[] = {
	TRACING "/trace_clock", TRACING "/tracing_on", TRACING "/buffer_size_kb",
	TRACING "/events/enable", TRACING "/events/sched/enable",
	TRACING "/events/sched/sched_switch/enable",
	TRACING "/events/sched/sched_stat_runtime/enable", NULL };

/* Instances named imbalanced-<pid> whose pid is dead (or == @pid). */
static int count_ours(pid_t pid)
{
	DIR *d = opendir(TRACING "/instances");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		long p;

		if (strncmp(de->d_name, "imbalanced-", 11))
			continue;
		p = strtol(de->d_name + 11, NULL, 10);
		if (p == pid || (kill((pid_t)p, 0) < 0 && errno == ESRCH))
			n++;
	}
	closedir(d);
	return n;
}

static int measure(int seconds)
{
	static struct acc a;
	struct source_tracefs_stats st;
	char err[SOURCE_ERR_LEN] = "";
	struct source_tracefs *s = source_tracefs_open(NULL, err);
	uint64_t t0, t1, busy0, busy1;
	int ret;

	if (!s) {
		fprintf(stderr, "imbalanced: tracefs: %s\n", err);
		return 1;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	busy0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	while (now_ns(CLOCK_MONOTONIC) - t0 < (uint64_t)seconds * 1000000000ull) {
		ret = source_tracefs_poll(s, 100, on_event, &a);
		if (ret < 0) {
			fprintf(stderr, "poll: %s\n", strerror(-ret));
			break;
		}
	}
	source_tracefs_drain(s, on_event, &a);
	t1 = now_ns(CLOCK_MONOTONIC);
	busy1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	source_tracefs_stats(s, &st);
	printf("events %" PRIu64 " in %.2f s = %.0f events/s; cpu %.1f %% of one CPU"
	       " (%.0f ns/event)\n", a.events, (t1 - t0) / 1e9,
	       a.events / ((t1 - t0) / 1e9), 100.0 * (busy1 - busy0) / (t1 - t0),
	       a.events ? (double)(busy1 - busy0) / a.events : 0);
	printf("lost %" PRIu64 " (lost-unknown subbufs %" PRIu64 "), kernel overrun %"
	       PRIu64 " dropped %" PRIu64 ", subbufs %" PRIu64 ", bytes %" PRIu64
	       ", order fixups %" PRIu64 ", out of order seen %" PRIu64 "\n",
	       st.lost_events, st.lost_unknown, st.overrun_kernel, st.dropped_kernel,
	       st.subbufs, st.bytes, st.order_fixups, a.disorder);
	return source_tracefs_close(s) ? 1 : 0;
}

/* Record for @seconds without reading (64 MiB/CPU), then time the drain:
 * the throughput of the merge and conversion alone. */
static int measure_drain(int seconds)
{
	static struct acc a;
	struct source_tracefs_opts o = { .buffer_kb = 65536 };
	struct source_tracefs_stats st;
	char err[SOURCE_ERR_LEN] = "";
	struct source_tracefs *s = source_tracefs_open(&o, err);
	uint64_t t0, c0;
	int ret;

	if (!s) {
		fprintf(stderr, "imbalanced: tracefs: %s\n", err);
		return 1;
	}
	sleep((unsigned int)seconds);
	t0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	ret = source_tracefs_drain(s, on_event, &a);
	t0 = now_ns(CLOCK_MONOTONIC) - t0;
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	source_tracefs_stats(s, &st);
	printf("drained %d events in %.3f s wall, %.3f s CPU: %.0f events/s, %.0f ns/event;"
	       " lost %" PRIu64 ", out of order %" PRIu64 "\n", ret, t0 / 1e9, c0 / 1e9,
	       ret / (t0 / 1e9), ret > 0 ? (double)c0 / ret : 0, st.lost_events, a.disorder);
	return source_tracefs_close(s) ? 1 : 0;
}

/* The instance at @path while open: its trace clock and buffer size. */
static void check_instance(struct source_tracefs *s, const char *path)
{
	struct source_tracefs_stats st;
	struct stat sb;
	char f[160];
	int kb;

	source_tracefs_stats(s, &st);
	ok(stat(path, &sb) == 0, "instance %s exists while open", path + strlen(TRACING) + 1);
	ok(!strcmp(st.clock, "mono"), "default trace clock is mono (got %s)", st.clock);
	snprintf(f, sizeof(f), "%s/trace_clock", path);
	ok(strstr(slurp(f), "[mono]") != NULL, "instance trace_clock shows [mono]");
	snprintf(f, sizeof(f), "%s/buffer_size_kb", path);
	kb = atoi(slurp(f));	/* the kernel rounds up to whole sub-buffers */
	ok(kb >= SOURCE_TRACEFS_BUFFER_KB && kb < SOURCE_TRACEFS_BUFFER_KB * 101 / 100,
	   "per-CPU buffer is %d KiB (asked %d)", kb, SOURCE_TRACEFS_BUFFER_KB);
}

/* The hog threads run while the source is polled, then the rest drains. */
static void poll_hogs(struct source_tracefs *s, struct acc *a, struct hog *hogs)
{
	uint64_t t0;
	int i, ret;

	for (i = 0; i < NHOGS; i++)
		pthread_create(&hogs[i].th, NULL, hog_run, &hogs[i]);
	t0 = now_ns(CLOCK_MONOTONIC);
	while (now_ns(CLOCK_MONOTONIC) - t0 < HOG_NS + 200000000ull) {
		ret = source_tracefs_poll(s, 50, on_event, a);
		if (ret < 0) {
			diag("poll: %s", strerror(-ret));
			break;
		}
	}
	for (i = 0; i < NHOGS; i++)
		pthread_join(hogs[i].th, NULL);
	usleep(20000);
	ret = source_tracefs_drain(s, on_event, a);
	ok(ret >= 0, "drain delivers the rest (%d)", ret);
}

/* The events the hogs caused: kinds, order, each one's runtime and its fork's comm. */
static void check_hog_events(const struct acc *a, const struct hog *hogs)
{
	int i;

	ok(a->kinds[IMB_EV_SWITCH] > 100, "sched_switch events seen (%" PRIu64 ")",
	   a->kinds[IMB_EV_SWITCH]);
	ok(a->kinds[IMB_EV_WAKEUP_NEW] >= NHOGS, "sched_wakeup_new seen for the threads (%"
	   PRIu64 ")", a->kinds[IMB_EV_WAKEUP_NEW]);
	ok(a->kinds[IMB_EV_FORK] >= NHOGS, "sched_process_fork seen (%" PRIu64 ")",
	   a->kinds[IMB_EV_FORK]);
	ok(a->kinds[IMB_EV_EXIT] >= NHOGS, "sched_process_exit seen (%" PRIu64 ")",
	   a->kinds[IMB_EV_EXIT]);
	is_u64(a->disorder, 0, "%" PRIu64 " events delivered in time order", a->events);
	diag("lost %" PRIu64 ", kinds: switch %" PRIu64 " wakeup %" PRIu64 " waking %"
	     PRIu64 " migrate %" PRIu64 " runtime %" PRIu64, a->lost,
	     a->kinds[IMB_EV_SWITCH], a->kinds[IMB_EV_WAKEUP], a->kinds[IMB_EV_WAKING],
	     a->kinds[IMB_EV_MIGRATE], a->kinds[IMB_EV_RUNTIME]);
	for (i = 0; i < NHOGS; i++) {
		unsigned int k = (unsigned int)hogs[i].tid % PID_SLOTS;
		uint64_t got = a->owner[k] == hogs[i].tid ? a->runtime[k] : 0;
		double rel = hogs[i].cpu_ns ? ((double)got - (double)hogs[i].cpu_ns) /
					     (double)hogs[i].cpu_ns : 1.0;

		ok(hogs[i].cpu_ns > 100000000ull && rel < 0.02 && rel > -0.02,
		   "thread %d: sched_stat_runtime sum %.3f ms vs own CPU time %.3f ms "
		   "(%+.3f %%)", hogs[i].tid, got / 1e6, hogs[i].cpu_ns / 1e6, rel * 100);
	}
	{
		/* 6.16+ records child_comm as __data_loc: checks that path. */
		char comm[IMB_COMM_LEN] = "";
		const char *got = a->fork_comm[(unsigned int)hogs[0].tid % PID_SLOTS];

		prctl(PR_GET_NAME, comm);
		ok(comm[0] && !strcmp(got, comm), "fork event names the thread: child_comm "
		   "\"%s\" (want \"%s\")", got, comm);
	}
}

/* Stale instances go at cleanup; a live pid's stays. */
static void check_stale_cleanup(void)
{
	char path[128];
	struct stat sb;
	int ret, removed = -1;
	pid_t stale = 999999;

	/* A daemon killed with -9 leaves its instance behind. */
	while (stale > 1000 && !(kill(stale, 0) < 0 && errno == ESRCH))
		stale--;
	snprintf(path, sizeof(path), TRACING "/instances/imbalanced-%d", (int)stale);
	ok(mkdir(path, 0755) == 0, "stale instance %s created by hand",
	   path + strlen(TRACING) + 1);
	ret = source_tracefs_cleanup_stale(&removed);
	is_int(ret, 0, "cleanup_stale succeeds");
	ok(removed >= 1, "cleanup_stale removed %d instance(s)", removed);
	ok(stat(path, &sb) < 0 && errno == ENOENT, "stale instance is gone");

	/* A live pid's instance is left alone (our own pid, by hand). */
	snprintf(path, sizeof(path), TRACING "/instances/imbalanced-%d", (int)getpid());
	if (ok(mkdir(path, 0755) == 0, "instance of a live pid created by hand")) {
		source_tracefs_cleanup_stale(NULL);
		ok(stat(path, &sb) == 0, "instance of a live pid is kept");
		rmdir(path);
	}
}

/* A buffer too small for the load: losses are reported, not hidden. */
static void check_small_buffer(struct hog *hogs)
{
	struct source_tracefs_opts o = { .buffer_kb = 16 };
	static struct acc b;
	struct source_tracefs_stats st;
	char err[SOURCE_ERR_LEN] = "";
	struct source_tracefs *s;
	int i, ret;

	s = source_tracefs_open(&o, err);
	if (!ok(s != NULL, "source opens with a 16 KiB buffer"))
		return;
	for (i = 0; i < NHOGS; i++)
		pthread_create(&hogs[i].th, NULL, churn_run, &hogs[i]);
	for (i = 0; i < NHOGS; i++)
		pthread_join(hogs[i].th, NULL);
	ret = source_tracefs_drain(s, on_event, &b);
	source_tracefs_stats(s, &st);
	ok(ret > 0 && b.lost > 0 && b.lost == st.lost_events,
	   "overflow while not polling is delivered as IMB_EV_LOST (%" PRIu64
	   " lost, kernel overrun %" PRIu64 ")", b.lost, st.overrun_kernel);
	ok(b.lost <= st.overrun_kernel + st.dropped_kernel + 0,
	   "lost count does not exceed the kernel's own counters");
	is_u64(b.disorder, 0, "%" PRIu64 " events still in time order", b.events);
	is_int(source_tracefs_close(s), 0, "close succeeds");
}

/* Bad options fail cleanly and leave nothing behind. */
static void check_bad_options(void)
{
	struct source_tracefs_opts o = { .clock = "no-such-clock" };
	char err[SOURCE_ERR_LEN] = "", path[128];
	struct source_tracefs *s;
	struct stat sb;

	s = source_tracefs_open(&o, err);
	ok(s == NULL && errno == EINVAL, "unknown trace clock is refused: %s", err);
	source_tracefs_close(s);
	snprintf(path, sizeof(path), TRACING "/instances/imbalanced-%d", (int)getpid());
	ok(stat(path, &sb) < 0, "failed open leaves no instance");
}

int main(int argc, char **argv)
{
	static struct acc a;
	static char before[8][4096];
	struct hog hogs[NHOGS];
	struct source_info info;
	char err[SOURCE_ERR_LEN] = "", path[128];
	struct source_tracefs *s;
	struct stat sb;
	int i;

	if (argc == 3 && !strcmp(argv[1], "--measure"))
		return measure(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "--measure-drain"))
		return measure_drain(atoi(argv[2]));

	if (stat("/sys/kernel", &sb) == 0 && stat(TRACING, &sb) < 0) {
		printf("1..0 # SKIP kernel has no tracefs (%s missing)\n", TRACING);
		return 0;
	}
	if (geteuid() != 0) {
		printf("1..0 # SKIP needs root to create a tracefs instance\n");
		return 0;
	}

	for (i = 0; top_files[i]; i++)
		snprintf(before[i], sizeof(before[i]), "%s", slurp(top_files[i]));

	s = source_tracefs_open(NULL, err);
	if (!ok(s != NULL, "source opens an instance of its own")) {
		diag("error: %s", err);
		return tap_done();
	}
	snprintf(path, sizeof(path), TRACING "/instances/imbalanced-%d", (int)getpid());
	check_instance(s, path);
	poll_hogs(s, &a, hogs);
	check_hog_events(&a, hogs);
	source_tracefs_info(s, &info);
	ok(!strcmp(info.format, "tracefs") && info.nr_cpus >= 1 &&
	   info.events == a.events, "info: format tracefs, %d CPUs, %" PRIu64 " events",
	   info.nr_cpus, info.events);

	is_int(source_tracefs_close(s), 0, "close succeeds");
	ok(stat(path, &sb) < 0 && errno == ENOENT, "instance is gone after close");
	is_int(count_ours(getpid()), 0, "no imbalanced-* instance of ours or of a dead pid left");
	for (i = 0; top_files[i]; i++)
		ok(!strcmp(before[i], slurp(top_files[i])), "top-level %s unchanged",
		   top_files[i] + strlen(TRACING) + 1);

	check_stale_cleanup();
	check_small_buffer(hogs);
	check_bad_options();
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_source_bpf.c - the live BPF source against the real kernel.
 *
 * Opens the source, runs three busy threads for 2 s on this (2-CPU) host,
 * each measuring its own CLOCK_THREAD_CPUTIME_ID, and checks what the
 * source delivered: switches of the threads, their CPU time from
 * sched_stat_runtime and from switch intervals within 2 % of what they
 * measured, root pelt_cfs events per CPU with sane util_avg, pelt_se events
 * of the threads, rq clocks on every event with clock_pelt <= clock_task,
 * time order; and that after close none of our programs stays loaded.
 * Skips (TAP "1..0 # SKIP") only when BPF cannot be used here.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "daemon/source/bpf.h"
#include "tests/unit/tap.h"

#define NR_THREADS	3
#define BUSY_NS		2000000000ull
#define MAX_CPUS	64
#define MAX_IDS		256

struct busy {
	pthread_t th;
	_Atomic int tid;
	uint64_t cpu_ns;		/* own CLOCK_THREAD_CPUTIME_ID at the end */
};

static struct busy busy[NR_THREADS];
static atomic_int started;

#define PID_SLOTS	8192		/* open addressing, pids of the whole run */
#define UTIL_MAX	20000

struct pid_acc {
	int pid;			/* 0: free */
	uint64_t switches, run_ts_ns, run_task_ns, runtime_ns, pelt_se;
	uint64_t sum_exec;		/* largest se.sum_exec_runtime a record read */
};

struct seen {
	uint64_t events, bad_order, no_clocks, pelt_gt_task, lost;
	uint64_t runtime_outside;	/* sched_stat_runtime sent though known outside a timer */
	uint64_t last_ts;
	uint64_t kinds[IMB_EV__COUNT];
	struct pid_acc pids[PID_SLOTS];
	/* per CPU */
	bool seen_cpu[MAX_CPUS];
	uint64_t chain_breaks;		/* prev of a switch is not the last next on its CPU */
	int on_pid[MAX_CPUS];		/* task switched in last, 0: idle or unknown */
	uint64_t on_ts[MAX_CPUS], on_task[MAX_CPUS];
	uint64_t root_cfs[MAX_CPUS];
	uint64_t util_win_from, util_win_to;	/* busy window for the util samples */
	uint32_t util[MAX_CPUS][UTIL_MAX];
	int nr_util[MAX_CPUS];
	uint64_t util_consistent, util_checked;
	uint64_t vruntime, vruntime_zero;
};

static struct pid_acc *pid_acc(struct seen *s, int pid)
{
	unsigned int h = (unsigned int)pid * 2654435761u % PID_SLOTS;

	for (int n = 0; n < PID_SLOTS; n++, h = (h + 1) % PID_SLOTS) {
		if (s->pids[h].pid == pid)
			return &s->pids[h];
		if (!s->pids[h].pid) {
			s->pids[h].pid = pid;
			return &s->pids[h];
		}
	}
	return NULL;
}

static uint64_t mono_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *busy_main(void *arg)
{
	struct busy *b = arg;
	uint64_t end;
	volatile uint64_t x = 0;

	b->tid = (int)syscall(SYS_gettid);
	atomic_fetch_add(&started, 1);
	end = mono_ns(CLOCK_MONOTONIC) + BUSY_NS;
	while (mono_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 1000; i++)
			x += (uint64_t)i;
	b->cpu_ns = mono_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static int on_event(const struct imb_event *ev, void *ctx)
{
	struct seen *s = ctx;
	struct pid_acc *p;
	int cpu = ev->cpu;

	s->events++;
	if (ev->kind < IMB_EV__COUNT)
		s->kinds[ev->kind]++;
	if (ev->ts_ns < s->last_ts)
		s->bad_order++;
	s->last_ts = ev->ts_ns;
	if (ev->kind == IMB_EV_LOST) {
		s->lost += ev->lost.count;
		return 0;
	}
	if (!(ev->flags & IMB_EVF_RQ_CLOCKS))
		s->no_clocks++;
	else if (ev->clock_pelt_ns > ev->clock_task_ns)
		s->pelt_gt_task++;
	if (cpu < 0 || cpu >= MAX_CPUS)
		return 0;

	switch (ev->kind) {
	case IMB_EV_SWITCH:
		if (s->seen_cpu[cpu] && s->on_pid[cpu] != ev->sw.prev_pid)
			s->chain_breaks++;
		s->seen_cpu[cpu] = true;
		if (s->on_pid[cpu] && s->on_pid[cpu] == ev->sw.prev_pid &&
		    (p = pid_acc(s, ev->sw.prev_pid))) {
			p->switches++;
			p->run_ts_ns += ev->ts_ns - s->on_ts[cpu];
			p->run_task_ns += ev->clock_task_ns - s->on_task[cpu];
		}
		if ((p = pid_acc(s, ev->sw.prev_pid)) && ev->sw.prev_sum_exec_ns > p->sum_exec)
			p->sum_exec = ev->sw.prev_sum_exec_ns;
		s->on_pid[cpu] = ev->sw.next_pid;
		s->on_ts[cpu] = ev->ts_ns;
		s->on_task[cpu] = ev->clock_task_ns;
		break;
	case IMB_EV_RUNTIME:
		if ((p = pid_acc(s, ev->runtime.pid))) {
			p->runtime_ns += ev->runtime.runtime_ns;
			if (ev->runtime.sum_exec_ns > p->sum_exec)
				p->sum_exec = ev->runtime.sum_exec_ns;
		}
		s->runtime_outside += ev->runtime.timer == IMB_TIMER_OUTSIDE;
		break;
	case IMB_EV_PELT_CFS: {
		const struct imb_ev_pelt_cfs *c = &ev->pelt_cfs;
		uint64_t divider = 47742 - 1024 + c->period_contrib;

		if (!c->root)
			break;
		s->root_cfs[cpu]++;
		/* util_avg is util_sum / divider, give or take attach/detach corrections */
		s->util_checked++;
		if (c->util_avg + 2 >= c->util_sum / divider &&
		    c->util_avg <= c->util_sum / (47742 - 1024) + 2)
			s->util_consistent++;
		if (ev->ts_ns >= s->util_win_from && ev->ts_ns <= s->util_win_to &&
		    s->nr_util[cpu] < UTIL_MAX)
			s->util[cpu][s->nr_util[cpu]++] = (uint32_t)c->util_avg;
		break;
	}
	case IMB_EV_PELT_SE:
		if (ev->pelt_se.pid && (p = pid_acc(s, ev->pelt_se.pid)))
			p->pelt_se++;
		break;
	case IMB_EV_VRUNTIME:
		s->vruntime++;
		s->vruntime_zero += ev->vruntime.is_zero_vruntime;
		break;
	}
	return 0;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Ids of loaded BPF programs named imb_* (bpftool prog show). */
static int imb_prog_ids(unsigned int *ids, int max)
{
	char line[512];
	int n = 0;
	FILE *p = popen("bpftool prog show 2>/dev/null", "r");

	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		unsigned int id;
		char name[64];

		if (sscanf(line, "%u: %*s name %63s", &id, name) == 2 &&
		    !strncmp(name, "imb_", 4) && n < max)
			ids[n++] = id;
	}
	pclose(p);
	return n;
}

static bool id_in(unsigned int id, const unsigned int *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

static double rel_err(uint64_t got, uint64_t want)
{
	return want ? ((double)got - (double)want) / (double)want : 1.0;
}

struct knob_seen {
	uint64_t other_kinds, switches, pelt_se;
	int tid;
};

static int on_knob_event(const struct imb_event *ev, void *ctx)
{
	struct knob_seen *k = ctx;

	if (ev->kind == IMB_EV_SWITCH)
		k->switches++;
	else if (ev->kind == IMB_EV_PELT_SE)
		k->pelt_se += k->tid && ev->pelt_se.pid == k->tid;
	else if (ev->kind != IMB_EV_LOST)
		k->other_kinds++;
	return 0;
}

/* Knobs: only the chosen kinds come out, and pelt_se is rate-limited per task. */
static void knobs_check(void)
{
	struct source_bpf_opts o = {
		.events = SOURCE_BPF_EV(IMB_EV_SWITCH) | SOURCE_BPF_EV(IMB_EV_PELT_SE),
		.pelt_se_min_interval_ns = 20000000,
		.ringbuf_bytes = 1 << 20,
	};
	char err[SOURCE_ERR_LEN] = "";
	struct source_bpf_stats st;
	struct knob_seen k = { 0 };
	struct source_bpf *src = source_bpf_open(&o, err);
	struct busy b = { 0 };
	uint64_t t_end;

	if (!ok(src != NULL, "opens with only switch and pelt_se, pelt_se every 20 ms per task")) {
		diag("%s", err);
		return;
	}
	source_bpf_stats(src, &st);
	is_int(st.attached, o.events, "exactly the asked kinds are attached");
	pthread_create(&b.th, NULL, busy_main, &b);
	while (!b.tid)
		usleep(1000);
	k.tid = b.tid;
	t_end = mono_ns(CLOCK_MONOTONIC) + BUSY_NS + 200000000ull;
	while (mono_ns(CLOCK_MONOTONIC) < t_end)
		source_bpf_poll(src, 50, on_knob_event, &k);
	pthread_join(b.th, NULL);
	source_bpf_flush(src, on_knob_event, &k);
	source_bpf_close(src);
	is_u64(k.other_kinds, 0, "no event of a kind switched off");
	ok(k.switches > 0, "switch events still come (%" PRIu64 ")", k.switches);
	ok(k.pelt_se >= 20 && k.pelt_se <= BUSY_NS / 20000000 + 5,
	   "pelt_se of a 2 s busy thread rate-limited to one per 20 ms (%" PRIu64 " events)",
	   k.pelt_se);
}

/* Busy threads run while the source is polled, then the held events drain. */
static void poll_under_load(struct source_bpf *src, struct seen *s)
{
	uint64_t t_end;

	for (int i = 0; i < NR_THREADS; i++)
		pthread_create(&busy[i].th, NULL, busy_main, &busy[i]);
	while (atomic_load(&started) < NR_THREADS)
		usleep(1000);
	s->util_win_from = mono_ns(CLOCK_MONOTONIC) + 700000000ull;
	s->util_win_to = s->util_win_from + 1200000000ull;
	t_end = mono_ns(CLOCK_MONOTONIC) + BUSY_NS + 300000000ull;
	while (mono_ns(CLOCK_MONOTONIC) < t_end) {
		int r = source_bpf_poll(src, 50, on_event, s);

		if (r < 0) {
			ok(0, "poll: %s", strerror(-r));
			break;
		}
	}
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(busy[i].th, NULL);
	t_end = mono_ns(CLOCK_MONOTONIC) + 200000000ull;
	while (mono_ns(CLOCK_MONOTONIC) < t_end)
		source_bpf_poll(src, 20, on_event, s);
}

/* The stream as a whole: counted, ordered, with clocks, nothing lost, switches chained. */
static void check_stream(const struct seen *s, const struct source_bpf_stats *st)
{
	diag("%" PRIu64 " events (%" PRIu64 " records), %" PRIu64 " lost, %" PRIu64
	     " late, %" PRIu64 " unreported switches recovered; switch %" PRIu64 " runtime %" PRIu64 " pelt_cfs %" PRIu64
	     " pelt_se %" PRIu64 " wakeup %" PRIu64 " vruntime %" PRIu64, st->events,
	     st->records, st->lost, st->late, st->unreported, s->kinds[IMB_EV_SWITCH],
	     s->kinds[IMB_EV_RUNTIME], s->kinds[IMB_EV_PELT_CFS], s->kinds[IMB_EV_PELT_SE],
	     s->kinds[IMB_EV_WAKEUP], s->kinds[IMB_EV_VRUNTIME]);

	is_u64(s->events, st->events, "the stats count every delivered event");
	is_u64(s->bad_order, 0, "events are delivered in timestamp order");
	is_u64(s->no_clocks, 0, "every event carries the rq clocks");
	is_u64(s->pelt_gt_task, 0, "clock_pelt - lost_idle_time <= clock_task on every event");
	is_u64(s->lost, 0, "no events lost under a light load");
	is_u64(s->chain_breaks, 0, "on each CPU every switch's prev is the previous switch's next");
	is_u64(s->runtime_outside, 0,
	       "sched_stat_runtime is sent only where it may be the tick (inside an hrtimer expiry)");
}

/* Each busy thread's events against the CPU time it measured itself. */
static void check_threads(struct seen *s, const struct source_bpf_stats *st)
{
	for (int i = 0; i < NR_THREADS; i++) {
		struct pid_acc *p = pid_acc(s, busy[i].tid);
		double e1 = rel_err(p->sum_exec, busy[i].cpu_ns);
		double e2 = rel_err(p->run_task_ns, busy[i].cpu_ns);

		ok(p->switches > 0, "thread %d: switch events seen (%" PRIu64 " runs)", i,
		   p->switches);
		/* the thread started after the source opened: its counter read from 0 */
		ok(e1 > -0.02 && e1 < 0.02,
		   "thread %d: its run-time counter in the switch and tick records reached %.1f ms, within 2 %% of its own %.1f ms (%+.2f %%)",
		   i, p->sum_exec / 1e6, busy[i].cpu_ns / 1e6, e1 * 100);
		if (st->attached & SOURCE_BPF_EV(IMB_EV_RUNTIME))
			diag("thread %d: the ticks' sched_stat_runtime steps sum to %.1f ms", i,
			     p->runtime_ns / 1e6);
		/* The kernel charges CPU time in rq->clock_task, so measure runs in it too. */
		ok(e2 > -0.02 && e2 < 0.02,
		   "thread %d: switch-in to switch-out time (rq clock_task) %.1f ms within 2 %% of its own %.1f ms (%+.2f %%)",
		   i, p->run_task_ns / 1e6, busy[i].cpu_ns / 1e6, e2 * 100);
		diag("thread %d: the same runs timed with bpf_ktime_get_ns(): %.1f ms (%+.2f %%)",
		     i, p->run_ts_ns / 1e6, rel_err(p->run_ts_ns, busy[i].cpu_ns) * 100);
		ok(p->pelt_se > 0, "thread %d: pelt_se events seen (%" PRIu64 ")", i, p->pelt_se);
	}
}

/* Each CPU's root pelt_cfs events, then the util_avg and vruntime derived from them. */
static void check_cpus(struct seen *s, int ncpu)
{
	for (int c = 0; c < ncpu && c < MAX_CPUS; c++) {
		uint32_t med = 0, max = 0;
		int n = s->nr_util[c];

		if (n) {
			qsort(s->util[c], n, sizeof(uint32_t), u32_cmp);
			med = s->util[c][n / 2];
			max = s->util[c][n - 1];
		}
		ok(s->root_cfs[c] > 0, "cpu %d: root pelt_cfs events seen (%" PRIu64 ")", c,
		   s->root_cfs[c]);
		/*
		 * Saturated by the threads, util_avg sits near 1024; it overshoots
		 * (the kernel's own debug file shows up to ~1400 here) right after
		 * a migration attaches a task's util before the old one decays, the
		 * more so when other work forks and migrates beside us.  runnable_avg
		 * or load_avg would sit near 1500-2000 with three tasks on two CPUs.
		 * Under `make -j2 check` other tests share the CPUs, and this VM
		 * loses CPU time to its host: the median has been seen at 876.
		 */
		ok(n > 0 && med >= 600 && med <= 1300 && max <= 8192,
		   "cpu %d: busy root util_avg median %u in 600..1300, max %u <= 8192 (%d samples)",
		   c, med, max, n);
	}
	ok(s->util_checked && s->util_consistent * 100 >= s->util_checked * 95,
	   "root util_avg agrees with util_sum / divider in >= 95 %% of events (%" PRIu64
	   " of %" PRIu64 ")", s->util_consistent, s->util_checked);
	ok(s->vruntime > 0, "root vruntime samples derived from pelt_cfs (%" PRIu64
	   ", %" PRIu64 " zero_vruntime)", s->vruntime, s->vruntime_zero);
}

/* How many of our @nours programs are still loaded after up to 2 s. */
static int programs_left(const unsigned int *ours, int nours)
{
	unsigned int after[MAX_IDS];
	int na, left;

	/* Program freeing is deferred (RCU): give the kernel up to 2 s. */
	for (int tries = 0; tries < 40; tries++) {
		na = imb_prog_ids(after, MAX_IDS);
		left = 0;
		for (int i = 0; i < nours; i++)
			left += id_in(ours[i], after, na > 0 ? na : 0);
		if (!left)
			break;
		usleep(50000);
	}
	return left;
}

int main(void)
{
	static struct seen s;
	unsigned int before[MAX_IDS], during[MAX_IDS], ours[MAX_IDS];
	int nb, nd, nours = 0;
	char err[SOURCE_ERR_LEN] = "";
	struct source_bpf_stats st;
	struct source_bpf *src;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);

	setvbuf(stdout, NULL, _IOLBF, 0);
	nb = imb_prog_ids(before, MAX_IDS);
	src = source_bpf_open(NULL, err);
	if (!src && (errno == EPERM || errno == ENOENT)) {
		printf("1..0 # SKIP BPF source unavailable here: %s\n", err);
		return 0;
	}
	if (!ok(src != NULL, "the BPF source opens and attaches")) {
		diag("%s", err);
		return tap_done();
	}
	nd = imb_prog_ids(during, MAX_IDS);
	for (int i = 0; i < nd; i++)
		if (!id_in(during[i], before, nb > 0 ? nb : 0))
			ours[nours++] = during[i];
	ok(nours >= 8, "our programs show up in bpftool prog show (%d imb_* programs)", nours);

	poll_under_load(src, &s);
	ok(source_bpf_flush(src, on_event, &s) >= 0, "held events flush");
	source_bpf_stats(src, &st);
	check_stream(&s, &st);
	check_threads(&s, &st);
	check_cpus(&s, ncpu);

	source_bpf_close(src);
	is_int(programs_left(ours, nours), 0, "after close none of our programs is loaded");
	knobs_check();
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_analyzers.c - the analyzers on event streams built in code.
 *
 * Small, exact cases for each analyzer through the real pipeline: the
 * evidence builder, one lost_events finding per episode of lossy windows,
 * overload and work-conservation numbers in the CPU rows, an unfairness
 * episode that opens, stays one finding and closes, migration causes and
 * the same-task pattern, and a live pipeline's findings list bounded to
 * the open ones.  Larger generated scenarios run in scenarios.t.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/finding_util.h"
#include "analyzers/pipeline.h"
#include "tests/unit/tap.h"

#define MS 1000000ull

struct collect {
	struct imb_window *w[64];
	size_t n;
};

static void collect_fn(struct imb_window *w, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 64)
		c->w[c->n++] = w;
	else
		imb_window_free(w);
}

static void collect_free(struct collect *c)
{
	for (size_t i = 0; i < c->n; i++)
		imb_window_free(c->w[i]);
	c->n = 0;
}

static void feed(struct pipeline *p, const struct imb_event *ev)
{
	if (pipeline_event(p, ev))
		ok(0, "pipeline_event failed at %llu", (unsigned long long)ev->ts_ns);
}

static void ev_wakeup(struct pipeline *p, uint64_t ts, int cpu, int32_t pid, int32_t tgid)
{
	struct imb_event ev = { .ts_ns = ts, .cpu = cpu, .kind = IMB_EV_WAKEUP };

	ev.wakeup.pid = pid;
	ev.wakeup.tgid = tgid;
	ev.wakeup.prio = 120;
	ev.wakeup.target_cpu = cpu;
	snprintf(ev.wakeup.comm, IMB_COMM_LEN, "t%d", pid);
	feed(p, &ev);
}

static void ev_simple(struct pipeline *p, uint64_t ts, int cpu, int kind, int32_t pid)
{
	struct imb_event ev = { .ts_ns = ts, .cpu = cpu, .kind = (uint16_t)kind };

	ev.wakeup.pid = pid;
	ev.wakeup.prio = 120;
	ev.wakeup.target_cpu = cpu;
	feed(p, &ev);
}

static void ev_switch(struct pipeline *p, uint64_t ts, int cpu, int32_t prev, uint32_t state,
		      int32_t next, int32_t tgid)
{
	struct imb_event ev = { .ts_ns = ts, .cpu = cpu, .kind = IMB_EV_SWITCH };

	ev.sw.prev_pid = prev;
	ev.sw.prev_prio = 120;
	ev.sw.prev_state = state;
	ev.sw.prev_tgid = prev ? tgid : 0;
	ev.sw.next_pid = next;
	ev.sw.next_prio = 120;
	ev.sw.next_tgid = next ? tgid : 0;
	feed(p, &ev);
}

static void ev_runtime(struct pipeline *p, uint64_t ts, int cpu, int32_t pid, uint64_t d)
{
	struct imb_event ev = { .ts_ns = ts, .cpu = cpu, .kind = IMB_EV_RUNTIME };

	ev.runtime.pid = pid;
	ev.runtime.runtime_ns = d;
	feed(p, &ev);
}

static void ev_migrate(struct pipeline *p, uint64_t ts, int cpu, int32_t pid, int from, int to)
{
	struct imb_event ev = { .ts_ns = ts, .cpu = cpu, .kind = IMB_EV_MIGRATE };

	ev.migrate.pid = pid;
	ev.migrate.prio = 120;
	ev.migrate.orig_cpu = from;
	ev.migrate.dest_cpu = to;
	feed(p, &ev);
}

/*
 * Round robin of @n tasks on @cpu from @t0 to @t1 with 4 ms slices; the
 * tasks must already be queued there with @pids[0] running.
 */
static void rr(struct pipeline *p, int cpu, const int32_t *pids, int n, uint64_t t0, uint64_t t1,
	       int32_t tgid)
{
	int cur = 0;

	for (uint64_t t = t0 + 4 * MS; t <= t1; t += 4 * MS) {
		ev_runtime(p, t, cpu, pids[cur], 4 * MS);
		if (n > 1) {
			int nx = (cur + 1) % n;

			ev_switch(p, t, cpu, pids[cur], IMB_STATE_PREEMPTED, pids[nx], tgid);
			cur = nx;
		}
	}
}

static const struct imb_finding *find_kind(const struct imb_window *w, const char *kind,
					   const char *subject, size_t *count)
{
	const struct imb_finding *f = NULL;

	*count = 0;
	for (size_t i = 0; i < w->nr_findings; i++)
		if (!strcmp(w->findings[i].kind, kind) &&
		    (!subject || !strcmp(w->findings[i].subject, subject))) {
			f = &w->findings[i];
			(*count)++;
		}
	return f;
}

static void test_evidence(void)
{
	char buf[40];
	struct evb e;

	evb_init(&e, buf, sizeof(buf));
	evb_add(&e, "\"a\":%d", 1);
	evb_add(&e, "\"long\":\"%s\"", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	evb_add(&e, "\"b\":%d", 2);
	evb_close(&e);
	ok(!strcmp(buf, "{\"a\":1,\"b\":2}"), "evidence drops a member that does not fit: %s", buf);
	ok(finding_id_make(FINDING_SRC_NUMA, 7) >> 56 == FINDING_SRC_NUMA &&
	   finding_id_make(FINDING_SRC_LOST, 7) != finding_id_make(FINDING_SRC_NUMA, 7),
	   "finding ids carry the analyzer in the top byte");
}

static void test_lost(void)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	struct imb_event ev = { .kind = IMB_EV_LOST };
	size_t n;

	pipeline_config_defaults(&cfg);
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	ev_wakeup(p, 1 * MS, 0, 100, 100);
	for (int i = 0; i < 2; i++) {
		ev.ts_ns = (uint64_t)(i * 1000 + 500) * MS;
		ev.lost.count = 10;
		feed(p, &ev);
	}
	rr(p, 0, (int32_t[]){ 100 }, 1, 1 * MS, 3500 * MS, 100);
	s = pipeline_finish(p);
	f = find_kind(s, "lost_events", NULL, &n);
	is_int(n, 1, "two lossy windows in a row make one lost_events finding");
	ok(f && f->value == 20 && !f->open, "it counts 20 lost events and is closed at the end");
	ok(f && f->t_start_ns == 1 * MS && f->t_end_ns == 2001 * MS,
	   "it spans the two lossy windows");
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

/* 2 tasks share CPU 0 for 3 s, CPU 1 idle: overload on cpu0, idle with waiters on cpu1. */
static void test_overload(void)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	size_t n;
	const int32_t pids[] = { 200, 201 };

	pipeline_config_defaults(&cfg);
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	ev_switch(p, 0, 1, 0, 0, 0, 0);			/* CPU 1 exists and is idle */
	ev_wakeup(p, 1 * MS, 0, 200, 200);
	ev_wakeup(p, 1 * MS, 0, 201, 200);
	rr(p, 0, pids, 2, 1 * MS, 3001 * MS, 200);
	s = pipeline_finish(p);
	ok(c.n >= 3, "three windows closed (%zu)", c.n);
	if (c.n >= 3) {
		const struct imb_cpu_sample *c0 = &c.w[1]->cpus[0], *c1 = &c.w[1]->cpus[1];

		ok(c0->overloaded_fraction > 0.95, "cpu0 overloaded %.3f of window 2",
		   c0->overloaded_fraction);
		is_int(c0->group_type, IMB_GROUP_OVERLOADED, "cpu0 classified overloaded");
		is_int(c1->group_type, IMB_GROUP_HAS_SPARE, "cpu1 has spare capacity");
		ok(c1->idle_with_waiters_ns == 1000 * MS,
		   "cpu1 idle while cpu0 had a waiter the whole window (%llu ns)",
		   (unsigned long long)c1->idle_with_waiters_ns);
		is_int(c0->idle_with_waiters_ns, 0, "cpu0 never idle");
		ok(c0->vruntime_rate > 0.49 && c0->vruntime_rate < 0.51,
		   "cpu0's virtual clock runs at half speed (%.3f)", c0->vruntime_rate);
	}
	ok(s->nr_cpus == 2 && s->cpus[1].idle_with_waiters_ns >= 2999 * MS &&
	   s->cpus[1].idle_with_waiters_ns <= 3001 * MS && s->cpus[0].idle_with_waiters_ns == 0,
	   "whole run: cpu1 idle with waiters %llu ns of 3 s, cpu0 0",
	   s->nr_cpus == 2 ? (unsigned long long)s->cpus[1].idle_with_waiters_ns : 0ull);
	ok(s->nr_cpus == 2 && s->cpus[1].idle_with_waiters_llc_ns == IMB_UNKNOWN &&
	   s->cpus[1].idle_with_waiters_node_ns == IMB_UNKNOWN,
	   "no LLC or node level without a topology");
	f = find_kind(s, "overload", "cpu0", &n);
	is_int(n, 1, "one overload finding for cpu0");
	ok(f && f->severity == IMB_SEV_WARNING && !f->open && f->value > 0.95,
	   "it is a closed warning with the overloaded fraction as value");
	ok(f && strstr(f->evidence, "\"idle_with_waiters_ns\":0,") != NULL,
	   "its evidence has the work-conservation time (cpu0 itself never idle)");

	find_kind(s, "overload", "cpu1", &n);
	is_int(n, 0, "no overload finding for the idle cpu1");
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

/*
 * 3 tasks pinned to CPU 0 of 2 for 3 s: the machine is overloaded, and its
 * finding's evidence counts CPU 1's idle time over the whole episode, not
 * the last window's.
 */
static void test_overload_machine(void)
{
	struct analyzer_config cfg;
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	const char *e;
	unsigned long long v;
	size_t n;
	const int32_t pids[] = { 210, 211, 212 };

	pipeline_config_defaults(&cfg);
	p = pipeline_new(&cfg, NULL, NULL, NULL);
	ev_switch(p, 0, 1, 0, 0, 0, 0);
	for (int i = 0; i < 3; i++)
		ev_wakeup(p, 1 * MS, 0, pids[i], 210);
	rr(p, 0, pids, 3, 1 * MS, 3001 * MS, 210);
	s = pipeline_finish(p);
	f = find_kind(s, "overload", "machine", &n);
	is_int(n, 1, "3 on CPU 0 of 2: one overload finding for the machine");
	e = f ? strstr(f->evidence, "\"idle_with_waiters_ns\":") : NULL;
	v = e ? strtoull(e + 23, NULL, 10) : 0;
	ok(v >= 2990 * MS && v <= 3001 * MS,
	   "its evidence counts the whole episode's idle-with-waiters time (%llu ns)", v);
	e = f ? strstr(f->evidence, "\"idle_with_waiters_window_ns\":") : NULL;
	v = e ? strtoull(e + 30, NULL, 10) : 0;
	ok(v <= 1001 * MS && v >= 999 * MS, "and the last window's apart (%llu ns)", v);
	imb_window_free(s);
	pipeline_free(p);
}

/*
 * Job of 3 busy tasks on 2 CPUs, placed 2 + 1 for 7 s: one unfairness
 * episode finding opened after unfairness_min (5 s), kept open while it
 * lasts, closed at the end; plus the whole-run finding.
 */
static void test_unfairness(void)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	size_t n, opened = 0;
	uint64_t id = 0;
	bool same = true;
	const int32_t a[] = { 300, 301 }, b[] = { 302 };

	pipeline_config_defaults(&cfg);
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	ev_wakeup(p, 1 * MS, 0, 300, 300);
	ev_wakeup(p, 1 * MS, 0, 301, 300);
	ev_wakeup(p, 1 * MS, 1, 302, 300);
	/* interleave the two CPUs in time order */
	for (uint64_t t = 5 * MS; t <= 7001 * MS; t += 4 * MS) {
		int k = (int)((t - 5 * MS) / (4 * MS));

		ev_runtime(p, t, 0, a[k % 2], 4 * MS);
		ev_switch(p, t, 0, a[k % 2], IMB_STATE_PREEMPTED, a[(k + 1) % 2], 300);
		ev_runtime(p, t, 1, b[0], 4 * MS);
	}
	s = pipeline_finish(p);
	for (size_t i = 0; i < c.n; i++) {
		f = find_kind(c.w[i], "unfairness", "job process:300", &n);
		if (!f)
			continue;
		opened++;
		if (id && f->id != id)
			same = false;
		id = f->id;
	}
	ok(opened >= 2 && same, "the episode is one finding id over %zu windows", opened);
	f = find_kind(s, "unfairness", "job process:300", &n);
	is_int(n, 1, "one episode finding in the run");
	ok(f && !f->open && f->value > 0.45 && f->value < 0.55,
	   "closed at the end, unfairness %.3f (about 0.5)", f ? f->value : 0);
	ok(f && f->t_end_ns - f->t_start_ns >= cfg.unfairness_min_ns,
	   "it lasted at least unfairness_min");
	f = find_kind(s, "unfairness", "job process:300 (whole run)", &n);
	ok(f && strstr(f->summary, "cannot be balanced: 3 tasks on 2 CPUs"),
	   "the whole-run finding says the job cannot be balanced: %s", f ? f->summary : "none");
	ok(f && strstr(f->evidence, "\"jain_index\":") && strstr(f->evidence, "\"fair_ns\":"),
	   "its evidence has the Jain index and per-task fair shares");
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

/*
 * Migration causes: a sleeping task placed at wake-up, a queued task pulled
 * by the destination CPU (12 times the same one), a running task pushed by
 * the stopper of its CPU.
 */
static void test_migration(void)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	size_t n;
	uint64_t t = 1 * MS;
	int where = 0;

	pipeline_config_defaults(&cfg);
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	ev_wakeup(p, t, 0, 400, 400);
	ev_wakeup(p, t, 0, 401, 400);
	ev_wakeup(p, t, 1, 402, 400);
	/* 402 sleeps, then is woken onto CPU 0 through a wake-up migration */
	t += MS;
	ev_switch(p, t, 1, 402, 1, 0, 400);
	t += MS;
	ev_simple(p, t, 0, IMB_EV_WAKING, 402);
	ev_migrate(p, t, 0, 402, 1, 0);
	ev_wakeup(p, t, 0, 402, 400);
	/* now 400 (running), 401, 402 queued on CPU 0: CPU 1 pulls 401 back and forth */
	for (int i = 0; i < 12; i++) {
		int to = 1 - where;

		t += 30 * MS;
		ev_migrate(p, t, to, 401, where, to);
		where = to;
	}
	/* active balance: the stopper migration/0 pushes the running 400 to CPU 1 */
	t += MS;
	{
		struct imb_event ev = { .ts_ns = t, .cpu = 0, .kind = IMB_EV_SWITCH };

		ev.sw.prev_pid = 400;
		ev.sw.prev_tgid = 400;
		ev.sw.prev_prio = 120;
		ev.sw.prev_state = IMB_STATE_PREEMPTED;
		ev.sw.next_pid = 10000;
		snprintf(ev.sw.next_comm, IMB_COMM_LEN, "migration/0");
		feed(p, &ev);
	}
	ev_migrate(p, t, 0, 400, 0, 1);
	ev_switch(p, t, 0, 10000, 1, 401, 400);
	/* NUMA balancing moves the queued 402 (sched_move_numa, then its migrate) */
	t += MS;
	{
		struct imb_event ev = { .ts_ns = t, .cpu = 0, .kind = IMB_EV_NUMA_MOVE };

		ev.numa.src_pid = 402;
		ev.numa.src_cpu = 0;
		ev.numa.dst_cpu = 1;
		ev.numa.dst_nid = 1;
		feed(p, &ev);
	}
	ev_migrate(p, t, 0, 402, 0, 1);
	/* an affinity change: the queued 402 moved by CPU 1, the CPU it leaves */
	t += MS;
	ev_migrate(p, t, 1, 402, 1, 0);
	t += 30 * MS;
	ev_runtime(p, t, 0, 401, 30 * MS);
	s = pipeline_finish(p);
	f = find_kind(s, "same_task_migrated", NULL, &n);
	is_int(n, 1, "one same_task_migrated finding");
	ok(f && strstr(f->subject, "pid 401"), "it names pid 401 (%s)", f ? f->subject : "none");
	ok(f && strstr(f->evidence, "\"causes\":{\"wakeup\":0,\"lb_pull\":12,\"active\":0"),
	   "its 12 moves are balancer pulls");
	ok(f && strstr(f->evidence, "\"all_causes\":{\"wakeup\":1,\"lb_pull\":12"),
	   "the wake-up placement of pid 402 is told apart");
	ok(f && strstr(f->evidence, "\"all_causes\":{\"wakeup\":1,\"lb_pull\":12,\"active\":1,"
		       "\"numa\":1,\"affinity\":1}"),
	   "active balance (stopper), NUMA and affinity moves each get their cause");
	ok(f && strstr(f->evidence, "\"lb_migrations_all\":13"),
	   "the active-balance push counts as a balancer move, the NUMA and affinity ones do not");
	f = find_kind(s, "migration_pingpong", "pid 401 (t401)", &n);
	ok(f && f->value == 11, "ping-pong: 11 returns within 100 ms (%g)", f ? f->value : -1);
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

/*
 * The kernel's vruntime reference when the source has it: CPU 1's advances
 * at half the rate of CPU 0's for 4 s, so its tasks fall behind.
 */
static void test_vruntime_kernel(bool with_v)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	size_t n;

	pipeline_config_defaults(&cfg);
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	ev_wakeup(p, 1 * MS, 0, 500, 500);
	ev_wakeup(p, 1 * MS, 1, 501, 501);
	for (uint64_t t = 10 * MS; t <= 4001 * MS; t += 10 * MS) {
		for (int cpu = 0; cpu < 2; cpu++) {
			struct imb_event ev = { .ts_ns = t, .cpu = cpu, .kind = IMB_EV_VRUNTIME };

			ev_runtime(p, t, cpu, 500 + cpu, 10 * MS);
			ev.vruntime.vruntime_ref = 1000000000000ull + (cpu ? t / 2 : t);
			if (with_v)	/* V runs at the same rates, min_vruntime stalls */
				ev.vruntime.avg_vruntime = (int64_t)ev.vruntime.vruntime_ref + 5000;
			if (with_v)
				ev.vruntime.vruntime_ref = 1000000000000ull;
			feed(p, &ev);
		}
	}
	s = pipeline_finish(p);
	ok(c.n >= 2 && c.w[1]->cpus[1].vruntime_rate > 0.49 && c.w[1]->cpus[1].vruntime_rate < 0.51 &&
	   c.w[1]->cpus[0].vruntime_rate > 0.99, "rates from the kernel's reference: %.3f and %.3f",
	   c.n >= 2 ? c.w[1]->cpus[0].vruntime_rate : 0, c.n >= 2 ? c.w[1]->cpus[1].vruntime_rate : 0);
	f = find_kind(s, "vruntime_drift", NULL, &n);
	is_int(n, 1, "one vruntime_drift finding");
	ok(f && !strcmp(f->subject, "cpus 1") && f->value > 0.45 && f->value < 0.55,
	   "it names CPU 1, drift %.3f", f ? f->value : 0);
	ok(f && strstr(f->evidence, with_v ? "kernel avg_vruntime (V)" : "kernel min_vruntime"),
	   "and says which kernel reference was read (%s)", with_v ? "V" : "min_vruntime");
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

/* the label callback of test_cgroup_label: a path for cgroup 77 only */
static int label_77(uint64_t id, char *buf, size_t len, void *ctx)
{
	unsigned int *calls = ctx;

	(*calls)++;
	if (id != 77)
		return -ENOENT;
	snprintf(buf, len, "%s", "/imb.slice/a-rather-long-unit-name-for-the-subject-line.service");
	return 0;
}

/*
 * The job of test_unfairness grouped by cgroup (all three tasks switched
 * in from cgroup 77): with a label callback the job's path is its label
 * while the key stays "cgroup:77", the findings' subjects name the path
 * (its tail where it does not fit) and their evidence carries it; the
 * callback runs per job and window, not per event; without a callback
 * (analyze) the path stays empty and the subject is the key.
 */
static void test_cgroup_label(bool labelled)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	unsigned int calls = 0;
	uint64_t events = 0;
	size_t n;
	const int32_t a[] = { 300, 301 };
	const char *path = "/imb.slice/a-rather-long-unit-name-for-the-subject-line.service";
	char want[64];

	pipeline_config_defaults(&cfg);
	cfg.group_by = ANALYZER_GROUP_CGROUP;
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	if (labelled)
		pipeline_set_cgroup_label(p, label_77, &calls);
	ev_wakeup(p, 1 * MS, 0, 300, 300);
	ev_wakeup(p, 1 * MS, 0, 301, 300);
	ev_wakeup(p, 1 * MS, 1, 302, 300);
	for (uint64_t t = 5 * MS; t <= 7001 * MS; t += 4 * MS) {
		int k = (int)((t - 5 * MS) / (4 * MS));
		struct imb_event ev = { .ts_ns = t, .cpu = 0, .kind = IMB_EV_SWITCH };

		ev_runtime(p, t, 0, a[k % 2], 4 * MS);
		ev.sw.prev_pid = a[k % 2];
		ev.sw.prev_prio = ev.sw.next_prio = 120;
		ev.sw.prev_state = IMB_STATE_PREEMPTED;
		ev.sw.prev_tgid = ev.sw.next_tgid = 300;
		ev.sw.next_pid = a[(k + 1) % 2];
		ev.sw.next_cgroup = 77;
		feed(p, &ev);
		if (k == 0) {
			ev.cpu = 1;
			ev.sw.prev_pid = 0;
			ev.sw.prev_tgid = 0;
			ev.sw.next_pid = 302;
			feed(p, &ev);
			events++;
		}
		ev_runtime(p, t, 1, 302, 4 * MS);
		events += 3;
	}
	s = pipeline_finish(p);
	n = 0;
	for (size_t i = 0; i < s->nr_jobs; i++)
		if (!strcmp(s->jobs[i].key, "cgroup:77"))
			n++;
	ok(n == 1, "%s: the whole run has one job keyed cgroup:77", labelled ? "labelled" : "plain");
	for (size_t i = 0; i < s->nr_jobs; i++)
		if (!strcmp(s->jobs[i].key, "cgroup:77"))
			ok(!strcmp(s->jobs[i].path, labelled ? path : ""), "%s: its path '%s'",
			   labelled ? "labelled" : "plain", s->jobs[i].path);
	if (labelled)
		ok(calls > 0 && calls <= 2 * (c.n + 1) && calls < events / 100,
		   "the label is asked per job and window (%u times for %zu windows), not per event",
		   calls, c.n);
	/* "job " + 59: the tail of the path */
	snprintf(want, sizeof(want), "job %s", labelled ? "..." : "cgroup:77");
	if (labelled)
		snprintf(want + 7, sizeof(want) - 7, "%s", path + strlen(path) - 56);
	f = find_kind(s, "unfairness", want, &n);
	ok(f != NULL, "%s: the episode's subject is '%s'", labelled ? "labelled" : "plain", want);
	ok(f && (labelled ? strstr(f->evidence, "\"path\":\"/imb.slice/") != NULL :
		 strstr(f->evidence, "\"path\"") == NULL) &&
	   strstr(f->evidence, "\"job\":\"cgroup:77\""),
	   "%s: its evidence keeps the key%s", labelled ? "labelled" : "plain",
	   labelled ? " and has the path" : "");
	snprintf(want, sizeof(want), "job %s (whole run)", labelled ? "..." : "cgroup:77");
	if (labelled)
		snprintf(want + 7, sizeof(want) - 7, "%s (whole run)", path + strlen(path) - 44);
	f = find_kind(s, "unfairness", want, &n);
	ok(f != NULL, "%s: the whole-run subject is '%s'", labelled ? "labelled" : "plain", want);
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

/*
 * Five 3 s overload episodes on CPU 0, 3 s apart, the last still going at
 * the end.  Offline the summary lists all five; a live pipeline (months
 * long) keeps only what is open, so its summary has the last one, closed by
 * the end, and each earlier one went out closed with the window that
 * closed it.
 */
static void test_findings_bounded(bool live)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	const struct imb_finding *f;
	const char *mode = live ? "live" : "offline";
	uint64_t ids[16];
	size_t n, nids = 0, closed_in_window = 0;

	pipeline_config_defaults(&cfg);
	cfg.live = live;
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	ev_switch(p, 0, 1, 0, 0, 0, 0);			/* CPU 1 exists and is idle */
	for (int e = 0; e < 5; e++) {
		const int32_t pids[] = { 300 + 2 * e, 301 + 2 * e };
		uint64_t t0 = (uint64_t)e * 6000 * MS + 1 * MS, t1 = t0 + 3000 * MS;

		ev_wakeup(p, t0, 0, pids[0], pids[0]);
		ev_wakeup(p, t0, 0, pids[1], pids[0]);
		ev_switch(p, t0, 0, 0, IMB_STATE_RUNNING, pids[0], pids[0]);
		rr(p, 0, pids, 2, t0, t1, pids[0]);
		if (e == 4)
			break;			/* the last one is open at the end */
		/* 749 slices from pids[0]: pids[1] runs; both go to sleep */
		ev_switch(p, t1 + 1 * MS, 0, pids[1], 0x1, pids[0], pids[0]);
		ev_switch(p, t1 + 2 * MS, 0, pids[0], 0x1, 0, pids[0]);
	}
	s = pipeline_finish(p);
	for (size_t i = 0; i < c.n; i++)
		for (size_t j = 0; j < c.w[i]->nr_findings; j++) {
			const struct imb_finding *g = &c.w[i]->findings[j];
			size_t k;

			if (strcmp(g->kind, "overload") || strcmp(g->subject, "cpu0"))
				continue;
			closed_in_window += !g->open;
			for (k = 0; k < nids && ids[k] != g->id; k++)
				;
			if (k == nids && nids < 16)
				ids[nids++] = g->id;
		}
	ok(nids == 5 && closed_in_window == 4,
	   "%s: the windows carry 5 cpu0 overload episodes, 4 of them closed by a window (%zu, %zu)",
	   mode, nids, closed_in_window);
	f = find_kind(s, "overload", "cpu0", &n);
	if (live)
		ok(n == 1 && f && f->id == ids[nids ? nids - 1 : 0] && !f->open,
		   "live: the summary has only the episode open at the end, closed (%zu)", n);
	else
		ok(n == 5, "offline: the summary lists all 5 episodes (%zu)", n);
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

/*
 * A host with many processes has as many jobs: 500 processes of 3 threads
 * each make 500 jobs of 3 tasks (the window's job table is indexed by key;
 * a collision or a lost key would merge or split jobs).
 */
static void test_many_jobs(void)
{
	struct analyzer_config cfg;
	struct collect c = { .n = 0 };
	struct pipeline *p;
	struct imb_window *s;
	size_t threes = 0;

	pipeline_config_defaults(&cfg);
	p = pipeline_new(&cfg, NULL, collect_fn, &c);
	for (int j = 0; j < 500; j++)
		for (int k = 0; k < 3; k++)
			ev_wakeup(p, 1 * MS + (uint64_t)(3 * j + k), j % 2, 10000 + 3 * j + k,
				  10000 + 3 * j);
	ev_switch(p, 3 * MS, 0, 0, 0, 10000, 10000);
	s = pipeline_finish(p);
	for (size_t i = 0; i < s->nr_jobs; i++)
		threes += s->jobs[i].tasks == 3 && !strncmp(s->jobs[i].key, "process:1", 9);
	ok(s->nr_jobs == 500 && threes == 500,
	   "500 processes of 3 threads make 500 jobs of 3 tasks (%zu jobs, %zu of 3)", s->nr_jobs,
	   threes);
	imb_window_free(s);
	collect_free(&c);
	pipeline_free(p);
}

int main(void)
{
	test_evidence();
	test_lost();
	test_overload();
	test_overload_machine();
	test_unfairness();
	test_cgroup_label(true);
	test_cgroup_label(false);
	test_migration();
	test_vruntime_kernel(false);
	test_vruntime_kernel(true);
	test_findings_bounded(false);
	test_findings_bounded(true);
	test_many_jobs();
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_model.c - the model's invariants on synthetic event streams.
 *
 * The streams are built in code the way a trace shows them: wake-ups,
 * time-sliced switches with R+ preemptions, sched_stat_runtime at slice
 * ends, migrations and exits.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzers/model.h"
#include "analyzers/pipeline.h"
#include "tap.h"

#define MS 1000000ull

static struct imb_event ev_base(uint64_t ts, int cpu, int kind)
{
	struct imb_event e;

	memset(&e, 0, sizeof(e));
	e.ts_ns = ts;
	e.cpu = cpu;
	e.kind = (uint16_t)kind;
	return e;
}

static void feed(struct model *m, struct imb_event e)
{
	model_event(m, &e);
}

static void wakeup(struct model *m, uint64_t ts, int pid, int cpu, bool fresh)
{
	struct imb_event e = ev_base(ts, cpu, fresh ? IMB_EV_WAKEUP_NEW : IMB_EV_WAKEUP);

	e.wakeup.pid = pid;
	e.wakeup.prio = 120;
	e.wakeup.target_cpu = cpu;
	strcpy(e.wakeup.comm, "t");
	feed(m, e);
}

static void sw(struct model *m, uint64_t ts, int cpu, int prev, uint32_t state, int next)
{
	struct imb_event e = ev_base(ts, cpu, IMB_EV_SWITCH);

	e.sw.prev_pid = prev;
	e.sw.prev_prio = 120;
	e.sw.prev_state = state;
	e.sw.next_pid = next;
	e.sw.next_prio = 120;
	feed(m, e);
}

static void runtime(struct model *m, uint64_t ts, int cpu, int pid, uint64_t ns)
{
	struct imb_event e = ev_base(ts, cpu, IMB_EV_RUNTIME);

	e.runtime.pid = pid;
	e.runtime.runtime_ns = ns;
	feed(m, e);
}

static void migrate(struct model *m, uint64_t ts, int cpu, int pid, int from, int to)
{
	struct imb_event e = ev_base(ts, cpu, IMB_EV_MIGRATE);

	e.migrate.pid = pid;
	e.migrate.prio = 120;
	e.migrate.orig_cpu = from;
	e.migrate.dest_cpu = to;
	feed(m, e);
}

static struct model *new_model(int nr_cpus)
{
	struct model_opts o;

	memset(&o, 0, sizeof(o));
	o.nr_cpus = nr_cpus;
	return model_new(&o);
}

/* Two tasks time-sliced on CPU 0 from @t0 for @dur with 3 ms slices. */
static uint64_t share_cpu0(struct model *m, uint64_t t0, uint64_t dur, int a, int b)
{
	uint64_t t = t0;
	int cur = a, other = b;

	while (t < t0 + dur) {
		t += 3 * MS;
		runtime(m, t, 0, cur, 3 * MS);
		sw(m, t, 0, cur, IMB_STATE_PREEMPTED, other);
		cur ^= other;
		other ^= cur;
		cur ^= other;
	}
	return t;
}

static void test_two_tasks_share_one_cpu(void)
{
	struct model *m = new_model(2);
	struct model_task *a, *b;
	struct model_cpu *c;
	uint64_t t;

	wakeup(m, 1 * MS, 101, 0, true);	/* idle CPU: 101 runs at once */
	wakeup(m, 1 * MS + 1000, 102, 0, true);	/* 102 waits */
	t = share_cpu0(m, 1 * MS, 2000 * MS, 101, 102);
	model_advance(m, t);
	a = model_task_find(m, 101);
	b = model_task_find(m, 102);
	c = &m->cpus[0];
	ok(a && b, "both tasks are in the model");
	if (!a || !b)
		return;
	diag("util a=%lu b=%lu cpu util=%lu runnable=%lu load=%lu", a->avg.util_avg,
	     b->avg.util_avg, c->cfs.avg.util_avg, c->cfs.avg.runnable_avg, c->cfs.avg.load_avg);
	ok(a->avg.util_avg >= 480 && a->avg.util_avg <= 545,
	   "two tasks sharing a CPU: the first has util_avg ~512 (%lu)", a->avg.util_avg);
	ok(b->avg.util_avg >= 480 && b->avg.util_avg <= 545,
	   "two tasks sharing a CPU: the second has util_avg ~512 (%lu)", b->avg.util_avg);
	ok(c->cfs.avg.util_avg >= 1000 && c->cfs.avg.util_avg <= 1024,
	   "the shared CPU has util_avg ~1024 (%lu)", c->cfs.avg.util_avg);
	ok(c->cfs.avg.runnable_avg >= 2000 && c->cfs.avg.runnable_avg <= 2060,
	   "the shared CPU has runnable_avg ~2048 (%lu)", c->cfs.avg.runnable_avg);
	ok(a->avg.runnable_avg >= 1000, "a time-sliced task is runnable all the time (%lu)",
	   a->avg.runnable_avg);
	ok(m->cpus[1].cfs.avg.util_avg == 0, "the other CPU stays at util 0");
	is_u64(model_task_run_ns(a) + model_task_run_ns(b), 2001 * MS - 1 * MS + MS,
	       "CPU time adds up to the busy time (runtime events)");
	ok(model_task_wait_ns(a) > 900 * MS && model_task_wait_ns(a) < 1100 * MS,
	   "each waits about half the time (%.1f ms)", (double)model_task_wait_ns(a) / 1e6);
	model_free(m);
}

static void test_migration_moves_contribution(void)
{
	struct model *m = new_model(2);
	struct model_task *a;
	uint64_t t, cpu0_before, cpu1_before;

	wakeup(m, 1 * MS, 201, 0, true);
	wakeup(m, 1 * MS, 202, 1, true);
	/* 201 alone on CPU 0, 202 alone on CPU 1 for 500 ms */
	for (t = 1 * MS; t < 501 * MS;) {
		t += 4 * MS;
		runtime(m, t, 0, 201, 4 * MS);
		runtime(m, t, 1, 202, 4 * MS);
	}
	/* 202 sleeps: CPU 1 idles for 400 ms and decays */
	sw(m, t, 1, 202, 0x1, 0);
	t += 400 * MS;
	runtime(m, t, 0, 201, 400 * MS);
	model_advance(m, t);
	cpu0_before = m->cpus[0].cfs.avg.util_avg;
	cpu1_before = m->cpus[1].cfs.avg.util_avg;
	a = model_task_find(m, 201);
	ok(cpu0_before > 1000 && a->avg.util_avg > 1000,
	   "a task alone on a CPU drives it to ~1024 (cpu %lu, task %lu)", cpu0_before,
	   a->avg.util_avg);
	ok(cpu1_before < 20, "an idle CPU decays to ~0 (%lu)", cpu1_before);
	/* the balancer moves the running 201 to idle CPU 1 */
	migrate(m, t + 1000, 1, 201, 0, 1);
	model_advance(m, t + 2 * MS);
	diag("after migration: cpu0 util=%lu cpu1 util=%lu task=%lu",
	     m->cpus[0].cfs.avg.util_avg, m->cpus[1].cfs.avg.util_avg, a->avg.util_avg);
	ok(m->cpus[0].cfs.avg.util_avg < 60,
	   "migrating a task takes its util off the source CPU (%lu)",
	   m->cpus[0].cfs.avg.util_avg);
	ok(m->cpus[1].cfs.avg.util_avg > 950,
	   "... and puts it on the destination CPU (%lu)", m->cpus[1].cfs.avg.util_avg);
	is_int(a->cpu, 1, "the task is on its new CPU");
	is_int(a->migrations, 1, "the migration is counted");
	ok(m->cpus[1].curr == 201, "a task migrated to an idle CPU runs there");
	model_free(m);
}

static void test_exit_removes_contribution(void)
{
	struct model *m = new_model(1);
	struct imb_event e;
	uint64_t t;

	wakeup(m, 1 * MS, 301, 0, true);
	for (t = 1 * MS; t < 601 * MS;) {
		t += 4 * MS;
		runtime(m, t, 0, 301, 4 * MS);
	}
	e = ev_base(t, 0, IMB_EV_EXIT);
	e.exit.pid = 301;
	e.exit.prio = 120;
	feed(m, e);
	sw(m, t + 1000, 0, 301, 0x10, 0);	/* final switch out, state X */
	ok(m->cpus[0].cfs.avg.util_avg > 1000, "before the next update the CPU still shows it");
	model_advance(m, t + 3 * MS);
	ok(m->cpus[0].cfs.avg.util_avg < 50,
	   "an exited task's util is removed from its CPU at the next update (%lu)",
	   m->cpus[0].cfs.avg.util_avg);
	is_int(model_task_find(m, 301)->state, MODEL_TASK_DEAD, "the task is dead");
	model_free(m);
}

static void test_missing_idle_switch_is_bounded(void)
{
	struct model *m = new_model(2);
	struct model_task *a;

	/*
	 * CPU 1 goes idle, 401 wakes there at 10 ms and runs: the trace has
	 * no switch from swapper/1, only 401's switch out at 15 ms.
	 */
	wakeup(m, 1 * MS, 400, 1, true);
	sw(m, 2 * MS, 1, 400, 0x1, 0);
	wakeup(m, 10 * MS, 401, 1, false);
	sw(m, 15 * MS, 1, 401, 0x1, 0);
	a = model_task_find(m, 401);
	is_u64(a->switch_run_ns, 5 * MS,
	       "a task woken on an idle CPU runs from its wake-up, not from the idle entry");
	is_u64(a->runnable_ns, 5 * MS, "its runnable time is bounded by the wake-up");
	is_int(m->cpus[1].curr, 0, "the CPU is idle again");
	model_free(m);
}

static void test_fairness_fill(void)
{
	uint64_t d[3] = { 1000, 1000, 1000 }, w[3] = { 1024, 1024, 1024 }, f[3];
	uint64_t d2[3] = { 100, 1000, 1000 }, w2[3] = { 1024, 3121, 1024 };

	fairness_fill(d, w, f, 3, 2000);
	ok(f[0] >= 666 && f[0] <= 667 && f[1] >= 666 && f[1] <= 667 && f[2] >= 666 &&
	   f[2] <= 667 && f[0] + f[1] + f[2] == 2000,
	   "3 equal busy tasks on 2 CPUs are each owed 2/3 (%lu %lu %lu)",
	   (unsigned long)f[0], (unsigned long)f[1], (unsigned long)f[2]);
	fairness_fill(d2, w2, f, 3, 1000);
	ok(f[0] == 100, "a task asking for little is owed what it asked (%lu)",
	   (unsigned long)f[0]);
	ok(f[1] > f[2] * 29 / 10 && f[1] + f[2] <= 900,
	   "the rest is shared by weight (nice -5 vs 0: %lu vs %lu)", (unsigned long)f[1],
	   (unsigned long)f[2]);
}

int main(void)
{
	test_two_tasks_share_one_cpu();
	test_migration_moves_contribution();
	test_exit_removes_contribution();
	test_missing_idle_switch_is_bounded();
	test_fairness_fill();
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_pelt.c - the PELT engine against reference vectors (doc/pelt.md
 * §9: constants, then cases A-G), against extra vectors from tests/helpers/pelt-reference.py (an
 * independent Python model), and against properties: split updates agree
 * with one update within the kernel's own rounding, the integer result
 * stays within a stated bound of the float ideal, and attach/detach/remove
 * conserve a run queue's sums.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/pelt.h"
#include "tests/unit/tap.h"

#define P PELT_PERIOD_NS
#define W0 1024UL		/* nice-0 se_weight */

/* ---------------------------------------------------------------- helpers */

static void run_single(struct pelt_avg *sa, uint64_t periods)
{
	memset(sa, 0, sizeof(*sa));
	pelt_se_update(sa, periods * P, W0, 1, 1, 1);
}

static void run_per_period(struct pelt_avg *sa, uint64_t periods)
{
	memset(sa, 0, sizeof(*sa));
	for (uint64_t k = 1; k <= periods; k++)
		pelt_se_update(sa, k * P, W0, 1, 1, 1);
}

static void run_every(struct pelt_avg *sa, uint64_t periods, uint64_t step)
{
	memset(sa, 0, sizeof(*sa));
	for (uint64_t t = step; t < periods * P; t += step)
		pelt_se_update(sa, t, W0, 1, 1, 1);
	pelt_se_update(sa, periods * P, W0, 1, 1, 1);
}

/* A saturated nice-0 entity: util_avg = load_avg = 1024 at pc 0. */
static void saturated(struct pelt_avg *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->util_sum = 1024 * PELT_MIN_DIVIDER;
	sa->runnable_sum = 1024 * PELT_MIN_DIVIDER;
	sa->load_sum = PELT_MIN_DIVIDER;
	sa->util_avg = sa->load_avg = sa->runnable_avg = 1024;
}

struct duty_sample {
	unsigned long util_run, load_run, runnable_run, util_sleep, load_sleep,
		runnable_sleep;
	uint32_t util_sum_run, pc_run, util_sum_sleep, pc_sleep;
};

/*
 * A periodic task from zero, @run ns running then @sleep ns blocked, for
 * @cycles cycles starting at @phase, updated only at the transitions.
 */
static void duty_cycle(uint64_t phase, uint64_t run, uint64_t sleep,
		       unsigned int cycles, struct duty_sample *s)
{
	struct pelt_avg sa;
	uint64_t t = phase;

	memset(&sa, 0, sizeof(sa));
	if (phase)
		pelt_se_update(&sa, t, W0, 0, 0, 0);
	for (unsigned int c = 0; c < cycles; c++) {
		t += run;
		pelt_se_update(&sa, t, W0, 1, 1, 1);
		s->util_run = sa.util_avg;
		s->load_run = sa.load_avg;
		s->runnable_run = sa.runnable_avg;
		s->util_sum_run = sa.util_sum;
		s->pc_run = sa.period_contrib;
		t += sleep;
		pelt_se_update(&sa, t, W0, 0, 0, 0);
		s->util_sleep = sa.util_avg;
		s->load_sleep = sa.load_avg;
		s->runnable_sleep = sa.runnable_avg;
		s->util_sum_sleep = sa.util_sum;
		s->pc_sleep = sa.period_contrib;
	}
}

/* ------------------------------------------------------------ vector 0 */

static void test_vector0(void)
{
	static const struct { uint64_t n, want; } d47742[] = {
		{ 0, 47741 }, { 1, 46718 }, { 2, 45717 }, { 16, 33758 },
		{ 31, 24393 }, { 32, 23870 }, { 33, 23359 }, { 63, 12196 },
		{ 64, 11934 }, { 100, 5471 }, { 345, 26 }, { 1000, 0 },
		{ 2016, 0 }, { 2017, 0 },
	};
	static const struct { uint64_t p; uint32_t d1, d3, want; } seg[] = {
		{ 1, 1024, 0, 1002 }, { 1, 500, 300, 789 }, { 2, 1024, 0, 1981 },
		{ 32, 1024, 0, 23359 }, { 100, 1024, 0, 41364 },
		{ 345, 1024, 0, 46692 }, { 1000, 1024, 0, 46718 },
	};
	double y = pow(0.5, 1.0 / 32);
	int table_ok = 1, iters = 0;
	uint64_t max = 1024, last = 0;

	for (unsigned int i = 0; i < 32; i++) {
		uint32_t regen = (uint32_t)(4294967295.0 * pow(y, i));

		if (regen != pelt_decay_table(i)) {
			table_ok = 0;
			diag("table[%u]: regenerated %08x, engine %08x", i, regen,
			     pelt_decay_table(i));
		}
	}
	ok(table_ok, "decay table equals (2^32-1)*y^i truncated, all 32 entries");

	/* the generator's count: loop index of the first unchanged step, minus one */
	for (int n = -1;; n++) {
		if (n > -1)
			max = ((max * pelt_decay_table(1)) >> 32) + 1024;
		if (last == max) {
			iters = n;
			break;
		}
		last = max;
	}
	is_u64(max, PELT_LOAD_AVG_MAX, "generator converges to LOAD_AVG_MAX 47742");
	is_int(iters - 1, 345, "generator stabilises after 345 iterations");
	is_int(PELT_MIN_DIVIDER, 46718, "PELT_MIN_DIVIDER is 47742 - 1024");
	is_u64(PELT_LOST_IDLE_THRESHOLD, 47791490, "lost-idle threshold is 47 791 490");

	for (size_t i = 0; i < sizeof(d47742) / sizeof(d47742[0]); i++)
		is_u64(pelt_decay_load(47742, d47742[i].n), d47742[i].want,
		       "decay_load(47742, %" PRIu64 ") = %" PRIu64,
		       d47742[i].n, d47742[i].want);
	is_u64(pelt_decay_load(1 << 20, 1), 1026107, "decay_load(2^20, 1) = 1026107");
	is_u64(pelt_decay_load(1 << 20, 32), 524287, "decay_load(2^20, 32) = 524287");
	is_u64(pelt_decay_load(1 << 20, 64), 262143, "decay_load(2^20, 64) = 262143");
	is_u64(pelt_decay_load(UINT64_MAX, 1), 18051468380803694591ULL /* Python big int */,
	       "decay_load keeps a 96-bit product exact for u64 max");
	for (size_t i = 0; i < sizeof(seg) / sizeof(seg[0]); i++)
		is_int(pelt_accumulate_segments(seg[i].p, seg[i].d1, seg[i].d3),
		       seg[i].want, "accumulate_segments(%" PRIu64 ", %u, %u) = %u",
		       seg[i].p, seg[i].d1, seg[i].d3, seg[i].want);
}

/* ------------------------------------------------------------ vector A */

struct arow {
	uint64_t n;
	char sched;			/* 's'ingle, 'p'er-period, every '4' ms */
	unsigned long util, load, runnable;
	uint32_t util_sum;
	uint64_t load_sum;
};

static void test_vectorA(void)
{
	static const struct arow rows[] = {
		{ 1, 's', 21, 21, 21, 1026048, 1002 },
		{ 1, 'p', 21, 21, 21, 1026048, 1002 },
		{ 1, '4', 21, 21, 21, 1026048, 1002 },
		{ 2, 's', 43, 43, 43, 2028544, 1981 },
		{ 2, 'p', 43, 43, 43, 2030109, 1982 },
		{ 32, 's', 512, 512, 512, 23919616, 23359 },
		{ 32, 'p', 512, 512, 512, 23941816, 23369 },
		{ 32, '4', 512, 511, 512, 23921050, 23357 },
		{ 100, 's', 906, 906, 906, 42356736, 41364 },
		{ 100, 'p', 907, 907, 907, 42394947, 41381 },
		{ 100, '4', 906, 906, 906, 42356424, 41358 },
		{ 345, 's', 1023, 1023, 1023, 47812608, 46692 },
		{ 345, 'p', 1024, 1023, 1024, 47856424, 46714 },
		{ 345, '4', 1023, 1023, 1023, 47812542, 46684 },
		{ 1000, 's', 1024, 1024, 1024, 47839232, 46718 },
		{ 1000, 'p', 1024, 1023, 1024, 47883609, 46715 },
		{ 1000, '4', 1024, 1023, 1024, 47840451, 46713 },
	};
	struct pelt_avg sa;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct arow *r = &rows[i];
		const char *name = r->sched == 's' ? "one update" :
				   r->sched == 'p' ? "an update per period" :
						     "an update every 4 ms";

		if (r->sched == 's')
			run_single(&sa, r->n);
		else if (r->sched == 'p')
			run_per_period(&sa, r->n);
		else
			run_every(&sa, r->n, 4000000);
		ok(sa.util_avg == r->util && sa.load_avg == r->load &&
		   sa.runnable_avg == r->runnable && sa.util_sum == r->util_sum &&
		   sa.load_sum == r->load_sum,
		   "always running %" PRIu64 " periods, %s: util/load/runnable "
		   "%lu/%lu/%lu, util_sum %u, load_sum %" PRIu64, r->n, name,
		   r->util, r->load, r->runnable, r->util_sum, r->load_sum);
		if (sa.util_avg != r->util || sa.load_avg != r->load ||
		    sa.util_sum != r->util_sum || sa.load_sum != r->load_sum)
			diag("got %lu/%lu/%lu, util_sum %u, load_sum %" PRIu64,
			     sa.util_avg, sa.load_avg, sa.runnable_avg, sa.util_sum,
			     sa.load_sum);
	}
	run_single(&sa, 1);
	ok(sa.runnable_sum == 1026048 && sa.period_contrib == 0,
	   "one period running: runnable_sum 1 026 048, period_contrib 0");
}

/* ------------------------------------------------------------ vector B */

static void check_duty(const char *name, const struct duty_sample *s,
		       const struct duty_sample *w)
{
	ok(s->util_run == w->util_run && s->load_run == w->load_run &&
	   s->runnable_run == w->runnable_run && s->util_sum_run == w->util_sum_run &&
	   s->pc_run == w->pc_run,
	   "%s, end of run: util/load/runnable %lu/%lu/%lu, util_sum %u, pc %u",
	   name, w->util_run, w->load_run, w->runnable_run, w->util_sum_run, w->pc_run);
	if (s->util_run != w->util_run || s->util_sum_run != w->util_sum_run)
		diag("got %lu/%lu/%lu, util_sum %u, pc %u", s->util_run, s->load_run,
		     s->runnable_run, s->util_sum_run, s->pc_run);
	ok(s->util_sleep == w->util_sleep && s->load_sleep == w->load_sleep &&
	   s->runnable_sleep == w->runnable_sleep &&
	   s->util_sum_sleep == w->util_sum_sleep,
	   "%s, end of sleep: util/load/runnable %lu/%lu/%lu, util_sum %u",
	   name, w->util_sleep, w->load_sleep, w->runnable_sleep, w->util_sum_sleep);
	if (s->util_sleep != w->util_sleep || s->util_sum_sleep != w->util_sum_sleep)
		diag("got %lu/%lu/%lu, util_sum %u", s->util_sleep, s->load_sleep,
		     s->runnable_sleep, s->util_sum_sleep);
}

static void test_vectorB(void)
{
	static const struct { uint64_t r; struct duty_sample w; } rows[] = {
		{ 1, { 518, 517, 518, 506, 506, 506, 24201074, 0, 23682494, 0 } },
		{ 8, { 556, 556, 556, 467, 467, 467, 25986913, 0, 21852301, 0 } },
		{ 16, { 599, 599, 599, 424, 424, 424, 28024830, 0, 19816547, 0 } },
	};
	struct duty_sample s;
	char name[96];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		duty_cycle(0, rows[i].r * P, rows[i].r * P, 400, &s);
		snprintf(name, sizeof(name), "50%% duty %" PRIu64 " periods on/off x400",
			 rows[i].r);
		check_duty(name, &s, &rows[i].w);
	}

	duty_cycle(0, 8000000, 8000000, 400, &s);
	ok(s.util_run == 554 && s.util_sum_run == 26391315 && s.pc_run == 907,
	   "8 ms on / 8 ms off x400 (not aligned), end of run: util 554, "
	   "util_sum 26 391 315, pc 907");
	if (s.util_run != 554 || s.util_sum_run != 26391315 || s.pc_run != 907)
		diag("got util %lu util_sum %u pc %u", s.util_run, s.util_sum_run, s.pc_run);
	ok(s.util_sleep == 469 && s.util_sum_sleep == 22192362 && s.pc_sleep == 528,
	   "8 ms on / 8 ms off x400, end of sleep: util 469, util_sum 22 192 362, pc 528");
	if (s.util_sleep != 469 || s.util_sum_sleep != 22192362 || s.pc_sleep != 528)
		diag("got util %lu util_sum %u pc %u", s.util_sleep, s.util_sum_sleep,
		     s.pc_sleep);

	duty_cycle(0, 500000, 500000, 4000, &s);
	ok(s.util_run == 515 && s.util_sleep == 515 && s.load_run == 514 &&
	   s.load_sleep == 514,
	   "0.5 ms on / 0.5 ms off x4000: util 515 at both samples, load 514 "
	   "(most updates cross no boundary)");
	if (s.util_run != 515 || s.util_sleep != 515 || s.load_run != 514)
		diag("got util %lu/%lu load %lu/%lu", s.util_run, s.util_sleep,
		     s.load_run, s.load_sleep);
}

/* ------------------------------------------------------------ vector C */

static void test_vectorC(void)
{
	static const struct { uint64_t n; unsigned long util; uint32_t single, per; } rows[] = {
		{ 1, 1002, 46814135, 46814135 }, { 8, 861, 40227838, 40227835 },
		{ 16, 724, 33827445, 33827438 }, { 31, 523, 24443387, 24443375 },
		{ 32, 511, 23919615, 23919603 }, { 33, 501, 23407067, 23407055 },
		{ 64, 255, 11959807, 11959790 }, { 100, 117, 5483596, 5483577 },
		{ 320, 0, 46717, 46695 }, { 345, 0, 27183, 27161 },
		{ 640, 0, 44, 26 }, { 1000, 0, 0, 0 }, { 2016, 0, 0, 0 },
		{ 2017, 0, 0, 0 },
	};
	struct pelt_avg a, b;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t n = rows[i].n;

		saturated(&a);
		pelt_se_update(&a, n * P, W0, 0, 0, 0);
		saturated(&b);
		for (uint64_t k = 1; k <= n; k++)
			pelt_se_update(&b, k * P, W0, 0, 0, 0);
		ok(a.util_avg == rows[i].util && a.load_avg == rows[i].util &&
		   a.util_sum == rows[i].single && b.util_sum == rows[i].per,
		   "saturated entity blocked %" PRIu64 " periods: util = load %lu, "
		   "util_sum %u in one update, %u per period", n, rows[i].util,
		   rows[i].single, rows[i].per);
		if (a.util_avg != rows[i].util || a.util_sum != rows[i].single ||
		    b.util_sum != rows[i].per)
			diag("got util %lu load %lu sums %u / %u", a.util_avg, a.load_avg,
			     a.util_sum, b.util_sum);
	}
}

/* ------------------------------------------------------------ vector D */

static void test_vectorD(void)
{
	static const struct { uint64_t n; unsigned long load, runnable, util; } rows[] = {
		{ 1, 43, 43, 21 }, { 32, 1024, 1024, 512 },
		{ 345, 2048, 2048, 1024 }, { 1000, 2049, 2049, 1024 },
	};
	struct pelt_cfs cfs;
	uint64_t k = 0;

	pelt_cfs_init(&cfs);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		while (k < rows[i].n)
			pelt_cfs_update(&cfs, ++k * P, 2048, 2, 1);
		ok(cfs.avg.load_avg == rows[i].load &&
		   cfs.avg.runnable_avg == rows[i].runnable &&
		   cfs.avg.util_avg == rows[i].util,
		   "run queue with two always-runnable nice-0 tasks after %" PRIu64
		   " periods: load/runnable/util %lu/%lu/%lu", rows[i].n,
		   rows[i].load, rows[i].runnable, rows[i].util);
		if (cfs.avg.load_avg != rows[i].load || cfs.avg.util_avg != rows[i].util)
			diag("got %lu/%lu/%lu", cfs.avg.load_avg, cfs.avg.runnable_avg,
			     cfs.avg.util_avg);
	}
}

/* ------------------------------------------------------------ vector E */

static void util_est_sequence(enum pelt_version v, uint32_t *est, int n)
{
	struct pelt_avg se;

	memset(&se, 0, sizeof(se));
	for (int i = 0; i < n; i++) {
		se.util_avg = se.runnable_avg = i ? 400 : 800;
		se.util_est &= ~PELT_UTIL_AVG_UNCHANGED;	/* util changed */
		pelt_util_est_update(&se, v, 1024);
		est[i] = pelt_util_est_get(&se, v);
	}
}

static void test_vectorE(void)
{
	static const struct { uint64_t n; unsigned long util, load; } run[] = {
		{ 1, 522, 1024 }, { 32, 767, 1023 }, { 100, 965, 1024 },
	};
	static const uint32_t want[] = { 800, 700, 625, 568, 526, 494, 470, 452,
					 439, 429, 421, 415, 411, 408, 408, 408 };
	const int n = sizeof(want) / sizeof(want[0]);
	struct pelt_cfs cfs;
	struct pelt_avg se, a;
	uint32_t est[16];
	int good;

	pelt_cfs_init(&cfs);
	pelt_init(&se, W0);
	pelt_post_init(&se, W0, &cfs, 1024);
	ok(se.util_avg == 512 && se.runnable_avg == 512 && se.load_avg == 1024,
	   "new task on an idle CPU of capacity 1024: util = runnable 512, load 1024");
	pelt_attach(&cfs, &se, W0);
	ok(se.util_sum == 23919616 && se.runnable_sum == 23919616 && se.load_sum == 46718,
	   "attach at period_contrib 0: util_sum = runnable_sum 23 919 616, load_sum 46718");
	ok(cfs.avg.util_avg == 512 && cfs.avg.load_avg == 1024 &&
	   cfs.avg.util_sum == 23919616 && cfs.avg.load_sum == 1024 * 46718ULL,
	   "attach adds the new task's averages and weighted sums to the run queue");
	for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++) {
		a = se;
		pelt_se_update(&a, run[i].n * P, W0, 1, 1, 1);
		is_int(a.util_avg * 10000 + a.load_avg, run[i].util * 10000 + run[i].load,
		       "new task then running %" PRIu64 " periods: util %lu, load %lu",
		       run[i].n, run[i].util, run[i].load);
	}

	pelt_cfs_init(&cfs);
	cfs.avg.util_avg = 300;
	cfs.avg.load_avg = 2047;
	pelt_post_init(&se, W0, &cfs, 1024);
	is_int(se.util_avg, 150, "new task where the CPU has util 300 of load 2047: "
	       "util = 300 * 1024 / 2048 = 150, within cap 362");
	cfs.avg.util_avg = 1100;
	se.util_avg = 7;
	pelt_post_init(&se, W0, &cfs, 1024);
	is_int(se.util_avg, 7, "new task on a CPU over capacity: util_avg left as is");

	util_est_sequence(PELT_V6_18, est, n);
	good = !memcmp(est, want, sizeof(want));
	ok(good, "util_est 6.8+: 800 then 400s gives 800, 700, 625, ... 411, 408, 408");
	for (int i = 0; !good && i < n; i++)
		diag("estimate %d: got %u want %u", i, est[i], want[i]);
	util_est_sequence(PELT_V5_14, est, n);
	good = !memcmp(est, want, sizeof(want));
	ok(good, "util_est <=6.7 (enqueued, ewma): same estimates as 6.8+");
	for (int i = 0; !good && i < n; i++)
		diag("estimate %d: got %u want %u", i, est[i], want[i]);
}

/* ------------------------------------------------------------ vector F */

static void test_vectorF(void)
{
	static const struct {
		uint64_t run, sleep;
		unsigned long rlo, rhi, slo, shi;
	} rows[] = {
		{ 4000000, 4000000, 533, 533, 490, 490 },
		{ 8000000, 8000000, 554, 554, 469, 469 },
		{ 1000000, 3000000, 248, 264, 248, 248 },
		{ 300000, 700000, 304, 309, 304, 309 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned long rlo = ~0UL, rhi = 0, slo = ~0UL, shi = 0;
		struct duty_sample s;

		for (unsigned int f = 0; f < 16; f++) {
			duty_cycle(f * P / 16, rows[i].run, rows[i].sleep, 300, &s);
			rlo = s.util_run < rlo ? s.util_run : rlo;
			rhi = s.util_run > rhi ? s.util_run : rhi;
			slo = s.util_sleep < slo ? s.util_sleep : slo;
			shi = s.util_sleep > shi ? s.util_sleep : shi;
		}
		ok(rlo == rows[i].rlo && rhi == rows[i].rhi && slo == rows[i].slo &&
		   shi == rows[i].shi,
		   "%.1f ms on / %.1f ms off at 16 phases: util at end of run %lu..%lu, "
		   "at end of sleep %lu..%lu", rows[i].run / 1e6, rows[i].sleep / 1e6,
		   rows[i].rlo, rows[i].rhi, rows[i].slo, rows[i].shi);
		if (rlo != rows[i].rlo || rhi != rows[i].rhi || slo != rows[i].slo ||
		    shi != rows[i].shi)
			diag("got %lu..%lu / %lu..%lu", rlo, rhi, slo, shi);
	}
}

/* ------------------------------------------------------------ vector G */

static void test_vectorG(void)
{
	static const struct { unsigned long cap, freq, urun, uidle; } rows[] = {
		{ 1024, 1024, 534, 489 }, { 512, 1024, 272, 239 }, { 1024, 512, 272, 239 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pelt_clock clk;
		struct pelt_avg se;
		unsigned long urun = 0, uidle = 0;
		uint64_t t = 0;

		memset(&se, 0, sizeof(se));
		pelt_clock_init(&clk, 0, rows[i].cap, rows[i].freq);
		for (int c = 0; c < 300; c++) {
			t += 4 * P;		/* end of run: task switches out */
			pelt_clock_update(&clk, t, 0);
			pelt_se_update(&se, pelt_clock_now(&clk), W0, 1, 1, 1);
			urun = se.util_avg;
			pelt_clock_idle_enter(&clk, se.util_sum);
			t += 4 * P;		/* end of idle: task wakes */
			pelt_clock_update(&clk, t, 1);
			pelt_se_update(&se, pelt_clock_now(&clk), W0, 0, 0, 0);
			uidle = se.util_avg;
		}
		ok(urun == rows[i].urun && uidle == rows[i].uidle && clk.lost_idle_time == 0,
		   "4 periods on / 4 off at capacity %lu, frequency %lu: util %lu at end "
		   "of run, %lu at end of idle, no lost idle time", rows[i].cap,
		   rows[i].freq, rows[i].urun, rows[i].uidle);
		if (urun != rows[i].urun || uidle != rows[i].uidle)
			diag("got %lu / %lu, lost %" PRIu64, urun, uidle, clk.lost_idle_time);
	}

	{
		struct pelt_clock clk;
		struct pelt_avg se;

		memset(&se, 0, sizeof(se));
		pelt_clock_init(&clk, 0, 512, 1024);
		for (uint64_t k = 1; k <= 1000; k++) {
			pelt_clock_update(&clk, k * P, 0);
			pelt_se_update(&se, pelt_clock_now(&clk), W0, 1, 1, 1);
		}
		is_int(se.util_avg, 1024, "always running on a capacity-512 CPU for 1000 "
		       "wall periods still reaches util 1024");
		is_u64(pelt_clock_now(&clk), 500 * P, "its PELT clock advanced half as fast");
		pelt_clock_idle_enter(&clk, se.util_sum);
		ok(clk.lost_idle_time == 500 * P && pelt_clock_now(&clk) == 500 * P,
		   "idle entry when saturated books the clock deficit as lost idle time");
	}
}


/* ------------------------------------------- tests/helpers/pelt-reference.py vectors */

struct refrow {
	uint64_t n;
	int per_period;
	unsigned long load, runnable, util;
	uint32_t util_sum;
	uint64_t load_sum;
};

static void check_ref(const char *what, const struct refrow *r, const struct pelt_avg *a)
{
	ok(a->load_avg == r->load && a->runnable_avg == r->runnable &&
	   a->util_avg == r->util && a->util_sum == r->util_sum && a->load_sum == r->load_sum,
	   "%s %" PRIu64 " periods, %s: load/runnable/util %lu/%lu/%lu, util_sum %u, "
	   "load_sum %" PRIu64 " (Python reference)", what, r->n,
	   r->per_period ? "per period" : "one update", r->load, r->runnable, r->util,
	   r->util_sum, r->load_sum);
	if (a->util_avg != r->util || a->util_sum != r->util_sum || a->load_sum != r->load_sum)
		diag("got %lu/%lu/%lu, %u, %" PRIu64, a->load_avg, a->runnable_avg,
		     a->util_avg, a->util_sum, a->load_sum);
}

/* Always running from zero, against tests/helpers/pelt-reference.py. */
static void reference_running(void)
{
	/* generated by tests/helpers/pelt-reference.py */
	static const struct refrow running[] = {
		{ 1, 0, 21, 21, 21, 1026048, 1002 },
		{ 1, 1, 21, 21, 21, 1026048, 1002 },
		{ 32, 0, 512, 512, 512, 23919616, 23359 },
		{ 32, 1, 512, 512, 512, 23941816, 23369 },
		{ 100, 0, 906, 906, 906, 42356736, 41364 },
		{ 100, 1, 907, 907, 907, 42394947, 41381 },
		{ 345, 0, 1023, 1023, 1023, 47812608, 46692 },
		{ 345, 1, 1023, 1024, 1024, 47856424, 46714 },
		{ 1000, 0, 1024, 1024, 1024, 47839232, 46718 },
		{ 1000, 1, 1023, 1024, 1024, 47883609, 46715 },
	};
	struct pelt_avg a;

	for (size_t i = 0; i < sizeof(running) / sizeof(running[0]); i++) {
		if (running[i].per_period)
			run_per_period(&a, running[i].n);
		else
			run_single(&a, running[i].n);
		check_ref("always running from zero", &running[i], &a);
	}
}

/* Saturated then blocked, against tests/helpers/pelt-reference.py. */
static void reference_blocked(void)
{
	/* generated by tests/helpers/pelt-reference.py */
	static const struct refrow blocked[] = {
		{ 1, 0, 1002, 1002, 1002, 46814135, 45716 },
		{ 1, 1, 1002, 1002, 1002, 46814135, 45716 },
		{ 31, 0, 523, 523, 523, 24443387, 23870 },
		{ 31, 1, 522, 523, 523, 24443375, 23858 },
		{ 32, 0, 511, 511, 511, 23919615, 23358 },
		{ 32, 1, 511, 511, 511, 23919603, 23346 },
		{ 33, 0, 501, 501, 501, 23407067, 22858 },
		{ 33, 1, 500, 501, 501, 23407055, 22845 },
		{ 63, 0, 261, 261, 261, 12221693, 11935 },
		{ 63, 1, 261, 261, 261, 12221676, 11918 },
		{ 64, 0, 255, 255, 255, 11959807, 11678 },
		{ 64, 1, 255, 255, 255, 11959790, 11662 },
		{ 2047, 0, 0, 0, 0, 0, 0 },
		{ 2047, 1, 0, 0, 0, 0, 0 },
		{ 2048, 0, 0, 0, 0, 0, 0 },
		{ 2048, 1, 0, 0, 0, 0, 0 },
		{ 100000, 0, 0, 0, 0, 0, 0 },
		{ 100000, 1, 0, 0, 0, 0, 0 },
	};
	struct pelt_avg a;

	for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++) {
		uint64_t n = blocked[i].n;

		saturated(&a);
		if (blocked[i].per_period)
			for (uint64_t k = 1; k <= n; k++)
				pelt_se_update(&a, k * P, W0, 0, 0, 0);
		else
			pelt_se_update(&a, n * P, W0, 0, 0, 0);
		check_ref("saturated then blocked", &blocked[i], &a);
	}
}

/* Duty cycles at steady state, against the reference and the float ideal. */
static void reference_duty_cycles(void)
{
	/* generated by tests/helpers/pelt-reference.py */
	/* run, sleep, cycles, end of run l/r/u, util_sum, pc, end of sleep same */
	static const struct {
		uint64_t run, sleep;
		unsigned int cycles;
		struct duty_sample w;
	} duty[] = {
		{ 3000000, 9000000, 500,
		  { 280, 280, 280, 232, 232, 232, 13222404, 473, 10880421, 47 } },
		{ 2097152, 6291456, 500,
		  { 272, 272, 272, 239, 239, 239, 12749824, 0, 11195952, 0 } },
		{ 6000000, 6000000, 500,
		  { 543, 543, 543, 480, 480, 480, 25579494, 331, 22462020, 47 } },
		{ 5242880, 5242880, 500,
		  { 539, 539, 539, 484, 484, 484, 25211587, 0, 22623731, 0 } },
	};
	/* their float ideals (max / min of the continuous signal) */
	static const double ideal[][2] = {
		{ 280.27, 232.72 }, { 272.87, 239.61 }, { 543.69, 480.31 }, { 539.70, 484.30 },
	};

	for (size_t i = 0; i < sizeof(duty) / sizeof(duty[0]); i++) {
		struct duty_sample s, s2;
		char name[96];
		const char *pct = duty[i].run * 3 == duty[i].sleep ? "25%" : "50%";

		duty_cycle(0, duty[i].run, duty[i].sleep, duty[i].cycles, &s);
		snprintf(name, sizeof(name), "%s duty %.3f ms on / %.3f ms off x%u", pct,
			 duty[i].run / 1e6, duty[i].sleep / 1e6, duty[i].cycles);
		ok(s.util_run == duty[i].w.util_run && s.load_run == duty[i].w.load_run &&
		   s.util_sum_run == duty[i].w.util_sum_run && s.pc_run == duty[i].w.pc_run &&
		   s.util_sleep == duty[i].w.util_sleep &&
		   s.util_sum_sleep == duty[i].w.util_sum_sleep &&
		   s.pc_sleep == duty[i].w.pc_sleep,
		   "%s: util %lu at end of run, %lu at end of sleep, sums and phase as the "
		   "Python reference", name, duty[i].w.util_run, duty[i].w.util_sleep);
		if (s.util_sum_run != duty[i].w.util_sum_run ||
		    s.util_sum_sleep != duty[i].w.util_sum_sleep)
			diag("got %lu %u pc %u / %lu %u pc %u", s.util_run, s.util_sum_run,
			     s.pc_run, s.util_sleep, s.util_sum_sleep, s.pc_sleep);
		duty_cycle(0, duty[i].run, duty[i].sleep, duty[i].cycles / 2, &s2);
		ok(labs((long)s.util_run - (long)s2.util_run) <= 1 &&
		   labs((long)s.util_sleep - (long)s2.util_sleep) <= 1,
		   "%s: steady state reached (after %u and %u cycles the samples differ "
		   "by at most 1)", name, duty[i].cycles / 2, duty[i].cycles);
		ok(fabs(s.util_run - ideal[i][0]) <= 2 && fabs(s.util_sleep - ideal[i][1]) <= 2,
		   "%s: within 2 of the float ideal %.2f / %.2f", name, ideal[i][0],
		   ideal[i][1]);
	}
}

static void test_reference(void)
{
	reference_running();
	reference_blocked();
	reference_duty_cycles();
}

/* --------------------------------------------------------- properties */

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/*
 * An update split at arbitrary points agrees with one update across them.
 * From random histories, one state is held over 1..400 periods and
 * accounted either in one update or with 1..20 extra updates at random
 * instants (all before the last period boundary of the span, so both
 * paths recompute the averages at the end). Bounds: averages within 1,
 * util_sum and runnable_sum within 8 * 1024 (8 units; 0.017 % of the
 * maximum), load_sum within 8.
 */
static void test_split(void)
{
	long max_avg = 0, max_util = 0, max_run = 0, max_load = 0;
	const int trials = 20000;

	for (int trial = 0; trial < trials; trial++) {
		struct pelt_avg a, b;
		uint64_t t = 0, pts[20], end, lim;
		int h = rng_next() % 50, st, ns;

		memset(&a, 0, sizeof(a));
		for (int i = 0; i < h; i++) {
			t += rng_next() % (8 * P) + 1024;
			st = rng_next() % 3;
			pelt_se_update(&a, t, W0, st != 2, st != 2, st == 0);
		}
		b = a;
		st = rng_next() % 3;
		end = (t + (1 + rng_next() % 400) * P) / P * P + rng_next() % P;
		if (end / P <= t / P + 1)
			end += P;
		lim = end / P * P;
		ns = 1 + rng_next() % 20;
		for (int i = 0; i < ns; i++)
			pts[i] = t + 1 + rng_next() % (lim - t - 1);
		for (int i = 0; i < ns; i++)
			for (int j = i + 1; j < ns; j++)
				if (pts[j] < pts[i]) {
					uint64_t x = pts[i];

					pts[i] = pts[j];
					pts[j] = x;
				}
		for (int i = 0; i < ns; i++)
			pelt_se_update(&b, pts[i], W0, st != 2, st != 2, st == 0);
		pelt_se_update(&b, end, W0, st != 2, st != 2, st == 0);
		pelt_se_update(&a, end, W0, st != 2, st != 2, st == 0);

#define TRACK(m, x, y) do { long d_ = labs((long)(x) - (long)(y)); if (d_ > m) m = d_; } while (0)
		TRACK(max_avg, a.util_avg, b.util_avg);
		TRACK(max_avg, a.load_avg, b.load_avg);
		TRACK(max_avg, a.runnable_avg, b.runnable_avg);
		TRACK(max_util, a.util_sum, b.util_sum);
		TRACK(max_run, a.runnable_sum, b.runnable_sum);
		TRACK(max_load, a.load_sum, b.load_sum);
#undef TRACK
	}
	diag("split vs single over %d schedules: max |d avg| %ld, |d util_sum| %ld, "
	     "|d runnable_sum| %ld, |d load_sum| %ld", trials, max_avg, max_util,
	     max_run, max_load);
	ok(max_avg <= 1, "updates split at arbitrary points agree with one update: "
	   "averages within 1");
	ok(max_util <= 8192 && max_run <= 8192 && max_load <= 8,
	   "updates split at arbitrary points agree with one update: util and runnable "
	   "sums within 8192 (0.017 %% of max), load_sum within 8");
}

/*
 * The integer engine against the float ideal 1024 * (1 - y^n) of an
 * always-running entity, for every n in 1..1000, one update or one per
 * period. Bound: 1.1 (the truncations cost at most one unit of average).
 */
static void test_float_ideal(void)
{
	double y = pow(0.5, 1.0 / 32), worst[2] = { 0, 0 };

	for (int pp = 0; pp < 2; pp++) {
		for (uint64_t n = 1; n <= 1000; n++) {
			struct pelt_avg a;
			double id = 1024 * (1 - pow(y, (double)n));

			if (pp)
				run_per_period(&a, n);
			else
				run_single(&a, n);
			worst[pp] = fmax(worst[pp], fabs(a.util_avg - id));
			worst[pp] = fmax(worst[pp], fabs(a.load_avg - id));
			worst[pp] = fmax(worst[pp], fabs(a.runnable_avg - id));
		}
	}
	diag("max |integer - float ideal|: %.3f (one update), %.3f (per period)",
	     worst[0], worst[1]);
	ok(worst[0] <= 1.1 && worst[1] <= 1.1, "always running 1..1000 periods: "
	   "util/load/runnable within 1.1 of the float ideal 1024(1 - y^n)");
}

/* ------------------------------------------------ run queue operations */

static int avg_equal(const struct pelt_avg *a, const struct pelt_avg *b)
{
	return a->load_sum == b->load_sum && a->runnable_sum == b->runnable_sum &&
	       a->util_sum == b->util_sum && a->load_avg == b->load_avg &&
	       a->runnable_avg == b->runnable_avg && a->util_avg == b->util_avg &&
	       a->last_update_time == b->last_update_time &&
	       a->period_contrib == b->period_contrib;
}

static void test_cfs_ops(void)
{
	struct pelt_cfs cfs, before;
	struct pelt_avg t1, t2, nt;
	uint64_t t;

	/* two nice-0 tasks sharing a CPU, switching every period */
	pelt_cfs_init(&cfs);
	pelt_init(&t1, W0);
	pelt_init(&t2, W0);
	pelt_post_init(&t1, W0, &cfs, 1024);
	pelt_attach(&cfs, &t1, W0);
	pelt_post_init(&t2, W0, &cfs, 1024);
	pelt_attach(&cfs, &t2, W0);
	for (t = P + 12345; t < 600 * P; t += P) {
		int first = (t / P) & 1;

		pelt_se_update(&t1, t, W0, 1, 1, first);
		pelt_se_update(&t2, t, W0, 1, 1, !first);
		pelt_cfs_update(&cfs, t, 2 * W0, 2, 1);
	}
	diag("two tasks: t1 util %lu load %lu, t2 util %lu load %lu, cfs util %lu "
	     "load %lu runnable %lu", t1.util_avg, t1.load_avg, t2.util_avg, t2.load_avg,
	     cfs.avg.util_avg, cfs.avg.load_avg, cfs.avg.runnable_avg);
	ok(labs((long)cfs.avg.util_avg - (long)(t1.util_avg + t2.util_avg)) <= 2 &&
	   labs((long)cfs.avg.load_avg - (long)(t1.load_avg + t2.load_avg)) <= 2 &&
	   labs((long)cfs.avg.runnable_avg - (long)(t1.runnable_avg + t2.runnable_avg)) <= 2,
	   "two tasks sharing a CPU: run queue averages equal the tasks' sums within 2");
	ok(cfs.avg.util_avg >= 1020 && cfs.avg.runnable_avg >= 2040 &&
	   t1.util_avg >= 500 && t1.util_avg <= 524,
	   "two tasks sharing a CPU: CPU util ~1024, runnable ~2048, each task ~512");

	/* attach then detach at the same instant restores the run queue exactly */
	before = cfs;
	pelt_init(&nt, pelt_nice_to_weight(-5));
	nt.util_avg = 300;
	nt.runnable_avg = 310;
	pelt_attach(&cfs, &nt, pelt_nice_to_weight(-5));
	ok(cfs.avg.util_avg == before.avg.util_avg + 300 &&
	   cfs.avg.load_avg == before.avg.load_avg + 3121,
	   "attach adds the entity's averages to the run queue");
	ok(nt.last_update_time == cfs.avg.last_update_time &&
	   nt.period_contrib == cfs.avg.period_contrib,
	   "attach aligns the entity with the run queue's clock and period phase");
	pelt_detach(&cfs, &nt);
	ok(avg_equal(&cfs.avg, &before.avg),
	   "attach then detach at the same instant returns the run queue to its sums "
	   "and averages");

	/* remove: applied at the next run queue update */
	pelt_attach(&cfs, &nt, pelt_nice_to_weight(-5));
	pelt_remove(&cfs, &nt);
	ok(cfs.removed_nr == 1 && cfs.removed_util_avg == 300 &&
	   cfs.avg.util_avg == before.avg.util_avg + 300,
	   "remove queues the contribution without touching the averages yet");
	pelt_cfs_update(&cfs, cfs.avg.last_update_time, 2 * W0, 2, 1);
	ok(avg_equal(&cfs.avg, &before.avg) && cfs.removed_nr == 0,
	   "the next run queue update applies the removal: sums and averages as before "
	   "the attach");

	/* remove syncs the entity to the run queue's last update, not beyond */
	nt = t1;
	t = cfs.avg.last_update_time;
	nt.last_update_time = t - 10 * P;
	pelt_remove(&cfs, &nt);
	ok(nt.last_update_time == t && nt.util_avg < t1.util_avg,
	   "remove first decays a stale entity to the run queue's last update");
	cfs.removed_nr = 0;
	cfs.removed_util_avg = cfs.removed_load_avg = cfs.removed_runnable_avg = 0;

	/* saturating subtraction */
	pelt_cfs_init(&cfs);
	cfs.avg.util_avg = 10;
	cfs.avg.util_sum = 10 * PELT_MIN_DIVIDER;
	nt = t1;
	pelt_detach(&cfs, &nt);
	ok(cfs.avg.util_avg == 0 && cfs.avg.util_sum == 0 && cfs.avg.load_avg == 0,
	   "detaching more than the run queue holds saturates at zero");
}

/* The <=6.19 lower-bound clamp truncates u64 sums to 32 bits; 7.0 does not. */
static void test_clamp_versions(void)
{
	struct pelt_cfs cfs;
	struct pelt_avg se;
	const uint64_t big = 6000000000ULL;	/* > 2^32 */

	memset(&se, 0, sizeof(se));
	se.weight = W0;
	se.load_avg = 1;
	se.load_sum = 10;
	pelt_cfs_init(&cfs);
	cfs.version = PELT_V6_18;
	cfs.avg.load_sum = big;
	cfs.avg.load_avg = 100000;
	pelt_detach(&cfs, &se);
	is_u64(cfs.avg.load_sum, (uint32_t)(big - 10240) > (uint32_t)(99999ULL * 46718) ?
	       (uint32_t)(big - 10240) : (uint32_t)(99999ULL * 46718),
	       "6.18 detach: the load_sum clamp is computed in u32 (sum truncated)");
	ok(cfs.avg.load_sum < (1ULL << 32), "6.18 detach: a load_sum above 2^32 comes "
	   "back below it");
	pelt_cfs_init(&cfs);
	cfs.version = PELT_V7_0;
	cfs.avg.load_sum = big;
	cfs.avg.load_avg = 100000;
	pelt_detach(&cfs, &se);
	is_u64(cfs.avg.load_sum, big - 10240, "7.0 detach: load_sum keeps 64 bits");
}

static void test_edges(void)
{
	struct pelt_avg a;

	memset(&a, 0, sizeof(a));
	pelt_se_update(&a, 5 * P, W0, 1, 1, 1);
	pelt_se_update(&a, 5 * P + 1023, W0, 1, 1, 1);
	ok(a.last_update_time == 5 * P, "an update under 1024 ns changes nothing");
	pelt_se_update(&a, 5 * P + 2047, W0, 1, 1, 1);
	ok(a.last_update_time == 5 * P + 1024 && a.period_contrib == 1,
	   "the sub-1024 ns remainder is kept for the next update");
	pelt_se_update(&a, 3 * P + 7, W0, 1, 1, 1);
	ok(a.last_update_time == 3 * P + 7 && a.period_contrib == 1,
	   "time going backwards only resets last_update_time");
	ok(pelt_update_sum(&a, 3 * P + 7 + 500 * 1024, 1, 1, 1) == 0 &&
	   a.period_contrib == 501,
	   "an update inside the open period grows sums but reports no boundary");
	memset(&a, 0, sizeof(a));
	a.util_sum = 1000;
	pelt_update_sum(&a, 10 * P, 0, 1, 1);
	ok(a.util_sum < 1000 && a.runnable_sum == 0,
	   "with load 0 the entity is neither runnable nor running");
	memset(&a, 0, sizeof(a));
	pelt_se_update(&a, 32 * P, W0, 1, 3, 1);
	ok(a.runnable_avg == 1536 && a.util_avg == 512 && a.load_avg == 512,
	   "a group entity with 3 runnable tasks for 32 periods: runnable 1536, "
	   "util 512, load 512");

	is_int(pelt_nice_to_weight(0), 1024, "nice 0 weighs 1024");
	is_int(pelt_nice_to_weight(-20), 88761, "nice -20 weighs 88761");
	is_int(pelt_nice_to_weight(19), 15, "nice 19 weighs 15");
	is_int(pelt_nice_to_weight(25), 15, "nice beyond 19 is clamped");
	is_int(pelt_scale_load_down(0), 0, "scale_load_down(0) is 0");
	is_int(pelt_scale_load_down(3 << 10), 3, "scale_load_down of SCHED_IDLE's 3072 is 3");
	is_int(pelt_scale_load_down(1000), 2, "scale_load_down never goes below 2");
}

static void test_util_est_more(void)
{
	struct pelt_avg se;
	struct pelt_cfs cfs;

	memset(&se, 0, sizeof(se));
	se.util_avg = se.runnable_avg = 500;
	pelt_util_est_update(&se, PELT_V6_18, 1024);
	se.util_avg = 100;
	pelt_util_est_update(&se, PELT_V6_18, 1024);
	is_int(pelt_util_est_get(&se, PELT_V6_18), 500,
	       "util_est is not updated again until util_avg has been recomputed");
	pelt_se_update(&se, P, W0, 1, 1, 1);	/* crosses a boundary: flag cleared */
	ok(!(se.util_est & PELT_UTIL_AVG_UNCHANGED),
	   "a recomputation of util_avg clears the UNCHANGED flag");

	se.util_est = 500;
	se.util_avg = 300;
	se.runnable_avg = 400;
	pelt_util_est_update(&se, PELT_V6_18, 1024);
	is_int(pelt_util_est_get(&se, PELT_V6_18), 500,
	       "6.8+: a task that waited for the CPU (runnable > util + 10) keeps its ewma");
	se.util_est = 1024;
	se.util_avg = se.runnable_avg = 0;
	se.util_avg = 1000;
	se.util_est = 1050;
	pelt_util_est_update(&se, PELT_V6_8, 900);
	is_int(se.util_est, 1050, "6.8-6.12: no update when the task is bigger than the CPU");
	se.util_est = 1050;
	pelt_util_est_update(&se, PELT_V6_18, 900);
	is_int(pelt_util_est_get(&se, PELT_V6_18), 1037, "6.18: the capacity test is gone");

	memset(&se, 0, sizeof(se));
	se.util_avg = 400;
	pelt_util_est_update(&se, PELT_V5_14, 1024);
	se.util_est &= ~PELT_UTIL_AVG_UNCHANGED;
	se.util_avg = 395;
	pelt_util_est_update(&se, PELT_V5_14, 1024);
	ok(se.util_est_ewma == 400 && (se.util_est & ~PELT_UTIL_AVG_UNCHANGED) == 400,
	   "<=6.7: within the margin of both ewma and enqueued, nothing changes");
	se.util_est = 420;	/* last enqueued 420, ewma 400 */
	se.util_avg = 405;
	pelt_util_est_update(&se, PELT_V5_14, 1024);
	ok(se.util_est_ewma == 405 && (se.util_est & ~PELT_UTIL_AVG_UNCHANGED) == 405,
	   "<=6.7: FASTUP raises ewma to a larger enqueued value at once");

	pelt_cfs_init(&cfs);
	memset(&se, 0, sizeof(se));
	se.util_est = 300 | PELT_UTIL_AVG_UNCHANGED;
	pelt_util_est_enqueue(&cfs, &se);
	pelt_util_est_enqueue(&cfs, &se);
	is_int(cfs.util_est, 600, "run queue util_est sums the enqueued tasks' estimates "
	       "without the flag");
	pelt_util_est_dequeue(&cfs, &se);
	se.util_est = 500;
	pelt_util_est_dequeue(&cfs, &se);
	is_int(cfs.util_est, 0, "run queue util_est dequeue saturates at zero");
}

/*
 * pelt_cfs_recount(): redoing an update's runnable part with another count
 * gives what integrating with that count would have, to the unit.
 */
static void test_recount(void)
{
	struct pelt_cfs a, b;
	uint64_t t0 = 1000 * P + 300 * 1024, spans[] = { 700 * 1024, 3 * P + 123 * 1024, 40 * P };

	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		pelt_cfs_init(&a);
		pelt_cfs_update(&a, t0, 3 * W0, 2, 1);
		a.avg.runnable_sum = 900ull * (PELT_MIN_DIVIDER + a.avg.period_contrib);
		a.avg.runnable_avg = 900;
		b = a;
		pelt_cfs_update(&a, t0 + spans[i], 3 * W0, 3, 1);
		ok(pelt_cfs_recount(&a, 2) == 1, "recount of a %llu ns update from 3 to 2 runnable",
		   (unsigned long long)spans[i]);
		pelt_cfs_update(&b, t0 + spans[i], 3 * W0, 2, 1);
		ok(a.avg.runnable_sum == b.avg.runnable_sum && a.avg.runnable_avg == b.avg.runnable_avg &&
		   a.avg.util_sum == b.avg.util_sum && a.avg.load_sum == b.avg.load_sum,
		   "... equals integrating with 2 (sum %llu/%llu, avg %lu/%lu)",
		   (unsigned long long)a.avg.runnable_sum, (unsigned long long)b.avg.runnable_sum,
		   a.avg.runnable_avg, b.avg.runnable_avg);
		ok(pelt_cfs_recount(&a, 2) == 0, "... and a second recount to the same count is a no-op");
	}
	/* an update that moved no time has nothing to redo */
	pelt_cfs_init(&a);
	pelt_cfs_update(&a, t0, 3 * W0, 2, 1);
	pelt_cfs_update(&a, t0 + 500, 3 * W0, 2, 1);
	b = a;
	pelt_cfs_recount(&a, 1);
	ok(a.last_contrib > 0 && a.avg.last_update_time == t0 &&
	   a.avg.runnable_sum == b.avg.runnable_sum - ((uint64_t)a.last_contrib << 10),
	   "an update under 1024 ns moves no time: the recount redoes the one before");
}

int main(void)
{
	test_vector0();
	test_vectorA();
	test_vectorB();
	test_vectorC();
	test_vectorD();
	test_vectorE();
	test_vectorF();
	test_vectorG();
	test_reference();
	test_split();
	test_float_ideal();
	test_cfs_ops();
	test_clamp_versions();
	test_edges();
	test_util_est_more();
	test_recount();
	return tap_done();
}

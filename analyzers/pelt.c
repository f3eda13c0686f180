// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pelt.c - the kernel's PELT arithmetic, integer-exact (see pelt.h).
 *
 * The arithmetic is explained in doc/pelt.md §1-§5; widths follow the
 * 64-bit kernel: sums u64 except util_sum (u32), averages unsigned long,
 * every division and decay truncating, subtractions saturating at 0.
 */
#include "pelt.h"

#include <stddef.h>
#include <string.h>

/*
 * (2^32 - 1) * y^i truncated, y = 2^(-1/32): a fact of the kernel
 * (sched-pelt.h); tests/unit/test_pelt.c regenerates it in double.
 */
static const uint32_t pelt_yn_inv[PELT_LOAD_AVG_PERIOD] = {
	0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6,
	0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85,
	0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
	0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
	0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80,
	0x85aac367, 0x82cd8698,
};

/* sched_prio_to_weight[], nice -20 .. 19 (unscaled, nice 0 = 1024) */
static const unsigned long pelt_prio_to_weight[40] = {
	88761, 71755, 56483, 46273, 36291,
	29154, 23254, 18705, 14949, 11916,
	9548, 7620, 6100, 4904, 3906,
	3121, 2501, 1991, 1586, 1277,
	1024, 820, 655, 526, 423,
	335, 272, 215, 172, 137,
	110, 87, 70, 56, 45,
	36, 29, 23, 18, 15,
};

/* saturating subtraction in the destination's width (sub_positive) */
#define PELT_SUB_POSITIVE(ptr, val) do {				\
	__typeof__(*(ptr)) v_ = (__typeof__(*(ptr)))(val);		\
	__typeof__(*(ptr)) r_ = *(ptr) - v_;				\
	*(ptr) = r_ > *(ptr) ? 0 : r_;					\
} while (0)

uint32_t pelt_decay_table(unsigned int i)
{
	return i < PELT_LOAD_AVG_PERIOD ? pelt_yn_inv[i] : 0;
}

uint64_t pelt_decay_load(uint64_t val, uint64_t n)
{
	if (n > PELT_LOAD_AVG_PERIOD * 63)
		return 0;
	if (n >= PELT_LOAD_AVG_PERIOD) {
		val >>= n / PELT_LOAD_AVG_PERIOD;
		n %= PELT_LOAD_AVG_PERIOD;
	}
	return (uint64_t)(((unsigned __int128)val * pelt_yn_inv[n]) >> 32);
}

uint32_t pelt_accumulate_segments(uint64_t periods, uint32_t d1, uint32_t d3)
{
	uint32_t c1, c2, c3 = d3;

	c1 = (uint32_t)pelt_decay_load(d1, periods);
	c2 = PELT_LOAD_AVG_MAX -
	     (uint32_t)pelt_decay_load(PELT_LOAD_AVG_MAX, periods) - 1024;
	return c1 + c2 + c3;
}

/* accumulate_sum(): @delta in 1024-ns units; returns periods crossed */
static uint64_t pelt_accumulate_sum(uint64_t delta, struct pelt_avg *sa,
				    unsigned long load, unsigned long runnable,
				    int running, uint32_t *contrib_out)
{
	uint32_t contrib = (uint32_t)delta;
	uint64_t periods;

	delta += sa->period_contrib;
	periods = delta / 1024;
	if (periods) {
		sa->load_sum = pelt_decay_load(sa->load_sum, periods);
		sa->runnable_sum = pelt_decay_load(sa->runnable_sum, periods);
		sa->util_sum = (uint32_t)pelt_decay_load(sa->util_sum, periods);
		delta %= 1024;
		if (load)
			contrib = pelt_accumulate_segments(periods,
					1024 - sa->period_contrib, (uint32_t)delta);
	}
	sa->period_contrib = (uint32_t)delta;

	if (load)
		sa->load_sum += load * contrib;
	if (runnable)
		sa->runnable_sum += (uint64_t)(runnable * contrib) << 10;
	if (running)
		sa->util_sum += contrib << 10;
	*contrib_out = load ? contrib : 0;
	return periods;
}

/* pelt_update_sum(); *@contrib: the interval's contribution, 0 if none */
static int pelt_update_sum_contrib(struct pelt_avg *sa, uint64_t now, unsigned long load,
				   unsigned long runnable, int running, uint32_t *contrib)
{
	uint64_t delta = now - sa->last_update_time;

	*contrib = 0;
	if ((int64_t)delta < 0) {
		sa->last_update_time = now;
		return 0;
	}
	delta >>= 10;
	if (!delta)
		return 0;
	sa->last_update_time += delta << 10;
	if (!load)
		runnable = running = 0;
	return pelt_accumulate_sum(delta, sa, load, runnable, running, contrib) ? 1 : 0;
}

int pelt_update_sum(struct pelt_avg *sa, uint64_t now, unsigned long load,
		    unsigned long runnable, int running)
{
	uint32_t contrib;

	return pelt_update_sum_contrib(sa, now, load, runnable, running, &contrib);
}

static uint32_t pelt_divider(const struct pelt_avg *sa)
{
	return PELT_MIN_DIVIDER + sa->period_contrib;
}

void pelt_update_avg(struct pelt_avg *sa, unsigned long load)
{
	uint32_t divider = pelt_divider(sa);

	sa->load_avg = (unsigned long)((uint64_t)load * sa->load_sum / divider);
	sa->runnable_avg = (unsigned long)(sa->runnable_sum / divider);
	sa->util_avg = sa->util_sum / divider;
}

int pelt_se_update(struct pelt_avg *se, uint64_t now, unsigned long se_weight,
		   int on_rq, int runnable, int running)
{
	se->weight = se_weight;
	if (!pelt_update_sum(se, now, !!on_rq,
			     runnable > 0 ? (unsigned long)runnable : 0, running))
		return 0;
	pelt_update_avg(se, se_weight);
	/* cfs_se_util_change(): util_avg changed, allow a new estimate */
	se->util_est &= ~PELT_UTIL_AVG_UNCHANGED;
	return 1;
}

void pelt_cfs_init(struct pelt_cfs *cfs)
{
	memset(cfs, 0, sizeof(*cfs));
	cfs->version = PELT_VERSION_DEFAULT;
}

/*
 * The lower-bound clamp "sum >= avg * PELT_MIN_DIVIDER" (since ~5.14).
 * Up to 6.19 the kernel computes it with max_t(u32, ...), truncating the
 * u64 sums to 32 bits; 7.0 uses the field's width.
 */
static uint64_t pelt_clamp_sum(enum pelt_version v, uint64_t sum, unsigned long avg)
{
	uint64_t floor = (uint64_t)avg * PELT_MIN_DIVIDER;

	if (v < PELT_V7_0) {
		uint32_t s = (uint32_t)sum, f = (uint32_t)floor;

		return s > f ? s : f;
	}
	return sum > floor ? sum : floor;
}

static uint32_t pelt_clamp_util(uint32_t sum, unsigned long avg)
{
	uint32_t floor = (uint32_t)(avg * PELT_MIN_DIVIDER);

	return sum > floor ? sum : floor;
}

int pelt_cfs_update(struct pelt_cfs *cfs, uint64_t now, unsigned long weight_sum,
		    unsigned int h_nr_runnable, int curr)
{
	struct pelt_avg *sa = &cfs->avg;
	uint64_t before;
	uint32_t contrib;
	int decayed = 0, periods;

	if (cfs->removed_nr) {
		uint32_t divider = pelt_divider(sa);
		unsigned long r;

		r = cfs->removed_load_avg;
		PELT_SUB_POSITIVE(&sa->load_avg, r);
		PELT_SUB_POSITIVE(&sa->load_sum, (uint64_t)r * divider);
		sa->load_sum = pelt_clamp_sum(cfs->version, sa->load_sum, sa->load_avg);

		r = cfs->removed_util_avg;
		PELT_SUB_POSITIVE(&sa->util_avg, r);
		PELT_SUB_POSITIVE(&sa->util_sum, (uint64_t)r * divider);
		sa->util_sum = pelt_clamp_util(sa->util_sum, sa->util_avg);

		r = cfs->removed_runnable_avg;
		PELT_SUB_POSITIVE(&sa->runnable_avg, r);
		PELT_SUB_POSITIVE(&sa->runnable_sum, (uint64_t)r * divider);
		sa->runnable_sum = pelt_clamp_sum(cfs->version, sa->runnable_sum,
						  sa->runnable_avg);

		cfs->prop_runnable_sum -= (int64_t)(((uint64_t)r * divider) >> 10);
		cfs->removed_load_avg = 0;
		cfs->removed_util_avg = 0;
		cfs->removed_runnable_avg = 0;
		cfs->removed_nr = 0;
		decayed = 1;
	}

	before = sa->last_update_time;
	periods = pelt_update_sum_contrib(sa, now, pelt_scale_load_down(weight_sum << 10),
					  h_nr_runnable, !!curr, &contrib);
	if (sa->last_update_time != before) {
		cfs->last_contrib = contrib;
		cfs->last_runnable = contrib ? h_nr_runnable : 0;
		cfs->last_recomputed = periods;
	}
	if (periods) {
		pelt_update_avg(sa, 1);
		decayed = 1;
	}
	return decayed;
}

int pelt_cfs_recount(struct pelt_cfs *cfs, unsigned int h_nr_runnable)
{
	struct pelt_avg *sa = &cfs->avg;
	int64_t d;

	if (!cfs->last_contrib || cfs->last_runnable == h_nr_runnable)
		return 0;
	d = ((int64_t)h_nr_runnable - (int64_t)cfs->last_runnable) * ((int64_t)cfs->last_contrib << 10);
	if (d < 0 && (uint64_t)-d > sa->runnable_sum)
		d = -(int64_t)sa->runnable_sum;
	sa->runnable_sum += d;
	if (cfs->last_recomputed) {
		int64_t a = d / (int64_t)pelt_divider(sa);

		if (a < 0 && (uint64_t)-a > sa->runnable_avg)
			a = -(int64_t)sa->runnable_avg;
		sa->runnable_avg += a;
	}
	cfs->last_runnable = h_nr_runnable;
	return 1;
}

void pelt_attach(struct pelt_cfs *cfs, struct pelt_avg *se, unsigned long se_weight)
{
	struct pelt_avg *sa = &cfs->avg;
	uint32_t divider = pelt_divider(sa);

	se->weight = se_weight;
	se->last_update_time = sa->last_update_time;
	se->period_contrib = sa->period_contrib;
	se->util_sum = (uint32_t)(se->util_avg * divider);
	se->runnable_sum = (uint64_t)se->runnable_avg * divider;
	se->load_sum = (uint64_t)se->load_avg * divider;
	if (se_weight < se->load_sum)
		se->load_sum /= se_weight;
	else
		se->load_sum = 1;

	sa->load_avg += se->load_avg;
	sa->load_sum += (uint64_t)se_weight * se->load_sum;
	if (cfs->version >= PELT_V7_0)
		sa->load_sum = pelt_clamp_sum(cfs->version, sa->load_sum, sa->load_avg);
	sa->util_avg += se->util_avg;
	sa->util_sum += se->util_sum;
	sa->runnable_avg += se->runnable_avg;
	sa->runnable_sum += se->runnable_sum;
	cfs->prop_runnable_sum += (int64_t)se->load_sum;
}

void pelt_detach(struct pelt_cfs *cfs, struct pelt_avg *se)
{
	struct pelt_avg *sa = &cfs->avg;

	PELT_SUB_POSITIVE(&sa->load_avg, se->load_avg);
	PELT_SUB_POSITIVE(&sa->load_sum, (uint64_t)se->weight * se->load_sum);
	sa->load_sum = pelt_clamp_sum(cfs->version, sa->load_sum, sa->load_avg);

	PELT_SUB_POSITIVE(&sa->util_avg, se->util_avg);
	PELT_SUB_POSITIVE(&sa->util_sum, se->util_sum);
	sa->util_sum = pelt_clamp_util(sa->util_sum, sa->util_avg);

	PELT_SUB_POSITIVE(&sa->runnable_avg, se->runnable_avg);
	PELT_SUB_POSITIVE(&sa->runnable_sum, se->runnable_sum);
	sa->runnable_sum = pelt_clamp_sum(cfs->version, sa->runnable_sum,
					  sa->runnable_avg);

	cfs->prop_runnable_sum -= (int64_t)se->load_sum;
}

void pelt_se_sync(struct pelt_avg *se, const struct pelt_cfs *cfs)
{
	if (pelt_update_sum(se, cfs->avg.last_update_time, 0, 0, 0))
		pelt_update_avg(se, se->weight);
}

void pelt_remove(struct pelt_cfs *cfs, struct pelt_avg *se)
{
	pelt_se_sync(se, cfs);
	cfs->removed_nr++;
	cfs->removed_util_avg += se->util_avg;
	cfs->removed_load_avg += se->load_avg;
	cfs->removed_runnable_avg += se->runnable_avg;
}

void pelt_init(struct pelt_avg *se, unsigned long se_weight)
{
	memset(se, 0, sizeof(*se));
	se->weight = se_weight;
	se->load_avg = se_weight;
}

void pelt_post_init(struct pelt_avg *se, unsigned long se_weight,
		    const struct pelt_cfs *cfs, unsigned long cpu_capacity)
{
	long cap = ((long)cpu_capacity - (long)cfs->avg.util_avg) / 2;

	se->weight = se_weight;
	if (cap > 0) {
		if (cfs->avg.util_avg) {
			se->util_avg = cfs->avg.util_avg * se_weight;
			se->util_avg /= cfs->avg.load_avg + 1;
			if (se->util_avg > (unsigned long)cap)
				se->util_avg = (unsigned long)cap;
		} else {
			se->util_avg = (unsigned long)cap;
		}
	}
	se->runnable_avg = se->util_avg;
}

uint32_t pelt_util_est_get(const struct pelt_avg *se, enum pelt_version v)
{
	uint32_t enq = se->util_est & ~PELT_UTIL_AVG_UNCHANGED;

	if (v >= PELT_V6_8)
		return enq;
	return se->util_est_ewma > enq ? se->util_est_ewma : enq;
}

/* |x| < margin, computed like the kernel's within_margin() */
static int pelt_within_margin(int32_t x, int32_t margin)
{
	return (uint32_t)(x + margin - 1) < (uint32_t)(2 * margin - 1);
}

static void pelt_util_est_update_legacy(struct pelt_avg *se, unsigned long cpu_capacity)
{
	uint32_t enqueued, ewma = se->util_est_ewma;
	int32_t last_ewma_diff, last_enqueued_diff;

	if (se->util_est & PELT_UTIL_AVG_UNCHANGED)
		return;
	last_enqueued_diff = (int32_t)se->util_est;
	enqueued = (uint32_t)se->util_avg;
	if (ewma < enqueued) {		/* UTIL_EST_FASTUP */
		ewma = enqueued;
		goto done;
	}
	last_ewma_diff = (int32_t)(enqueued - ewma);
	last_enqueued_diff -= (int32_t)enqueued;
	if (pelt_within_margin(last_ewma_diff, PELT_UTIL_EST_MARGIN)) {
		if (!pelt_within_margin(last_enqueued_diff, PELT_UTIL_EST_MARGIN))
			goto done;
		return;
	}
	if (se->util_avg > cpu_capacity)
		return;
	ewma = (uint32_t)(((ewma << 2) + (uint32_t)last_ewma_diff) >> 2);
done:
	se->util_est = enqueued | PELT_UTIL_AVG_UNCHANGED;
	se->util_est_ewma = ewma;
}

void pelt_util_est_update(struct pelt_avg *se, enum pelt_version v,
			  unsigned long cpu_capacity)
{
	uint32_t ewma = se->util_est, dequeued, diff;

	if (v < PELT_V6_8) {
		pelt_util_est_update_legacy(se, cpu_capacity);
		return;
	}
	if (ewma & PELT_UTIL_AVG_UNCHANGED)
		return;
	dequeued = (uint32_t)se->util_avg;
	if (ewma <= dequeued) {
		ewma = dequeued;
		goto done;
	}
	diff = ewma - dequeued;
	if (diff < PELT_UTIL_EST_MARGIN)
		goto done;
	if (v == PELT_V6_8 && dequeued > cpu_capacity)
		return;
	if (dequeued + PELT_UTIL_EST_MARGIN < se->runnable_avg)
		goto done;
	ewma = ((ewma << 2) - diff) >> 2;
done:
	se->util_est = ewma | PELT_UTIL_AVG_UNCHANGED;
}

void pelt_util_est_enqueue(struct pelt_cfs *cfs, const struct pelt_avg *se)
{
	cfs->util_est += pelt_util_est_get(se, cfs->version);
}

void pelt_util_est_dequeue(struct pelt_cfs *cfs, const struct pelt_avg *se)
{
	PELT_SUB_POSITIVE(&cfs->util_est, pelt_util_est_get(se, cfs->version));
}

unsigned long pelt_nice_to_weight(int nice)
{
	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	return pelt_prio_to_weight[nice + 20];
}

unsigned long pelt_scale_load_down(unsigned long w)
{
	if (!w)
		return 0;
	w >>= 10;
	return w > 2 ? w : 2;
}

void pelt_clock_init(struct pelt_clock *clk, uint64_t clock_task,
		     unsigned long cpu_capacity, unsigned long freq_scale)
{
	clk->clock_task = clock_task;
	clk->clock_pelt = clock_task;
	clk->lost_idle_time = 0;
	clk->cpu_capacity = cpu_capacity ? cpu_capacity : PELT_CAPACITY_SCALE;
	clk->freq_scale = freq_scale ? freq_scale : PELT_CAPACITY_SCALE;
}

void pelt_clock_update(struct pelt_clock *clk, uint64_t clock_task, int idle)
{
	uint64_t delta = clock_task - clk->clock_task;

	if ((int64_t)delta < 0)		/* update_rq_clock ignores these */
		return;
	clk->clock_task = clock_task;
	if (idle) {
		clk->clock_pelt = clock_task;
		return;
	}
	delta = (delta * clk->cpu_capacity) >> 10;
	delta = (delta * clk->freq_scale) >> 10;
	clk->clock_pelt += delta;
}

void pelt_clock_idle_enter(struct pelt_clock *clk, uint32_t util_sum)
{
	if (util_sum >= PELT_LOST_IDLE_THRESHOLD)
		clk->lost_idle_time += clk->clock_task - clk->clock_pelt;
	clk->clock_pelt = clk->clock_task;
}

uint64_t pelt_clock_now(const struct pelt_clock *clk)
{
	return clk->clock_pelt - clk->lost_idle_time;
}

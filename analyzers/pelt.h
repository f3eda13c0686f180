/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pelt.h - the kernel's per-entity load tracking (PELT), integer-exact.
 *
 * This engine reproduces the arithmetic of kernel/sched/pelt.c and the
 * PELT parts of fair.c (explained in doc/pelt.md §1-§5): time in
 * 1024 ns units, 1024-unit periods, the 32-entry inverse decay table
 * (y^32 = 1/2), decay_load with its >2016 cut-off, the three-segment
 * accumulation, the divider 46718 + period_contrib, truncating divisions,
 * averages recomputed only when a period boundary was crossed, and the
 * attach / detach / remove bookkeeping of a cfs_rq with its lower-bound
 * clamps. For the same inputs at the same instants every field equals the
 * kernel's. All times are nanoseconds of the relevant PELT clock.
 *
 * Pure computation: no I/O, no allocation, no globals written.
 */
#ifndef IMB_PELT_H
#define IMB_PELT_H

#include <stdint.h>

#define PELT_LOAD_AVG_PERIOD	32		/* half-life, periods */
#define PELT_LOAD_AVG_MAX	47742		/* max of the series */
#define PELT_MIN_DIVIDER	(PELT_LOAD_AVG_MAX - 1024)	/* 46718 */
#define PELT_PERIOD_NS		(1024ULL * 1024)	/* 1 048 576 ns */
#define PELT_CAPACITY_SCALE	1024		/* SCHED_CAPACITY_SCALE */
#define PELT_UTIL_EST_MARGIN	10		/* SCHED_CAPACITY_SCALE / 100 */
#define PELT_UTIL_AVG_UNCHANGED	0x80000000u	/* util_est flag (>= ~5.13) */
/* util_sum at or above which idle entry discards lost idle time (doc/pelt.md §5) */
#define PELT_LOST_IDLE_THRESHOLD \
	((uint32_t)(((PELT_LOAD_AVG_MAX - 1024) << 10) - PELT_LOAD_AVG_MAX))

/*
 * enum pelt_version - kernel semantics to mirror where they differ.
 * @PELT_V5_14: 5.14 .. 6.7: util_est is (enqueued, ewma) with FASTUP and
 *	the two-sided margin; u32-truncating lower-bound clamps.
 * @PELT_V6_8: 6.8 .. 6.12: single util_est ewma; skipped when the task's
 *	util exceeds the CPU capacity; u32-truncating clamps.
 * @PELT_V6_18: 6.18 .. 6.19: as 6.8 without the capacity skip.
 * @PELT_V7_0: 7.0+: clamps in the field's own width (no truncation), also
 *	applied when an entity is attached.
 * The sources of 6.13 .. 6.17 were not read; PELT_V6_18 is the nearer guess.
 */
enum pelt_version {
	PELT_V5_14,
	PELT_V6_8,
	PELT_V6_18,
	PELT_V7_0,
};

#define PELT_VERSION_DEFAULT PELT_V6_18		/* the development machines */

/*
 * struct pelt_avg - the kernel's struct sched_avg (64-bit layout widths).
 * @util_est: 6.8+: ewma | PELT_UTIL_AVG_UNCHANGED; <= 6.7: enqueued | flag.
 * @util_est_ewma: <= 6.7 only: the ewma half of struct util_est.
 * @weight: the se_weight last passed to pelt_init(), pelt_se_update() or
 *	pelt_attach(); detach and remove need it (se_weight(se) in the
 *	kernel). Unused for a cfs_rq.
 */
struct pelt_avg {
	uint64_t last_update_time;	/* ns of the PELT clock */
	uint64_t load_sum;		/* unweighted (se) / weighted (cfs) */
	uint64_t runnable_sum;		/* runnable count << 10, decayed */
	uint32_t util_sum;		/* running << 10, decayed */
	uint32_t period_contrib;	/* 1024-ns units in the open period */
	unsigned long load_avg;		/* weight units */
	unsigned long runnable_avg;	/* capacity units (1024 = 1 task) */
	unsigned long util_avg;		/* capacity units */
	uint32_t util_est;
	uint32_t util_est_ewma;
	unsigned long weight;		/* se_weight last given (not kernel) */
};

/*
 * struct pelt_cfs - a cfs_rq's PELT state.
 * @avg: its sched_avg.
 * @removed_*: contributions of removed entities, subtracted at the next
 *	pelt_cfs_update() (the kernel's cfs_rq->removed).
 * @prop_runnable_sum: load_sum change queued for the parent (group
 *	propagation, doc/pelt.md §4); kept for callers that model task groups.
 * @util_est: sum of the estimates of the enqueued tasks (root cfs_rq).
 * @version: which kernel's semantics to follow.
 * @last_contrib, @last_runnable, @last_recomputed: of the last
 *	pelt_cfs_update() that moved time (not kernel state): the interval's
 *	accumulated contribution, the runnable count it was integrated with,
 *	and whether the averages were recomputed (see pelt_cfs_recount()).
 */
struct pelt_cfs {
	struct pelt_avg avg;
	unsigned long removed_load_avg;
	unsigned long removed_util_avg;
	unsigned long removed_runnable_avg;
	unsigned int removed_nr;
	int64_t prop_runnable_sum;
	uint32_t util_est;
	enum pelt_version version;
	uint32_t last_contrib;
	unsigned int last_runnable;
	int last_recomputed;
};

/*
 * struct pelt_clock - one CPU's PELT clock (rq->clock_pelt, doc/pelt.md §5).
 * With capacity and frequency scale both 1024 the PELT clock equals
 * clock_task and lost_idle_time stays 0.
 */
struct pelt_clock {
	uint64_t clock_task;		/* ns, last clock_task seen */
	uint64_t clock_pelt;		/* ns, scaled clock */
	uint64_t lost_idle_time;	/* ns discarded at saturated idle entry */
	unsigned long cpu_capacity;	/* arch_scale_cpu_capacity, 1..1024 */
	unsigned long freq_scale;	/* arch_scale_freq_capacity, 1..1024 */
};

/**
 * pelt_decay_table - the kernel's runnable_avg_yN_inv[] entry @i (0..31).
 */
uint32_t pelt_decay_table(unsigned int i);

/**
 * pelt_decay_load - @val * y^@n the kernel's way (decay_load()).
 * Zero for @n > 2016; shifts by @n / 32, then multiplies by the table
 * entry with an exact 96-bit product. @n = 0 subtracts one (table[0]).
 */
uint64_t pelt_decay_load(uint64_t val, uint64_t n);

/**
 * pelt_accumulate_segments - __accumulate_pelt_segments(): the weight of a
 * span that closes @periods periods, @d1 units of the first (old) period
 * and @d3 units of the new open period.
 */
uint32_t pelt_accumulate_segments(uint64_t periods, uint32_t d1, uint32_t d3);

/**
 * pelt_update_sum - ___update_load_sum(): bring @sa's sums to @now.
 * @load, @runnable, @running: what the entity was since its last update.
 * Time going backwards resets last_update_time to @now; a delta under
 * 1024 ns changes nothing (the remainder is kept).
 * Return: 1 if at least one period boundary was crossed, else 0.
 */
int pelt_update_sum(struct pelt_avg *sa, uint64_t now, unsigned long load,
		    unsigned long runnable, int running);

/**
 * pelt_update_avg - ___update_load_avg(): recompute the three averages
 * from the sums with divider 46718 + period_contrib; @load is se_weight
 * for an entity, 1 for a cfs_rq.
 */
void pelt_update_avg(struct pelt_avg *sa, unsigned long load);

/**
 * pelt_se_update - __update_load_avg_se() for a task or group entity.
 * @se_weight: scale_load_down(weight), see pelt_nice_to_weight().
 * @on_rq, @runnable, @running: the entity's state since its last update.
 *	For a task @runnable is !!on_rq except for 6.12+ delayed-dequeue
 *	tasks (0); for a group entity it is runnable_weight, the child run
 *	queue's h_nr_runnable (h_nr_running <= 6.13).
 * Recomputes the averages and clears the util_est UNCHANGED flag when a
 * boundary was crossed. Blocked decay is @on_rq = 0.
 * Return: 1 if the averages were recomputed.
 */
int pelt_se_update(struct pelt_avg *se, uint64_t now, unsigned long se_weight,
		   int on_rq, int runnable, int running);

/**
 * pelt_cfs_init - zero @cfs and set the default kernel version.
 */
void pelt_cfs_init(struct pelt_cfs *cfs);

/**
 * pelt_cfs_update - update_cfs_rq_load_avg(): first subtract the pending
 * removed contributions (with the divider of the current period_contrib
 * and the version's clamps), then __update_load_avg_cfs_rq().
 * @weight_sum: scale_load_down(cfs_rq->load.weight), the sum of the
 *	queued entities' se weights.
 * @h_nr_runnable: runnable tasks (h_nr_running before 6.14).
 * @curr: a fair entity is running.
 * Return: 1 if removed load was applied or the averages were recomputed.
 */
int pelt_cfs_update(struct pelt_cfs *cfs, uint64_t now, unsigned long weight_sum,
		    unsigned int h_nr_runnable, int curr);

/**
 * pelt_cfs_recount - redo the runnable part of @cfs's last update that
 * moved time as if integrated with @h_nr_runnable tasks instead: the
 * runnable sum is linear in the count, so the difference is the count's
 * difference times the interval's contribution (and the average moves by
 * that over the divider where the update recomputed it).  Changes made
 * since at the same instant (attach, propagation) are kept.
 * Return: 1 if anything changed.
 */
int pelt_cfs_recount(struct pelt_cfs *cfs, unsigned int h_nr_runnable);

/**
 * pelt_attach - attach_entity_load_avg(): align @se with @cfs (copy
 * last_update_time and period_contrib), rebuild the sums from the averages
 * with @cfs's divider and add them to @cfs. Call after pelt_cfs_update()
 * at the attach instant.
 */
void pelt_attach(struct pelt_cfs *cfs, struct pelt_avg *se, unsigned long se_weight);

/**
 * pelt_detach - detach_entity_load_avg(): subtract @se's averages and sums
 * (load_sum weighted by @se->weight) from @cfs, saturating, then apply the
 * version's lower-bound clamps (u32-truncating up to 6.19). The caller
 * first updates @se and @cfs to the detach instant.
 */
void pelt_detach(struct pelt_cfs *cfs, struct pelt_avg *se);

/**
 * pelt_se_sync - sync_entity_load_avg(): blocked decay of @se to @cfs's
 * last_update_time (an @se already ahead of it only has its
 * last_update_time reset, as in the kernel's "time went backwards").
 */
void pelt_se_sync(struct pelt_avg *se, const struct pelt_cfs *cfs);

/**
 * pelt_remove - remove_entity_load_avg(): sync @se to @cfs (see
 * pelt_se_sync()) and queue its averages into @cfs's removed accumulator,
 * applied by the next pelt_cfs_update().
 */
void pelt_remove(struct pelt_cfs *cfs, struct pelt_avg *se);

/**
 * pelt_init - init_entity_runnable_average() for a task: zero @se and
 * make it look heavy (load_avg = @se_weight).
 */
void pelt_init(struct pelt_avg *se, unsigned long se_weight);

/**
 * pelt_post_init - post_init_entity_util_avg() for a new fair task on a
 * CPU of capacity @cpu_capacity whose root run queue is @cfs: util_avg =
 * half the spare capacity (bounded by the weight share of the cfs util
 * when that is non-zero), runnable_avg = util_avg. Sums are built later by
 * pelt_attach(). Does not touch load_avg (see pelt_init()).
 */
void pelt_post_init(struct pelt_avg *se, unsigned long se_weight,
		    const struct pelt_cfs *cfs, unsigned long cpu_capacity);

/**
 * pelt_util_est_get - _task_util_est(): the task's estimate without flag.
 */
uint32_t pelt_util_est_get(const struct pelt_avg *se, enum pelt_version v);

/**
 * pelt_util_est_update - util_est_update() at a sleep dequeue of the task
 * @se (call only for DEQUEUE_SLEEP). @cpu_capacity is used by the
 * versions that skip the update for tasks bigger than the CPU.
 */
void pelt_util_est_update(struct pelt_avg *se, enum pelt_version v,
			  unsigned long cpu_capacity);

/**
 * pelt_util_est_enqueue - util_est_enqueue(): add the task's estimate to
 * @cfs->util_est.
 */
void pelt_util_est_enqueue(struct pelt_cfs *cfs, const struct pelt_avg *se);

/**
 * pelt_util_est_dequeue - util_est_dequeue(): subtract the task's
 * estimate from @cfs->util_est, saturating at 0.
 */
void pelt_util_est_dequeue(struct pelt_cfs *cfs, const struct pelt_avg *se);

/**
 * pelt_nice_to_weight - the kernel's sched_prio_to_weight[] for @nice
 * (clamped to -20..19), unscaled: nice 0 = 1024. This is se_weight().
 */
unsigned long pelt_nice_to_weight(int nice);

/**
 * pelt_scale_load_down - scale_load_down() of a 64-bit kernel weight
 * (stored << 10): 0 stays 0, else max(2, @w >> 10).
 */
unsigned long pelt_scale_load_down(unsigned long w);

/**
 * pelt_clock_init - a PELT clock at @clock_task with the given scales
 * (0 means 1024).
 */
void pelt_clock_init(struct pelt_clock *clk, uint64_t clock_task,
		     unsigned long cpu_capacity, unsigned long freq_scale);

/**
 * pelt_clock_update - update_rq_clock_pelt(): advance to @clock_task.
 * @idle: the CPU's current task is the idle task (then the PELT clock is
 *	synced to clock_task); otherwise the delta is scaled by capacity and
 *	then frequency, each step truncating.
 */
void pelt_clock_update(struct pelt_clock *clk, uint64_t clock_task, int idle);

/**
 * pelt_clock_idle_enter - update_idle_rq_clock_pelt() (6.0+): at idle
 * entry, if @util_sum (cfs + rt + dl util_sum, as u32) is at or above
 * PELT_LOST_IDLE_THRESHOLD the CPU was saturated and the PELT clock's
 * deficit is added to lost_idle_time; then clock_pelt := clock_task.
 */
void pelt_clock_idle_enter(struct pelt_clock *clk, uint32_t util_sum);

/**
 * pelt_clock_now - rq_clock_pelt(): clock_pelt - lost_idle_time.
 */
uint64_t pelt_clock_now(const struct pelt_clock *clk);

#endif /* IMB_PELT_H */

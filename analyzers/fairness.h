/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fairness.h - what a weighted fair scheduler would have given each task.
 *
 * The fairness analyzer (fairness.c) judges tasks against their fair share;
 * the pipeline computes that share for every window with fairness_fill(),
 * sharing the window's CPU time (CPUs x length) among the tasks that wanted
 * it, by weight and capped by what each asked for.  The task rows' and job
 * rows' fair_share and deviations, and so the `unfairness` findings, all
 * rest on it.
 */
#ifndef IMB_FAIRNESS_H
#define IMB_FAIRNESS_H

#include <stddef.h>
#include <stdint.h>

/**
 * fairness_fill - fair share by weighted water-filling
 * @demand: per task, time it wanted a CPU (runnable time)
 * @weight: per task, its load weight (0 counts as 1)
 * @fair: out, per task, what a fair scheduler would have given it
 * @n: number of tasks
 * @capacity: CPU time available (CPUs x span)
 *
 * A task that asked for less than its weighted part of what is left gets
 * what it asked for; the rest share the remainder by weight.  Without
 * memory for its sort, every task gets its demand.
 */
void fairness_fill(const uint64_t *demand, const uint64_t *weight, uint64_t *fair, size_t n,
		   uint64_t capacity);

#endif /* IMB_FAIRNESS_H */

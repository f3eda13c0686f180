/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pelt_expect.h - how far the engine's CPU signals can be from the
 * kernel's for the kind of load a run holds.
 *
 * A verdict is only as certain as the signal it rests on.  Where the
 * recording carries the kernel's own PELT values the engine's error is
 * measured in the run itself; elsewhere this module classifies the load
 * (busy threads, periodic work, several task groups, or a recording
 * without task groups that the engine models flat) and gives the error
 * measured for that kind of load against the kernel by
 * bench/pelt-accuracy.sh.  Pure: reads the model, writes nothing else.
 */
#ifndef IMB_PELT_EXPECT_H
#define IMB_PELT_EXPECT_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/*
 * struct pelt_expect - the expected p95 |engine - kernel| of a CPU's
 * util_avg and runnable_avg (1024 = one full CPU).
 * @load: the kind of load, in words.
 * @measured: true when the figures are this run's own comparison with
 *	the kernel's values; false when they come from the reference table.
 */
struct pelt_expect {
	const char *load;
	bool measured;
	uint64_t util_p95;
	uint64_t runnable_p95;
};

/**
 * pelt_expect_get - the expected error of the CPU signals of @m's run.
 */
void pelt_expect_get(const struct model *m, struct pelt_expect *e);

#endif /* IMB_PELT_EXPECT_H */

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pelt-engine.c - throughput of the PELT engine: entity updates per second
 * on one core.
 *
 * Drives 1024 task entities (nice -20..19) through a pseudo-random mix
 * of running / runnable / blocked updates at advancing times (0.1-2 ms
 * apart, so most updates cross a period boundary and recompute averages)
 * and prints one line: "pelt-engine: N entity updates/s (M updates in S s)".
 * --quick runs about 0.2 s instead of about 2 s. A checksum of the final
 * state is printed so the work cannot be optimised away.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analyzers/pelt.h"

#define NR_TASKS 1024

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	static struct pelt_avg se[NR_TASKS];
	uint64_t t[NR_TASKS], rng = 88172645463325252ULL, updates = 0, sum = 0;
	double budget = 2.0, t0, el;
	int quick = argc > 1 && !strcmp(argv[1], "--quick");

	if (quick)
		budget = 0.2;
	for (int i = 0; i < NR_TASKS; i++) {
		pelt_init(&se[i], pelt_nice_to_weight(i % 40 - 20));
		t[i] = 0;
	}
	t0 = now_s();
	do {
		for (int k = 0; k < 1 << 16; k++) {
			uint64_t r = xorshift(&rng);
			unsigned int i = r % NR_TASKS, st = (r >> 20) % 3;

			t[i] += 100000 + (r >> 32) % 1900000;
			pelt_se_update(&se[i], t[i], se[i].weight, st != 2, st != 2, st == 0);
		}
		updates += 1 << 16;
		el = now_s() - t0;
	} while (el < budget);
	for (int i = 0; i < NR_TASKS; i++)
		sum += se[i].util_avg + se[i].load_avg;
	printf("pelt-engine: %.1f million entity updates/s (%llu updates in %.2f s, "
	       "checksum %llu)\n", updates / el / 1e6, (unsigned long long)updates, el,
	       (unsigned long long)sum);
	return 0;
}

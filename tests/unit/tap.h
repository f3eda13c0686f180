/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h - a tiny TAP producer for the C unit tests.
 *
 * Usage: plan-less; call ok()/is_int()/is_u64() and finish with
 * `return tap_done();` which prints the "1..N" plan line and returns the
 * exit status (non-zero when any test failed).
 */
#ifndef IMB_TAP_H
#define IMB_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

static inline int tap_vok(int cond, const char *fmt, va_list ap)
{
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

static inline __attribute__((format(printf, 2, 3))) int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(cond, fmt, ap);
	va_end(ap);
	return r;
}

#define is_int(got, want, ...) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	if (!ok(g_ == w_, __VA_ARGS__))					\
		printf("#   got %lld, want %lld\n", g_, w_);		\
} while (0)

#define is_u64(got, want, ...) do {					\
	uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);		\
	if (!ok(g_ == w_, __VA_ARGS__))					\
		printf("#   got %" PRIu64 ", want %" PRIu64 "\n", g_, w_); \
} while (0)

#define diag(...) do { printf("# "); printf(__VA_ARGS__); printf("\n"); } while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* IMB_TAP_H */

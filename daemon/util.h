/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * util.h - the small helpers every part of daemon/ shares: the length of a
 * static array, the monotonic clock in nanoseconds, and the one-line reason
 * a function hands back to its caller on failure.
 *
 * Error convention (see also daemon/source/source.h): a function that can
 * fail takes `char *err`, a buffer of ERR_LEN bytes, writes one line into it
 * with err_set() (no "imbalanced: " prefix, no newline) and returns -errno;
 * it prints nothing itself.  The caller adds what it knows (the file name)
 * and decides where the line goes.
 */
#ifndef IMB_DAEMON_UTIL_H
#define IMB_DAEMON_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Size of every `err` buffer: one line for the user (SOURCE_ERR_LEN too). */
#define ERR_LEN 256

/* mono_ns - CLOCK_MONOTONIC now, in nanoseconds */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* err_set - write a one-line reason into @err (ERR_LEN bytes, truncated) */
static inline void __attribute__((format(printf, 2, 3)))
err_set(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, ERR_LEN, fmt, ap);
	va_end(ap);
}

#endif /* IMB_DAEMON_UTIL_H */

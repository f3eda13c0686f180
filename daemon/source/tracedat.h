/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracedat.h - the trace.dat source's entry points for tests and the
 * fuzz target (the production entry point is in source.h).
 */
#ifndef IMB_SOURCE_TRACEDAT_H
#define IMB_SOURCE_TRACEDAT_H

#include <stdint.h>

#include "daemon/source/source.h"

/**
 * source_tracedat_read_inproc - source_tracedat_read() without the reading
 * child: libtracecmd and our decoding run in this process, so a crash or a
 * sanitizer report in either is this process's (the fuzz target's) and
 * coverage is seen.  Not for production: libtracecmd can crash on a
 * damaged file and leaks memory.
 */
int source_tracedat_read_inproc(const char *path, imb_event_fn fn, void *ctx,
				struct source_info *info, char *err);

/* Failures source_tracedat_fault() can inject, for tests of the reporting. */
enum {
	TD_FAULT_NONE,
	TD_FAULT_SIGNAL,	/* SIGSEGV in our record decoding */
	TD_FAULT_OVERFLOW,	/* a heap read past the end there (sanitizers see it) */
	TD_FAULT_LIBRARY,	/* SIGSEGV as if inside libtracecmd */
};

/**
 * source_tracedat_fault - fail on purpose at record number @at_record
 * (counted from 1 in each reading process) of the next reads; TD_FAULT_NONE
 * turns it off.  Tests only.
 */
void source_tracedat_fault(int kind, uint64_t at_record);

#endif /* IMB_SOURCE_TRACEDAT_H */

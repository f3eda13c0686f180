/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracedat_repair.h - rebuild the missing tail of a truncated version-7
 * trace.dat so that the events before the cut can be read.
 */
#ifndef IMB_TRACEDAT_REPAIR_H
#define IMB_TRACEDAT_REPAIR_H

#include <stddef.h>

/**
 * tracedat_repair - a readable copy of @path's surviving events
 * @fd_out: receives a memfd (the caller closes it) holding the copy
 * @warning: receives one line saying where the file was cut
 * @err: SOURCE_ERR_LEN bytes, the reason when no repair is possible (the
 *	cut is in the headers, the file is not version 7, or it is corrupted
 *	rather than cut)
 *
 * Returns 0 or -errno.
 */
int tracedat_repair(const char *path, int *fd_out, char *warning, size_t wlen, char *err);

enum {
	TRACEDAT_COMPLETE,	/* or cannot tell: libtracecmd decides */
	TRACEDAT_CUT_MAP,	/* cut before the end of the last options section */
	TRACEDAT_CUT_STRINGS,	/* cut in the string table after it: events intact */
};

/**
 * tracedat_tail_cut - where a version-7 trace.dat @path was cut after (or
 * inside) its event data, as far as the chain of options sections and the
 * string table after them tell; libtracecmd reads some such files without
 * a word.  TRACEDAT_CUT_MAP: take the tracedat_repair() path;
 * TRACEDAT_CUT_STRINGS: libtracecmd reads every event, but the file is
 * incomplete.
 */
int tracedat_tail_cut(const char *path);

#endif /* IMB_TRACEDAT_REPAIR_H */

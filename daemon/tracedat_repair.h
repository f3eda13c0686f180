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

#endif /* IMB_TRACEDAT_REPAIR_H */

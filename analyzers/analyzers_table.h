/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analyzers_table.h - the list of analyzers the pipeline runs, in order.
 */
#ifndef IMB_ANALYZERS_TABLE_H
#define IMB_ANALYZERS_TABLE_H

#include <stddef.h>

#include "analyzer.h"

/* the most analyzers the pipeline keeps state for */
#define ANALYZERS_MAX 16

extern const struct analyzer_ops *const analyzers[];
extern const size_t analyzers_count;

#endif /* IMB_ANALYZERS_TABLE_H */

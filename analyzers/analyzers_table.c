// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * analyzers_table.c - the analyzers the pipeline runs, in this order.
 */
#include "analyzers_table.h"

const struct analyzer_ops *const analyzers[ANALYZERS_MAX] = {
	NULL,
};

const size_t analyzers_count = 0;

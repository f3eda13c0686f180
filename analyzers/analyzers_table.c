// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * analyzers_table.c - the analyzers the pipeline runs, in this order.
 */
#include "analyzers_table.h"

extern const struct analyzer_ops overload_analyzer;
extern const struct analyzer_ops fairness_analyzer;
extern const struct analyzer_ops vruntime_analyzer;
extern const struct analyzer_ops migration_analyzer;
extern const struct analyzer_ops numa_analyzer;
extern const struct analyzer_ops lost_analyzer;

const struct analyzer_ops *const analyzers[] = {
	&overload_analyzer,
	&fairness_analyzer,
	&vruntime_analyzer,
	&migration_analyzer,
	&numa_analyzer,
	&lost_analyzer,
};

const size_t analyzers_count = sizeof(analyzers) / sizeof(analyzers[0]);

_Static_assert(sizeof(analyzers) / sizeof(analyzers[0]) <= ANALYZERS_MAX,
	       "the pipeline keeps ANALYZERS_MAX states: raise it");

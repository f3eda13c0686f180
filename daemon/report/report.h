/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - what `analyze` prints: a readable summary or one JSON document
 * with the keys of doc/interfaces.md, and the text event dump.
 */
#ifndef IMB_REPORT_H
#define IMB_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyzers/analyzer.h"
#include "analyzers/model.h"
#include "analyzers/window.h"
#include "daemon/source/group_names.h"
#include "daemon/source/source.h"

/* One window of a run's per-window series (analyze --per-window). */
struct report_window {
	uint64_t t_start_ns;
	uint64_t t_end_ns;
	size_t first;			/* its CPUs: report_run.win_cpus[first...] */
	size_t nr_cpus;
};

struct report_run {
	const char *path;
	const struct source_info *info;
	const struct model *model;
	const struct analyzer_config *cfg;
	const struct imb_window *summary;
	const struct report_window *windows;	/* NULL: no per-window series */
	size_t nr_windows;
	const struct imb_cpu_sample *win_cpus;
	const struct group_names *group_names;	/* task groups' paths; NULL: only
						 * the root's and autogroups' */
};

/**
 * report_json - write the runs as one JSON document
 * @n: one run: its object; several: {"runs":[...]}
 *
 * Nothing is written unless the whole document could be built.
 * Returns 0 or -errno.
 */
int report_json(FILE *f, const struct report_run *runs, size_t n);

/** report_text - the readable summary of one run, @top tasks at most */
void report_text(FILE *f, const struct report_run *r, unsigned int top, bool verbose);

/** report_dump_header - the text format's header comment */
void report_dump_header(FILE *f);

/** report_dump_event - one event as one text-format line; 0 or -errno */
int report_dump_event(FILE *f, const struct imb_event *ev);

#endif /* IMB_REPORT_H */

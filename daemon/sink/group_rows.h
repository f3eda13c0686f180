/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * group_rows.h - the task groups as a listing: built from the model at a
 * window's end, written as JSON by GET /api/v1/groups and the run report.
 *
 * One row per task group, with one entry per CPU where the model has its
 * run queue: the engine's load/runnable/util averages, the kernel's from
 * its last pelt_cfs record of that run queue, the engine's error against
 * it, task counts and the times of the last updates.  The listing is an
 * immutable, refcounted block, so the pipeline thread builds it and HTTP
 * threads read it (through snapshot.h) without sharing the live model.
 * Paths come from a lookup the caller passes in (the BPF source's path
 * table), so this file does no I/O and knows no source.
 */
#ifndef IMB_GROUP_ROWS_H
#define IMB_GROUP_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzers/model.h"
#include "analyzers/window.h"
#include "daemon/sink/json.h"

/* One group's run queue on one CPU. */
struct group_row_cpu {
	int cpu;
	uint64_t avg[MODEL_SIG__COUNT];		/* engine, MODEL_SIG_* order */
	uint64_t kernel_avg[MODEL_SIG__COUNT];	/* kernel's last record; IMB_UNKNOWN none */
	int64_t err[MODEL_SIG__COUNT];		/* engine - kernel at that record's instant */
	uint64_t compared;			/* kernel records compared (err valid if > 0) */
	uint32_t nr_tasks;			/* model: tasks whose averages or counts are here */
	uint32_t nr_queued;			/* model: entities queued on it */
	uint32_t kernel_h_nr_queued;		/* kernel's last record (valid with kernel_ns) */
	uint64_t last_ns;			/* model: last event that touched it */
	uint64_t kernel_ns;			/* event time of the kernel's last record, 0 none */
};

struct group_row {
	uint64_t id;			/* IMB_TG_* id (cgroup id or autogroup | IMB_TG_AUTOGROUP) */
	uint64_t parent_id;		/* IMB_TG_* id, IMB_TG_ROOT for the root group */
	const char *path;		/* "/a/b", "/autogroup-3"; NULL unknown (owned by the block) */
	bool path_truncated;		/* leading components or a name's end missing */
	size_t first, nr_cpus;		/* its entries: group_rows.cpus[first ...] */
};

struct group_rows {
	uint64_t t_ns;			/* event time the listing was built at */
	size_t nr_groups;
	struct group_row *groups;	/* sorted by id */
	size_t nr_cpu_rows;
	struct group_row_cpu *cpus;
	uint64_t evicted;		/* model: idle groups dropped from its full table */
	uint64_t overflow;		/* model: placements that fell back to the root */
	int refs;			/* atomic; group_rows_get()/_put() */
	char *arena;			/* the paths */
};

/*
 * The path of group @id into @buf (NUL-terminated); 0, or -ENOENT when
 * unknown.  @truncated receives whether it is incomplete.
 */
typedef int (*group_rows_path_fn)(const void *ctx, uint64_t id, char *buf, size_t len,
				  bool *truncated);

/**
 * group_rows_build - the listing of the model's task groups at @t_ns
 * @path, @ctx: the path lookup, @path may be NULL (no paths)
 *
 * Returns a block holding one reference (drop with group_rows_put()), or
 * NULL with errno set to ENOMEM.  A model without groups gives an empty one.
 */
struct group_rows *group_rows_build(const struct model *m, uint64_t t_ns, group_rows_path_fn path,
				    const void *ctx);

/** group_rows_get - take another reference; returns @r */
const struct group_rows *group_rows_get(const struct group_rows *r);

/** group_rows_put - drop a reference, freeing the block with the last; accepts NULL */
void group_rows_put(const struct group_rows *r);

/**
 * group_rows_json - write the listing as a JSON array of group objects
 * (the value of a key the caller wrote)
 */
void group_rows_json(struct json *j, const struct group_rows *r);

#endif /* IMB_GROUP_ROWS_H */

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup_paths.h - this host's cgroup v2 paths, by cgroup id.
 *
 * Maps a cgroup v2 id (the kernfs id the BPF source sends as a task's
 * next_cgroup: cgroups->dfl_cgrp->kn->id) to the cgroup's path relative
 * to the v2 mount ("/system.slice/foo.service"; the root is "/"), so that
 * the live daemon can label fairness jobs grouped by cgroup.  The paths
 * come from walking the v2 hierarchy (found in /proc/self/mountinfo as
 * fstype cgroup2) and reading each directory's id with name_to_handle_at()
 * (a kernfs file handle holds the 64-bit id; st_ino where handles are not
 * available, which on 64-bit kernels is the same id).
 *
 * A lookup answers from the last walk.  A miss (a cgroup made since) walks
 * again, but at most once per rescan interval, so a burst of unknown ids
 * costs one walk.  A hit never walks: a removed cgroup's entry stays until
 * the next walk, which is harmless since kernfs never reuses an id.  The table is bounded; a walk stops adding paths at the
 * bound.  Nothing is logged: a missing or unreadable hierarchy just makes
 * lookups fail (the caller keeps its numeric key), and the counters say so.
 *
 * Not thread-safe: one thread (the pipeline's) uses it.  Never call it per
 * event: a miss may walk the hierarchy.
 */
#ifndef IMB_CGROUP_PATHS_H
#define IMB_CGROUP_PATHS_H

#include <stddef.h>
#include <stdint.h>

#define CGROUP_PATHS_DEFAULT_MAX	8192		/* cgroups held */
#define CGROUP_PATHS_DEFAULT_RESCAN_NS	5000000000ull	/* a miss walks again after this */
#define CGROUP_PATHS_MAX_DEPTH		32		/* directories below the mount */

struct cgroup_paths_opts {
	const char *root;	/* the v2 mount; NULL: from /proc/self/mountinfo */
	size_t max;		/* 0: CGROUP_PATHS_DEFAULT_MAX */
	uint64_t rescan_ns;	/* 0: CGROUP_PATHS_DEFAULT_RESCAN_NS */
};

struct cgroup_paths_stats {
	uint64_t lookups;	/* cgroup_paths_lookup() calls */
	uint64_t unresolved;	/* ... that found no path */
	uint64_t scans;		/* walks of the hierarchy */
	uint64_t errors;	/* no mount, a walk that failed, an id unreadable */
	uint64_t dropped;	/* cgroups a walk left out (the bound, the depth) */
	size_t entries;		/* paths held */
};

struct cgroup_paths;

/**
 * cgroup_paths_new - a resolver (no walk yet: the first lookup walks)
 * @o: options, NULL for the defaults (copied; @o->root too)
 *
 * Returns the resolver (free with cgroup_paths_free()) or NULL with errno
 * (ENOMEM).  A host without a v2 hierarchy still gets one; its lookups fail.
 */
struct cgroup_paths *cgroup_paths_new(const struct cgroup_paths_opts *o);

/** cgroup_paths_free - free the resolver; accepts NULL */
void cgroup_paths_free(struct cgroup_paths *cp);

/**
 * cgroup_paths_lookup - the path of cgroup v2 id @id
 * @buf, @len: receives the NUL-terminated path, cut to @len
 *
 * Returns 0, or -ENOENT when no path is known (after a walk, if the last
 * was longer ago than the rescan interval).
 */
int cgroup_paths_lookup(struct cgroup_paths *cp, uint64_t id, char *buf, size_t len);

/**
 * cgroup_paths_label_cb - cgroup_paths_lookup() as a pipeline_cgroup_label_fn
 * (analyzers/pipeline.h); @ctx is the resolver
 */
int cgroup_paths_label_cb(uint64_t id, char *buf, size_t len, void *ctx);

/** cgroup_paths_stats - the counters into @st */
void cgroup_paths_stats(const struct cgroup_paths *cp, struct cgroup_paths_stats *st);

/**
 * cgroup_paths_mount - the cgroup v2 mount point in @mountinfo's text
 * (the format of /proc/self/mountinfo; octal escapes decoded) into @buf
 *
 * Returns 0, -ENOENT when no line has fstype cgroup2, -ENAMETOOLONG.
 */
int cgroup_paths_mount(const char *mountinfo, char *buf, size_t len);

#endif /* IMB_CGROUP_PATHS_H */

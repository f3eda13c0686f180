/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * group_names.h - the cgroup paths of task groups, by group id.
 *
 * A bounded table from a task group's id (the IMB_TG_* ids of event.h: a
 * cgroup's kernfs id, or an autogroup id with IMB_TG_AUTOGROUP) to its
 * path ("/a/b/c").  The BPF source fills it from its rate-limited path
 * records; the daemon reads it when it lists groups.  Paths are kept out
 * of struct imb_event on purpose: events are copied per event, a path is
 * sent once per group per interval.  When the table is full the entry set
 * longest ago is evicted (the source sends live groups' paths again after
 * each interval, so what is evicted is what stopped being seen).  The root
 * group ("/") and autogroups ("/autogroup-<id>") need no entry.
 *
 * Not thread-safe: one thread (the pipeline's) writes and reads it.
 */
#ifndef IMB_GROUP_NAMES_H
#define IMB_GROUP_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GROUP_NAMES_DEFAULT_MAX	4096	/* entries */
#define GROUP_NAMES_PATH_MAX	1280	/* bytes of a path, NUL included */

/* Flags of an entry (group_names_lookup()), and of group_names_set_parts(). */
#define GROUP_NAMES_TRUNCATED	0x1	/* the path is incomplete (a name may be cut) */
#define GROUP_NAMES_DFL		0x2	/* on the cgroup v2 hierarchy */
#define GROUP_NAMES_TOP_MISSING	0x4	/* set_parts only: names above the slots are
					 * missing; the path starts with "/..." and
					 * the entry is TRUNCATED */

struct group_names;

/**
 * group_names_new - an empty table of at most @max entries (0: default)
 *
 * Returns the table (free with group_names_free()) or NULL with errno.
 */
struct group_names *group_names_new(size_t max);

/** group_names_free - free the table; accepts NULL */
void group_names_free(struct group_names *gn);

/**
 * group_names_set_parts - record group @id's path from its names
 * @parent_id: its parent group (IMB_TG_*), kept for the listing
 * @parts: @nr slots of @slot_len bytes, the group's own name first, then
 *	each ancestor's up to the hierarchy root's child; a slot need not be
 *	NUL-terminated (the slot's end ends the name)
 * @flags: GROUP_NAMES_* for the entry; TOP_MISSING: names above the last
 *	slot are missing (the path then starts with "/...")
 *
 * Joins them into "/top/.../own" and stores it, replacing an older path of
 * @id.  Returns 0; -EINVAL for an id that has no cgroup path (0, the root
 * group, an autogroup), no names, or an empty name or one containing '/'
 * (a garbled record); -ENOMEM.
 */
int group_names_set_parts(struct group_names *gn, uint64_t id, uint64_t parent_id,
			  const char *parts, size_t slot_len, size_t nr, unsigned int flags);

/**
 * group_names_lookup - the path of group @id
 * @gn: the table; NULL gives only the paths that need no entry
 * @buf, @len: receives the NUL-terminated path (cut to @len)
 * @flags: optional, receives GROUP_NAMES_* of the entry (0 for the root
 *	group and autogroups)
 *
 * The root group (IMB_TG_ROOT) is "/", an autogroup "/autogroup-<id>", a
 * cgroup what the table holds.  Returns 0, or -ENOENT when the table has
 * no path for @id (@buf is then "").
 */
int group_names_lookup(const struct group_names *gn, uint64_t id, char *buf, size_t len,
		       unsigned int *flags);

/**
 * group_names_path_cb - group_names_lookup() as a group_rows_path_fn
 * (group_rows.h): @ctx is the table or NULL; @truncated receives whether
 * the entry is GROUP_NAMES_TRUNCATED
 */
int group_names_path_cb(const void *ctx, uint64_t id, char *buf, size_t len, bool *truncated);

/**
 * group_names_parent - the parent id recorded with @id's path, 0 unknown
 */
uint64_t group_names_parent(const struct group_names *gn, uint64_t id);

/** group_names_count - entries held; group_names_evicted - entries dropped for room */
size_t group_names_count(const struct group_names *gn);
uint64_t group_names_evicted(const struct group_names *gn);

#endif /* IMB_GROUP_NAMES_H */

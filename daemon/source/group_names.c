// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * group_names.c - the bounded table of task groups' cgroup paths
 * (group_names.h).
 *
 * A dense array of entries, each path its own allocation (most paths are
 * short; the longest is GROUP_NAMES_PATH_MAX), indexed by an open
 * addressing hash with linear probing.  Eviction takes the entry set
 * longest ago (a linear scan, only when the table is full); removal
 * shifts the probe run back so lookups never need tombstones, and the
 * last dense entry moves into the hole.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/event.h"
#include "daemon/source/group_names.h"

struct gn_entry {
	uint64_t id;
	uint64_t parent_id;
	uint64_t tick;			/* set order, for eviction */
	unsigned int flags;		/* GROUP_NAMES_* */
	char *path;			/* owned */
};

struct group_names {
	struct gn_entry *e;		/* [max], nr used */
	size_t nr, max;
	uint32_t *slot;			/* [cap]: index + 1 into e, 0 empty */
	size_t cap;			/* power of two >= 2 * max */
	uint64_t tick;
	uint64_t evicted;
};

static size_t gn_hash(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id & (cap - 1);
}

/* The slot holding @id, or the empty slot where it would go. */
static size_t gn_probe(const struct group_names *gn, uint64_t id)
{
	size_t j = gn_hash(id, gn->cap);

	while (gn->slot[j] && gn->e[gn->slot[j] - 1].id != id)
		j = (j + 1) & (gn->cap - 1);
	return j;
}

struct group_names *group_names_new(size_t max)
{
	struct group_names *gn = calloc(1, sizeof(*gn));

	if (!gn)
		return NULL;
	gn->max = max ? max : GROUP_NAMES_DEFAULT_MAX;
	if (gn->max > (1u << 24))
		gn->max = 1u << 24;
	gn->cap = 16;
	while (gn->cap < gn->max * 2)
		gn->cap <<= 1;
	gn->e = calloc(gn->max, sizeof(*gn->e));
	gn->slot = calloc(gn->cap, sizeof(*gn->slot));
	if (!gn->e || !gn->slot) {
		group_names_free(gn);
		errno = ENOMEM;
		return NULL;
	}
	return gn;
}

void group_names_free(struct group_names *gn)
{
	if (!gn)
		return;
	for (size_t i = 0; gn->e && i < gn->nr; i++)
		free(gn->e[i].path);
	free(gn->e);
	free(gn->slot);
	free(gn);
}

/* Remove the entry at dense index @i (its slot found by probing). */
static void gn_remove(struct group_names *gn, size_t i)
{
	size_t j = gn_probe(gn, gn->e[i].id), k;

	free(gn->e[i].path);
	gn->slot[j] = 0;
	/* shift back the rest of the probe run (no tombstones) */
	for (k = (j + 1) & (gn->cap - 1); gn->slot[k]; k = (k + 1) & (gn->cap - 1)) {
		size_t home = gn_hash(gn->e[gn->slot[k] - 1].id, gn->cap);

		/* move k into the hole j unless its home lies in (j, k] */
		if ((j < k) ? (home <= j || home > k) : (home <= j && home > k)) {
			gn->slot[j] = gn->slot[k];
			gn->slot[k] = 0;
			j = k;
		}
	}
	/* the last dense entry fills the hole */
	if (i != gn->nr - 1) {
		gn->e[i] = gn->e[gn->nr - 1];
		gn->slot[gn_probe(gn, gn->e[i].id)] = (uint32_t)i + 1;
	}
	gn->nr--;
}

static void gn_evict_oldest(struct group_names *gn)
{
	size_t victim = 0;

	for (size_t i = 1; i < gn->nr; i++)
		if (gn->e[i].tick < gn->e[victim].tick)
			victim = i;
	gn_remove(gn, victim);
	gn->evicted++;
}

/* Store @path (taken over) for @id. */
static int gn_put(struct group_names *gn, uint64_t id, uint64_t parent_id, char *path,
		  unsigned int flags)
{
	size_t j = gn_probe(gn, id);
	struct gn_entry *e;

	if (!gn->slot[j]) {
		if (gn->nr == gn->max) {
			gn_evict_oldest(gn);
			j = gn_probe(gn, id);
		}
		e = &gn->e[gn->nr++];
		memset(e, 0, sizeof(*e));
		e->id = id;
		gn->slot[j] = (uint32_t)gn->nr;
	} else {
		e = &gn->e[gn->slot[j] - 1];
		free(e->path);
	}
	e->path = path;
	e->parent_id = parent_id;
	e->flags = flags & (GROUP_NAMES_TRUNCATED | GROUP_NAMES_DFL);
	e->tick = ++gn->tick;
	return 0;
}

int group_names_set_parts(struct group_names *gn, uint64_t id, uint64_t parent_id,
			  const char *parts, size_t slot_len, size_t nr, unsigned int flags)
{
	char *path;
	size_t len = 0;

	if (!gn || !id || id == IMB_TG_ROOT || (id & IMB_TG_AUTOGROUP) || !parts || !slot_len ||
	    !nr)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++) {
		const char *s = parts + i * slot_len;
		size_t n = strnlen(s, slot_len);

		if (!n || memchr(s, '/', n))
			return -EINVAL;
	}
	path = malloc(GROUP_NAMES_PATH_MAX);
	if (!path)
		return -ENOMEM;
	if (flags & GROUP_NAMES_TOP_MISSING) {
		len = (size_t)snprintf(path, GROUP_NAMES_PATH_MAX, "/...");
		flags |= GROUP_NAMES_TRUNCATED;
	}
	/* root-most name first: the slots go from the group up */
	for (size_t i = nr; i-- > 0 && len < GROUP_NAMES_PATH_MAX - 1;) {
		const char *s = parts + i * slot_len;
		int n = (int)strnlen(s, slot_len);
		int w = snprintf(path + len, GROUP_NAMES_PATH_MAX - len, "/%.*s", n, s);

		if (w < 0)
			break;
		len += (size_t)w;
		if (len >= GROUP_NAMES_PATH_MAX) {
			len = GROUP_NAMES_PATH_MAX - 1;
			flags |= GROUP_NAMES_TRUNCATED;
		}
	}
	{
		char *shrunk = realloc(path, len + 1);

		if (shrunk)
			path = shrunk;
	}
	return gn_put(gn, id, parent_id, path, flags);
}

int group_names_lookup(const struct group_names *gn, uint64_t id, char *buf, size_t len,
		       unsigned int *flags)
{
	size_t j;

	if (flags)
		*flags = 0;
	if (len)
		buf[0] = '\0';
	if (id == IMB_TG_ROOT) {
		snprintf(buf, len, "/");
		return 0;
	}
	if (id & IMB_TG_AUTOGROUP) {
		snprintf(buf, len, "/autogroup-%" PRIu64, (uint64_t)(id & ~IMB_TG_AUTOGROUP));
		return 0;
	}
	if (!gn || !id)
		return -ENOENT;
	j = gn_probe(gn, id);
	if (!gn->slot[j])
		return -ENOENT;
	snprintf(buf, len, "%s", gn->e[gn->slot[j] - 1].path);
	if (flags)
		*flags = gn->e[gn->slot[j] - 1].flags;
	return 0;
}

int group_names_path_cb(const void *ctx, uint64_t id, char *buf, size_t len, bool *truncated)
{
	unsigned int flags = 0;
	int rc = group_names_lookup(ctx, id, buf, len, &flags);

	if (truncated)
		*truncated = flags & GROUP_NAMES_TRUNCATED;
	return rc;
}

uint64_t group_names_parent(const struct group_names *gn, uint64_t id)
{
	size_t j;

	if (!gn || !id)
		return 0;
	j = gn_probe(gn, id);
	return gn->slot[j] ? gn->e[gn->slot[j] - 1].parent_id : 0;
}

size_t group_names_count(const struct group_names *gn)
{
	return gn ? gn->nr : 0;
}

uint64_t group_names_evicted(const struct group_names *gn)
{
	return gn ? gn->evicted : 0;
}

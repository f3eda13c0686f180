// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_group_names.c - the table of task groups' cgroup paths: joining a
 * record's names, the root and autogroup paths, replacing, garbled
 * records, the bound and its eviction order, and the hash staying
 * consistent through many evictions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/event.h"
#include "daemon/source/group_names.h"
#include "tests/unit/tap.h"

#define SLOT 16

/* @names: the group's own first, as the BPF record carries them */
static int set(struct group_names *gn, uint64_t id, unsigned int flags, int nr, ...)
{
	char parts[8][SLOT];
	va_list ap;

	memset(parts, 'x', sizeof(parts));
	va_start(ap, nr);
	for (int i = 0; i < nr; i++) {
		const char *s = va_arg(ap, const char *);
		size_t n = strlen(s);

		memcpy(parts[i], s, n < SLOT ? n + 1 : SLOT);
	}
	va_end(ap);
	return group_names_set_parts(gn, id, IMB_TG_ROOT, &parts[0][0], SLOT, (size_t)nr, flags);
}

static void is_path(const struct group_names *gn, uint64_t id, const char *want, const char *name)
{
	char buf[GROUP_NAMES_PATH_MAX];
	int rc = group_names_lookup(gn, id, buf, sizeof(buf), NULL);

	if (!ok(rc == 0 && !strcmp(buf, want), "%s", name))
		printf("#   rc %d, got '%s', want '%s'\n", rc, buf, want);
}

/* lookups of the root, autogroups, and stored and cut-off records */
static void check_paths(struct group_names *gn)
{
	char buf[GROUP_NAMES_PATH_MAX], parts[2][SLOT];
	unsigned int flags;

	is_path(NULL, IMB_TG_ROOT, "/", "the root group is / without a table");
	is_path(NULL, IMB_TG_AUTOGROUP | 57, "/autogroup-57", "an autogroup is /autogroup-<id>");
	is_int(group_names_lookup(gn, 1234, buf, sizeof(buf), NULL), -ENOENT,
	       "a cgroup never seen: -ENOENT");
	ok(buf[0] == '\0', "and an empty path");

	is_int(set(gn, 100, 0, 1, "imb-test-1"), 0, "a top-level cgroup's record is stored");
	is_path(gn, 100, "/imb-test-1", "its path is /imb-test-1");
	is_int(set(gn, 101, GROUP_NAMES_DFL, 3, "c", "b", "a"), 0, "a nested cgroup's record");
	is_path(gn, 101, "/a/b/c", "names go from the group up: /a/b/c");
	group_names_lookup(gn, 101, buf, sizeof(buf), &flags);
	is_int(flags, GROUP_NAMES_DFL, "the v2 hierarchy flag is kept");
	is_u64(group_names_parent(gn, 101), IMB_TG_ROOT, "the parent id is kept");

	is_int(set(gn, 102, GROUP_NAMES_TOP_MISSING, 2, "leaf", "mid"), 0, "a record cut at depth");
	is_path(gn, 102, "/.../mid/leaf", "its path starts with /...");
	group_names_lookup(gn, 102, buf, sizeof(buf), &flags);
	ok(flags & GROUP_NAMES_TRUNCATED, "and is marked truncated");

	/* a name that fills its slot: no NUL, cut at the slot's end */
	memset(parts, 'n', sizeof(parts));
	is_int(group_names_set_parts(gn, 103, IMB_TG_ROOT, &parts[0][0], SLOT, 1, 0), 0,
	       "a name without its NUL is read up to its slot's end");
	is_path(gn, 103, "/nnnnnnnnnnnnnnnn", "16 bytes, no overrun");

	is_int(set(gn, 100, 0, 1, "renamed"), 0, "a new record of a known id");
	is_path(gn, 100, "/renamed", "replaces its path");
	is_u64(group_names_count(gn), 4, "without a new entry");
}

/* ids and names the table refuses */
static void check_rejected(struct group_names *gn)
{
	char buf[GROUP_NAMES_PATH_MAX], parts[2][SLOT];

	memset(parts, 'n', sizeof(parts));
	is_int(set(gn, 0, 0, 1, "x"), -EINVAL, "id 0: rejected");
	is_int(set(gn, IMB_TG_ROOT, 0, 1, "x"), -EINVAL, "the root group's id: rejected");
	is_int(set(gn, IMB_TG_AUTOGROUP | 3, 0, 1, "x"), -EINVAL, "an autogroup id: rejected");
	is_int(set(gn, 200, 0, 0), -EINVAL, "no names: rejected");
	is_int(set(gn, 200, 0, 2, "a", ""), -EINVAL, "an empty name (garbled): rejected");
	memcpy(parts[0], "a/b", 4);
	is_int(group_names_set_parts(gn, 200, IMB_TG_ROOT, &parts[0][0], SLOT, 1, 0), -EINVAL,
	       "a name with a slash (garbled): rejected");
	is_int(group_names_set_parts(gn, 200, IMB_TG_ROOT, NULL, SLOT, 1, 0), -EINVAL,
	       "no buffer: rejected");
	is_int(group_names_lookup(gn, 200, buf, sizeof(buf), NULL), -ENOENT,
	       "nothing stored for the rejected records");
}

/* a full table: eviction of the oldest entry, and a short buffer */
static void check_eviction(struct group_names *gn)
{
	char buf[GROUP_NAMES_PATH_MAX];

	/* full (4): 101 was set longest ago now (100 was set again) */
	is_int(set(gn, 104, 0, 1, "new"), 0, "a fifth group in a table of 4");
	is_u64(group_names_count(gn), 4, "the table stays at its bound");
	is_u64(group_names_evicted(gn), 1, "one entry evicted");
	is_int(group_names_lookup(gn, 101, buf, sizeof(buf), NULL), -ENOENT,
	       "the entry set longest ago went");
	is_path(gn, 100, "/renamed", "the refreshed one stayed");
	is_path(gn, 104, "/new", "the new one is there");

	is_int(group_names_lookup(gn, 104, buf, 4, NULL), 0, "a short buffer");
	ok(!strcmp(buf, "/ne"), "gets the path cut and terminated");
}

/* many ids through a small table: every lookup after each eviction */
static void check_many_ids(void)
{
	struct group_names *gn = group_names_new(64);
	char buf[GROUP_NAMES_PATH_MAX];
	int bad = 0;

	for (uint64_t id = 2; id < 5000 && !bad; id++) {
		char name[SLOT];

		snprintf(name, sizeof(name), "g%llu", (unsigned long long)id);
		if (set(gn, id, 0, 1, name))
			bad = 1;
		for (uint64_t k = id > 65 ? id - 63 : 2; k <= id && !bad; k++) {
			char want[SLOT + 1];

			snprintf(want, sizeof(want), "/g%llu", (unsigned long long)k);
			if (group_names_lookup(gn, k, buf, sizeof(buf), NULL) || strcmp(buf, want))
				bad = 1;
		}
		if (id > 65 && !group_names_lookup(gn, id - 64, buf, sizeof(buf), NULL))
			bad = 1;
	}
	ok(!bad, "5000 ids through 64 entries: the last 64 always found, older ones gone");
	is_u64(group_names_count(gn), 64, "64 entries held");
	group_names_free(gn);
}

int main(void)
{
	struct group_names *gn = group_names_new(4);

	ok(gn != NULL, "a table of 4 entries");
	check_paths(gn);
	check_rejected(gn);
	check_eviction(gn);
	group_names_free(gn);

	check_many_ids();
	group_names_free(NULL);
	ok(1, "free accepts NULL");
	return tap_done();
}

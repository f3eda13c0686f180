// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_cgroup_paths.c - the cgroup v2 path resolver: finding the v2 mount
 * in mountinfo text, paths by id over a directory tree made here (ids are
 * inode numbers there), the rescan interval for new directories, removed
 * directories leaving at a rescan, the bound, a missing hierarchy, and on
 * a host with a v2 hierarchy, the root "/" at id 1 and a cgroup made here
 * at its kernfs id.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/host/cgroup_paths.h"
#include "tests/unit/tap.h"

static uint64_t ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

static void is_path(struct cgroup_paths *cp, uint64_t id, const char *want, const char *what)
{
	char buf[256];
	int rc = cgroup_paths_lookup(cp, id, buf, sizeof(buf));

	if (want)
		ok(rc == 0 && !strcmp(buf, want), "%s: '%s' (rc %d, '%s')", what, want, rc, buf);
	else
		ok(rc == -ENOENT && !buf[0], "%s: unknown (rc %d, '%s')", what, rc, buf);
}

static void test_mount(void)
{
	char buf[64];

	ok(cgroup_paths_mount("22 1 0:21 / /proc rw - proc proc rw\n"
			      "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n",
			      buf, sizeof(buf)) == 0 && !strcmp(buf, "/sys/fs/cgroup/unified"),
	   "mountinfo: the hybrid host's v2 mount (%s)", buf);
	ok(cgroup_paths_mount("30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate",
			      buf, sizeof(buf)) == 0 && !strcmp(buf, "/sys/fs/cgroup"),
	   "mountinfo: a pure-v2 host's, last line without a newline (%s)", buf);
	ok(cgroup_paths_mount("31 1 0:27 / /mnt/c\\040g rw - cgroup2 none rw\n", buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "/mnt/c g"), "mountinfo: octal escapes decoded (%s)", buf);
	is_int(cgroup_paths_mount("32 1 0:28 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
				  "33 1 0:29 / /x rw - cgroup2fake x rw\n", buf, sizeof(buf)), -ENOENT,
	       "mountinfo: v1 hierarchies and look-alikes are not the v2 one");
	is_int(cgroup_paths_mount("garbled\n\n1 2\n", buf, sizeof(buf)), -ENOENT,
	       "mountinfo: garbled lines are skipped");
	is_int(cgroup_paths_mount("40 30 0:37 / /a/very/long/mount/point/that/does/not/fit/in/the/buffer/x"
				  " rw - cgroup2 cgroup2 rw\n", buf, 16), -ENAMETOOLONG,
	       "mountinfo: a mount point longer than the buffer");
}

static void test_tree(void)
{
	char root[] = "/tmp/test-cgroup-paths.XXXXXX", p[512];
	struct cgroup_paths_opts o = { .rescan_ns = 3600000000000ull };
	struct cgroup_paths_stats st;
	struct cgroup_paths *cp, *fast, *small;
	uint64_t id_b, id_d;

	if (!mkdtemp(root)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(p, sizeof(p), "%s/a", root);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/a/b.service", root);
	mkdir(p, 0700);
	id_b = ino(p);
	snprintf(p, sizeof(p), "%s/a/file", root);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/c", root);
	mkdir(p, 0700);

	o.root = root;
	cp = cgroup_paths_new(&o);
	is_path(cp, ino(root), "/", "the root");
	is_path(cp, id_b, "/a/b.service", "a nested directory");
	snprintf(p, sizeof(p), "%s/c", root);
	is_path(cp, ino(p), "/c", "a top directory");
	snprintf(p, sizeof(p), "%s/a/file", root);
	is_path(cp, ino(p), NULL, "a file is no cgroup");
	cgroup_paths_stats(cp, &st);
	ok(st.scans == 1 && st.entries == 4 && st.errors == 0,
	   "one walk held the root and 3 directories (%llu walks, %zu held, %llu errors)",
	   (unsigned long long)st.scans, st.entries, (unsigned long long)st.errors);

	/* made after the walk: unknown until the rescan interval has passed */
	snprintf(p, sizeof(p), "%s/c/d", root);
	mkdir(p, 0700);
	id_d = ino(p);
	is_path(cp, id_d, NULL, "a directory made after the walk, within the interval");
	cgroup_paths_stats(cp, &st);
	ok(st.scans == 1 && st.unresolved == 2, "no walk for it (%llu walks, %llu unresolved)",
	   (unsigned long long)st.scans, (unsigned long long)st.unresolved);
	o.rescan_ns = 1;
	fast = cgroup_paths_new(&o);
	is_path(fast, id_b, "/a/b.service", "a resolver with a short interval");
	is_path(fast, id_d, "/c/d", "... finds the new directory");
	snprintf(p, sizeof(p), "%s/a/b.service", root);
	rmdir(p);
	is_path(fast, id_b, "/a/b.service", "... answers a removed one from its table (a hit walks not)");
	is_path(fast, 0xdeadbeefull, NULL, "... an unknown id walks again");
	is_path(fast, id_b, NULL, "... and the removed one is gone from the new table");
	is_path(fast, id_d, "/c/d", "... keeping the others");

	o.max = 2;
	small = cgroup_paths_new(&o);
	is_path(small, ino(root), "/", "a resolver bounded to 2 entries has the root");
	cgroup_paths_stats(small, &st);
	ok(st.entries == 2 && st.dropped >= 1, "and holds 2, leaving %llu out",
	   (unsigned long long)st.dropped);
	cgroup_paths_free(small);
	cgroup_paths_free(fast);
	cgroup_paths_free(cp);

	/* a hierarchy that is not there: lookups fail, counted */
	snprintf(p, sizeof(p), "%s/c/d", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/c", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a/file", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/a", root);
	rmdir(p);
	rmdir(root);
	o.max = 0;
	cp = cgroup_paths_new(&o);
	is_path(cp, 1, NULL, "a missing hierarchy");
	cgroup_paths_stats(cp, &st);
	ok(st.errors >= 1 && st.entries == 0, "its walk failed, counted (%llu errors)",
	   (unsigned long long)st.errors);
	cgroup_paths_free(cp);
	cgroup_paths_free(NULL);
}

/* The host's v2 hierarchy, found from /proc/self/mountinfo. */
static void test_host(void)
{
	struct cgroup_paths *cp = cgroup_paths_new(NULL);
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *text = NULL, mnt[4096], dir[4200], name[64];
	size_t cap = 0;
	bool have = false;

	if (f && getdelim(&text, &cap, '\0', f) > 0)
		have = cgroup_paths_mount(text, mnt, sizeof(mnt)) == 0;
	if (f)
		fclose(f);
	free(text);
	if (!have) {
		ok(1, "# SKIP no cgroup v2 hierarchy here");
		is_path(cp, 1, NULL, "without a hierarchy, id 1");
		cgroup_paths_free(cp);
		return;
	}
	is_path(cp, 1, "/", "the host's v2 root is id 1");
	snprintf(name, sizeof(name), "imb-test-paths-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s/%s", mnt, name);
	if (geteuid() != 0 || mkdir(dir, 0755)) {
		ok(1, "# SKIP cannot make a cgroup under %s", mnt);
	} else {
		struct cgroup_paths_opts o = { .rescan_ns = 1 };
		struct cgroup_paths *fast = cgroup_paths_new(&o);
		char want[80];

		/* the kernfs id's low 32 bits are the inode number */
		snprintf(want, sizeof(want), "/%s", name);
		is_path(fast, ino(dir), want, "a cgroup made here, at its inode number");
		rmdir(dir);
		cgroup_paths_free(fast);
	}
	cgroup_paths_free(cp);
}

int main(void)
{
	test_mount();
	test_tree();
	test_host();
	return tap_done();
}

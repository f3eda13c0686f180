// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cgroup_paths.c - this host's cgroup v2 paths, by cgroup id (cgroup_paths.h).
 *
 * A walk of the v2 hierarchy builds a fresh table, sorted by id, and
 * replaces the old one whole, so cgroups removed since the last walk leave
 * with it.  Lookups are a binary search.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/host/cgroup_paths.h"
#include "daemon/util.h"

/* FILEID_KERNFS (include/linux/exportfs.h): a kernfs handle, the 64-bit id since v5.5 */
#define CGP_FILEID_KERNFS	0xfe

struct cgp_entry {
	uint64_t id;		/* cgroup v2 (kernfs) id */
	char *path;		/* "/a/b", owned */
};

struct cgp_table {
	struct cgp_entry *e;
	size_t nr, cap;
};

struct cgroup_paths {
	char root[4096];		/* the v2 mount, "" not found yet */
	bool root_given;		/* from the options: never re-read mountinfo */
	size_t max;			/* entries */
	uint64_t rescan_ns;
	bool scanned;			/* a walk was tried */
	uint64_t last_scan_ns;		/* CLOCK_MONOTONIC */
	struct cgp_table t;
	struct cgroup_paths_stats st;
};

static void cgp_table_done(struct cgp_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->e[i].path);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

struct cgroup_paths *cgroup_paths_new(const struct cgroup_paths_opts *o)
{
	struct cgroup_paths *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return NULL;
	cp->max = o && o->max ? o->max : CGROUP_PATHS_DEFAULT_MAX;
	cp->rescan_ns = o && o->rescan_ns ? o->rescan_ns : CGROUP_PATHS_DEFAULT_RESCAN_NS;
	if (o && o->root) {
		snprintf(cp->root, sizeof(cp->root), "%s", o->root);
		cp->root_given = true;
	}
	return cp;
}

void cgroup_paths_free(struct cgroup_paths *cp)
{
	if (!cp)
		return;
	cgp_table_done(&cp->t);
	free(cp);
}

/* Decode mountinfo's octal escapes (\040 for a space) of @s[0..n) into @buf. */
static int cgp_unescape(const char *s, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= len)
			return -ENAMETOOLONG;
		buf[o++] = c;
	}
	buf[o] = '\0';
	return 0;
}

int cgroup_paths_mount(const char *mountinfo, char *buf, size_t len)
{
	for (const char *l = mountinfo; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n'), *f[5], *sep, *p = l;
		size_t ll = end ? (size_t)(end - l) : strlen(l);
		int nf = 0;

		/* fields 1-5: id, parent, major:minor, root, mount point */
		while (nf < 5 && p < l + ll) {
			f[nf++] = p;
			p = memchr(p, ' ', (size_t)(l + ll - p));
			if (!p)
				break;
			p++;
		}
		if (nf < 5 || !p)
			continue;
		/* optional fields, then " - fstype source options" */
		sep = NULL;
		for (const char *q = p; q + 3 <= l + ll; q++)
			if (!memcmp(q, "- ", 2) && (q == p || q[-1] == ' ')) {
				sep = q + 2;
				break;
			}
		if (!sep || (size_t)(l + ll - sep) < 8 || memcmp(sep, "cgroup2 ", 8))
			continue;
		return cgp_unescape(f[4], (size_t)(p - 1 - f[4]), buf, len);
	}
	return -ENOENT;
}

/* The v2 mount from /proc/self/mountinfo into cp->root. */
static int cgp_find_root(struct cgroup_paths *cp)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc;

	if (!f)
		return -errno;
	n = getdelim(&text, &cap, '\0', f);
	fclose(f);
	if (n <= 0) {
		free(text);
		return -EIO;
	}
	rc = cgroup_paths_mount(text, cp->root, sizeof(cp->root));
	free(text);
	if (rc)
		cp->root[0] = '\0';
	return rc;
}

/*
 * The cgroup id of @name under @dirfd (or of @dirfd itself, @name ""):
 * the kernfs file handle's 64-bit id, else st_ino.
 */
static int cgp_id(int dirfd, const char *name, uint64_t *id)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 64];
	} h;
	struct stat st;
	int mnt;

	h.fh.handle_bytes = 64;
	if (name_to_handle_at(dirfd, name, &h.fh, &mnt, name[0] ? 0 : AT_EMPTY_PATH) == 0 &&
	    h.fh.handle_type == CGP_FILEID_KERNFS && h.fh.handle_bytes == sizeof(uint64_t)) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	if (fstatat(dirfd, name, &st, name[0] ? AT_SYMLINK_NOFOLLOW : AT_EMPTY_PATH))
		return -errno;
	*id = (uint64_t)st.st_ino;
	return 0;
}

static int cgp_add(struct cgroup_paths *cp, struct cgp_table *t, uint64_t id, const char *path)
{
	if (t->nr >= cp->max) {
		cp->st.dropped++;
		return 0;
	}
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct cgp_entry *e = realloc(t->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		t->e = e;
		t->cap = cap;
	}
	t->e[t->nr].path = strdup(path);
	if (!t->e[t->nr].path)
		return -ENOMEM;
	t->e[t->nr++].id = id;
	return 0;
}

/* The directories below @fd (consumed), whose path is @path[0..plen). */
static int cgp_walk(struct cgroup_paths *cp, struct cgp_table *t, int fd, char *path, size_t plen,
		    int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(fd);
		cp->st.errors++;
		return 0;
	}
	while (!rc && (de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		uint64_t id;
		int cfd;

		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (de->d_type != DT_DIR) {
			struct stat st;

			if (de->d_type != DT_UNKNOWN ||
			    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    !S_ISDIR(st.st_mode))
				continue;
		}
		if (t->nr >= cp->max || depth >= CGROUP_PATHS_MAX_DEPTH || plen + 1 + nl >= 4096) {
			cp->st.dropped++;
			continue;
		}
		if (cgp_id(dirfd(d), de->d_name, &id)) {
			cp->st.errors++;
			continue;
		}
		path[plen] = '/';
		memcpy(path + plen + 1, de->d_name, nl + 1);
		rc = cgp_add(cp, t, id, path);
		if (rc)
			break;
		cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			cp->st.errors++;	/* removed under us, or no permission */
			continue;
		}
		rc = cgp_walk(cp, t, cfd, path, plen + 1 + nl, depth + 1);
	}
	path[plen] = '\0';
	closedir(d);
	return rc;
}

static int cgp_cmp(const void *a, const void *b)
{
	const struct cgp_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Walk the hierarchy into a fresh table that replaces the old one. */
static int cgp_scan(struct cgroup_paths *cp)
{
	struct cgp_table t = { 0 };
	char *path;
	uint64_t id;
	int fd, rc;

	cp->scanned = true;
	cp->last_scan_ns = mono_ns();
	cp->st.scans++;
	if (!cp->root_given && !cp->root[0] && cgp_find_root(cp)) {
		cp->st.errors++;
		return -ENOENT;
	}
	fd = open(cp->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		cp->st.errors++;
		if (!cp->root_given)
			cp->root[0] = '\0';	/* unmounted or moved: read mountinfo again */
		return rc;
	}
	path = malloc(4096);
	rc = path ? cgp_id(fd, "", &id) : -ENOMEM;
	if (!rc)
		rc = cgp_add(cp, &t, id, "/");
	if (rc) {
		close(fd);
		goto fail;
	}
	path[0] = '\0';
	rc = cgp_walk(cp, &t, fd, path, 0, 0);
	if (rc)
		goto fail;
	free(path);
	qsort(t.e, t.nr, sizeof(*t.e), cgp_cmp);
	cgp_table_done(&cp->t);
	cp->t = t;
	return 0;
fail:
	free(path);
	cgp_table_done(&t);
	cp->st.errors++;
	return rc;
}

static const struct cgp_entry *cgp_find(const struct cgp_table *t, uint64_t id)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].id == id)
			return &t->e[mid];
		if (t->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int cgroup_paths_lookup(struct cgroup_paths *cp, uint64_t id, char *buf, size_t len)
{
	const struct cgp_entry *e;

	cp->st.lookups++;
	e = cgp_find(&cp->t, id);
	if (!e && (!cp->scanned || mono_ns() - cp->last_scan_ns >= cp->rescan_ns)) {
		cgp_scan(cp);
		e = cgp_find(&cp->t, id);
	}
	if (!e) {
		cp->st.unresolved++;
		if (len)
			buf[0] = '\0';
		return -ENOENT;
	}
	if (len)
		snprintf(buf, len, "%s", e->path);
	return 0;
}

int cgroup_paths_label_cb(uint64_t id, char *buf, size_t len, void *ctx)
{
	return cgroup_paths_lookup(ctx, id, buf, len);
}

void cgroup_paths_stats(const struct cgroup_paths *cp, struct cgroup_paths_stats *st)
{
	*st = cp->st;
	st->entries = cp->t.nr;
}

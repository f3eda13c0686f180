// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_source_tracedat.c - the trace.dat source against the committed
 * fixtures: per-kind event counts and the first switches agree with
 * `trace-cmd report`, events come in time order, and bad input (missing
 * file, bad magic, damaged headers, no sched_switch, flipped bytes, a file
 * cut off at many offsets) gives a clean error or a truncated read, never a
 * crash or a partial result with an error; the same through struct source
 * (source_file_open()).  TAP output.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/source/source.h"
#include "daemon/source/tracedat.h"
#include "daemon/source/tracedat_repair.h"
#include "tests/unit/tap.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif

struct acc {
	uint64_t n, by_kind[IMB_EV__COUNT];
	uint64_t last_ts;
	bool monotonic;
	int nsw;
	struct imb_event first_sw[2];
};

static int acc_fn(const struct imb_event *e, void *ctx)
{
	struct acc *a = ctx;

	if (e->ts_ns < a->last_ts)
		a->monotonic = false;
	a->last_ts = e->ts_ns;
	a->n++;
	if (e->kind < IMB_EV__COUNT)
		a->by_kind[e->kind]++;
	if (e->kind == IMB_EV_SWITCH && a->nsw < 2)
		a->first_sw[a->nsw++] = *e;
	return 0;
}

/* FNV-1a over every delivered event's bytes, in order */
struct digest {
	uint64_t h, n;
};

static int digest_fn(const struct imb_event *e, void *ctx)
{
	struct digest *d = ctx;
	const unsigned char *p = (const unsigned char *)e;

	for (size_t i = 0; i < sizeof(*e); i++)
		d->h = (d->h ^ p[i]) * 0x100000001b3ULL;
	d->n++;
	return 0;
}

/*
 * A compressed file is read in segments (one child process each, for the
 * libtracecmd 3.1 memory leak): the stream must be the same byte for byte
 * whatever the segment size, and so must the counters.
 */
static void check_segments(const char *path, const char *name)
{
	static const unsigned int sizes[] = { 97, 1000, 1u << 30 };
	struct digest ref = { 0xcbf29ce484222325ULL, 0 };
	struct source_info ri, info;
	char err[SOURCE_ERR_LEN];
	int rc;

	source_tracedat_segment(0);
	rc = source_tracedat_read(path, digest_fn, &ref, &ri, err);
	ok(rc == 0 && ref.n > 1000, "%s: default segments: %llu events (%s)", name,
	   (unsigned long long)ref.n, rc ? err : "ok");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct digest d = { 0xcbf29ce484222325ULL, 0 };

		source_tracedat_segment(sizes[k]);
		rc = source_tracedat_read(path, digest_fn, &d, &info, err);
		ok(rc == 0 && d.n == ref.n && d.h == ref.h && info.events == ri.events &&
		   info.lost_events == ri.lost_events && info.nr_cpus == ri.nr_cpus &&
		   info.truncated == ri.truncated,
		   "%s: segments of %u records give the same %llu events (got %llu, %s)", name,
		   sizes[k], (unsigned long long)ref.n, (unsigned long long)d.n,
		   rc ? err : d.h == ref.h ? "same bytes" : "different bytes");
	}
	source_tracedat_segment(0);
}

/*
 * The same file through struct source (source_file_open()): the reader
 * that fits it, one batch then SOURCE_END, the same events and counts as
 * the reader called directly; a reader's error comes from next().
 */
static void check_file_source(const char *dir)
{
	struct digest ref = { 0xcbf29ce484222325ULL, 0 }, d = { 0xcbf29ce484222325ULL, 0 };
	char path[4096], tmp[] = "/tmp/imb-srcXXXXXX", err[SOURCE_ERR_LEN] = "";
	struct source_info ri, info;
	struct source src;
	int rc, rc2, fd;

	snprintf(path, sizeof(path), "%s/tests/fixtures/hogs3on2.dat", dir);
	source_tracedat_read(path, digest_fn, &ref, &ri, err);
	rc = source_file_open(&src, path, err);
	ok(rc == 0 && !strcmp(src.name, "trace.dat") && !(src.caps & SOURCE_LIVE),
	   "source_file_open: a trace.dat is read by the trace.dat source (%s)", src.name);
	rc = src.ops->next(src.impl, -1, digest_fn, &d, err);
	source_info_get(&src, &info);
	rc2 = src.ops->next(src.impl, -1, digest_fn, &d, err);
	ok(rc == SOURCE_END && rc2 == SOURCE_END && d.n == ref.n && d.h == ref.h &&
	   info.events == ri.events && info.lost_events == ri.lost_events &&
	   !strcmp(info.format, "trace.dat") && source_watermark(&src) == UINT64_MAX,
	   "the file in one batch, then SOURCE_END: the same %llu events and counts",
	   (unsigned long long)ref.n);
	source_close(&src);
	ok(!src.ops && !src.impl, "source_close zeroes the source");

	fd = mkstemp(tmp);
	if (fd >= 0) {
		if (write(fd, "# clock=mono\n", 13) != 13)
			ok(0, "write %s", tmp);
		close(fd);
	}
	rc = source_file_open(&src, tmp, err);
	ok(rc == 0 && !strcmp(src.name, "text"), "source_file_open: the text format (%s)",
	   src.name);
	rc = src.ops->next(src.impl, -1, digest_fn, &d, err);
	source_info_get(&src, &info);
	ok(rc == SOURCE_END && !strcmp(info.format, "text") && !strcmp(info.clock, "mono"),
	   "the text source reads it (clock %s)", info.clock);
	source_close(&src);
	unlink(tmp);

	rc = source_file_open(&src, "/nonexistent/x.dat", err);
	rc2 = rc ? rc : src.ops->next(src.impl, -1, digest_fn, &d, err);
	ok(rc == 0 && rc2 == -ENOENT && !strcmp(err, "No such file or directory"),
	   "a missing file: next() says -ENOENT, '%s'", err);
	source_close(&src);
}

static int read_acc(const char *path, struct acc *a, struct source_info *info, char *err)
{
	memset(a, 0, sizeof(*a));
	a->monotonic = true;
	err[0] = 0;
	return source_tracedat_read(path, acc_fn, a, info, err);
}

static const struct {
	const char *name;
	int kind;
} kinds[] = {
	{ "sched_switch:", IMB_EV_SWITCH },
	{ "sched_wakeup:", IMB_EV_WAKEUP },
	{ "sched_wakeup_new:", IMB_EV_WAKEUP_NEW },
	{ "sched_waking:", IMB_EV_WAKING },
	{ "sched_migrate_task:", IMB_EV_MIGRATE },
	{ "sched_process_fork:", IMB_EV_FORK },
	{ "sched_process_exit:", IMB_EV_EXIT },
	{ "sched_stat_runtime:", IMB_EV_RUNTIME },
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

struct rsw {
	char prev_comm[32], next_comm[32], state[8];
	int prev_pid, prev_prio, next_pid, next_prio;
};

/* Count the events trace-cmd report prints; keep its first two switches. */
static int report_counts(const char *path, uint64_t *cnt, struct rsw *sw)
{
	char cmd[4200], line[1024];
	int nsw = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "trace-cmd report -i '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		for (size_t k = 0; k < NKINDS; k++) {
			char *s = strstr(line, kinds[k].name);

			if (!s || s[-1] != ' ')
				continue;
			cnt[k]++;
			if (kinds[k].kind == IMB_EV_SWITCH && nsw < 2) {
				/* "prev:pid [prio] S ==> next:pid [prio]" */
				char *a = s + strlen(kinds[k].name), *c;
				struct rsw *w = &sw[nsw];

				while (*a == ' ')
					a++;
				c = strstr(a, " [");
				if (!c)
					break;
				*c = 0;
				w->prev_pid = atoi(strrchr(a, ':') + 1);
				*strrchr(a, ':') = 0;
				snprintf(w->prev_comm, sizeof(w->prev_comm), "%s", a);
				if (sscanf(c + 1, "[%d] %7s ==> ", &w->prev_prio, w->state) != 2)
					break;
				a = strstr(c + 1, "==> ");
				if (!a)
					break;
				a += 4;
				c = strstr(a, " [");
				if (!c)
					break;
				*c = 0;
				w->next_pid = atoi(strrchr(a, ':') + 1);
				*strrchr(a, ':') = 0;
				snprintf(w->next_comm, sizeof(w->next_comm), "%s", a);
				w->next_prio = atoi(c + 2);
				nsw++;
			}
			break;
		}
	}
	return pclose(p) == 0 ? 0 : -1;
}

/*
 * trace-cmd's state letter -> the low byte of prev_state.  trace-cmd's
 * sched_switch plugin prints bit i as "SDTtZX..."[i]: Z and X swapped
 * against the kernel's own print fmt (0x10 X, 0x20 Z); we deliver the raw
 * kernel value, so map with the plugin's letters.
 */
static int state_bits(const char *s)
{
	static const char letters[] = "SDTtZX";

	if (s[0] == 'R')
		return 0;
	for (int i = 0; letters[i]; i++)
		if (s[0] == letters[i])
			return 1 << i;
	return -1;
}

static void check_fixture(const char *dir, const char *name)
{
	char path[4096], err[SOURCE_ERR_LEN];
	uint64_t cnt[NKINDS] = { 0 };
	struct rsw sw[2];
	struct source_info info;
	struct acc a;
	int rc;

	snprintf(path, sizeof(path), "%s/tests/fixtures/%s", dir, name);
	rc = read_acc(path, &a, &info, err);
	is_int(rc, 0, "%s: read (%s)", name, err);
	ok(!strcmp(info.format, "trace.dat"), "%s: format %s", name, info.format);
	ok(info.clock[0] != 0, "%s: clock '%s'", name, info.clock);
	ok(info.nr_cpus >= 1, "%s: %d CPUs", name, info.nr_cpus);
	ok(!info.truncated, "%s: not truncated", name);
	ok(a.monotonic, "%s: %llu events in time order", name, (unsigned long long)a.n);
	is_u64(info.events, a.n, "%s: info->events counts what was delivered", name);
	memset(sw, 0, sizeof(sw));
	ok(report_counts(path, cnt, sw) == 0, "%s: trace-cmd report runs", name);
	for (size_t k = 0; k < NKINDS; k++)
		is_u64(a.by_kind[kinds[k].kind], cnt[k], "%s: %s count as in trace-cmd report",
		       name, kinds[k].name);
	for (int i = 0; i < 2; i++) {
		const struct imb_event *e = &a.first_sw[i];

		ok(!strcmp(e->sw.prev_comm, sw[i].prev_comm) && e->sw.prev_pid == sw[i].prev_pid &&
		   e->sw.prev_prio == sw[i].prev_prio &&
		   (int)(e->sw.prev_state & 0xff) == state_bits(sw[i].state) &&
		   !strcmp(e->sw.next_comm, sw[i].next_comm) && e->sw.next_pid == sw[i].next_pid &&
		   e->sw.next_prio == sw[i].next_prio,
		   "%s: switch %d %s:%d [%d] %u ==> %s:%d [%d] matches the report", name, i,
		   e->sw.prev_comm, e->sw.prev_pid, e->sw.prev_prio, e->sw.prev_state,
		   e->sw.next_comm, e->sw.next_pid, e->sw.next_prio);
	}
}

static int write_copy(const char *dst, const unsigned char *buf, size_t len)
{
	FILE *f = fopen(dst, "wb");

	if (!f)
		return -1;
	if (len && fwrite(buf, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/*
 * A crash in our own decoding, in the reading child, is an internal error;
 * a crash inside libtracecmd is a corrupted file.  Also with segments (the
 * crash then is in a grandchild).  And the in-process reader (the fuzz
 * target's) delivers the same stream as the child.
 */
static void check_faults(const char *path)
{
	static const struct {
		int kind;
		unsigned int segment;
		int rc;
		const char *what, *says;
	} cases[] = {
		{ TD_FAULT_SIGNAL, 0, -ENOTRECOVERABLE, "SIGSEGV in our decoding",
		  "internal error: the trace.dat decoder" },
		{ TD_FAULT_SIGNAL, 97, -ENOTRECOVERABLE, "SIGSEGV in our decoding, segments",
		  "internal error" },
		{ TD_FAULT_LIBRARY, 0, -EINVAL, "SIGSEGV in libtracecmd",
		  "corrupted trace.dat: the trace library failed" },
		{ TD_FAULT_LIBRARY, 97, -EINVAL, "SIGSEGV in libtracecmd, segments",
		  "corrupted trace.dat" },
#ifdef HAVE_ASAN
		{ TD_FAULT_OVERFLOW, 0, -ENOTRECOVERABLE, "heap overflow in our decoding",
		  "internal error: the trace.dat decoder failed a sanitizer check" },
		{ TD_FAULT_OVERFLOW, 97, -ENOTRECOVERABLE, "heap overflow, segments",
		  "failed a sanitizer check" },
#endif
	};
	struct digest ref = { 0xcbf29ce484222325ULL, 0 }, in = { 0xcbf29ce484222325ULL, 0 };
	struct source_info info, iinfo;
	char err[SOURCE_ERR_LEN];
	int rc;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct acc a;

		source_tracedat_segment(cases[i].segment);
		source_tracedat_fault(cases[i].kind, 50);
		rc = read_acc(path, &a, &info, err);
		source_tracedat_fault(TD_FAULT_NONE, 0);
		is_int(rc, cases[i].rc, "%s: rc %d", cases[i].what, cases[i].rc);
		ok(strstr(err, cases[i].says) != NULL, "%s: '%s'", cases[i].what, err);
	}
	source_tracedat_segment(0);
#ifndef HAVE_ASAN
	diag("heap overflow cases need AddressSanitizer (--enable-sanitizers)");
#endif
	rc = source_tracedat_read(path, digest_fn, &ref, &info, err);
	ok(rc == 0, "child reader: %llu events (%s)", (unsigned long long)ref.n, rc ? err : "ok");
	rc = source_tracedat_read_inproc(path, digest_fn, &in, &iinfo, err);
	ok(rc == 0 && in.n == ref.n && in.h == ref.h && iinfo.events == info.events,
	   "in-process reader: the same %llu events byte for byte (%s)",
	   (unsigned long long)in.n, rc ? err : "ok");
}

/*
 * pelt-lost.dat (tests/fixtures/pelt-uprobe.sh): kernel-written records of
 * events named lisa__sched_pelt_cfs (no runnable field) and
 * lisa__sched_pelt_se (runnable as rbl_load) whose values follow from
 * "load" (pelt-uprobe.c), and missed-event markers (a 4 KiB buffer
 * overran on both CPUs).
 */
struct pelt_acc {
	uint64_t cfs, se, lost, lost_sum, bad;
};

static int pelt_fn(const struct imb_event *e, void *ctx)
{
	struct pelt_acc *p = ctx;

	switch (e->kind) {
	case IMB_EV_PELT_CFS: {
		const struct imb_ev_pelt_cfs *c = &e->pelt_cfs;
		uint64_t i = c->load_avg - 1000;

		p->cfs++;
		if (c->util_avg != 2000 + i || c->last_update_time != 3000000 + i ||
		    c->runnable_avg != 0 || e->cpu != (int)(i % 2) || c->root != !(i % 2))
			p->bad++;
		break;
	}
	case IMB_EV_PELT_SE: {
		const struct imb_ev_pelt_se *x = &e->pelt_se;
		uint64_t i = x->load_avg - 1000;

		p->se++;
		if (x->util_avg != 2000 + i || x->last_update_time != 3000000 + i ||
		    x->runnable_avg != 4000 + i || x->pid != (int)(100 + i) || e->cpu != (int)(i % 2))
			p->bad++;
		break;
	}
	case IMB_EV_LOST:
		p->lost++;
		p->lost_sum += e->lost.count;
		break;
	}
	return 0;
}

static void check_pelt_lost(const char *dir)
{
	struct pelt_acc p = { 0 };
	struct source_info info;
	char path[4096], err[SOURCE_ERR_LEN];
	int rc;

	snprintf(path, sizeof(path), "%s/tests/fixtures/pelt-lost.dat", dir);
	rc = source_tracedat_read(path, pelt_fn, &p, &info, err);
	ok(rc == 0, "pelt-lost.dat: read (%s)", rc ? err : "ok");
	ok(p.cfs >= 10 && p.se >= 10 && p.bad == 0,
	   "pelt-lost.dat: %llu lisa__sched_pelt_cfs and %llu lisa__sched_pelt_se records, "
	   "%llu with a wrong field", (unsigned long long)p.cfs, (unsigned long long)p.se,
	   (unsigned long long)p.bad);
	ok(p.lost == 2 && p.lost_sum == info.lost_events && info.lost_events > 1000,
	   "pelt-lost.dat: the missed-event markers of both CPUs are %llu lost events "
	   "counting %llu (info: %llu)", (unsigned long long)p.lost,
	   (unsigned long long)p.lost_sum, (unsigned long long)info.lost_events);
}

/* In @buf, within the format text of event @ev, every @from becomes @to. */
static int edit_format(unsigned char *buf, size_t len, const char *ev, const char *from,
		       const char *to)
{
	char key[128];
	unsigned char *p, *end, *q;
	size_t flen = strlen(from);
	int n = 0;

	snprintf(key, sizeof(key), "name: %s\n", ev);
	p = memmem(buf, len, key, strlen(key));
	if (!p || strlen(to) != flen)
		return 0;
	end = memmem(p + 1, len - (size_t)(p + 1 - buf), "name: ", 6);
	if (!end)
		end = buf + len;
	while ((q = memmem(p, (size_t)(end - p), from, flen))) {
		memcpy(q, to, flen);
		p = q + flen;
		n++;
	}
	return n;
}

/*
 * Event formats edited in an uncompressed copy of a fixture (made with
 * trace-cmd convert; the fixtures' formats are compressed): a required
 * field missing from sched_switch is an error at once; from another event
 * only when a record of it appears; sched_stick_numa's pre-5.10 layout is
 * read.
 */
static void check_formats(const char *fixture, const char *tmp)
{
	static const struct {
		const char *what, *ev, *edits[3][2];
		int rc;
		const char *says;
	} cases[] = {
		{ "sched_stick_numa lacking src_pid, no such records", "sched_stick_numa",
		  { { "src_pid", "xrc_pid" } }, 0, NULL },
		{ "sched_stick_numa in its pre-5.10 layout", "sched_stick_numa",
		  { { "src_pid", "    pid" }, { "src_tgid", "    tgid" }, { "src_ngid", "    ngid" } },
		  0, NULL },
		{ "sched_migrate_task lacking orig_cpu, with records", "sched_migrate_task",
		  { { "orig_cpu", "orig_cpX" } }, -EINVAL,
		  "sched_migrate_task format lacks field orig_cpu (first sched_migrate_task "
		  "record at " },
		{ "sched_switch lacking next_prio", "sched_switch",
		  { { "next_prio", "next_prix" } }, -EINVAL, "sched_switch format lacks field next_prio" },
	};
	char u[4200], e[4200], cmd[9000], err[SOURCE_ERR_LEN];
	struct source_info info;
	unsigned char *buf;
	struct acc ref, a;
	size_t len;
	FILE *f;
	int rc;

	snprintf(u, sizeof(u), "%s/u.dat", tmp);
	snprintf(e, sizeof(e), "%s/e.dat", tmp);
	snprintf(cmd, sizeof(cmd), "trace-cmd convert --compression none -i '%s' -o '%s' "
		 ">/dev/null 2>&1", fixture, u);
	if (system(cmd) != 0 || !(f = fopen(u, "rb"))) {
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			ok(1, "# SKIP trace-cmd convert not available");
		return;
	}
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(len);
	if (!buf || fread(buf, 1, len, f) != len) {
		fclose(f);
		free(buf);
		ok(0, "read %s", u);
		return;
	}
	fclose(f);
	rc = read_acc(u, &ref, &info, err);
	ok(rc == 0 && ref.by_kind[IMB_EV_MIGRATE] > 0 && ref.by_kind[IMB_EV_NUMA_STICK] == 0,
	   "uncompressed copy: %llu events, %llu migrations (%s)", (unsigned long long)ref.n,
	   (unsigned long long)ref.by_kind[IMB_EV_MIGRATE], rc ? err : "ok");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned char *c = malloc(len);
		int n = 0;

		if (!c)
			break;
		memcpy(c, buf, len);
		for (int k = 0; k < 3 && cases[i].edits[k][0]; k++)
			n += edit_format(c, len, cases[i].ev, cases[i].edits[k][0],
					 cases[i].edits[k][1]);
		write_copy(e, c, len);
		free(c);
		rc = read_acc(e, &a, &info, err);
		if (!cases[i].rc)
			ok(n > 0 && rc == 0 && a.n == ref.n, "%s: read, %llu events (%d edits, %s)",
			   cases[i].what, (unsigned long long)a.n, n, rc ? err : "ok");
		else
			ok(n > 0 && rc == cases[i].rc && strstr(err, cases[i].says) == err,
			   "%s: '%s'", cases[i].what, err);
	}
	unlink(u);
	unlink(e);
	free(buf);
}

/* A missing file and a file without sched_switch fail with a reason. */
static void check_unreadable(const char *dir)
{
	char path[4096], err[SOURCE_ERR_LEN];
	struct source_info info;
	struct acc a;
	int rc;

	/* missing file */
	rc = read_acc("/nonexistent/x.dat", &a, &info, err);
	is_int(rc, -ENOENT, "missing file: -ENOENT (%s)", err);
	ok(!strcmp(err, "No such file or directory"), "missing file: reason '%s'", err);

	/* no sched_switch */
	snprintf(path, sizeof(path), "%s/tests/fixtures/no-switch.dat", dir);
	rc = read_acc(path, &a, &info, err);
	is_int(rc, -ENODATA, "no-switch.dat: -ENODATA (%s)", err);
	ok(strstr(err, "no sched_switch events") != NULL, "no-switch.dat: reason '%s'", err);
	is_u64(a.n, 0, "no-switch.dat: nothing delivered");
}

/* The whole of @path in memory (its size in @len), NULL with a failed test if not. */
static unsigned char *load_file(const char *path, size_t *len)
{
	unsigned char *buf;
	FILE *f = fopen(path, "rb");

	if (!f) {
		ok(0, "open %s", path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len);
	if (!buf || fread(buf, 1, *len, f) != *len) {
		ok(0, "read %s", path);
		fclose(f);
		return NULL;
	}
	fclose(f);
	return buf;
}

/* A bad magic, headers cut short and an empty file are refused. */
static void check_bad_headers(const char *cut, unsigned char *buf, size_t len)
{
	char err[SOURCE_ERR_LEN];
	struct source_info info;
	struct acc a;
	int rc;

	/* zeroed magic */
	buf[0] ^= 0xff;
	write_copy(cut, buf, len);
	buf[0] ^= 0xff;
	rc = read_acc(cut, &a, &info, err);
	is_int(rc, -EINVAL, "zeroed magic: -EINVAL (%s)", err);
	ok(!strcmp(err, "not a trace.dat file (bad magic)"), "zeroed magic: reason");

	/* headers cut short */
	write_copy(cut, buf, 300);
	rc = read_acc(cut, &a, &info, err);
	is_int(rc, -EINVAL, "header cut at 300: -EINVAL (%s)", err);
	ok(a.n == 0, "header cut at 300: nothing delivered");

	/* empty file */
	write_copy(cut, buf, 0);
	rc = read_acc(cut, &a, &info, err);
	is_int(rc, -EINVAL, "empty file: -EINVAL (%s)", err);
}

/*
 * Cut at every 1/64 of the file and at 200 pseudo-random offsets in
 * its last 1/16 (the event data is at the end, after ~1 MB of
 * headers): either an error with a reason and no events, or a read
 * whose events are in order and no more than the whole file has;
 * flagged truncated unless every event survived.
 */
static void check_cuts(const char *cut, const unsigned char *buf, size_t len,
		       const struct acc *full)
{
	char err[SOURCE_ERR_LEN];
	struct source_info info;
	struct acc a;
	int rc, bad_cut = 0, trunc_ok = 0, err_ok = 0;

	srand(12345);
	for (int i = 1; i < 64 + 200; i++) {
		size_t at = i < 64 ? len * (size_t)i / 64 : len - 1 - (size_t)rand() % (len / 16);

		write_copy(cut, buf, at);
		rc = read_acc(cut, &a, &info, err);
		if (rc == 0 && a.monotonic && a.n <= full->n && a.n > 0 &&
		    (a.n == full->n || (info.truncated && info.warning[0])))
			trunc_ok++;
		else if (rc < 0 && err[0] && a.n == 0)
			err_ok++;
		else {
			bad_cut++;
			diag("cut at %zu: rc %d truncated %d events %llu err '%s' warning '%s'", at,
			     rc, info.truncated, (unsigned long long)a.n, err, info.warning);
		}
	}
	is_int(bad_cut, 0, "263 cuts: %d read up to the cut, %d clean errors", trunc_ok, err_ok);
	ok(trunc_ok >= 50, "cuts inside the event data are read up to the cut (%d)", trunc_ok);
}

/*
 * Cuts in the last 256 bytes: the string table (~117 bytes), the last
 * options section (the data map, ~98 bytes) and the end of the event
 * data.  At every offset the tail check sees the cut (cheap); at every
 * 16th and around the section borders a whole read keeps every event
 * (or those up to the cut) and says it was cut off.
 */
static void check_tail_cuts(const char *cut, const unsigned char *buf, size_t len,
			    const struct acc *full)
{
	char err[SOURCE_ERR_LEN];
	struct source_info info;
	struct acc a;
	int rc, tail_bad = 0, tail_all = 0, reads = 0, unseen = 0;

	for (size_t back = 1; back <= 256; back++) {
		size_t at = len - back;
		int tc;

		write_copy(cut, buf, at);
		tc = tracedat_tail_cut(cut);
		if (tc == TRACEDAT_COMPLETE) {
			unseen++;
			diag("cut %zu bytes before the end: not seen by tracedat_tail_cut", back);
		}
		if (back % 16 && !(back >= 114 && back <= 121) && !(back >= 212 && back <= 219))
			continue;
		reads++;
		rc = read_acc(cut, &a, &info, err);
		if (rc == 0 && a.monotonic && a.n > 0 && a.n <= full->n && info.truncated &&
		    strstr(info.warning, "cut off")) {
			tail_all += a.n == full->n;
			continue;
		}
		tail_bad++;
		diag("cut %zu bytes before the end: rc %d truncated %d events %llu/%llu "
		     "err '%s' warning '%s'", back, rc, info.truncated,
		     (unsigned long long)a.n, (unsigned long long)full->n, err,
		     info.warning);
	}
	is_int(unseen, 0, "cuts 1..256 bytes before the end: each one seen as a cut");
	is_int(tail_bad, 0, "%d of those cuts read: each read and flagged truncated", reads);
	ok(tail_all >= 18, "the cuts after the event data keep every event (%d)", tail_all);
}

/* Walking back from the end, the first cut that loses events. */
static void check_first_lossy_cut(const char *cut, const unsigned char *buf, size_t len,
				  const struct acc *full)
{
	char err[SOURCE_ERR_LEN];
	struct source_info info;
	struct acc a;
	size_t at = len;
	int rc;

	do {
		at -= 512;
		write_copy(cut, buf, at);
		rc = read_acc(cut, &a, &info, err);
	} while (at > len / 2 && rc == 0 && a.n == full->n);
	ok(rc == 0 && info.truncated && a.n > 0 && a.n < full->n,
	   "cut at %zu: %llu of %llu events, truncated (%s)", at,
	   (unsigned long long)a.n, (unsigned long long)full->n, err);
	ok(strstr(info.warning, "cut off") != NULL, "cut at %zu: warning '%s'", at,
	   info.warning);
	/* the repaired copy (a memfd) read in segments too */
	check_segments(cut, "cut copy");
}

/* Flipped bytes: 300 single-byte flips anywhere, nothing may crash. */
static void check_flips(const char *cut, unsigned char *buf, size_t len)
{
	char err[SOURCE_ERR_LEN];
	struct source_info info;
	struct acc a;
	int rc, errs = 0, reads = 0;

	for (int i = 0; i < 300; i++) {
		size_t at = (size_t)rand() % len;
		unsigned char old = buf[at];

		buf[at] ^= (unsigned char)(1 + rand() % 255);
		write_copy(cut, buf, len);
		buf[at] = old;
		rc = read_acc(cut, &a, &info, err);
		if (rc == -ENOTRECOVERABLE)
			diag("flip at %zu: %s", at, err);
		else if (rc < 0)
			errs += err[0] != 0;
		else
			reads += a.monotonic;
	}
	is_int(errs + reads, 300, "300 byte flips: %d reads in order, %d errors with reason",
	       reads, errs);
}

int main(void)
{
	const char *dir = getenv("top_srcdir");
	char path[4096], tmp[] = "/tmp/imb-tdXXXXXX", cut[4200], err[SOURCE_ERR_LEN];
	struct source_info info;
	unsigned char *buf;
	struct acc full;
	size_t len = 0;

	if (!dir)
		dir = ".";
	check_fixture(dir, "hogs3on2.dat");
	check_fixture(dir, "rtapp-periodic.dat");

	snprintf(path, sizeof(path), "%s/tests/fixtures/hogs3on2.dat", dir);
	check_segments(path, "hogs3on2.dat");
	snprintf(path, sizeof(path), "%s/tests/fixtures/rtapp-periodic.dat", dir);
	check_segments(path, "rtapp-periodic.dat");
	snprintf(path, sizeof(path), "%s/tests/fixtures/hogs2on2.dat", dir);
	check_faults(path);
	check_pelt_lost(dir);
	check_file_source(dir);
	check_unreadable(dir);

	/* load hogs3on2.dat to damage copies of it */
	snprintf(path, sizeof(path), "%s/tests/fixtures/hogs3on2.dat", dir);
	buf = load_file(path, &len);
	if (!buf)
		return tap_done();
	read_acc(path, &full, &info, err);
	if (!mkdtemp(tmp)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(cut, sizeof(cut), "%s/x.dat", tmp);
	snprintf(path, sizeof(path), "%s/tests/fixtures/hogs2on2.dat", dir);
	check_formats(path, tmp);

	check_bad_headers(cut, buf, len);
	check_cuts(cut, buf, len, &full);
	check_tail_cuts(cut, buf, len, &full);
	check_first_lossy_cut(cut, buf, len, &full);
	check_flips(cut, buf, len);

	unlink(cut);
	rmdir(tmp);
	free(buf);
	return tap_done();
}

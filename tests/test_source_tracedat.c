// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_source_tracedat.c - the trace.dat source against the committed
 * fixtures: per-kind event counts and the first switches agree with
 * `trace-cmd report`, events come in time order, and bad input (missing
 * file, bad magic, damaged headers, no sched_switch, flipped bytes, a file
 * cut off at many offsets) gives a clean error or a truncated read, never a
 * crash or a partial result with an error.  TAP output.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/source.h"
#include "tests/tap.h"

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

int main(void)
{
	const char *dir = getenv("top_srcdir");
	char path[4096], tmp[] = "/tmp/imb-tdXXXXXX", cut[4200], err[SOURCE_ERR_LEN];
	struct source_info info;
	unsigned char *buf;
	struct acc a, full;
	size_t len;
	FILE *f;
	int rc, bad_cut = 0, trunc_ok = 0, err_ok = 0;

	if (!dir)
		dir = ".";
	check_fixture(dir, "hogs3on2.dat");
	check_fixture(dir, "rtapp-periodic.dat");

	snprintf(path, sizeof(path), "%s/tests/fixtures/hogs3on2.dat", dir);
	check_segments(path, "hogs3on2.dat");
	snprintf(path, sizeof(path), "%s/tests/fixtures/rtapp-periodic.dat", dir);
	check_segments(path, "rtapp-periodic.dat");

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

	/* load hogs3on2.dat to damage copies of it */
	snprintf(path, sizeof(path), "%s/tests/fixtures/hogs3on2.dat", dir);
	f = fopen(path, "rb");
	if (!f) {
		ok(0, "open %s", path);
		return tap_done();
	}
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(len);
	if (!buf || fread(buf, 1, len, f) != len) {
		ok(0, "read %s", path);
		fclose(f);
		return tap_done();
	}
	fclose(f);
	rc = read_acc(path, &full, &info, err);
	if (!mkdtemp(tmp)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(cut, sizeof(cut), "%s/x.dat", tmp);

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

	/*
	 * Cut at every 1/64 of the file and at 200 pseudo-random offsets in
	 * its last 1/16 (the event data is at the end, after ~1 MB of
	 * headers): either an error with a reason and no events, or a read
	 * whose events are in order and no more than the whole file has;
	 * flagged truncated unless every event survived.
	 */
	srand(12345);
	for (int i = 1; i < 64 + 200; i++) {
		size_t at = i < 64 ? len * (size_t)i / 64 : len - 1 - (size_t)rand() % (len / 16);

		write_copy(cut, buf, at);
		rc = read_acc(cut, &a, &info, err);
		if (rc == 0 && a.monotonic && a.n <= full.n && a.n > 0 &&
		    (a.n == full.n || (info.truncated && info.warning[0])))
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

	/* walking back from the end, the first cut that loses events */
	{
		size_t at = len;

		do {
			at -= 512;
			write_copy(cut, buf, at);
			rc = read_acc(cut, &a, &info, err);
		} while (at > len / 2 && rc == 0 && a.n == full.n);
		ok(rc == 0 && info.truncated && a.n > 0 && a.n < full.n,
		   "cut at %zu: %llu of %llu events, truncated (%s)", at,
		   (unsigned long long)a.n, (unsigned long long)full.n, err);
		ok(strstr(info.warning, "cut off") != NULL, "cut at %zu: warning '%s'", at,
		   info.warning);
		/* the repaired copy (a memfd) read in segments too */
		check_segments(cut, "cut copy");
	}

	/* flipped bytes: 300 single-byte flips anywhere, nothing may crash */
	{
		int errs = 0, reads = 0;

		for (int i = 0; i < 300; i++) {
			size_t at = (size_t)rand() % len;
			unsigned char old = buf[at];

			buf[at] ^= (unsigned char)(1 + rand() % 255);
			write_copy(cut, buf, len);
			buf[at] = old;
			rc = read_acc(cut, &a, &info, err);
			if (rc < 0)
				errs += err[0] != 0;
			else
				reads += a.monotonic;
		}
		is_int(errs + reads, 300, "300 byte flips: %d reads in order, %d errors with reason",
		       reads, errs);
	}

	unlink(cut);
	rmdir(tmp);
	free(buf);
	return tap_done();
}

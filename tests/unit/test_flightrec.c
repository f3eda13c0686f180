// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_flightrec.c - the flight recorder: the ring keeps the newest events
 * within its window, a dump of a full ring (250k events, the default
 * bound) reads back whole and in order, the asynchronous dump costs the
 * caller only a copy while a worker compresses and fsyncs, at most
 * FLIGHTREC_MAX_QUEUED dumps wait, and the state directory keeps the
 * newest files only.
 *
 * The times are printed (diag), not asserted: on this (loaded, 2-CPU VM)
 * machine a 250k-event dump takes 0.3-0.6 s of formatting, compression and
 * fsync (-O2; about twice that under ASan); the asynchronous dump costs the
 * caller the copy into a kept buffer, 2-10 ms, or about 200 ms of page
 * faults for the first one.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "daemon/sink/flightrec.h"
#include "tests/unit/tap.h"

#define NEV 250000

static char dir[] = "/tmp/imb-flightrec-XXXXXX";

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* this thread's CPU time: what the caller pays, whatever the machine's load */
static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* events like a busy 2-CPU host: switches and runtime updates, 10 us apart */
static void fill(struct flightrec *fr, size_t n, uint64_t t0)
{
	struct imb_event ev;

	for (size_t i = 0; i < n; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.ts_ns = t0 + i * 10000;
		ev.cpu = (int)(i % 2);
		if (i % 2) {
			ev.kind = IMB_EV_SWITCH;
			ev.sw.prev_pid = 100 + (int)(i % 7);
			ev.sw.next_pid = 100 + (int)((i + 1) % 7);
			ev.sw.prev_tgid = ev.sw.next_tgid = 100;
			ev.sw.prev_prio = ev.sw.next_prio = 120;
			ev.sw.prev_state = 0x100;
		} else {
			ev.kind = IMB_EV_RUNTIME;
			ev.runtime.pid = 100 + (int)(i % 7);
			ev.runtime.runtime_ns = 10000;
		}
		flightrec_add(fr, &ev);
	}
}

/* lines in a dump and whether their timestamps are the expected run */
static long check_file(const char *path, uint64_t first_ts, int *in_order)
{
	gzFile gz = gzopen(path, "rb");
	char line[512];
	long n = 0;
	uint64_t want = first_ts;

	*in_order = 1;
	if (!gz)
		return -1;
	while (gzgets(gz, line, sizeof(line))) {
		unsigned long long ts;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%llu", &ts) != 1 || ts != want)
			*in_order = 0;
		want += 10000;
		n++;
	}
	gzclose(gz);
	return n;
}

static int count_dumps(const char *d, const char *contains)
{
	DIR *dd = opendir(d);
	struct dirent *de;
	int n = 0;

	if (!dd)
		return -1;
	while ((de = readdir(dd)))
		if (!strncmp(de->d_name, "flight-", 7) && strstr(de->d_name, ".events.gz") &&
		    (!contains || strstr(de->d_name, contains)))
			n++;
	closedir(dd);
	return n;
}

static void test_ring(void)
{
	struct flightrec *fr = flightrec_new(1, 1000);
	char path[4096], err[256];
	int in_order;

	fill(fr, 5000, 1000000000);
	is_int(flightrec_count(fr), 1000, "the ring holds at most max_events");
	flightrec_free(fr);
	fr = flightrec_new(1, 1000000);
	fill(fr, 300000, 1000000000);	/* 3 s of events, a 1 s window */
	is_int(flightrec_count(fr), 100001, "the ring holds the last second only");
	is_int(flightrec_dump(fr, dir, "ring", path, sizeof(path), err), 0, "a dump writes");
	ok(check_file(path, 1000000000 + 199999ull * 10000, &in_order) == 100001 && in_order,
	   "the dump holds the last second's events, oldest first");
	unlink(path);
	flightrec_free(fr);
}

static void test_dump_cost(void)
{
	struct flightrec *fr = flightrec_new(30, NEV);
	struct flightrec_stats st;
	char path[4096], p1[4096], p2[4096], p3[4096], err[256];
	double t, c, sync_ms, async_ms, sync_cpu, async_cpu;
	int64_t s1, s2, s3;
	int in_order, refused;

	fill(fr, NEV + 1234, 5000000000);	/* full, and wrapped around */
	is_int(flightrec_count(fr), NEV, "a full ring of %d events", NEV);
	t = now_ms();
	c = cpu_ms();
	is_int(flightrec_dump(fr, dir, "sync", path, sizeof(path), err), 0, "synchronous dump");
	sync_ms = now_ms() - t;
	sync_cpu = cpu_ms() - c;
	ok(check_file(path, 5000000000 + 1234ull * 10000, &in_order) == NEV && in_order,
	   "it reads back whole and in order across the ring's wrap");

	t = now_ms();
	c = cpu_ms();
	s1 = flightrec_dump_async(fr, dir, "async-1", p1, sizeof(p1), err);
	async_ms = now_ms() - t;
	async_cpu = cpu_ms() - c;
	s2 = flightrec_dump_async(fr, dir, "async-2", p2, sizeof(p2), err);
	s3 = flightrec_dump_async(fr, dir, "async-3", p3, sizeof(p3), err);
	ok(s1 > 0 && s2 > s1, "two asynchronous dumps are queued (%lld, %lld)", (long long)s1,
	   (long long)s2);
	/*
	 * The first takes hundreds of ms to write, so the third normally finds
	 * both waiting; if the machine let the first finish, the third must
	 * be accepted only because it did.
	 */
	refused = s3 == -EBUSY;
	ok(refused || (s3 > 0 && flightrec_dump_result(fr, s1) == 0),
	   "at most %d dumps wait: a third is refused while both do (%s)", FLIGHTREC_MAX_QUEUED,
	   refused ? err : "the first was written already");
	if (!refused)
		diag("the refusal was not exercised: the first dump finished first");
	flightrec_flush(fr);
	is_int(flightrec_dump_result(fr, s1), 0, "after flush the first is written");
	is_int(flightrec_dump_result(fr, s2), 0, "so is the second");
	is_int(flightrec_dump_result(fr, s1 + 1000), -ESTALE, "an unknown dump is -ESTALE");
	ok(check_file(p1, 5000000000 + 1234ull * 10000, &in_order) == NEV && in_order,
	   "the asynchronous dump has the same events");
	flightrec_stats_get(fr, &st);
	ok(st.written == 3u - refused && st.refused == (uint64_t)refused && st.failed == 0,
	   "stats: %d written, %d refused", 3 - refused, refused);
	diag("%d events: synchronous dump %.1f ms (%.1f ms CPU); asynchronous, the first:"
	     " %.1f ms in the caller (%.1f ms CPU, page faults of its buffer), %.1f ms in the"
	     " worker", NEV, sync_ms, sync_cpu, async_ms, async_cpu, st.last_write_ns / 1e6);
	/* the next dumps copy into the buffer kept from the last: the steady cost */
	for (int i = 0; i < 3; i++) {
		t = now_ms();
		c = cpu_ms();
		s3 = flightrec_dump_async(fr, dir, "again", p3, sizeof(p3), err);
		async_ms = now_ms() - t;
		async_cpu = cpu_ms() - c;
		flightrec_flush(fr);
		unlink(p3);
		flightrec_stats_get(fr, &st);
		diag("a later asynchronous dump: %.1f ms in the caller (%.1f ms CPU), %.1f ms in"
		     " the worker", async_ms, async_cpu, st.last_write_ns / 1e6);
	}
	is_int(flightrec_dump_result(fr, s3), 0, "later dumps are written too");
	/* a directory that cannot be written: the failure is reported, not lost */
	s1 = flightrec_dump_async(fr, "/nonexistent-dir", "x", p1, sizeof(p1), err);
	flightrec_flush(fr);
	ok(s1 > 0 && flightrec_dump_result(fr, s1) == -ENOENT, "a failed write is reported");
	flightrec_stats_get(fr, &st);
	ok(st.failed == 1 && st.written == 6u - refused && strstr(st.last_error, "/nonexistent-dir"), "with its reason: %s",
	   st.last_error);
	flightrec_free(fr);
}

static void test_keep(void)
{
	struct flightrec *fr = flightrec_new(1, 100);
	char sub[300], path[4096], err[256], oldest[4096] = "";
	FILE *f;

	snprintf(sub, sizeof(sub), "%s/keep", dir);
	mkdir(sub, 0700);
	snprintf(path, sizeof(path), "%s/notes.txt", sub);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	fill(fr, 10, 1000);
	flightrec_set_keep(fr, 3);
	for (int i = 0; i < 5; i++) {
		is_int(flightrec_dump(fr, sub, "k", path, sizeof(path), err), 0, "dump %d", i);
		if (!i)
			snprintf(oldest, sizeof(oldest), "%s", path);
	}
	is_int(count_dumps(sub, NULL), 3, "only the 3 newest dump files are kept");
	ok(access(oldest, F_OK) != 0 && access(path, F_OK) == 0, "the oldest went, the newest stayed");
	snprintf(path, sizeof(path), "%s/notes.txt", sub);
	ok(access(path, F_OK) == 0, "other files in the directory are left alone");
	flightrec_set_keep(fr, 0);
	for (int i = 0; i < FLIGHTREC_DEFAULT_KEEP + 2; i++)
		flightrec_dump_async(fr, sub, "d", path, sizeof(path), err), flightrec_flush(fr);
	is_int(count_dumps(sub, NULL), FLIGHTREC_DEFAULT_KEEP,
	       "asynchronous dumps prune too, to the default %d", FLIGHTREC_DEFAULT_KEEP);
	flightrec_free(fr);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_ring();
	test_dump_cost();
	test_keep();
	if (!getenv("KEEP_TMP")) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			diag("could not remove %s", dir);
	}
	return tap_done();
}

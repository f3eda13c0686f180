// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_event_text.c - the text event format: round trips of every kind,
 * canonical re-formatting, a precise error for each bad line, and the
 * file reader (comments, line-numbered errors, standard input, sniffing).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzers/event_text.h"
#include "daemon/source/source.h"
#include "tap.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random value, often 0 (keys left out) or an extreme. */
static uint64_t rval(void)
{
	switch (rnd() % 5) {
	case 0:
		return 0;
	case 1:
		return UINT64_MAX;
	case 2:
		return rnd() % 100;
	default:
		return rnd();
	}
}

static void rcomm(char *c)
{
	size_t n = rnd() % IMB_COMM_LEN;

	memset(c, 0, IMB_COMM_LEN);
	for (size_t i = 0; i < n; i++)
		c[i] = (char)(1 + rnd() % 255);	/* any byte but NUL */
}

/* The payload of a context switch, in random values. */
static void random_switch(struct imb_event *e)
{
	e->sw.prev_pid = (int32_t)rval();
	e->sw.prev_tgid = (int32_t)rval();
	e->sw.prev_prio = (int32_t)rval();
	e->sw.prev_state = (uint32_t)rval();
	e->sw.next_pid = (int32_t)rval();
	e->sw.next_tgid = (int32_t)rval();
	e->sw.next_prio = (int32_t)rval();
	e->sw.next_cgroup = rval();
	e->sw.next_group = rval();
	e->sw.prev_delayed = (uint32_t)rval();
	rcomm(e->sw.prev_comm);
	rcomm(e->sw.next_comm);
}

/* The payload of a wakeup, new-task wakeup or waking, in random values. */
static void random_wakeup(struct imb_event *e)
{
	e->wakeup.pid = (int32_t)rval();
	e->wakeup.tgid = (int32_t)rval();
	e->wakeup.prio = (int32_t)rval();
	e->wakeup.target_cpu = (int32_t)rval();
	e->wakeup.delayed = (uint32_t)rval();
	rcomm(e->wakeup.comm);
}

/* The payload of a cfs_rq PELT update, in random values. */
static void random_pelt_cfs(struct imb_event *e)
{
	e->pelt_cfs.cgroup_id = rval();
	e->pelt_cfs.root = (uint8_t)rval();
	e->pelt_cfs.nr_queued = (uint32_t)rval();
	e->pelt_cfs.h_nr_queued = (uint32_t)rval();
	e->pelt_cfs.h_nr_runnable = (uint32_t)rval();
	e->pelt_cfs.util_sum = (uint32_t)rval();
	e->pelt_cfs.period_contrib = (uint32_t)rval();
	e->pelt_cfs.last_update_time = rval();
	e->pelt_cfs.load_sum = rval();
	e->pelt_cfs.runnable_sum = rval();
	e->pelt_cfs.load_avg = rval();
	e->pelt_cfs.runnable_avg = rval();
	e->pelt_cfs.util_avg = rval();
}

/* The payload of an entity PELT update, in random values. */
static void random_pelt_se(struct imb_event *e)
{
	e->pelt_se.pid = (int32_t)rval();
	e->pelt_se.tgid = (int32_t)rval();
	e->pelt_se.cgroup_id = rval();
	e->pelt_se.util_sum = (uint32_t)rval();
	e->pelt_se.period_contrib = (uint32_t)rval();
	e->pelt_se.last_update_time = rval();
	e->pelt_se.load_sum = rval();
	e->pelt_se.runnable_sum = rval();
	e->pelt_se.load_avg = rval();
	e->pelt_se.runnable_avg = rval();
	e->pelt_se.util_avg = rval();
}

/* The payload of a NUMA move, swap or stick, in random values. */
static void random_numa(struct imb_event *e)
{
	e->numa.src_pid = (int32_t)rval();
	e->numa.src_tgid = (int32_t)rval();
	e->numa.src_ngid = (int32_t)rval();
	e->numa.src_cpu = (int32_t)rval();
	e->numa.src_nid = (int32_t)rval();
	e->numa.dst_pid = (int32_t)rval();
	e->numa.dst_tgid = (int32_t)rval();
	e->numa.dst_ngid = (int32_t)rval();
	e->numa.dst_cpu = (int32_t)rval();
	e->numa.dst_nid = (int32_t)rval();
}

static void random_event(struct imb_event *e)
{
	memset(e, 0, sizeof(*e));
	e->ts_ns = rval();
	e->cpu = (int32_t)(rnd() % 4096);
	e->kind = (uint16_t)(1 + rnd() % (IMB_EV__COUNT - 1));
	if (rnd() % 2) {
		e->flags = IMB_EVF_RQ_CLOCKS;
		e->clock_task_ns = rval();
		e->clock_pelt_ns = rval();
	}
	if (rnd() % 8 == 0)
		e->flags |= IMB_EVF_GAP;
	switch (e->kind) {
	case IMB_EV_SWITCH:
		random_switch(e);
		break;
	case IMB_EV_WAKEUP:
	case IMB_EV_WAKEUP_NEW:
	case IMB_EV_WAKING:
		random_wakeup(e);
		break;
	case IMB_EV_MIGRATE:
		e->migrate.pid = (int32_t)rval();
		e->migrate.prio = (int32_t)rval();
		e->migrate.orig_cpu = (int32_t)rval();
		e->migrate.dest_cpu = (int32_t)rval();
		rcomm(e->migrate.comm);
		break;
	case IMB_EV_FORK:
		e->fork.parent_pid = (int32_t)rval();
		e->fork.child_pid = (int32_t)rval();
		e->fork.child_tgid = (int32_t)rval();
		rcomm(e->fork.child_comm);
		break;
	case IMB_EV_EXIT:
		e->exit.pid = (int32_t)rval();
		e->exit.prio = (int32_t)rval();
		rcomm(e->exit.comm);
		break;
	case IMB_EV_RUNTIME:
		e->runtime.pid = (int32_t)rval();
		e->runtime.runtime_ns = rval();
		e->runtime.timer = (int32_t)(rval() % 3);
		break;
	case IMB_EV_PELT_CFS:
		random_pelt_cfs(e);
		break;
	case IMB_EV_PELT_SE:
		random_pelt_se(e);
		break;
	case IMB_EV_NUMA_MOVE:
	case IMB_EV_NUMA_SWAP:
	case IMB_EV_NUMA_STICK:
		random_numa(e);
		break;
	case IMB_EV_VRUNTIME:
		e->vruntime.vruntime_ref = rval();
		e->vruntime.avg_vruntime = (int64_t)rval();
		e->vruntime.is_zero_vruntime = (uint8_t)rval();
		break;
	case IMB_EV_LOST:
		e->lost.count = rval();
		e->lost.skipped = (uint32_t)rval() & 1;
		e->lost.marked = (uint32_t)rval() & 1;
		break;
	}
}

static void test_round_trip(void)
{
	char line[EVENT_TEXT_MAX_LINE], line2[EVENT_TEXT_MAX_LINE], err[200];
	int bad = 0, canon_bad = 0, kinds_seen = 0;
	bool seen[IMB_EV__COUNT] = { false };

	for (int i = 0; i < 20000; i++) {
		struct imb_event a, b;
		int n;

		random_event(&a);
		n = event_text_format(&a, line, sizeof(line));
		if (n < 0 || event_text_parse(line, (size_t)n, &b, err, sizeof(err)) != 0 ||
		    memcmp(&a, &b, sizeof(a))) {
			if (!bad++)
				diag("round trip failed: %s (%s)", line, err);
			continue;
		}
		if (!seen[a.kind]) {
			seen[a.kind] = true;
			kinds_seen++;
		}
		if (event_text_format(&b, line2, sizeof(line2)) != n || strcmp(line, line2))
			canon_bad++;
	}
	ok(bad == 0, "parse(format(ev)) == ev for 20,000 random events (%d failed)", bad);
	is_int(kinds_seen, IMB_EV__COUNT - 1, "the random events covered every kind");
	ok(canon_bad == 0, "format(parse(line)) is the same line");
}

static void test_examples(void)
{
	struct imb_event e;
	char err[200], out[512];
	const char *l = "1000000 switch cpu=0 prev_pid=12 prev_state=R next_pid=13";

	is_int(event_text_parse(l, strlen(l), &e, err, sizeof(err)), 0,
	       "the README's example parses");
	ok(e.kind == IMB_EV_SWITCH && e.ts_ns == 1000000 && e.sw.prev_pid == 12 &&
	   e.sw.next_pid == 13 && e.sw.prev_state == 0, "... into the right fields");
	l = "5 switch cpu=1 prev_pid=7 prev_state=R+ prev_comm=my%20task next_pid=0";
	event_text_parse(l, strlen(l), &e, err, sizeof(err));
	ok(e.sw.prev_state == 0x100 && !strcmp(e.sw.prev_comm, "my task"),
	   "R+ is 0x100 and %%20 is a space in a comm");
	event_text_format(&e, out, sizeof(out));
	ok(strstr(out, "prev_comm=my%20task") != NULL, "a space in a comm is written as %%20");
	is_int(event_text_parse("  # a comment", 13, &e, err, sizeof(err)), 1,
	       "a comment line is skipped");
	is_int(event_text_parse("   \n", 4, &e, err, sizeof(err)), 1, "a blank line is skipped");
	is_int(event_text_format(&e, out, 8), -ENOSPC, "a short buffer is -ENOSPC");
	l = "7 wakeup cpu=0 pid=18 comm=migration/0";
	event_text_parse(l, strlen(l), &e, err, sizeof(err));
	is_int(e.wakeup.prio, -1, "a priority left out is unknown (-1), not 0");
	e.wakeup.prio = 0;
	event_text_format(&e, out, sizeof(out));
	ok(strstr(out, " prio=0") != NULL, "priority 0 (the stop class) is written: %s", out);
	e.wakeup.prio = -1;
	event_text_format(&e, out, sizeof(out));
	ok(strstr(out, "prio") == NULL, "an unknown priority is left out: %s", out);
}

static void expect_err(const char *line, const char *want)
{
	struct imb_event e;
	char err[200] = "";
	int rc = event_text_parse(line, strlen(line), &e, err, sizeof(err));

	ok(rc == -EINVAL && strstr(err, want), "'%s' -> error '%s' (%s)", line, want, err);
}

static void expect_exact(const char *line, const char *want)
{
	struct imb_event e;
	char err[200] = "";
	int rc = event_text_parse(line, strlen(line), &e, err, sizeof(err));

	ok(rc == -EINVAL && !strcmp(err, want), "'%s' -> exactly '%s' (got '%s')", line, want, err);
}

static void test_errors(void)
{
	char longline[EVENT_TEXT_MAX_LINE + 10];

	expect_err("x switch cpu=0", "timestamp");
	expect_err("10 bogus cpu=0", "unknown event kind 'bogus'");
	expect_err("10 switch", "missing field cpu");
	expect_err("10 switch cpu=-1", "field cpu");
	expect_exact("10 switch cpu=99999999", "switch: field cpu: not a CPU number (0 to 4095) "
		     "(column 11)");
	expect_exact("10 wakeup cpu=4096 pid=1", "wakeup: field cpu: not a CPU number (0 to 4095) "
		     "(column 11)");
	ok(event_text_parse("10 switch cpu=4095", 18, &(struct imb_event){ 0 }, longline,
			    sizeof(longline)) == 0, "cpu=4095, the largest, parses");
	expect_err("10 switch cpu=0 prev_pid", "is not key=value");
	expect_err("10 switch cpu=0 color=red", "unknown field 'color'");
	expect_err("10 switch cpu=0 prev_pid=1 prev_pid=2", "field prev_pid given twice");
	expect_err("10 switch cpu=0 gap=2", "field gap: not 0 or 1");
	expect_err("10 switch cpu=0 gap=1 gap=1", "field gap given twice");
	expect_err("10 switch cpu=0 prev_state=Q", "field prev_state");
	expect_err("10 wakeup cpu=0 pid=abc", "field pid: not a 32-bit integer");
	expect_err("10 wakeup cpu=0 pid=3000000000", "field pid: not a 32-bit integer");
	expect_err("10 pelt_cfs cpu=0 root=256", "field root: not a number from 0 to 255");
	expect_err("10 runtime cpu=0 runtime_ns=-5", "field runtime_ns");
	expect_err("10 exit cpu=0 comm=%4", "field comm: bad task name");
	expect_err("10 exit cpu=0 comm=abcdefghijklmnopq", "field comm: bad task name");
	expect_err("99999999999999999999999 switch cpu=0", "timestamp");
	expect_exact("10 wakeup cpu=0 pid=12 pid=13", "wakeup: field pid given twice (column 24)");
	expect_exact("10 switch cpu=0 prev_state=x1", "switch: field prev_state: want R, R+, S, "
		     "D, T, t, X, Z, P, I or a number (column 17)");
	expect_exact("10  swtich cpu=0", "column 5: unknown event kind 'swtich'");
	expect_exact("10 migrate dest_cpu=1 ", "migrate: missing field cpu");
	expect_exact("10 lost cpu=0 count=12x", "lost: field count: not an unsigned 64-bit number "
		     "(column 15)");
	expect_exact("10 fork cpu=0 child_pid 3", "column 15: fork: 'child_pid' is not key=value");
	memset(longline, '1', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = 0;
	expect_err(longline, "line longer than");
}

struct collect {
	int n;
	uint64_t ts[16];
	int kinds[16];
};

static int collect_fn(const struct imb_event *ev, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 16) {
		c->ts[c->n] = ev->ts_ns;
		c->kinds[c->n] = ev->kind;
	}
	c->n++;
	return 0;
}

static int stop_fn(const struct imb_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
	return -ECANCELED;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static void test_reader(void)
{
	char path[] = "/tmp/imb-text-XXXXXX", err[SOURCE_ERR_LEN] = "";
	struct source_info info;
	struct collect c = { 0 };
	int fd = mkstemp(path), rc, saved;
	char text[256];

	close(fd);
	snprintf(text, sizeof(text), "%s\n"
		 "\n"
		 "# a comment\n"
		 "1000 switch cpu=0 prev_pid=12 prev_state=S next_pid=13\n"
		 "   \n"
		 "2000 wakeup cpu=1 pid=12 target_cpu=1 comm=a%%20b\n"
		 "3000 lost cpu=1 count=7   # trailing comment\n", event_text_header());
	write_file(path, text);
	rc = source_text_read(path, collect_fn, &c, &info, err);
	is_int(rc, 0, "a file with a header, comments and blank lines reads (%s)", err);
	is_int(c.n, 3, "... three events");
	ok(c.ts[0] == 1000 && c.kinds[0] == IMB_EV_SWITCH && c.ts[1] == 2000 &&
	   c.kinds[1] == IMB_EV_WAKEUP && c.kinds[2] == IMB_EV_LOST, "... in order, right kinds");
	ok(!strcmp(info.format, "text") && info.nr_cpus == 2 && info.events == 3 &&
	   info.lost_events == 7, "... info: format text, 2 CPUs, 3 events, 7 lost");
	ok(source_text_sniff(path), "sniff: a text file is text");

	write_file(path, "# x\n1 switch cpu=0\n2 switch cpu=0\n3 switch cpu=0 prev_state=W\n");
	rc = source_text_read(path, collect_fn, &c, &info, err);
	ok(rc == -EINVAL && !strcmp(err, "line 4: switch: field prev_state: want R, R+, S, D, "
				     "T, t, X, Z, P, I or a number (column 16)"),
	   "a bad line names its line number and field (%s)", err);

	write_file(path, "5 switch cpu=0\n4 switch cpu=0\n");
	rc = source_text_read(path, collect_fn, &c, &info, err);
	ok(rc == -EINVAL && strstr(err, "line 2: timestamp 4 is older"),
	   "time going backwards is an error (%s)", err);

	rc = source_text_read(path, stop_fn, NULL, &info, err);
	is_int(rc, -ECANCELED, "a callback's negative return stops the read and is returned");

	write_file(path, "\x17\x08\x44tracing6\n");
	ok(!source_text_sniff(path), "sniff: a trace.dat magic is not text");
	ok(!source_text_sniff("/nonexistent/x"), "sniff: a missing file is not text");

	rc = source_text_read("/nonexistent/x", collect_fn, &c, &info, err);
	ok(rc == -ENOENT && strstr(err, "No such file"), "a missing file is -ENOENT (%s)", err);

	/* standard input */
	write_file(path, "10 fork cpu=0 parent_pid=1 child_pid=2\n20 exit cpu=0 pid=2\n");
	fd = open(path, O_RDONLY);
	saved = dup(STDIN_FILENO);
	dup2(fd, STDIN_FILENO);
	close(fd);
	memset(&c, 0, sizeof(c));
	rc = source_text_read("-", collect_fn, &c, &info, err);
	dup2(saved, STDIN_FILENO);
	close(saved);
	ok(rc == 0 && c.n == 2 && c.kinds[0] == IMB_EV_FORK && c.kinds[1] == IMB_EV_EXIT,
	   "\"-\" reads standard input (%d events)", c.n);
	unlink(path);
}

int main(void)
{
	test_round_trip();
	test_examples();
	test_errors();
	test_reader();
	return tap_done();
}

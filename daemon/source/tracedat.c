// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracedat.c - read the scheduler events of a trace.dat file (source.h):
 * with the project's own reader (tracedat_layout.c, tracedat_cpu.c) where
 * the file's layout allows, else with libtracecmd; libtraceevent parses
 * the event formats either way.
 *
 * Event types and field offsets are resolved once when the file is opened;
 * per record the code compares the type id against a small table and reads
 * fields at known offsets (sched_fields.c, shared with the tracefs source),
 * with no allocation and no string lookup.  By
 * default the per-CPU streams are decoded by reader processes in parallel
 * and merged in the analysing process (td_par_*, tracedat_par.c); the
 * serial reader merges them here (td_loop), in segments for compressed
 * files (TD_SEGMENT_RECORDS).  Missed-event markers
 * become IMB_EV_LOST events.  A file cut off inside its event data is read
 * up to the cut and flagged as truncated.
 *
 * This is the only file that includes <trace-cmd.h>.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include <trace-cmd/trace-cmd.h>

#include "daemon/source/sched_fields.h"
#include "daemon/source/source.h"
#include "daemon/source/tracedat.h"
#include "daemon/source/tracedat_cpu.h"
#include "daemon/source/tracedat_layout.h"
#include "daemon/source/tracedat_par.h"
#include "daemon/source/tracedat_repair.h"

/* Exported by libtracecmd 3.1 but only declared in its private header. */
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
struct tep_record *tracecmd_peek_data(struct tracecmd_input *handle, int cpu);
struct tep_record *tracecmd_read_cpu_last(struct tracecmd_input *handle, int cpu);
int tracecmd_set_cursor(struct tracecmd_input *handle, int cpu, unsigned long long offset);
int tracecmd_cpus(struct tracecmd_input *handle);
int tracecmd_get_file_compress_proto(struct tracecmd_input *handle, const char **name,
				     const char **version);

#define TD_OPEN_FLAGS (TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS)

/*
 * libtracecmd 3.1 keeps every decompressed chunk of a compressed trace until
 * the handle is closed (its free_zpage() never finds the chunk; fixed
 * upstream by "libtracecmd: Fix free_zpage() offset", after Debian 12's
 * 3.1.6), so a reader's memory grows with the trace: about 58 bytes a
 * record, 120 MiB for 2 million events.  A compressed single-buffer file is
 * therefore read in segments: after this many records each CPU's cursor
 * (the offset of its next record, a position in the file's own layout and
 * so the same in every open) is noted, the handle closed and opened again
 * and the cursors set back.  The events come out exactly as in one pass.
 */
#define TD_SEGMENT_RECORDS (1u << 18)

#define TD_MAX_BUFFERS 16
#define TD_MAX_PENDING (1 << 20)	/* events held back before the first switch */

/*
 * Where the reading process is, for telling a crash of libtracecmd on a
 * damaged file (a corrupted file) from a crash in our own decoding (a bug):
 * TD_PHASE_OURS while td_record, td_resolve or tracedat_repair run.  The
 * reading child writes it into a shared page that the parent reads after
 * the child died; in-process it is a static.
 */
enum { TD_PHASE_LIB, TD_PHASE_OURS };

static struct td_watch td_watch_local;
static struct td_watch *td_watch = &td_watch_local;

static int td_enter(void)
{
	int old = td_watch->phase;

	td_watch->phase = TD_PHASE_OURS;
	return old;
}

static void td_leave(int old)
{
	td_watch->phase = old;
}

/* a sanitizer runtime, when linked in, calls this before it ends the process */
void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static void td_on_sanitizer_death(void)
{
	td_watch->sanitizer = 1;
}

/* test hook (daemon/source/tracedat.h): fail on purpose at the Nth record */
static int td_fault_kind;
static uint64_t td_fault_at, td_fault_seen;

void source_tracedat_fault(int kind, uint64_t at_record)
{
	td_fault_kind = kind;
	td_fault_at = at_record;
	td_fault_seen = 0;
}

static void td_fault(void)
{
	if (!td_fault_kind || ++td_fault_seen != td_fault_at)
		return;
	switch (td_fault_kind) {
	case TD_FAULT_SIGNAL:
		raise(SIGSEGV);
		break;
	case TD_FAULT_OVERFLOW: {
		/* a heap read one past the end: a sanitizer report */
		volatile size_t i = 8;
		volatile char *p = malloc(i);

		if (p) {
			td_fault_seen += (uint64_t)p[i];
			free((void *)p);
		}
		break;
	}
	case TD_FAULT_LIBRARY:
		td_watch->phase = TD_PHASE_LIB;
		raise(SIGSEGV);
		break;
	}
}

struct td {
	const char *path;
	int memfd;		/* the repaired copy of a cut-off file, or -1 */
	int hfd;		/* the descriptor the handle reads */
	struct tracecmd_input *h;
	struct tdl *dl;		/* read without libtracecmd (tracedat_layout.h), or NULL */
	struct tep_handle *tep;
	struct sched_fields sf;	/* the sched events' ids and fields in this file */
	imb_event_fn fn;
	void *ctx;
	struct source_info *info;
	uint64_t last_ts;
	int max_cpu;
	int cb_rc;
	uint64_t switches;
	int8_t *type_map;	/* tep event id -> enum sched_ev, -1 none */
	int type_max;
	/* events before the first switch, held back: no output on -ENODATA */
	struct imb_event *pend;
	size_t npend, cap;
	char *err;
	int (*flush)(void *ctx);	/* pushes out what fn buffered, or NULL */
	uint64_t segments;	/* segments read in child processes */
	uint32_t segment;	/* records per segment */
	/* a parallel read's reader: decoded events go to this queue as they are */
	int (*push)(struct td *t, const struct imb_event *e);
	struct evring *ring;
	bool in_ring;		/* ring has room for a record's events: decode into it */
	struct tdp_shm *shm;
};

static void td_err(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void td_err(char *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, SOURCE_ERR_LEN, fmt, ap);
	va_end(ap);
}

/*
 * Resolve event ids and field offsets once.  A required field missing from
 * sched_switch's format is an error here; from any other event's format it
 * is an error only when a record of that event appears (trace-cmd extract
 * saves every event format, also of events never enabled).
 */
static int td_resolve(struct td *t)
{
	struct sched_fields *sf = &t->sf;

	sched_fields_init(sf, t->tep,
			  tep_is_file_bigendian(t->tep) == tep_is_local_bigendian(t->tep));
	for (int i = 0; i < SCHED__COUNT; i++) {
		struct tep_event *e = sched_fields_find(sf, i);

		if (!e)
			continue;
		sched_fields_resolve(sf, i, e);
		if (i == SCHED_SWITCH && sf->ev[i].missing) {
			td_err(t->err, "%s format lacks field %s", sf->ev[i].name,
			       sf->ev[i].missing);
			return -EINVAL;
		}
	}
	if (sf->ev[SCHED_SWITCH].id < 0) {
		td_err(t->err, "no sched_switch events: record with sched:sched_switch enabled");
		return -ENODATA;
	}
	return 0;
}

static int td_emit(struct td *t, struct imb_event *e)
{
	int rc;

	if (e->ts_ns < t->last_ts)
		e->ts_ns = t->last_ts;	/* the merge is by ts; equal is fine */
	t->last_ts = e->ts_ns;
	if (e->cpu > t->max_cpu)
		t->max_cpu = e->cpu;
	if (!t->switches) {
		/* bounded: a trace this long without a switch has none */
		if (t->npend >= TD_MAX_PENDING) {
			td_err(t->err, "no sched_switch in the first %d events: record with "
			       "sched:sched_switch enabled", TD_MAX_PENDING);
			t->cb_rc = -ENODATA;
			return -1;
		}
		if (t->npend == t->cap) {
			size_t cap = t->cap ? t->cap * 2 : 256;
			struct imb_event *p = realloc(t->pend, cap * sizeof(*p));

			if (!p) {
				t->cb_rc = -ENOMEM;
				return -1;
			}
			t->pend = p;
			t->cap = cap;
		}
		t->pend[t->npend++] = *e;
		return 0;
	}
	for (size_t i = 0; i < t->npend; i++) {
		t->info->events++;
		rc = t->fn(&t->pend[i], t->ctx);
		if (rc < 0) {
			t->cb_rc = rc;
			return -1;
		}
	}
	t->npend = 0;
	t->info->events++;
	rc = t->fn(e, t->ctx);
	if (rc < 0) {
		t->cb_rc = rc;
		return -1;
	}
	return 0;
}

/*
 * A zeroed event to start each record from: copied, it compiles to vector
 * moves, where a memset of this size becomes a `rep stos` whose start-up
 * cost was most of the per-record decoding time.
 */
static const struct imb_event td_zero_event;

/* Where the next event goes: straight into the reader's queue, or @local. */
static struct imb_event *td_event_at(struct td *t, struct imb_event *local)
{
	return t->in_ring ? evring_slot(t->ring) : local;
}

/* Hand over *@e, written where td_event_at() said. */
static int td_deliver(struct td *t, struct imb_event *e)
{
	if (t->in_ring) {
		evring_commit(t->ring);
		return 0;
	}
	return t->push ? t->push(t, e) : td_emit(t, e);
}

static int td_decode(struct td *t, struct tep_record *r)
{
	struct imb_event local, *e;
	int type, i, cpu;

	td_fault();
	cpu = r->cpu;
	if (r->missed_events) {
		e = td_event_at(t, &local);
		*e = td_zero_event;
		e->ts_ns = r->ts;
		e->cpu = cpu;
		e->kind = IMB_EV_LOST;
		e->lost.count = r->missed_events > 0 ? (uint64_t)r->missed_events : 0;
		t->info->lost_events += e->lost.count ? e->lost.count : 1;
		if (td_deliver(t, e))
			return -1;
	}
	type = tep_data_type(t->tep, r);
	i = type >= 0 && type <= t->type_max ? t->type_map[type] : -1;
	if (i < 0)
		return 0;
	if (t->sf.ev[i].missing) {
		td_err(t->err, "%s format lacks field %s (first %s record at %llu ns on CPU %d)",
		       t->sf.ev[i].name, t->sf.ev[i].missing, t->sf.ev[i].name,
		       (unsigned long long)r->ts, cpu);
		t->cb_rc = -EINVAL;
		return -1;
	}
	e = td_event_at(t, &local);
	*e = td_zero_event;
	e->ts_ns = r->ts;
	e->cpu = cpu;
	sched_fields_decode(&t->sf, i, r->data, r->size > 0 ? (unsigned int)r->size : 0, e);
	if (i == SCHED_SWITCH)
		t->switches++;
	if (e->cpu < 0 || e->cpu >= IMB_MAX_CPUS) {
		td_err(t->err, "%s record at %llu ns: cpu %d out of range (0 to %d)",
		       t->sf.ev[i].name, (unsigned long long)r->ts, e->cpu, IMB_MAX_CPUS - 1);
		t->cb_rc = -EINVAL;
		return -1;
	}
	return td_deliver(t, e);
}

static int td_record(struct tracecmd_input *h, struct tep_record *r, int cpu, void *data)
{
	int old = td_enter(), rc;

	(void)h;
	(void)cpu;	/* across buffers the callback's index is not the CPU */
	rc = td_decode(data, r);
	td_leave(old);
	return rc;
}

static unsigned int td_segment_setting;

void source_tracedat_segment(unsigned int records)
{
	td_segment_setting = records;
}

static uint32_t td_segment_records(void)
{
	return td_segment_setting ? td_segment_setting : TD_SEGMENT_RECORDS;
}

/* Open the file (or a dup of its repaired copy); t->hfd is what it reads */
static struct tracecmd_input *td_open(struct td *t)
{
	struct tracecmd_input *h;
	int fd;

	if (t->memfd < 0)
		fd = open(t->path, O_RDONLY | O_CLOEXEC);
	else
		fd = fcntl(t->memfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	lseek(fd, 0, SEEK_SET);
	h = tracecmd_open_fd(fd, TD_OPEN_FLAGS);
	if (!h)
		close(fd);
	t->hfd = fd;
	return h;
}

/* The reading child's buffered writer to the pipe */
struct td_writer {
	int fd;
	size_t len;
	char buf[1 << 19];
};

static int td_write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EPIPE;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

static int td_child_event(const struct imb_event *ev, void *ctx)
{
	struct td_writer *w = ctx;

	if (w->len + sizeof(*ev) > sizeof(w->buf)) {
		if (td_write_all(w->fd, w->buf, w->len))
			return -EPIPE;
		w->len = 0;
	}
	memcpy(w->buf + w->len, ev, sizeof(*ev));
	w->len += sizeof(*ev);
	return 0;
}

static int td_child_flush(void *ctx)
{
	struct td_writer *w = ctx;

	if (td_write_all(w->fd, w->buf, w->len))
		return -EPIPE;
	w->len = 0;
	return 0;
}

/*
 * Read records of one buffer in time order (equal times: the lower CPU
 * first, as tracecmd_iterate_events does) from next[] (each CPU's next
 * record, NULL when done).  With a limit, stop after that many records once
 * the held-back events are out (a segment ends on a clean state).  Returns
 * 1 when stopped at the limit, 0 at the end, < 0 on error.
 */
static int td_loop(struct td *t, int ncpu, struct tep_record **next, uint32_t limit)
{
	uint32_t n = 0;

	for (;;) {
		struct tep_record *r;
		int best = -1, rc;

		for (int cpu = 0; cpu < ncpu; cpu++)
			if (next[cpu] && (best < 0 || next[cpu]->ts < next[best]->ts))
				best = cpu;
		if (best < 0)
			return 0;
		if (limit && n >= limit && t->switches && !t->npend)
			return 1;
		r = tracecmd_read_data(t->h, best);
		if (!r) {
			next[best] = NULL;
			continue;
		}
		rc = td_record(t->h, r, best, t);
		tracecmd_free_record(r);
		if (rc < 0)
			return t->cb_rc ? t->cb_rc : -EIO;
		next[best] = tracecmd_peek_data(t->h, best);
		n++;
	}
}

/* What a segment's process hands back, followed by ncpu cursors. */
struct td_seg {
	int32_t rc;		/* td_loop's */
	int32_t max_cpu;
	uint64_t last_ts, switches;
	struct source_info info;
	char err[SOURCE_ERR_LEN];
};

#define TD_CPU_DONE UINT64_MAX

/*
 * td_segment()'s child: set each CPU's cursor (exit 3 when a cursor does
 * not find its record again), read the segment, write the state and the
 * cursors after it to @fd.
 */
static void __attribute__((noreturn))
td_segment_child(struct td *t, int ncpu, const uint64_t *cursor, bool first, struct td_seg *st,
		 size_t len, int fd)
{
	struct tep_record **next = calloc((size_t)ncpu, sizeof(*next));
	uint64_t *cur = (uint64_t *)(st + 1);

	if (!next)
		_exit(1);
	for (int cpu = 0; cpu < ncpu; cpu++) {
		if (cursor[cpu] == TD_CPU_DONE)
			continue;
		if (!first && (tracecmd_set_cursor(t->h, cpu, cursor[cpu]) < 0 ||
			       !(next[cpu] = tracecmd_peek_data(t->h, cpu)) ||
			       next[cpu]->offset != cursor[cpu]))
			_exit(3);
		if (first)
			next[cpu] = tracecmd_peek_data(t->h, cpu);
	}
	st->rc = td_loop(t, ncpu, next, t->segment);
	for (int cpu = 0; cpu < ncpu; cpu++)
		cur[cpu] = next[cpu] ? next[cpu]->offset : TD_CPU_DONE;
	st->max_cpu = t->max_cpu;
	st->last_ts = t->last_ts;
	st->switches = t->switches;
	st->info = *t->info;
	memcpy(st->err, t->err, SOURCE_ERR_LEN);
	if ((st->rc >= 0 && t->flush(t->ctx)) || td_write_all(fd, st, len))
		_exit(1);
	_exit(0);
}

/* Read the child's @len bytes of state from @fd; returns how many came. */
static size_t td_segment_result(int fd, struct td_seg *st, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)st + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/*
 * One segment in a child of the reader: it inherits the opened handle with
 * nothing decompressed yet, sets each CPU's cursor, reads up to
 * t->segment records into the pipe, hands back the cursors and counters,
 * and takes the decompressed chunks with it when it exits (the libtracecmd
 * leak above).  A crash in it becomes a crash of the reader, which the
 * parent reports as a corrupted file or, when it happened in our own code
 * (td_watch), as an internal error.
 */
static int td_segment(struct td *t, int ncpu, uint64_t *cursor, bool first)
{
	size_t len = sizeof(struct td_seg) + (size_t)ncpu * sizeof(uint64_t);
	struct td_seg *st = calloc(1, len);
	int ctl[2], status, rc;
	size_t got;
	pid_t pid;

	if (!st || pipe2(ctl, O_CLOEXEC)) {
		free(st);
		td_err(t->err, "segment: %s", strerror(errno));
		return -ENOMEM;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(ctl[0]);
		close(ctl[1]);
		free(st);
		td_err(t->err, "fork: %s", strerror(-rc));
		return rc;
	}
	if (pid == 0) {
		close(ctl[0]);
		td_segment_child(t, ncpu, cursor, first, st, len, ctl[1]);
	}
	close(ctl[1]);
	got = td_segment_result(ctl[0], st, len);
	close(ctl[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got < len || !WIFEXITED(status) || WEXITSTATUS(status)) {
		free(st);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
			td_err(t->err, "cannot find a segment's first record again");
			return -EIO;
		}
		/* the library crashed on this file: crash the same way */
		if (WIFSIGNALED(status)) {
			signal(WTERMSIG(status), SIG_DFL);
			raise(WTERMSIG(status));
		}
		_exit(1);
	}
	t->max_cpu = st->max_cpu;
	t->last_ts = st->last_ts;
	t->switches = st->switches;
	*t->info = st->info;
	memcpy(t->err, st->err, SOURCE_ERR_LEN);
	memcpy(cursor, (uint64_t *)(st + 1), (size_t)ncpu * sizeof(uint64_t));
	rc = st->rc;
	free(st);
	t->segments++;
	if (rc < 0 && !t->cb_rc)
		t->cb_rc = rc;
	return rc;
}

/*
 * All CPUs of one buffer in time order; in segments (td_segment) when the
 * library would otherwise hold the whole decompressed trace and the events
 * go to a pipe that the segments can share.
 */
static int td_iterate(struct td *t, bool segmented)
{
	int ncpu = tracecmd_cpus(t->h), rc = 0;
	uint64_t *cursor;
	bool first = true;

	if (ncpu <= 0)
		return 0;
	if (!segmented || !t->flush) {
		struct tep_record **next = calloc((size_t)ncpu, sizeof(*next));

		if (!next) {
			td_err(t->err, "out of memory");
			return -ENOMEM;
		}
		for (int cpu = 0; cpu < ncpu; cpu++)
			next[cpu] = tracecmd_peek_data(t->h, cpu);
		rc = td_loop(t, ncpu, next, 0);
		free(next);
		return rc;
	}
	cursor = calloc((size_t)ncpu, sizeof(*cursor));
	if (!cursor) {
		td_err(t->err, "out of memory");
		return -ENOMEM;
	}
	do {
		rc = td_segment(t, ncpu, cursor, first);
		first = false;
	} while (rc == 1);
	free(cursor);
	return rc;
}

/* A record read without libtracecmd, as libtracecmd hands it over. */
static void td_direct_record(struct tep_record *rec, const struct tdc_rec *r, uint32_t cpu)
{
	memset(rec, 0, sizeof(*rec));
	rec->ts = r->ts;
	rec->data = (void *)r->data;
	rec->size = (int)r->size;
	rec->cpu = (int)cpu;
	rec->missed_events = r->missed;
}

/* The next record of CPU entry @k into @rec: 1, 0 at its end, -EINVAL with t->err. */
static int td_direct_peek(struct td *t, struct tdc *c, uint32_t k, struct tep_record *rec)
{
	struct tdc_rec r;
	int old = td_enter(), rc = tdc_next(c, &r);

	td_leave(old);
	if (rc > 0)
		td_direct_record(rec, &r, t->dl->cpu[k].id);
	if (rc >= 0)
		return rc;
	td_err(t->err, "corrupted trace.dat: %s", c->err);
	t->cb_rc = -EINVAL;
	return -EINVAL;
}

/*
 * Start reading CPU entry @k into @c, its first record into @rec: 1, 0
 * when it has none, -EINVAL with t->err (and t->cb_rc) when its data
 * cannot be read.
 */
static int td_direct_start(struct td *t, struct tdc *c, uint32_t k, struct tep_record *rec)
{
	if (!tdc_open(c, t->dl, k))
		return td_direct_peek(t, c, k, rec);
	td_err(t->err, "corrupted trace.dat: %s", c->err);
	t->cb_rc = -EINVAL;
	return -EINVAL;
}

/*
 * All CPUs in time order, read without libtracecmd, in this process (equal
 * times: the lower CPU first, as td_loop).
 */
static int td_direct_iterate(struct td *t)
{
	uint32_t n = t->dl->ncpu;
	struct tdc *c = calloc(n ? n : 1, sizeof(*c));
	struct tep_record *rec = calloc(n ? n : 1, sizeof(*rec));
	bool *has = calloc(n ? n : 1, sizeof(*has));
	int rc = 0;

	if (!c || !rec || !has) {
		td_err(t->err, "out of memory");
		rc = -ENOMEM;
	}
	for (uint32_t k = 0; k < n && !rc; k++) {
		rc = td_direct_start(t, &c[k], k, &rec[k]);
		has[k] = rc > 0;
		rc = rc > 0 ? 0 : rc;
	}
	while (!rc) {
		uint32_t best = UINT32_MAX;

		for (uint32_t k = 0; k < n; k++)
			if (has[k] && (best == UINT32_MAX || rec[k].ts < rec[best].ts))
				best = k;
		if (best == UINT32_MAX)
			break;
		if (td_record(NULL, &rec[best], (int)best, t) < 0) {
			rc = t->cb_rc ? t->cb_rc : -EIO;
			break;
		}
		rc = td_direct_peek(t, &c[best], best, &rec[best]);
		has[best] = rc > 0;
		rc = rc > 0 ? 0 : rc;
	}
	for (uint32_t k = 0; c && k < n; k++)
		tdc_close(&c[k]);
	free(c);
	free(rec);
	free(has);
	return rc;
}

/* Is there a trace.dat magic at the start?  ("\x17\x08\x44tracing") */
static int td_check_magic(const char *path, char *err)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n',
						 'g' };
	unsigned char buf[10];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		td_err(err, "%s", strerror(e));
		return -e;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n != (ssize_t)sizeof(buf) || memcmp(buf, magic, sizeof(buf))) {
		td_err(err, "not a trace.dat file (bad magic)");
		return -EINVAL;
	}
	return 0;
}

/*
 * Open the file's handle; a file cut off inside its event data is read
 * through a repaired copy (tracedat_repair.c) and flagged truncated.
 */
static int td_open_handle(struct td *t, const char *path, struct source_info *info, char *err)
{
	int old = td_enter(), cut, rc;

	/* cut inside its last options section: libtracecmd may not say */
	cut = tracedat_tail_cut(path);
	td_leave(old);
	if (cut != TRACEDAT_CUT_MAP)
		t->h = td_open(t);
	if (t->h && cut == TRACEDAT_CUT_STRINGS) {
		info->truncated = true;
		snprintf(info->warning, sizeof(info->warning), "file cut off in its string "
			 "table, after the event data; every event read");
	}
	if (t->h)
		return 0;
	/* cut inside the event data? then read what is there */
	old = td_enter();
	rc = tracedat_repair(path, &t->memfd, info->warning, sizeof(info->warning), err);
	td_leave(old);
	if (rc)
		return rc;
	t->h = td_open(t);
	if (!t->h) {
		close(t->memfd);
		t->memfd = -1;
		info->warning[0] = 0;
		td_err(err, "cannot read the trace.dat headers (truncated or corrupted file)");
		return -EINVAL;
	}
	info->truncated = true;
	return 0;
}

/* The sched events' ids and fields in the file, and the map from type id to event. */
static int td_resolve_types(struct td *t, char *err)
{
	int old = td_enter(), rc;

	rc = td_resolve(t);
	td_leave(old);
	if (rc)
		return rc;
	t->type_max = -1;
	for (int k = 0; k < SCHED__COUNT; k++)
		if (t->sf.ev[k].id > t->type_max)
			t->type_max = t->sf.ev[k].id;
	t->type_map = malloc((size_t)t->type_max + 1);
	if (!t->type_map) {
		td_err(err, "out of memory");
		return -ENOMEM;
	}
	memset(t->type_map, -1, (size_t)t->type_max + 1);
	for (int k = 0; k < SCHED__COUNT; k++)
		if (t->sf.ev[k].id >= 0)
			t->type_map[t->sf.ev[k].id] = (int8_t)k;
	return 0;
}

/* The formats to parse: the events sched_fields decodes, by system and name. */
static bool td_want(const char *system, const char *name)
{
	for (int i = 0; i < SCHED__COUNT; i++) {
		const struct sched_desc *d = &sched_desc[i];

		if (d->system && strcmp(d->system, system))
			continue;
		if (!strcmp(d->name, name) || (d->alt_name && !strcmp(d->alt_name, name)))
			return true;
	}
	return false;
}

/*
 * Open a whole version-7 @path without libtracecmd (tracedat_layout.h)
 * when its layout allows: 0, or 1 to leave it to libtracecmd (also any
 * file cut off or damaged in its headers, which td_open_handle repairs or
 * refuses as before).  IMBALANCED_TRACEDAT_LIBRARY asks for libtracecmd.
 */
static int td_open_direct(struct td *t, const char *path)
{
	char why[160] = "the file is cut off";
	int fd, old, rc;

	if (getenv("IMBALANCED_TRACEDAT_LIBRARY")) {
		snprintf(t->info->reader, sizeof(t->info->reader), "libtracecmd (asked for)");
		return 1;
	}
	old = td_enter();
	rc = tracedat_tail_cut(path) == TRACEDAT_COMPLETE ? 0 : 1;
	fd = rc ? -1 : open(path, O_RDONLY | O_CLOEXEC);
	t->dl = fd < 0 ? NULL : calloc(1, sizeof(*t->dl));
	rc = !t->dl || tdl_open(t->dl, fd, why, sizeof(why));
	td_leave(old);
	if (!rc) {
		/* libtraceevent parses the formats: a crash there is the file's */
		t->tep = tdl_tep(t->dl, td_want, why, sizeof(why));
		rc = !t->tep;
		if (rc)
			tdl_close(t->dl);
	}
	if (rc) {
		free(t->dl);
		t->dl = NULL;
		if (fd >= 0)
			close(fd);
		snprintf(t->info->reader, sizeof(t->info->reader), "libtracecmd (%.70s)", why);
		return 1;
	}
	t->hfd = fd;
	snprintf(t->info->reader, sizeof(t->info->reader), "imbalanced's own reader");
	return 0;
}

/*
 * Open @path (repairing a copy of it when it was cut off in its event
 * data), resolve the events and fill @info's format, clock, truncated and
 * warning.  Returns 0 or -errno with @err; td_cleanup() either way.
 */
static int td_prepare(struct td *t, const char *path, struct source_info *info, char *err)
{
	const char *clock;
	int rc;

	memset(t, 0, sizeof(*t));
	t->memfd = -1;
	t->hfd = -1;
	memset(info, 0, sizeof(*info));
	snprintf(info->format, sizeof(info->format), "trace.dat");
	rc = td_check_magic(path, err);
	if (rc)
		return rc;
	tracecmd_set_loglevel(TEP_LOG_NONE);
	t->path = path;
	t->info = info;
	t->err = err;
	t->max_cpu = -1;
	t->segment = td_segment_records();
	if (td_open_direct(t, path)) {
		rc = td_open_handle(t, path, info, err);
		if (rc)
			return rc;
		t->tep = tracecmd_get_tep(t->h);
		if (!t->tep) {
			td_err(err, "no event formats in the file");
			return -EINVAL;
		}
	}
	rc = td_resolve_types(t, err);
	if (rc)
		return rc;
	clock = t->dl ? t->dl->clock : tracecmd_get_trace_clock(t->h);
	if (clock)
		snprintf(info->clock, sizeof(info->clock), "%s", clock);
	return 0;
}

static void td_cleanup(struct td *t)
{
	free(t->type_map);
	free(t->pend);
	if (t->dl) {
		tep_free(t->tep);
		tdl_close(t->dl);
		free(t->dl);
		close(t->hfd);
	}
	if (t->h)
		tracecmd_close(t->h);
	if (t->memfd >= 0)
		close(t->memfd);
}

static int td_read_inproc(const char *path, imb_event_fn fn, int (*flush)(void *ctx),
			  void *ctx, struct source_info *info, char *err)
{
	struct td t;
	int rc, cpus;

	rc = td_prepare(&t, path, info, err);
	if (rc)
		goto out;
	t.fn = fn;
	t.flush = flush;
	t.ctx = ctx;
	cpus = tep_get_cpus(t.tep);
	if (t.dl) {
		rc = td_direct_iterate(&t);
		if (rc && !t.cb_rc)
			t.cb_rc = rc;
	} else {
		/*
		 * The top buffer and any instance buffers (a recording made
		 * with `trace-cmd extract -B NAME`), merged in time order.
		 */
		struct tracecmd_input *hs[TD_MAX_BUFFERS];
		int n = 0, nb = tracecmd_buffer_instances(t.h);

		hs[n++] = t.h;
		for (int i = 0; i < nb && n < TD_MAX_BUFFERS; i++) {
			struct tracecmd_input *ih = tracecmd_buffer_instance_handle(t.h, i);

			if (ih)
				hs[n++] = ih;
		}
		if (n == 1) {
			const char *zname = NULL, *zver = NULL;
			bool compressed = tracecmd_get_file_compress_proto(t.h, &zname, &zver) == 0 &&
					  zname && strcmp(zname, "none");

			rc = td_iterate(&t, compressed);
			if (rc && !t.cb_rc) {
				t.cb_rc = rc;
			}
		} else
			rc = tracecmd_iterate_events_multi(hs, n, td_record, &t);
		for (int i = 1; i < n; i++)
			tracecmd_close(hs[i]);
	}
	if (t.cb_rc) {
		rc = t.cb_rc;
		if (!err[0])
			td_err(err, "%s", strerror(-rc));
		goto out;
	}
	info->nr_cpus = cpus > t.max_cpu + 1 ? cpus : t.max_cpu + 1;
	rc = 0;
	if (info->truncated && !info->events) {
		td_err(err, "file cut off before any complete event data");
		rc = -ENODATA;
	} else if (!t.switches) {
		td_err(err, "no sched_switch events: record with sched:sched_switch enabled");
		rc = -ENODATA;
	}
out:
	td_cleanup(&t);
	return rc;
}

/*
 * libtracecmd trusts the file: flipped bits in the headers or in the
 * compressed event data crash it (seen: tracecmd_open_fd's own error path,
 * page parsing).  A bad file must give a clear error, never a crash, so the
 * library runs in a child process that streams the events through a pipe;
 * the parent sees a crash as a missing trailer.  On two CPUs the two halves
 * also run in parallel.
 */
#define TD_TRAILER_KIND 0xffff

struct td_trailer {
	int32_t rc;
	struct source_info info;
	char err[SOURCE_ERR_LEN];
};

/* the stream is whole records: the trailer is padded to a record multiple */
#define TD_TRAILER_SIZE \
	((sizeof(struct td_trailer) + sizeof(struct imb_event) - 1) / sizeof(struct imb_event) * \
	 sizeof(struct imb_event))

static void td_child(const char *path, int fd, int errfd)
{
	static struct td_writer w;
	static char pad[TD_TRAILER_SIZE];
	struct td_trailer tr;
	struct imb_event mark;

	/*
	 * The library prints its own complaints and ours go through the
	 * trailer: stderr goes to a memfd that the parent shows only when the
	 * child died in our own code (a sanitizer report, say).
	 */
	if (errfd >= 0)
		dup2(errfd, STDERR_FILENO);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(td_on_sanitizer_death);
	signal(SIGPIPE, SIG_DFL);
	w.fd = fd;
	memset(&tr, 0, sizeof(tr));
	tr.rc = td_read_inproc(path, td_child_event, td_child_flush, &w, &tr.info, tr.err);
	memset(&mark, 0, sizeof(mark));
	mark.kind = TD_TRAILER_KIND;
	memcpy(pad, &tr, sizeof(tr));
	if (td_child_event(&mark, &w) || td_write_all(fd, w.buf, w.len) ||
	    td_write_all(fd, pad, sizeof(pad)))
		_exit(1);
	_exit(0);
}

static int td_read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p = (char *)p + r;
		n -= (size_t)r;
	}
	return 0;
}

int source_tracedat_read_inproc(const char *path, imb_event_fn fn, void *ctx,
				struct source_info *info, char *err)
{
	return td_read_inproc(path, fn, NULL, ctx, info, err);
}

/* The child's stderr after it died in our code: a sanitizer report, say. */
static void td_show_child_stderr(int errfd)
{
	char b[4096];
	ssize_t r;

	if (errfd < 0 || lseek(errfd, 0, SEEK_SET) < 0)
		return;
	while ((r = read(errfd, b, sizeof(b))) > 0)
		if (td_write_all(STDERR_FILENO, b, (size_t)r))
			break;
}

/* How the reading child ended without its trailer, as err; returns -errno. */
static int td_child_failed(int status, uint64_t n, int errfd, char *err)
{
	bool sig = WIFSIGNALED(status);
	int code = sig ? WTERMSIG(status) : WEXITSTATUS(status);

	/*
	 * Died inside our own code: by a signal, or by an exit there (our code
	 * never exits while in it: a sanitizer did, AddressSanitizer calling
	 * td_on_sanitizer_death first, UBSan not).
	 */
	if (td_watch->phase == TD_PHASE_OURS && (sig || code)) {
		char how[64];

		if (td_watch->sanitizer)
			snprintf(how, sizeof(how), "failed a sanitizer check");
		else if (sig)
			snprintf(how, sizeof(how), "died of %s", strsignal(code));
		else
			snprintf(how, sizeof(how), "ended with exit status %d", code);
		td_show_child_stderr(errfd);
		td_err(err, "internal error: the trace.dat decoder %s after %llu events "
		       "(a bug in imbalanced: please report it with this file)", how,
		       (unsigned long long)n);
		return -ENOTRECOVERABLE;
	}
	td_err(err, "corrupted trace.dat: the trace library failed reading it after %llu "
	       "events (%s %d)", (unsigned long long)n, sig ? "signal" : "exit status", code);
	return -EINVAL;
}

/* The serial reader's child, the pipe it writes the events to, what came. */
struct td_serial {
	struct td_watch *watch;		/* where the child is (shared page) */
	int rfd, errfd;			/* the pipe's read end; the child's stderr */
	pid_t pid;
	uint64_t n;			/* events delivered */
	struct td_trailer tr;		/* the child's verdict, after the events */
	bool done;			/* the trailer came */
};

/* Start the child that reads @path and writes its events to the pipe. */
static int td_serial_start(struct td_serial *sr, const char *path, char *err)
{
	int pfd[2], rc;

	sr->watch = mmap(NULL, sizeof(*sr->watch), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sr->watch == MAP_FAILED) {
		td_err(err, "mmap: %s", strerror(errno));
		return -ENOMEM;
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		rc = -errno;
		munmap(sr->watch, sizeof(*sr->watch));
		td_err(err, "pipe: %s", strerror(-rc));
		return rc;
	}
	sr->errfd = memfd_create("imbalanced-reader-stderr", MFD_CLOEXEC);
	/* fewer, larger hand-overs (best effort: pipe-max-size may be lower) */
	fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20);
	fflush(NULL);
	sr->pid = fork();
	if (sr->pid < 0) {
		rc = -errno;
		close(pfd[0]);
		close(pfd[1]);
		if (sr->errfd >= 0)
			close(sr->errfd);
		munmap(sr->watch, sizeof(*sr->watch));
		td_err(err, "fork: %s", strerror(-rc));
		return rc;
	}
	if (sr->pid == 0) {
		close(pfd[0]);
		td_watch = sr->watch;
		td_child(path, pfd[1], sr->errfd);
	}
	close(pfd[1]);
	sr->rfd = pfd[0];
	return 0;
}

/*
 * The trailer follows the marker at @buf[@i] of @k records, maybe in this
 * buffer: take it.  Returns false when the pipe ended inside it.
 */
static bool td_serial_trailer(struct td_serial *sr, const struct imb_event *buf, size_t i,
			      size_t k)
{
	size_t have = (k - i - 1) * sizeof(buf[0]);

	if (have > sizeof(sr->tr))
		have = sizeof(sr->tr);
	memcpy(&sr->tr, &buf[i + 1], have);
	if (have < sizeof(sr->tr) &&
	    td_read_all(sr->rfd, (char *)&sr->tr + have, sizeof(sr->tr) - have))
		return false;
	sr->done = true;
	return true;
}

/* Deliver the events from the pipe up to the trailer; 0, or @fn's error. */
static int td_serial_deliver(struct td_serial *sr, imb_event_fn fn, void *ctx)
{
	static struct imb_event buf[4096];
	int rc;

	while (!sr->done) {
		ssize_t r = read(sr->rfd, buf, sizeof(buf));
		size_t k;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		/* complete the last record when a read split it */
		if (r % (ssize_t)sizeof(buf[0]) &&
		    td_read_all(sr->rfd, (char *)buf + r,
				sizeof(buf[0]) - (size_t)r % sizeof(buf[0])))
			break;
		k = ((size_t)r + sizeof(buf[0]) - 1) / sizeof(buf[0]);
		for (size_t i = 0; i < k; i++) {
			if (buf[i].kind == TD_TRAILER_KIND) {
				td_serial_trailer(sr, buf, i, k);
				break;
			}
			sr->n++;
			rc = fn(&buf[i], ctx);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/* The serial reader: one child decodes and merges, a pipe carries the events. */
static int td_read_serial(const char *path, imb_event_fn fn, void *ctx,
			  struct source_info *info, char *err)
{
	struct td_serial sr = { 0 };
	int rc, status;

	memset(info, 0, sizeof(*info));
	snprintf(info->format, sizeof(info->format), "trace.dat");
	rc = td_check_magic(path, err);
	if (!rc)
		rc = td_serial_start(&sr, path, err);
	if (rc)
		return rc;
	rc = td_serial_deliver(&sr, fn, ctx);
	if (rc < 0) {
		kill(sr.pid, SIGKILL);
		td_err(err, "%s", strerror(-rc));
	}
	close(sr.rfd);
	while (waitpid(sr.pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!rc && !sr.done) {
		struct td_watch *own = td_watch;

		td_watch = sr.watch;
		rc = td_child_failed(status, sr.n, sr.errfd, err);
		td_watch = own;
	}
	if (sr.errfd >= 0)
		close(sr.errfd);
	munmap(sr.watch, sizeof(*sr.watch));
	if (!sr.done)
		return rc;
	*info = sr.tr.info;
	if (sr.tr.rc) {
		snprintf(err, SOURCE_ERR_LEN, "%s", sr.tr.err);
		return sr.tr.rc;
	}
	return 0;
}

/*
 * The parallel read (tracedat_par.h).  The coordinator is the child that
 * opens the file; it forks one reader per group of CPUs (CPU i to reader
 * i mod n), each a copy of it with the parsed headers and nothing read
 * yet, which reopens the file for a file offset of its own and decodes its
 * CPUs' records into their queues.  Every file is read in segments: a
 * reader stops after t->segment records, leaving each CPU's cursor, and the
 * coordinator forks a fresh one that continues there, so that what
 * libtracecmd keeps (every decompressed chunk of a compressed file, as in
 * the serial reader; the mapped pages of an uncompressed one, 285 MiB
 * resident for 20 million events) goes with the reader.  The analysing
 * process merges.
 */

/* below this file size the coordinator reads by itself, without readers */
#define TD_PAR_SMALL (8 << 20)

/*
 * readers: one CPU fewer than are online, so that the analysing process
 * has one to itself (on two CPUs one reader and the analysis ran 10 to
 * 16 % faster than two readers sharing them with it), or IMBALANCED_READERS
 */
static uint32_t td_par_readers(uint32_t nstreams)
{
	const char *e = getenv("IMBALANCED_READERS");
	long n = e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN) - 1;

	if (n < 1)
		n = 1;
	if (n > TDP_MAX_READERS)
		n = TDP_MAX_READERS;
	if ((uint32_t)n > nstreams)
		n = nstreams ? (long)nstreams : 1;
	return (uint32_t)n;
}

static int td_par_push(struct td *t, const struct imb_event *e)
{
	struct evring *r = t->ring;

	/* a reader made room before the record; the coordinator's serial
	 * stream may have to wait for it */
	while (!evring_room(r)) {
		struct tdp_slot *w = &t->shm->slot[1];
		uint32_t seen = evring_room_begin(&w->pseq, &w->pwait);

		if (evring_room(r) || atomic_load(&t->shm->abort)) {
			evring_room_cancel(&w->pwait);
			if (atomic_load(&t->shm->abort))
				_exit(0);
			continue;
		}
		evring_publish(r);
		evring_room_wait(&w->pseq, &w->pwait, seen, 20);
	}
	*evring_slot(r) = *e;
	evring_commit(r);
	return 0;
}

/* A decoding error in stream @i at time @ts: the merge stops there. */
static void td_par_fail(struct td *t, uint32_t i, uint64_t ts)
{
	struct imb_event *e = evring_slot(t->ring);

	memset(e, 0, sizeof(*e));
	e->ts_ns = ts;
	e->kind = TDP_ERR_KIND;
	e->cpu = t->cb_rc ? t->cb_rc : -EIO;
	snprintf(t->shm->stream_err[i], SOURCE_ERR_LEN, "%s", t->err);
	evring_commit(t->ring);
	evring_finish(t->ring);
	t->shm->cursor[i] = TDP_CURSOR_DONE;
}

/* One reader's CPUs: their records and where its segment stands. */
struct td_par_rd {
	struct td *t;
	struct tdp_shm *s;
	struct tdp_slot *slot;
	uint32_t n, live;		/* its CPUs, those not finished */
	uint32_t *ids;			/* stream of each of them */
	struct tep_record **next;	/* the next record of each, NULL: finished */
	uint64_t count;			/* records read */
	struct tdc *dc;			/* read without libtracecmd: each CPU's reader */
	struct tep_record *rec;		/* ... and the record next[] points to */
};

/* A reader's own file offset: the handle's descriptor opened again (exit 4 on failure). */
static void td_par_reader_fd(struct td *t)
{
	char proc[64];
	int fd;

	if (t->memfd >= 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", t->memfd);
		fd = open(proc, O_RDONLY | O_CLOEXEC);
	} else {
		fd = open(t->path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 || dup3(fd, t->hfd, O_CLOEXEC) < 0)
		_exit(4);
	close(fd);
}

/* The segment's end: note every CPU's cursor, publish, and let the next reader go on. */
static void __attribute__((noreturn)) td_par_segment_end(struct td_par_rd *rd)
{
	for (uint32_t j = 0; j < rd->n; j++) {
		if (!rd->next[j])
			continue;
		rd->s->cursor[rd->ids[j]] = rd->next[j]->offset;
		evring_publish(&rd->s->ring[rd->ids[j]]);
	}
	rd->slot->more = 1;
	_exit(0);
}

/*
 * Decode a batch of the @k-th CPU's records into its queue, as far as the
 * queue has room; the CPU is finished at its last record or at a decoding
 * error.  Returns the records read.
 */
static uint32_t td_par_read_cpu(struct td_par_rd *rd, uint32_t k)
{
	struct td *t = rd->t;
	uint32_t i = rd->ids[k], batch = 0;
	struct evring *r = &rd->s->ring[i];

	t->ring = r;
	while (t->dl && rd->next[k] && evring_room(r) >= 3 && batch < 512) {
		uint64_t ts = rd->next[k]->ts;
		int rc;

		t->in_ring = true;	/* a record makes at most two events */
		rc = td_record(NULL, rd->next[k], (int)i, t);
		t->in_ring = false;

		rd->count++;
		rd->slot->records++;
		batch++;
		if (rc >= 0)
			rc = td_direct_peek(t, &rd->dc[k], i, &rd->rec[k]);
		if (rc < 0) {
			td_par_fail(t, i, ts);
			rd->next[k] = NULL;
			rd->live--;
			return batch;
		}
		if (!rc)
			rd->next[k] = NULL;
	}
	while (!t->dl && rd->next[k] && evring_room(r) >= 3 && batch < 512) {
		struct tep_record *rec;
		uint64_t ts;
		int rc;

		if (t->segment && rd->count >= t->segment)
			td_par_segment_end(rd);
		rec = tracecmd_read_data(t->h, (int)i);
		if (!rec) {
			rd->next[k] = NULL;
			break;
		}
		ts = rec->ts;
		t->in_ring = true;
		rc = td_record(t->h, rec, (int)i, t);
		t->in_ring = false;
		tracecmd_free_record(rec);
		rd->count++;
		rd->slot->records++;
		batch++;
		if (rc < 0) {
			td_par_fail(t, i, ts);
			rd->next[k] = NULL;
			rd->live--;
			return batch;
		}
		rd->next[k] = tracecmd_peek_data(t->h, (int)i);
	}
	if (!rd->next[k]) {
		evring_finish(r);
		rd->s->cursor[i] = TDP_CURSOR_DONE;
		rd->live--;
	} else {
		evring_publish(r);
	}
	return batch;
}

/* Every queue of the reader is full: sleep until the merge takes from one. */
static void td_par_wait_room(struct td_par_rd *rd)
{
	uint32_t seen = evring_room_begin(&rd->slot->pseq, &rd->slot->pwait);
	bool room = false;

	for (uint32_t k = 0; k < rd->n && !room; k++)
		room = rd->next[k] && evring_room(&rd->s->ring[rd->ids[k]]) >= 3;
	if (room || atomic_load(&rd->s->abort))
		evring_room_cancel(&rd->slot->pwait);
	else
		evring_room_wait(&rd->slot->pseq, &rd->slot->pwait, seen, 20);
}

/*
 * The body of reader @w; ends the process.  @own: the coordinator reads
 * by itself (a small file), its crash watch stays its own.
 */
static void td_par_reader(struct td *t, struct tdp_shm *s, uint32_t w, bool own)
{
	struct td_par_rd rd = {
		.t = t, .s = s, .slot = &s->slot[1 + w],
		.ids = calloc(s->nstreams, sizeof(*rd.ids)),
		.next = calloc(s->nstreams, sizeof(*rd.next)),
	};
	static struct source_info dummy;
	static char err[SOURCE_ERR_LEN];

	if (!own) {
		td_watch = &rd.slot->watch;
		td_watch->phase = TD_PHASE_LIB;
	}
	if (!rd.ids || !rd.next)
		_exit(1);
	if (t->dl) {
		rd.dc = calloc(s->nstreams, sizeof(*rd.dc));
		rd.rec = calloc(s->nstreams, sizeof(*rd.rec));
		if (!rd.dc || !rd.rec)
			_exit(1);
	} else if (!own) {
		td_par_reader_fd(t);
	}
	t->info = &dummy;
	t->err = err;
	t->push = td_par_push;
	t->shm = s;
	for (uint32_t i = w; i < s->nstreams; i += s->nreaders) {
		if (s->cursor[i] == TDP_CURSOR_DONE)
			continue;
		if (t->dl) {
			int rc = td_direct_start(t, &rd.dc[rd.n], i, &rd.rec[rd.n]);

			rd.next[rd.n] = rc > 0 ? &rd.rec[rd.n] : NULL;
			if (rc < 0) {
				t->ring = &s->ring[i];
				td_par_fail(t, i, 0);
			} else if (!rc) {
				evring_finish(&s->ring[i]);
			}
			rd.ids[rd.n++] = i;
			continue;
		}
		if (tracecmd_set_cursor(t->h, (int)i, s->cursor[i]) < 0 ||
		    !(rd.next[rd.n] = tracecmd_peek_data(t->h, (int)i)) ||
		    rd.next[rd.n]->offset != s->cursor[i])
			_exit(3);
		rd.ids[rd.n++] = i;
	}
	for (uint32_t k = 0; k < rd.n; k++)
		rd.live += rd.next[k] != NULL;
	while (rd.live) {
		bool moved = false;

		if (atomic_load(&s->abort))
			_exit(0);
		for (uint32_t k = 0; k < rd.n; k++)
			if (rd.next[k])
				moved |= td_par_read_cpu(&rd, k) > 0;
		if (!moved && rd.live)
			td_par_wait_room(&rd);
	}
	_exit(0);
}

/* A child that dies with its parent (nothing else would wake it). */
static pid_t td_par_fork_child(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
		_exit(1);
	return pid;
}

static pid_t td_par_fork(struct td *t, struct tdp_shm *s, uint32_t w)
{
	pid_t pid = td_par_fork_child();

	if (pid == 0)
		td_par_reader(t, s, w, false);
	return pid;
}

/* The coordinator's verdict on a failed reader, or a failure of its own. */
static void td_par_abort(struct tdp_shm *s, int rc, const char *err)
{
	if (!s->rc) {
		s->rc = rc;
		snprintf(s->err, SOURCE_ERR_LEN, "%s", err);
	}
	atomic_store(&s->abort, 1);
}

/*
 * A file with instance buffers: libtracecmd merges the buffers, this
 * process decodes them into a single queue.
 */
static void __attribute__((noreturn))
td_par_instances(struct td *t, struct tdp_shm *s, struct source_info *info)
{
	struct tracecmd_input *hs[TD_MAX_BUFFERS];
	int n = 0, nb = tracecmd_buffer_instances(t->h);

	tdp_queues_init(s, 1, 1);
	atomic_store(&s->ready, 1);
	hs[n++] = t->h;
	for (int i = 0; i < nb && n < TD_MAX_BUFFERS; i++) {
		struct tracecmd_input *ih = tracecmd_buffer_instance_handle(t->h, i);

		if (ih)
			hs[n++] = ih;
	}
	t->info = info;
	t->push = td_par_push;
	t->ring = &s->ring[0];
	tracecmd_iterate_events_multi(hs, n, td_record, t);
	if (t->cb_rc) {
		while (!evring_room(t->ring) && !atomic_load(&s->abort))
			usleep(1000);
		td_par_fail(t, 0, t->last_ts);
	} else {
		evring_finish(t->ring);
	}
	_exit(0);
}

/*
 * One queue per CPU, the readers that fill them, each CPU's first record
 * (the readers' cursors) and the recording's span.  Returns the readers.
 */
static uint32_t td_par_plan(struct td *t, struct tdp_shm *s)
{
	uint32_t ncpu, nr;
	struct stat st;

	ncpu = (uint32_t)(tracecmd_cpus(t->h) > 0 ? tracecmd_cpus(t->h) : 0);
	if (ncpu > TDP_MAX_STREAMS)
		ncpu = TDP_MAX_STREAMS;
	nr = td_par_readers(ncpu);
	/*
	 * A small file is read faster than readers start, and with
	 * little memory (unless readers or segments are asked for).
	 */
	if (!td_segment_setting && !getenv("IMBALANCED_READERS") && !fstat(t->hfd, &st) &&
	    st.st_size < TD_PAR_SMALL) {
		nr = 1;
		t->segment = 0;
	}
	tdp_queues_init(s, ncpu, nr);
	for (uint32_t i = 0; i < ncpu; i++) {
		struct tep_record *r = tracecmd_read_cpu_first(t->h, (int)i);

		s->cursor[i] = r ? r->offset : TDP_CURSOR_DONE;
		if (r && (!s->first_ts || r->ts < s->first_ts))
			s->first_ts = r->ts;
		tracecmd_free_record(r);
		if (s->cursor[i] == TDP_CURSOR_DONE) {
			evring_finish(&s->ring[i]);
			continue;
		}
		r = tracecmd_read_cpu_last(t->h, (int)i);
		if (r && r->ts > s->last_ts)
			s->last_ts = r->ts;
		tracecmd_free_record(r);
	}
	return nr;
}

/* td_par_plan for a file read without libtracecmd: no segments needed. */
static uint32_t td_par_plan_direct(struct td *t, struct tdp_shm *s)
{
	uint32_t n = t->dl->ncpu < TDP_MAX_STREAMS ? t->dl->ncpu : TDP_MAX_STREAMS;
	uint32_t nr = td_par_readers(n);

	if (!getenv("IMBALANCED_READERS") && t->dl->file_size < TD_PAR_SMALL)
		nr = 1;
	t->segment = 0;
	tdp_queues_init(s, n, nr);
	for (uint32_t i = 0; i < n; i++) {
		struct tdc c;
		struct tdc_rec r;
		int rc = tdc_open(&c, t->dl, i) ? -1 : tdc_next(&c, &r);

		tdc_close(&c);
		s->cursor[i] = 0;
		if (!rc) {	/* no records; damaged data are the reader's to report */
			s->cursor[i] = TDP_CURSOR_DONE;
			evring_finish(&s->ring[i]);
			continue;
		}
		if (rc > 0 && (!s->first_ts || r.ts < s->first_ts))
			s->first_ts = r.ts;
		r.ts = tdc_last_ts(t->dl, i);
		if (r.ts > s->last_ts)
			s->last_ts = r.ts;
	}
	return nr;
}

/*
 * Reader @w ended with @status: at its segment's end a new one goes on
 * (returns 1, or 0 when it cannot start); any other end than a clean one
 * aborts the read and kills the other readers (returns 0).
 */
static int td_par_reader_ended(struct td *t, struct tdp_shm *s, pid_t *pids, uint32_t nr,
			       uint32_t w, int status, char *err)
{
	if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		if (!s->slot[1 + w].more || atomic_load(&s->abort))
			return 0;
		s->slot[1 + w].more = 0;
		pids[w] = td_par_fork(t, s, w);
		if (pids[w] > 0)
			return 1;
		td_par_abort(s, -EAGAIN, "fork: cannot start a reader");
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
		td_par_abort(s, -EIO, "cannot find a segment's first record again");
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 4) {
		td_par_abort(s, -EIO, "cannot open the file again for a reader");
	} else {
		struct td_watch *own = td_watch;
		int rc;

		td_watch = &s->slot[1 + w].watch;
		rc = td_child_failed(status, s->slot[1 + w].records, -1, err);
		td_watch = own;
		if (rc == -ENOTRECOVERABLE)
			s->show_stderr = 1;
		td_par_abort(s, rc, err);
	}
	for (uint32_t k = 0; k < nr; k++)
		if (pids[k] > 0)
			kill(pids[k], SIGKILL);
	return 0;
}

/* Start the @nr readers and wait for them, starting one again per segment. */
static void __attribute__((noreturn))
td_par_supervise(struct td *t, struct tdp_shm *s, uint32_t nr, char *err)
{
	static pid_t pids[TDP_MAX_READERS];
	uint32_t running = 0;

	for (uint32_t w = 0; w < nr; w++) {
		pids[w] = td_par_fork(t, s, w);
		if (pids[w] < 0) {
			td_par_abort(s, -errno, "fork: cannot start a reader");
			break;
		}
		running++;
	}
	while (running) {
		int status;
		pid_t pid = wait(&status);
		uint32_t w;

		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (w = 0; w < nr && pids[w] != pid; w++)
			;
		if (w == nr)
			continue;
		running--;
		pids[w] = 0;
		running += (uint32_t)td_par_reader_ended(t, s, pids, nr, w, status, err);
	}
	_exit(0);
}

/* The coordinator: open, publish the header, run the readers; ends the process. */
static void td_par_coord(const char *path, struct tdp_shm *s, int errfd)
{
	static struct source_info info;
	static char err[SOURCE_ERR_LEN];
	static struct td t;
	uint32_t nr;
	int rc;

	if (errfd >= 0)
		dup2(errfd, STDERR_FILENO);
	if (__sanitizer_set_death_callback)
		__sanitizer_set_death_callback(td_on_sanitizer_death);
	signal(SIGPIPE, SIG_DFL);
	td_watch = &s->slot[0].watch;
	rc = td_prepare(&t, path, &info, err);
	s->info = info;
	if (rc) {
		s->rc = rc;
		snprintf(s->err, SOURCE_ERR_LEN, "%s", err);
		atomic_store(&s->ready, 1);
		_exit(0);
	}
	s->cpus = tep_get_cpus(t.tep);
	t.shm = s;
	if (t.h && tracecmd_buffer_instances(t.h) > 0)
		td_par_instances(&t, s, &info);
	nr = t.dl ? td_par_plan_direct(&t, s) : td_par_plan(&t, s);
	atomic_store(&s->ready, 1);
	if (nr == 1 && !t.segment)
		td_par_reader(&t, s, 0, true);
	td_par_supervise(&t, s, nr, err);
}

/* The coordinator, as the merge sees it: gone when it ended (reaped here). */
struct td_par_peer {
	pid_t pid;
	int status;
	bool reaped;
};

static bool td_par_gone(void *arg)
{
	struct td_par_peer *p = arg;

	if (!p->reaped && waitpid(p->pid, &p->status, WNOHANG) == p->pid)
		p->reaped = true;
	return p->reaped;
}

/*
 * Wait for the coordinator's header (s->ready) or its end; returns true
 * when it ended first (reaped, its *@status filled).
 */
static bool td_par_wait_ready(struct tdp_shm *s, pid_t pid, int *status)
{
	while (!atomic_load(&s->ready)) {
		struct timespec ts = { 0, 20000000 };

		if (waitpid(pid, status, WNOHANG) == pid)
			return true;
		syscall(SYS_futex, (uint32_t *)&s->ready, FUTEX_WAIT, 0, &ts, NULL, 0);
	}
	return false;
}

/* What the merge and the coordinator said, into @info; -ENODATA when it is nothing. */
static int td_par_result(const struct tdp_shm *s, const struct tdp_result *res,
			 struct source_info *info, char *err)
{
	snprintf(info->clock, sizeof(info->clock), "%s", s->info.clock);
	info->truncated = s->info.truncated;
	snprintf(info->warning, sizeof(info->warning), "%s", s->info.warning);
	snprintf(info->reader, sizeof(info->reader), "%s", s->info.reader);
	info->events = res->events;
	info->lost_events = res->lost_events;
	info->nr_cpus = s->cpus > res->max_cpu + 1 ? s->cpus : res->max_cpu + 1;
	if (info->truncated && !info->events) {
		td_err(err, "file cut off before any complete event data");
		return -ENODATA;
	}
	if (!res->switches) {
		td_err(err, "no sched_switch events: record with sched:sched_switch enabled");
		return -ENODATA;
	}
	return 0;
}

/* The reason of a failed read in the coordinator @s, with its children's stderr. */
static int td_par_child_failed(struct tdp_shm *s, int status, uint64_t n, int errfd, char *err)
{
	struct td_watch *own = td_watch;
	int rc;

	td_watch = &s->slot[0].watch;
	rc = td_child_failed(status, n, errfd, err);
	td_watch = own;
	return rc;
}

/*
 * Merge the readers' queues into @fn, then wait for the coordinator (its
 * *@status, *@reaped) and take its verdict.
 */
static int td_par_deliver(struct tdp_shm *s, pid_t pid, int errfd, imb_event_fn fn, void *ctx,
			  struct source_info *info, char *err, int *status, bool *reaped)
{
	struct td_par_peer peer = { .pid = pid };
	struct tdp_result res;
	int rc;

	info->first_ts_ns = s->first_ts;
	info->last_ts_ns = s->last_ts;
	rc = tdp_merge(s, fn, ctx, &res, err, td_par_gone, &peer);
	if (peer.reaped) {
		*reaped = true;
		*status = peer.status;
	}
	if (rc < 0) {
		atomic_store(&s->abort, 1);
		return rc;
	}
	if (!*reaped) {
		while (waitpid(pid, status, 0) < 0 && errno == EINTR)
			;
		*reaped = true;
	}
	if (!WIFEXITED(*status) || WEXITSTATUS(*status))
		return td_par_child_failed(s, *status, res.events, errfd, err);
	if (rc == 1 || s->rc) {
		rc = s->rc ? s->rc : -EIO;
		snprintf(err, SOURCE_ERR_LEN, "%s", s->err[0] ? s->err : strerror(-rc));
		if (s->show_stderr)
			td_show_child_stderr(errfd);
		return rc;
	}
	return td_par_result(s, &res, info, err);
}

int source_tracedat_read(const char *path, imb_event_fn fn, void *ctx,
			 struct source_info *info, char *err)
{
	struct tdp_shm *s;
	int rc, status, errfd;
	bool reaped;
	pid_t pid;

	if (getenv("IMBALANCED_TRACEDAT_SERIAL"))
		return td_read_serial(path, fn, ctx, info, err);
	memset(info, 0, sizeof(*info));
	snprintf(info->format, sizeof(info->format), "trace.dat");
	rc = td_check_magic(path, err);
	if (rc)
		return rc;
	s = tdp_shm_new();
	if (!s) {
		td_err(err, "mmap: %s", strerror(errno));
		return -ENOMEM;
	}
	errfd = memfd_create("imbalanced-reader-stderr", MFD_CLOEXEC);
	fflush(NULL);
	pid = td_par_fork_child();
	if (pid < 0) {
		rc = -errno;
		if (errfd >= 0)
			close(errfd);
		tdp_shm_free(s);
		td_err(err, "fork: %s", strerror(-rc));
		return rc;
	}
	if (pid == 0)
		td_par_coord(path, s, errfd);
	reaped = td_par_wait_ready(s, pid, &status);
	if (!atomic_load(&s->ready)) {
		rc = td_par_child_failed(s, status, 0, errfd, err);
	} else if (s->rc) {
		rc = s->rc;
		snprintf(err, SOURCE_ERR_LEN, "%s", s->err);
	} else {
		rc = td_par_deliver(s, pid, errfd, fn, ctx, info, err, &status, &reaped);
	}
	if (!reaped) {
		atomic_store(&s->abort, 1);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (errfd >= 0)
		close(errfd);
	tdp_shm_free(s);
	return rc;
}

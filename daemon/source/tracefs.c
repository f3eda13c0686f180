// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracefs.c - the live tracefs source (fallback when BPF cannot load).
 *
 * Records the sched events in an instance of its own, "imbalanced-<pid>",
 * never in the top-level buffer.  Each CPU's trace_pipe_raw is read one
 * sub-buffer per read(2) into a small FIFO of sub-buffers allocated at open;
 * kbuffer walks the records in place.  A k-way merge delivers the records of
 * all CPUs in timestamp order, holding back those younger than a window
 * (default 5 ms) so that a CPU still committing older events cannot break
 * the order.  Field offsets are looked up once at open; per event there is no
 * allocation, no string lookup and no syscall.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>
#include <tracefs/tracefs.h>

#include "daemon/source/sched_fields.h"
#include "daemon/source/tracefs.h"

#define TRACEFS_PATH	"/sys/kernel/tracing"
#define TRACEFS_MAGIC_V	0x74726163
#define FIFO_SUBBUFS	256	/* sub-buffers queued per CPU */
#define NO_KEY		UINT64_MAX

/* ev_of_id[] of an event id this source does not convert */
#define NO_EV		0xff

struct tfs_cpu {
	int cpu;
	int fd;				/* per_cpu/cpuN/trace_pipe_raw, O_NONBLOCK */
	struct kbuffer *kb;
	uint8_t *slots;			/* FIFO_SUBBUFS * subbuf_size bytes */
	unsigned int head, count;	/* FIFO of read sub-buffers */
	bool loaded;			/* slots[head] is loaded in kb */
	bool drained;			/* last read found the buffer empty */
	void *rec;			/* current record, NULL: none */
	unsigned long long ts;		/* its timestamp */
	uint64_t pending_lost;		/* to deliver as IMB_EV_LOST */
	uint64_t lost_ts;
	uint64_t stat_lost;		/* overrun + dropped at last look */
};

struct source_tracefs {
	struct tracefs_instance *inst;
	struct tep_handle *tep;
	bool mounted;
	bool created;
	int nr_cpus;
	struct tfs_cpu *cpus;
	struct pollfd *pfds;
	size_t subbuf_size;
	clockid_t user_clock;		/* -1: trace clock not readable here */
	uint64_t holdback_ns;
	uint64_t last_ts;		/* last delivered timestamp */
	uint64_t max_page_ts;		/* newest sub-buffer start seen */
	uint8_t *ev_of_id;		/* event id -> enum sched_ev, NO_EV */
	int max_id;
	struct sched_fields sf;		/* the sched events' ids and fields */
	struct source_tracefs_stats st;
};

static void set_err(char *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, SOURCE_ERR_LEN, fmt, ap);
	va_end(ap);
}

static bool tracefs_is_mounted(void)
{
	struct statfs sfs;

	return statfs(TRACEFS_PATH, &sfs) == 0 &&
	       (unsigned long)sfs.f_type == TRACEFS_MAGIC_V;
}

/* ---------------------------------------------------------------- convert */

/* Fill @ev from a raw record; returns false for records not converted. */
static bool record_convert(struct source_tracefs *s, const uint8_t *d,
			   unsigned int len, struct imb_event *ev)
{
	uint16_t id;
	int i;

	if (len < 8)
		return false;
	memcpy(&id, d, 2);
	if (id > s->max_id)
		return false;
	i = s->ev_of_id[id];
	if (i == NO_EV)
		return false;
	sched_fields_decode(&s->sf, i, d, len, ev);
	return true;
}

/* ---------------------------------------------------------------- per CPU */

/* Sum of the kernel's "overrun" and "dropped events" counters of @c. */
static uint64_t cpu_stat_lost(struct source_tracefs *s, int cpu, uint64_t *overrun,
			      uint64_t *dropped)
{
	char path[64], *txt, *p;
	unsigned long long o = 0, dr = 0;

	snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
	txt = tracefs_instance_file_read(s->inst, path, NULL);
	if (!txt)
		return 0;
	p = strstr(txt, "\noverrun:");
	if (p)
		o = strtoull(p + 9, NULL, 10);
	p = strstr(txt, "dropped events:");
	if (p)
		dr = strtoull(p + 15, NULL, 10);
	free(txt);
	if (overrun)
		*overrun = o;
	if (dropped)
		*dropped = dr;
	return o + dr;
}

/* Read sub-buffers until the kernel buffer is empty or the FIFO is full. */
static int cpu_fill(struct source_tracefs *s, struct tfs_cpu *c)
{
	while (c->count < FIFO_SUBBUFS) {
		unsigned int tail = (c->head + c->count) % FIFO_SUBBUFS;
		uint8_t *page = c->slots + (size_t)tail * s->subbuf_size;
		ssize_t n = read(c->fd, page, s->subbuf_size);
		uint64_t pts;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				c->drained = true;
				return 0;
			}
			return -errno;
		}
		if (n == 0) {
			c->drained = true;
			return 0;
		}
		if ((size_t)n < s->subbuf_size)
			memset(page + n, 0, s->subbuf_size - n);
		memcpy(&pts, page, sizeof(pts));
		if (pts > s->max_page_ts)
			s->max_page_ts = pts;
		c->count++;
		s->st.subbufs++;
		s->st.bytes += (uint64_t)n;
	}
	c->drained = false;
	return 0;
}

/* Make c->rec (or a pending loss) the CPU's head; refill when empty. */
static int cpu_head(struct source_tracefs *s, struct tfs_cpu *c)
{
	int ret, missed;

	while (!c->rec && !c->pending_lost) {
		if (c->loaded) {
			c->loaded = false;
			c->head = (c->head + 1) % FIFO_SUBBUFS;
			c->count--;
		}
		if (!c->count) {
			if (c->drained)
				return 0;
			ret = cpu_fill(s, c);
			if (ret < 0)
				return ret;
			if (!c->count)
				return 0;
		}
		if (kbuffer_load_subbuffer(c->kb, c->slots + (size_t)c->head * s->subbuf_size) < 0)
			return -EINVAL;
		c->loaded = true;
		c->rec = kbuffer_read_event(c->kb, &c->ts);
		missed = kbuffer_missed_events(c->kb);
		if (missed) {
			uint64_t now = cpu_stat_lost(s, c->cpu, NULL, NULL);
			uint64_t n = missed > 0 ? (uint64_t)missed : now - c->stat_lost;

			if (missed < 0)
				s->st.lost_unknown++;
			c->stat_lost = now;
			c->pending_lost = n ? n : 1;
			c->lost_ts = c->rec ? c->ts : kbuffer_subbuf_timestamp(c->kb,
				c->slots + (size_t)c->head * s->subbuf_size);
		}
	}
	return 0;
}

static uint64_t cpu_key(const struct tfs_cpu *c)
{
	if (c->pending_lost)
		return c->lost_ts;
	return c->rec ? c->ts : NO_KEY;
}

/* Deliver heads in time order up to @cutoff.  Returns delivered or < 0. */
static int tracefs_merge(struct source_tracefs *s, uint64_t cutoff,
			 imb_event_fn fn, void *ctx)
{
	struct imb_event ev;
	int delivered = 0, ret, i;

	for (;;) {
		struct tfs_cpu *best = NULL;
		uint64_t bk = NO_KEY;

		for (i = 0; i < s->nr_cpus; i++) {
			struct tfs_cpu *c = &s->cpus[i];
			uint64_t k;

			ret = cpu_head(s, c);
			if (ret < 0)
				return ret;
			k = cpu_key(c);
			if (k < bk) {
				bk = k;
				best = c;
			}
		}
		if (!best || bk > cutoff)
			return delivered;

		memset(&ev, 0, sizeof(ev));
		ev.cpu = best->cpu;
		if (best->pending_lost) {
			ev.kind = IMB_EV_LOST;
			ev.lost.count = best->pending_lost;
			s->st.lost_events += best->pending_lost;
			best->pending_lost = 0;
		} else {
			const uint8_t *d = best->rec;
			int len = kbuffer_event_size(best->kb);

			best->rec = kbuffer_next_event(best->kb, &best->ts);
			if (len <= 0 || !record_convert(s, d, (unsigned int)len, &ev)) {
				s->st.skipped++;
				continue;
			}
		}
		ev.ts_ns = bk;
		if (bk < s->last_ts) {	/* later than the hold-back allowed */
			s->st.order_fixups++;
			ev.ts_ns = s->last_ts;
		}
		s->last_ts = ev.ts_ns;
		s->st.events++;
		delivered++;
		ret = fn(&ev, ctx);
		if (ret < 0)
			return ret;
	}
}

static int tracefs_fill_all(struct source_tracefs *s)
{
	int i, ret;

	for (i = 0; i < s->nr_cpus; i++) {
		ret = cpu_fill(s, &s->cpus[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static uint64_t tracefs_cutoff(struct source_tracefs *s)
{
	struct timespec ts;
	uint64_t now;

	if (s->user_clock != (clockid_t)-1 && !clock_gettime(s->user_clock, &ts))
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	else
		now = s->max_page_ts;	/* a clock we cannot read: newest seen */
	return now > s->holdback_ns ? now - s->holdback_ns : 0;
}

static bool tracefs_queued(struct source_tracefs *s)
{
	int i;

	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i].count || s->cpus[i].pending_lost)
			return true;
	return false;
}

int source_tracefs_poll(struct source_tracefs *s, int timeout_ms,
			imb_event_fn fn, void *ctx)
{
	uint64_t cutoff;
	int ret, total = 0, wait, i;

	/* The cutoff is taken before reading so that whatever a CPU commits
	 * after its read is younger than the cutoff (within the hold-back). */
	cutoff = tracefs_cutoff(s);
	ret = tracefs_fill_all(s);
	if (ret < 0)
		return ret;
	ret = tracefs_merge(s, cutoff, fn, ctx);
	if (ret < 0 || ret > 0 || timeout_ms == 0)
		return ret;

	wait = timeout_ms;
	if (tracefs_queued(s)) {
		int hb = (int)(s->holdback_ns / 1000000) + 1;

		if (wait < 0 || wait > hb)
			wait = hb;
	}
	for (i = 0; i < s->nr_cpus; i++)
		s->pfds[i].revents = 0;
	if (poll(s->pfds, s->nr_cpus, wait) < 0 && errno != EINTR)
		return -errno;

	cutoff = tracefs_cutoff(s);
	ret = tracefs_fill_all(s);
	if (ret < 0)
		return ret;
	ret = tracefs_merge(s, cutoff, fn, ctx);
	return ret < 0 ? ret : total + ret;
}

int source_tracefs_drain(struct source_tracefs *s, imb_event_fn fn, void *ctx)
{
	int ret;

	if (tracefs_trace_off(s->inst) < 0)
		return -errno ? -errno : -EIO;
	ret = tracefs_fill_all(s);
	if (ret < 0)
		return ret;
	return tracefs_merge(s, NO_KEY - 1, fn, ctx);
}

/* ---------------------------------------------------------------- stats */

void source_tracefs_stats(struct source_tracefs *s, struct source_tracefs_stats *st)
{
	uint64_t o, d, so = 0, sd = 0;
	int i;

	for (i = 0; i < s->nr_cpus; i++) {
		o = d = 0;
		cpu_stat_lost(s, s->cpus[i].cpu, &o, &d);
		so += o;
		sd += d;
	}
	s->st.overrun_kernel = so;
	s->st.dropped_kernel = sd;
	*st = s->st;
}

void source_tracefs_info(struct source_tracefs *s, struct source_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->format, sizeof(info->format), "tracefs");
	snprintf(info->clock, sizeof(info->clock), "%s", s->st.clock);
	info->nr_cpus = s->nr_cpus;
	info->events = s->st.events;
	info->lost_events = s->st.lost_events;
	if (s->st.order_fixups)
		snprintf(info->warning, sizeof(info->warning),
			 "%" PRIu64 " events arrived later than the %" PRIu64
			 " ms hold-back window", s->st.order_fixups,
			 s->holdback_ns / 1000000);
}

/* ---------------------------------------------------------------- open/close */

int source_tracefs_close(struct source_tracefs *s)
{
	int i, ret = 0;

	if (!s)
		return 0;
	for (i = 0; s->cpus && i < s->nr_cpus; i++) {
		if (s->cpus[i].fd >= 0)
			close(s->cpus[i].fd);
		if (s->cpus[i].kb)
			kbuffer_free(s->cpus[i].kb);
		free(s->cpus[i].slots);
	}
	free(s->cpus);
	free(s->pfds);
	free(s->ev_of_id);
	if (s->inst) {
		if (s->created) {
			tracefs_trace_off(s->inst);
			tracefs_event_disable(s->inst, NULL, NULL);
			if (tracefs_instance_destroy(s->inst) < 0 && !ret)
				ret = errno ? -errno : -EIO;
		}
		tracefs_instance_free(s->inst);
	}
	if (s->tep)
		tep_free(s->tep);
	if (s->mounted && umount2(TRACEFS_PATH, 0) < 0 && !ret)
		ret = -errno;
	free(s);
	return ret;
}

static clockid_t clock_user_id(const char *name)
{
	if (!strcmp(name, "mono"))
		return CLOCK_MONOTONIC;
	if (!strcmp(name, "mono_raw"))
		return CLOCK_MONOTONIC_RAW;
	if (!strcmp(name, "boot"))
		return CLOCK_BOOTTIME;
	if (!strcmp(name, "tai"))
		return CLOCK_TAI;
	return (clockid_t)-1;
}

/* Events that must exist; NUMA ones are optional (CONFIG_NUMA_BALANCING). */
static bool event_required(int i)
{
	return i <= SCHED_RUNTIME;
}

/*
 * Look up event @i's format and fields and enable it, unless @events or
 * @no_numa leave it out.  Returns its format; NULL with *@rc 0 when it is
 * left out or an optional event the kernel lacks, NULL with *@rc -errno and
 * @err filled on failure.
 */
static struct tep_event *tracefs_setup_event(struct source_tracefs *s, int i, bool no_numa,
					     uint32_t events, int *rc, char *err)
{
	const char *name = sched_desc[i].name;
	struct tep_event *e;

	*rc = 0;
	if (!event_required(i) && no_numa)
		return NULL;
	/* switch is always on: the configuration insists */
	if (events && i != SCHED_SWITCH && !(events & (1u << sched_desc[i].kind)))
		return NULL;
	e = sched_fields_find(&s->sf, i);
	if (!e) {
		if (event_required(i)) {
			set_err(err, "tracefs: event sched/%s not found", name);
			*rc = -ENOENT;
		}
		return NULL;
	}
	sched_fields_resolve(&s->sf, i, e);
	if (s->sf.ev[i].missing) {
		set_err(err, "tracefs: sched/%s format lacks field %s", name,
			s->sf.ev[i].missing);
		*rc = -EINVAL;
		return NULL;
	}
	if (tracefs_event_enable(s->inst, "sched", name) < 0) {
		set_err(err, "tracefs: cannot enable sched/%s", name);
		*rc = errno ? -errno : -EIO;
		return NULL;
	}
	return e;
}

static int tracefs_setup_events(struct source_tracefs *s, bool no_numa, uint32_t events,
				char *err)
{
	struct tep_event *evs[SCHED__COUNT] = { 0 };
	int i, rc, max_id = 0;

	/* live records are in the host's byte order */
	sched_fields_init(&s->sf, s->tep, true);
	for (i = SCHED_SWITCH; i <= SCHED_LAST_TRACEPOINT; i++) {
		evs[i] = tracefs_setup_event(s, i, no_numa, events, &rc, err);
		if (rc)
			return rc;
		if (evs[i] && evs[i]->id > max_id)
			max_id = evs[i]->id;
	}
	if (max_id > 0xffff)
		max_id = 0xffff;
	s->ev_of_id = malloc((size_t)max_id + 1);
	if (!s->ev_of_id)
		return -ENOMEM;
	memset(s->ev_of_id, NO_EV, (size_t)max_id + 1);
	s->max_id = max_id;
	for (i = SCHED_SWITCH; i <= SCHED_LAST_TRACEPOINT; i++)
		if (evs[i] && evs[i]->id >= 0 && evs[i]->id <= max_id)
			s->ev_of_id[evs[i]->id] = (uint8_t)i;
	return 0;
}

static int tracefs_open_cpus(struct source_tracefs *s, char *err)
{
	enum kbuffer_long_size ls;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int i, n = 0;

	if (ncpu < 1)
		ncpu = 1;
	s->cpus = calloc((size_t)ncpu, sizeof(*s->cpus));
	s->pfds = calloc((size_t)ncpu, sizeof(*s->pfds));
	if (!s->cpus || !s->pfds)
		return -ENOMEM;
	ls = tep_get_long_size(s->tep) == 4 ? KBUFFER_LSIZE_4 :
	     tep_get_long_size(s->tep) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_SAME_AS_HOST;
	for (i = 0; i < ncpu; i++) {
		struct tfs_cpu *c = &s->cpus[n];
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", i);
		fd = tracefs_instance_file_open(s->inst, path, O_RDONLY | O_NONBLOCK);
		if (fd < 0)
			continue;	/* not a possible CPU */
		c->fd = fd;
		c->cpu = i;
		s->nr_cpus = ++n;
		c->kb = kbuffer_alloc(ls, KBUFFER_ENDIAN_SAME_AS_HOST);
		c->slots = malloc((size_t)FIFO_SUBBUFS * s->subbuf_size);
		if (!c->kb || !c->slots)
			return -ENOMEM;
		c->stat_lost = cpu_stat_lost(s, i, NULL, NULL);
		s->pfds[n - 1].fd = fd;
		s->pfds[n - 1].events = POLLIN;
	}
	if (!n) {
		set_err(err, "tracefs: no per-CPU buffer could be opened");
		return -ENODEV;
	}
	return 0;
}

/* Fill in the defaults of @o; -EINVAL when what is left is not valid. */
static int tracefs_opts_fill(struct source_tracefs_opts *o, char *err)
{
	if (!o->clock || !*o->clock)
		o->clock = SOURCE_TRACEFS_CLOCK;
	if (!o->buffer_kb)
		o->buffer_kb = SOURCE_TRACEFS_BUFFER_KB;
	if (!o->holdback_ns)
		o->holdback_ns = SOURCE_TRACEFS_HOLDBACK_NS;
	if (!o->wake_percent)
		o->wake_percent = SOURCE_TRACEFS_WAKE_PERCENT;
	if (o->wake_percent > 100 ||
	    strlen(o->clock) >= sizeof(((struct source_tracefs_stats *)NULL)->clock)) {
		set_err(err, "tracefs: invalid option");
		return -EINVAL;
	}
	return 0;
}

/* Our own instance "imbalanced-<pid>", new and with tracing off. */
static int tracefs_instance_new(struct source_tracefs *s, char *err)
{
	char name[64];
	int ret;

	snprintf(name, sizeof(name), SOURCE_TRACEFS_INSTANCE_PREFIX "%d", (int)getpid());
	s->inst = tracefs_instance_create(name);
	if (s->inst && !tracefs_instance_is_new(s->inst)) {
		/* Left by a dead process that had our pid: start afresh. */
		tracefs_instance_destroy(s->inst);
		tracefs_instance_free(s->inst);
		s->inst = tracefs_instance_create(name);
	}
	if (!s->inst) {
		ret = errno ? -errno : -EIO;
		set_err(err, "tracefs: cannot create instance %s: %s", name, strerror(-ret));
		return ret;
	}
	s->created = true;
	snprintf(s->st.instance, sizeof(s->st.instance), "%s", name);
	return 0;
}

/* The instance's clock, buffer size and wake-up level; the sub-buffer size it has. */
static int tracefs_instance_setup(struct source_tracefs *s, const struct source_tracefs_opts *o,
				  char *err)
{
	long long sub_kb = 0;
	char num[32], *clk;

	snprintf(s->st.clock, sizeof(s->st.clock), "%s", o->clock);
	/* A new instance starts with tracing on: off until set up. */
	if (tracefs_trace_off(s->inst) < 0 ||
	    tracefs_instance_file_write(s->inst, "trace_clock", o->clock) < 0) {
		set_err(err, "tracefs: trace clock \"%s\" not offered by this kernel", o->clock);
		return -EINVAL;
	}
	clk = tracefs_get_clock(s->inst);
	if (!clk || strcmp(clk, o->clock)) {
		free(clk);
		set_err(err, "tracefs: trace clock \"%s\" did not take", o->clock);
		return -EINVAL;
	}
	free(clk);
	snprintf(num, sizeof(num), "%u", o->buffer_kb);
	if (tracefs_instance_file_write(s->inst, "buffer_size_kb", num) < 0) {
		int ret = errno ? -errno : -EIO;

		set_err(err, "tracefs: cannot set buffer_size_kb to %u", o->buffer_kb);
		return ret;
	}
	snprintf(num, sizeof(num), "%u", o->wake_percent);
	tracefs_instance_file_write(s->inst, "buffer_percent", num);	/* 5.10+ */

	s->subbuf_size = (size_t)getpagesize();
	if (tracefs_instance_file_read_number(s->inst, "buffer_subbuf_size_kb", &sub_kb) == 0 &&
	    sub_kb > 0)
		s->subbuf_size = (size_t)sub_kb * 1024;	/* 6.8+ */
	return 0;
}

/* The sched events' formats, the events enabled, the per-CPU buffers opened. */
static int tracefs_events_open(struct source_tracefs *s, const struct source_tracefs_opts *o,
			       char *err)
{
	static const char *const systems[] = { "sched", NULL };
	int ret;

	s->tep = tracefs_local_events_system(NULL, systems);
	if (!s->tep) {
		ret = errno ? -errno : -EIO;
		set_err(err, "tracefs: cannot read the sched event formats");
		return ret;
	}
	ret = tracefs_setup_events(s, o->no_numa, o->events, err);
	if (ret < 0)
		return ret;
	ret = tracefs_open_cpus(s, err);
	if (ret == -ENOMEM)
		set_err(err, "tracefs: out of memory");
	return ret < 0 ? ret : 0;
}

struct source_tracefs *source_tracefs_open(const struct source_tracefs_opts *opts,
					   char *err)
{
	struct source_tracefs_opts o = { 0 };
	struct source_tracefs *s;
	int ret;

	if (opts)
		o = *opts;
	ret = tracefs_opts_fill(&o, err);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		set_err(err, "tracefs: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->holdback_ns = o.holdback_ns;
	s->user_clock = clock_user_id(o.clock);

	/* Mount before any libtracefs call: it would mount by itself. */
	if (!tracefs_is_mounted()) {
		if (mount("nodev", TRACEFS_PATH, "tracefs", 0, NULL) < 0) {
			ret = -errno;
			set_err(err, "tracefs: cannot mount on %s: %s", TRACEFS_PATH,
				strerror(errno));
			goto fail;
		}
		s->mounted = true;
	}
	source_tracefs_cleanup_stale(NULL);

	ret = tracefs_instance_new(s, err);
	if (!ret)
		ret = tracefs_instance_setup(s, &o, err);
	if (!ret)
		ret = tracefs_events_open(s, &o, err);
	if (ret)
		goto fail;
	s->st.nr_cpus = s->nr_cpus;
	s->st.mounted = s->mounted;
	if (tracefs_trace_on(s->inst) < 0) {
		ret = errno ? -errno : -EIO;
		set_err(err, "tracefs: cannot turn tracing on in %s", s->st.instance);
		goto fail;
	}
	return s;
fail:
	source_tracefs_close(s);
	errno = -ret;
	return NULL;
}

/* ---------------------------------------------------------------- stale */

#define STALE_MAX 64

struct stale_ctx {
	char names[STALE_MAX][64];
	int n;
};

static int stale_collect(const char *name, void *data)
{
	struct stale_ctx *sc = data;
	const char *p = name + strlen(SOURCE_TRACEFS_INSTANCE_PREFIX);
	char *end;
	long pid;

	if (strncmp(name, SOURCE_TRACEFS_INSTANCE_PREFIX,
		    strlen(SOURCE_TRACEFS_INSTANCE_PREFIX)) || !*p || *p == '-' || *p == '+')
		return 0;
	errno = 0;
	pid = strtol(p, &end, 10);
	if (*end || errno || pid <= 0 || pid > 0x7fffffff)
		return 0;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;	/* alive (or not ours to judge) */
	if (sc->n < STALE_MAX && strlen(name) < sizeof(sc->names[0]))
		snprintf(sc->names[sc->n++], sizeof(sc->names[0]), "%s", name);
	return 0;
}

int source_tracefs_cleanup_stale(int *removed)
{
	struct stale_ctx sc;
	int i, ret = 0, n = 0;

	if (removed)
		*removed = 0;
	if (!tracefs_is_mounted())
		return 0;
	sc.n = 0;
	if (tracefs_instances_walk(stale_collect, &sc) < 0)
		return errno ? -errno : -EIO;
	for (i = 0; i < sc.n; i++) {
		struct tracefs_instance *inst = tracefs_instance_alloc(NULL, sc.names[i]);

		if (!inst) {
			ret = -ENOMEM;
			continue;
		}
		tracefs_event_disable(inst, NULL, NULL);
		if (tracefs_instance_destroy(inst) < 0)
			ret = errno ? -errno : -EIO;
		else
			n++;
		tracefs_instance_free(inst);
	}
	if (removed)
		*removed = n;
	return ret;
}

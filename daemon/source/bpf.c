// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * bpf.c - the live BPF source: load, attach, drain, order, detach.
 *
 * With pelt_hook.c, the only file that includes <bpf/libbpf.h> and the
 * generated skeleton.  Opening checks BTF and permissions first so the user
 * gets one clear reason, decides from the kernel's BTF which tracepoints
 * exist (programs on missing ones are not loaded) and whether sched_switch
 * passes prev_state, loads the update_load_avg() hook only where
 * pelt_hook_probe() found that the kernel takes it (else the PELT
 * tracepoints alone give the kernel's values), sets the knobs, loads and
 * attaches.  Polling drains the ring
 * buffer into a min-heap keyed by (timestamp, arrival) and delivers what is
 * older than the reorder window; per-CPU reservation failures become
 * IMB_EV_LOST events.  Closing destroys the skeleton, which detaches every
 * link and closes every program and map.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/imbalance.h"
#include "bpf/imbalance.skel.h"
#include "daemon/host/hostinfo.h"
#include "daemon/source/bpf.h"
#include "daemon/source/pelt_hook.h"
#include "daemon/util.h"

#define NODE_MAP_MAX	HOSTINFO_MAX_CPUS

struct held {
	uint64_t seq;			/* arrival order, breaks timestamp ties */
	struct imb_event ev;
};

struct source_bpf {
	struct imbalance *skel;
	struct ring_buffer *rb;
	int nr_cpus;			/* possible CPUs (per-CPU map width) */
	uint64_t reorder_ns;
	uint32_t attached;		/* SOURCE_BPF_EV() bits */
	struct pelt_hook_status hook;	/* the update_load_avg() hook: tried, attached, or why not */
	uint64_t hook_records;		/* PELT records the hook wrote */
	/* reorder buffer: heap[head .. head + nr_held), in (ts, seq) order */
	struct held *heap;
	size_t head, nr_held, cap_held;
	unsigned int low_polls;		/* polls in a row the buffer was under a quarter full */
	size_t poll_peak;		/* records held after this poll's reads, before delivery */
	uint64_t seq;
	uint64_t last_ts;		/* last delivered timestamp */
	/* counters */
	uint64_t events, records, lost, late;
	uint64_t unreported;		/* switches found at sched_exit_tp */
	uint64_t group_paths, group_paths_bad;	/* IMB_W_GROUP_PATH records read, dropped */
	struct group_names *names;	/* where group paths go, NULL none (not owned) */
	uint64_t *lost_cpu;		/* [nr_cpus] reported so far */
	uint64_t skipped;		/* program runs the kernel skipped, reported so far */
	uint64_t skipped_read_ns;	/* when the programs' counters were last read */
	uint64_t *drop_vals;		/* [nr_cpus] scratch for the map read */
	int err;			/* allocation failure inside the ring callback */
	/* one poll's share of the ring (see ring_sample()) */
	size_t budget;			/* records this poll may still read */
	bool yielded;			/* the budget ran out with records left */
	uint64_t max_ts;		/* newest record timestamp read so far */
	uint64_t watermark;		/* every event stamped before this is delivered */
	int16_t node_of[NODE_MAP_MAX];	/* CPU -> NUMA node, -1 unknown */
};

/* The last libbpf warning, so a load failure can say what went wrong. */
static char libbpf_last[160];

static int libbpf_print_capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[sizeof(libbpf_last)];
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (n)
		memcpy(libbpf_last, buf, n + 1);
	return 0;
}

/* ---- the reorder buffer ---- */

/*
 * Records come out of the ring in reservation order, which is time order
 * but for CPUs racing by a few microseconds: the buffer is kept sorted by
 * (ts, seq) with an insertion from the back, one comparison for most
 * records, and events are taken from the front.  (A binary heap of
 * 128-byte events moved a dozen of them per record, and was a third of the
 * daemon's CPU time under a message-passing load.)
 */
static bool held_before(const struct held *a, const struct held *b)
{
	if (a->ev.ts_ns != b->ev.ts_ns)
		return a->ev.ts_ns < b->ev.ts_ns;
	return a->seq < b->seq;
}

/* Move the held events to the front of the buffer. */
static void heap_compact(struct source_bpf *s)
{
	if (!s->head)
		return;
	memmove(s->heap, s->heap + s->head, s->nr_held * sizeof(*s->heap));
	s->head = 0;
}

static struct imb_event *heap_slot(struct source_bpf *s)
{
	if (s->head + s->nr_held == s->cap_held) {
		if (s->head && s->nr_held <= s->cap_held / 2) {
			heap_compact(s);
		} else {
			size_t cap = s->cap_held ? s->cap_held * 2 : 4096;
			struct held *h;

			heap_compact(s);
			h = realloc(s->heap, cap * sizeof(*h));
			if (!h)
				return NULL;
			s->heap = h;
			s->cap_held = cap;
		}
	}
	memset(&s->heap[s->head + s->nr_held].ev, 0, sizeof(struct imb_event));
	return &s->heap[s->head + s->nr_held].ev;
}

/*
 * A reader that fell behind (a loaded host, a burst) grows the buffer to a
 * whole ring's worth of records; give that memory back once it has stayed
 * under a quarter full for HEAP_SHRINK_POLLS polls in a row (at once, a
 * busy reader would give it back and fault it in again every poll).  Full
 * as it was after the poll's reads, not after its delivery: a steady load
 * brings a wake-up's worth of records each poll and leaves a few held.
 */
#define HEAP_SHRINK_POLLS	64

static void heap_shrink(struct source_bpf *s)
{
	size_t cap = s->cap_held;
	size_t used = s->poll_peak > s->nr_held ? s->poll_peak : s->nr_held;
	struct held *h;

	s->poll_peak = 0;
	if (cap <= 4096 || used * 4 >= cap) {
		s->low_polls = 0;
		return;
	}
	if (++s->low_polls < HEAP_SHRINK_POLLS)
		return;
	s->low_polls = 0;
	while (cap > 4096 && s->nr_held * 4 < cap)
		cap /= 2;
	if (cap == s->cap_held)
		return;
	heap_compact(s);
	h = realloc(s->heap, cap * sizeof(*h));
	if (h) {
		s->heap = h;
		s->cap_held = cap;
	}
}

/*
 * Insert the element just written into heap_slot() at its place from the
 * back.  Most records arrive in order: those stay where they were written,
 * uncopied.
 */
static void heap_push_commit(struct source_bpf *s)
{
	size_t i = s->head + s->nr_held++;
	struct held x;

	s->heap[i].seq = s->seq++;
	if (i == s->head || !held_before(&s->heap[i], &s->heap[i - 1]))
		return;
	x = s->heap[i];
	do {
		s->heap[i] = s->heap[i - 1];
		i--;
	} while (i > s->head && held_before(&x, &s->heap[i - 1]));
	s->heap[i] = x;
}

/* Drop the front element (delivered in place by deliver()). */
static void heap_pop(struct source_bpf *s)
{
	if (--s->nr_held)
		s->head++;
	else
		s->head = 0;
}

/* ---- wire records to events ---- */

/* Kernel TASK_REPORT encoding of a prev_state, as the tracefs event prints it. */
static uint32_t switch_state(uint32_t state, uint32_t exit_state, uint32_t preempt)
{
	uint32_t st;
	int bit;

	if (preempt)
		return IMB_STATE_PREEMPTED;
	if (state == 0x402)			/* TASK_IDLE */
		return 0x80;			/* TASK_REPORT_IDLE */
	if (state == 0x1000)			/* TASK_RTLOCK_WAIT */
		return 0x2;
	st = (state | exit_state) & 0x7f;	/* TASK_REPORT */
	if (!st)
		return state ? 0x80 : IMB_STATE_RUNNING;
	bit = 31 - __builtin_clz(st);
	return 1u << bit;
}

static int node_of(const struct source_bpf *s, int cpu)
{
	if (cpu < 0 || cpu >= NODE_MAP_MAX)
		return -1;
	return s->node_of[cpu];
}

/* Floor division (the kernel's avg_vruntime() rounds toward minus infinity). */
static int64_t div_floor(int64_t a, int64_t b)
{
	int64_t q = a / b;

	if ((a % b) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static void avg_copy(struct imb_event *ev, const struct imb_w_avg *a, bool cfs)
{
	if (cfs) {
		struct imb_ev_pelt_cfs *p = &ev->pelt_cfs;

		p->util_sum = a->util_sum;
		p->period_contrib = a->period_contrib;
		p->last_update_time = a->last_update_time;
		p->load_sum = a->load_sum;
		p->runnable_sum = a->runnable_sum;
		p->load_avg = a->load_avg;
		p->runnable_avg = a->runnable_avg;
		p->util_avg = a->util_avg;
	} else {
		struct imb_ev_pelt_se *p = &ev->pelt_se;

		p->util_sum = a->util_sum;
		p->period_contrib = a->period_contrib;
		p->last_update_time = a->last_update_time;
		p->load_sum = a->load_sum;
		p->runnable_sum = a->runnable_sum;
		p->load_avg = a->load_avg;
		p->runnable_avg = a->runnable_avg;
		p->util_avg = a->util_avg;
	}
}

/* A new heap slot with the header fields filled; NULL on allocation failure. */
static struct imb_event *event_begin(struct source_bpf *s, const struct imb_wire_hdr *h,
				     unsigned int kind)
{
	struct imb_event *ev = heap_slot(s);

	if (!ev)
		return NULL;
	ev->ts_ns = h->ts_ns;
	ev->cpu = (int32_t)h->cpu;
	ev->kind = kind;
	if (h->flags & IMB_WF_GAP)
		ev->flags |= IMB_EVF_GAP;
	if (h->flags & IMB_WF_CLOCKS) {
		ev->flags |= IMB_EVF_RQ_CLOCKS;
		ev->clock_task_ns = h->clock_task;
		ev->clock_pelt_ns = h->clock_pelt - h->lost_idle_time;
	}
	return ev;
}

/* A group path record into the path table; a garbled one is counted and dropped. */
static void group_path_store(struct source_bpf *s, const struct imb_w_group_path *w)
{
	unsigned int flags = 0;
	size_t nr = w->nr_names;

	s->group_paths++;
	if (!s->names)
		return;
	if (nr > IMB_GP_DEPTH) {
		s->group_paths_bad++;
		return;
	}
	if (w->flags & IMB_GPF_TRUNCATED)
		flags |= GROUP_NAMES_TOP_MISSING;
	if (w->flags & IMB_GPF_NAME_CUT)
		flags |= GROUP_NAMES_TRUNCATED;
	if (w->flags & IMB_GPF_DFL)
		flags |= GROUP_NAMES_DFL;
	if (group_names_set_parts(s->names, w->id, w->parent_id, &w->names[0][0],
				  IMB_GP_NAME_LEN, nr, flags) == -EINVAL)
		s->group_paths_bad++;
}

/*
 * One converter per wire record kind: each copies its record out of
 * @data (a short record is ignored) into a heap slot, and returns 1 when
 * that slot holds an event to commit, 0 when there is none, -ENOMEM.
 */
#define WIRE_BODY(type, var)						\
	type var;							\
	if (size < sizeof(var))						\
		return 0;						\
	memcpy(&var, data, sizeof(var))

static int wire_switch(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
		       size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_switch, w);

	if (!(ev = event_begin(s, h, IMB_EV_SWITCH)))
		return -ENOMEM;
	ev->sw.prev_pid = (int32_t)w.prev_pid;
	ev->sw.prev_tgid = (int32_t)w.prev_tgid;
	ev->sw.prev_prio = (int32_t)w.prev_prio;
	ev->sw.prev_state = switch_state(w.prev_state, w.prev_exit_state, w.preempt);
	s->unreported += w.synthetic;
	ev->sw.next_pid = (int32_t)w.next_pid;
	ev->sw.next_tgid = (int32_t)w.next_tgid;
	ev->sw.next_prio = (int32_t)w.next_prio;
	ev->sw.next_cgroup = w.next_cgroup;
	ev->sw.next_group = w.next_group;
	ev->sw.prev_delayed = w.prev_delayed ? 1 : 0;
	ev->sw.prev_sum_exec_ns = w.prev_sum_exec;
	ev->sw.next_sum_exec_ns = w.next_sum_exec;
	imb_comm_copy(ev->sw.prev_comm, w.prev_comm, sizeof(w.prev_comm));
	imb_comm_copy(ev->sw.next_comm, w.next_comm, sizeof(w.next_comm));
	return 1;
}

static int wire_wakeup(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
		       size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_wakeup, w);

	if (!(ev = event_begin(s, h, h->kind == IMB_W_WAKEUP ? IMB_EV_WAKEUP :
				      h->kind == IMB_W_WAKING ? IMB_EV_WAKING : IMB_EV_WAKEUP_NEW)))
		return -ENOMEM;
	ev->wakeup.delayed = h->kind == IMB_W_WAKING;
	ev->wakeup.pid = (int32_t)w.pid;
	ev->wakeup.tgid = (int32_t)w.tgid;
	ev->wakeup.prio = (int32_t)w.prio;
	ev->wakeup.target_cpu = (int32_t)w.target_cpu;
	imb_comm_copy(ev->wakeup.comm, w.comm, sizeof(w.comm));
	return 1;
}

static int wire_migrate(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
			size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_migrate, w);

	if (!(ev = event_begin(s, h, IMB_EV_MIGRATE)))
		return -ENOMEM;
	ev->migrate.pid = (int32_t)w.pid;
	ev->migrate.prio = (int32_t)w.prio;
	ev->migrate.orig_cpu = (int32_t)w.orig_cpu;
	ev->migrate.dest_cpu = (int32_t)w.dest_cpu;
	imb_comm_copy(ev->migrate.comm, w.comm, sizeof(w.comm));
	return 1;
}

static int wire_fork(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
		     size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_fork, w);

	if (!(ev = event_begin(s, h, IMB_EV_FORK)))
		return -ENOMEM;
	ev->fork.parent_pid = (int32_t)w.parent_pid;
	ev->fork.child_pid = (int32_t)w.child_pid;
	ev->fork.child_tgid = (int32_t)w.child_tgid;
	imb_comm_copy(ev->fork.child_comm, w.child_comm, sizeof(w.child_comm));
	return 1;
}

static int wire_exit(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
		     size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_exit, w);

	if (!(ev = event_begin(s, h, IMB_EV_EXIT)))
		return -ENOMEM;
	ev->exit.pid = (int32_t)w.pid;
	ev->exit.prio = (int32_t)w.prio;
	imb_comm_copy(ev->exit.comm, w.comm, sizeof(w.comm));
	return 1;
}

static int wire_runtime(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
			size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_runtime, w);

	if (!(ev = event_begin(s, h, IMB_EV_RUNTIME)))
		return -ENOMEM;
	ev->runtime.pid = (int32_t)w.pid;
	ev->runtime.runtime_ns = w.runtime_ns;
	ev->runtime.sum_exec_ns = w.sum_exec;
	if (w.flags & IMB_WR_TIMER_KNOWN)
		ev->runtime.timer = w.flags & IMB_WR_IN_TIMER ? IMB_TIMER_INSIDE : IMB_TIMER_OUTSIDE;
	return 1;
}

/* The root queue's vruntime reference and V (doc/pelt.md §6) from its PELT record. */
static int wire_vruntime(struct source_bpf *s, const struct imb_wire_hdr *h,
			 const struct imb_w_pelt_cfs *w)
{
	struct imb_event *ev = event_begin(s, h, IMB_EV_VRUNTIME);

	if (!ev)
		return -ENOMEM;
	ev->vruntime.vruntime_ref = w->vruntime_ref;
	ev->vruntime.is_zero_vruntime = !!(w->vflags & IMB_WV_ZERO_VRUNTIME);
	if (w->vflags & IMB_WV_SUMS) {
		int64_t avg = w->sum_w_vruntime;
		int64_t load = (int64_t)w->sum_weight;

		if (w->vflags & IMB_WV_CURR) {
			/* scale_load_down() on 64-bit, at least 2 when non-zero */
			int64_t wt = (int64_t)(w->curr_weight >> 10);

			if (w->curr_weight && wt < 2)
				wt = 2;
			avg += (int64_t)(w->curr_vruntime - w->vruntime_ref) * wt;
			load += wt;
		}
		if (load)
			avg = div_floor(avg, load);
		ev->vruntime.avg_vruntime = (int64_t)(w->vruntime_ref + (uint64_t)avg);
	}
	return 1;
}

/* A queue's PELT record, then for the root queue its vruntime event too. */
static int wire_pelt_cfs(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
			 size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_pelt_cfs, w);

	if (!(ev = event_begin(s, h, IMB_EV_PELT_CFS)))
		return -ENOMEM;
	ev->pelt_cfs.cgroup_id = w.cgroup_id;
	ev->pelt_cfs.root = w.root ? 1 : 0;
	ev->pelt_cfs.nr_queued = w.nr_queued;
	ev->pelt_cfs.h_nr_queued = w.h_nr_queued;
	ev->pelt_cfs.h_nr_runnable = w.h_nr_runnable;
	ev->pelt_cfs.parent_id = w.parent_id;
	avg_copy(ev, &w.avg, true);
	heap_push_commit(s);
	if (!w.root || !(s->attached & SOURCE_BPF_EV(IMB_EV_VRUNTIME)))
		return 0;
	return wire_vruntime(s, h, &w);
}

static int wire_pelt_se(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
			size_t size)
{
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_pelt_se, w);

	if (!(ev = event_begin(s, h, IMB_EV_PELT_SE)))
		return -ENOMEM;
	ev->pelt_se.pid = (int32_t)w.pid;
	ev->pelt_se.tgid = (int32_t)w.tgid;
	ev->pelt_se.cgroup_id = w.cgroup_id;
	ev->pelt_se.parent_id = w.parent_id;
	avg_copy(ev, &w.avg, false);
	return 1;
}

static int wire_numa(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
		     size_t size)
{
	static const uint16_t kinds[] = {
		[IMB_W_NUMA_MOVE] = IMB_EV_NUMA_MOVE,
		[IMB_W_NUMA_SWAP] = IMB_EV_NUMA_SWAP,
		[IMB_W_NUMA_STICK] = IMB_EV_NUMA_STICK,
	};
	struct imb_event *ev;
	WIRE_BODY(struct imb_w_numa, w);

	if (!(ev = event_begin(s, h, kinds[h->kind])))
		return -ENOMEM;
	ev->numa.src_pid = w.src_pid;
	ev->numa.src_tgid = w.src_tgid;
	ev->numa.src_ngid = w.src_ngid;
	ev->numa.src_cpu = w.src_cpu;
	ev->numa.src_nid = node_of(s, w.src_cpu);
	ev->numa.dst_pid = w.dst_pid;
	ev->numa.dst_tgid = w.dst_tgid;
	ev->numa.dst_ngid = w.dst_ngid;
	ev->numa.dst_cpu = w.dst_cpu;
	ev->numa.dst_nid = node_of(s, w.dst_cpu);
	return 1;
}

/* Not an event: the path goes to the table, the record ends here. */
static int wire_group_path(struct source_bpf *s, const struct imb_wire_hdr *h, const void *data,
			   size_t size)
{
	WIRE_BODY(struct imb_w_group_path, w);

	(void)h;
	group_path_store(s, &w);
	return 0;
}
#undef WIRE_BODY

/* One ring record into the reorder buffer: 0, or -ENOMEM. */
static int record_convert(struct source_bpf *s, const void *data, size_t size)
{
	struct imb_wire_hdr h;
	int rc;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, data, sizeof(h));
	switch (h.kind) {
	case IMB_W_SWITCH:
		rc = wire_switch(s, &h, data, size);
		break;
	case IMB_W_WAKEUP:
	case IMB_W_WAKEUP_NEW:
	case IMB_W_WAKING:
		rc = wire_wakeup(s, &h, data, size);
		break;
	case IMB_W_MIGRATE:
		rc = wire_migrate(s, &h, data, size);
		break;
	case IMB_W_FORK:
		rc = wire_fork(s, &h, data, size);
		break;
	case IMB_W_EXIT:
		rc = wire_exit(s, &h, data, size);
		break;
	case IMB_W_RUNTIME:
		rc = wire_runtime(s, &h, data, size);
		break;
	case IMB_W_PELT_CFS:
		rc = wire_pelt_cfs(s, &h, data, size);
		break;
	case IMB_W_PELT_SE:
		rc = wire_pelt_se(s, &h, data, size);
		break;
	case IMB_W_NUMA_MOVE:
	case IMB_W_NUMA_SWAP:
	case IMB_W_NUMA_STICK:
		rc = wire_numa(s, &h, data, size);
		break;
	case IMB_W_GROUP_PATH:
		rc = wire_group_path(s, &h, data, size);
		break;
	default:
		rc = 0;
		break;
	}
	if (rc > 0)
		heap_push_commit(s);
	return rc < 0 ? rc : 0;
}

/*
 * libbpf reads a ring until it is empty, so under a load that writes as
 * fast as the reader reads, one ring_buffer__poll() would not return for
 * as long as the load lasts: nothing delivered, no window closed, the
 * reorder buffer growing by a ring's worth of records a second, reservation
 * failures counted only at the end.  Each poll reads at most
 * SOURCE_BPF_POLL_BUDGET records; the callback's negative return stops
 * libbpf after it has consumed this record.
 */
#define RING_YIELD	(-EINPROGRESS)

static int ring_sample(void *ctx, void *data, size_t size)
{
	struct source_bpf *s = ctx;
	int ret;

	s->records++;
	if (size >= sizeof(struct imb_wire_hdr)) {
		const struct imb_wire_hdr *h = data;

		if (h->ts_ns > s->max_ts)
			s->max_ts = h->ts_ns;
		if (h->flags & IMB_WF_HOOK)
			s->hook_records++;
	}
	ret = record_convert(s, data, size);
	if (ret < 0) {
		s->err = ret;
		return ret;	/* stops ring_buffer__poll/consume */
	}
	if (s->budget && --s->budget == 0) {
		s->yielded = true;
		return RING_YIELD;
	}
	return 0;
}

/*
 * Runs of the loaded programs the kernel skipped so far: a tracepoint that
 * fires while the same program runs on that CPU (an interrupt inside it)
 * is not run again but counted in the program's recursion_misses.  Those
 * events never reach the ring.
 */
static uint64_t programs_skipped(const struct source_bpf *s)
{
	struct bpf_program *p;
	uint64_t n = 0;

	bpf_object__for_each_program(p, s->skel->obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

/*
 * New skipped runs (programs_skipped()) as one IMB_EV_LOST stamped @now,
 * read at most once a second unless @force.
 */
static int skipped_collect(struct source_bpf *s, uint64_t now, bool force)
{
	struct imb_event *ev;
	uint64_t n;

	if (!force && now - s->skipped_read_ns < 1000000000ull)
		return 0;
	s->skipped_read_ns = now;
	n = programs_skipped(s);
	if (n <= s->skipped)
		return 0;
	ev = heap_slot(s);
	if (!ev)
		return -ENOMEM;
	ev->ts_ns = now;
	ev->cpu = 0;
	ev->kind = IMB_EV_LOST;
	ev->lost.count = n - s->skipped;
	ev->lost.skipped = 1;
	heap_push_commit(s);
	s->lost += n - s->skipped;
	s->skipped = n;
	return 0;
}

/* Turn new reservation failures into IMB_EV_LOST events stamped @now. */
static int drops_collect(struct source_bpf *s, uint64_t now)
{
	uint32_t key = 0;
	int cpu;

	if (bpf_map__lookup_elem(s->skel->maps.drops, &key, sizeof(key), s->drop_vals,
				 sizeof(uint64_t) * s->nr_cpus, 0))
		return -errno;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		uint64_t d = s->drop_vals[cpu] - s->lost_cpu[cpu];
		struct imb_event *ev;

		if (!d)
			continue;
		s->lost_cpu[cpu] = s->drop_vals[cpu];
		s->lost += d;
		ev = heap_slot(s);
		if (!ev)
			return -ENOMEM;
		ev->ts_ns = now;
		ev->cpu = cpu;
		ev->kind = IMB_EV_LOST;
		ev->lost.count = d;
		ev->lost.marked = 1;	/* the CPU's next record carries IMB_WF_GAP */
		heap_push_commit(s);
	}
	return 0;
}

/* Deliver held events with ts <= @until. */
static int deliver(struct source_bpf *s, uint64_t until, imb_event_fn fn, void *ctx)
{
	int n = 0, ret;

	while (s->nr_held && s->heap[s->head].ev.ts_ns <= until) {
		/* @fn gets the event where it is held: @fn never reaches the buffer */
		struct imb_event *ev = &s->heap[s->head].ev;

		if (ev->ts_ns < s->last_ts) {
			/* Held longer than the window: keep the stream ordered. */
			s->late++;
			ev->ts_ns = s->last_ts;
		}
		s->last_ts = ev->ts_ns;
		s->events++;
		n++;
		ret = fn(ev, ctx);
		heap_pop(s);
		if (ret < 0)
			return ret;
	}
	heap_shrink(s);
	return n;
}

int source_bpf_poll(struct source_bpf *s, int timeout_ms, imb_event_fn fn, void *ctx)
{
	uint64_t now, until;
	int ret;

	s->budget = SOURCE_BPF_POLL_BUDGET;
	s->yielded = false;
	ret = ring_buffer__poll(s->rb, timeout_ms);
	if (ret < 0 && ret != -EINTR && ret != RING_YIELD && !s->err)
		return ret;
	/* Everything stamped before now is committed and read by the consume below. */
	now = mono_ns();
	if (!s->yielded && !s->err)
		ret = ring_buffer__consume(s->rb);
	if (s->err) {
		ret = s->err;
		s->err = 0;
		return ret;
	}
	if (ret < 0 && ret != -EINTR && ret != RING_YIELD)
		return ret;
	ret = drops_collect(s, now);
	if (ret >= 0)
		ret = skipped_collect(s, now, false);
	if (ret < 0)
		return ret;
	/*
	 * Stopped by the budget, the ring still holds records stamped up to
	 * now; those not yet read were reserved after the newest one read, so
	 * (within the reorder window) none is older than it.
	 */
	s->poll_peak = s->nr_held;
	until = s->yielded && s->max_ts < now ? s->max_ts : now;
	until = until > s->reorder_ns ? until - s->reorder_ns : 0;
	if (until > s->watermark)
		s->watermark = until;
	return deliver(s, until, fn, ctx);
}

uint64_t source_bpf_watermark(const struct source_bpf *s)
{
	return s->watermark;
}

int source_bpf_flush(struct source_bpf *s, imb_event_fn fn, void *ctx)
{
	int ret;

	s->budget = 0;	/* no budget: read the ring to its end */
	s->yielded = false;
	ring_buffer__consume(s->rb);
	if (s->err) {
		ret = s->err;
		s->err = 0;
		return ret;
	}
	ret = drops_collect(s, mono_ns());
	if (ret >= 0)
		ret = skipped_collect(s, mono_ns(), true);
	if (ret < 0)
		return ret;
	return deliver(s, UINT64_MAX, fn, ctx);
}

void source_bpf_stats(const struct source_bpf *s, struct source_bpf_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->events = s->events;
	st->records = s->records;
	st->lost = s->lost;
	st->skipped = s->skipped;
	st->late = s->late;
	st->unreported = s->unreported;
	st->group_paths = s->group_paths;
	st->group_paths_bad = s->group_paths_bad;
	st->held = s->nr_held;
	st->held_bytes = s->cap_held * sizeof(*s->heap);
	st->nr_cpus = s->nr_cpus;
	st->lost_cpu = s->lost_cpu;
	st->attached = s->attached;
	st->hook_records = s->hook_records;
}

void source_bpf_pelt_hook(const struct source_bpf *s, struct pelt_hook_status *st)
{
	*st = s->hook;
}

void source_bpf_info(const struct source_bpf *s, struct source_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->format, sizeof(info->format), "bpf");
	snprintf(info->clock, sizeof(info->clock), "mono");
	info->nr_cpus = s->nr_cpus;
	info->events = s->events;
	info->lost_events = s->lost;
}

void source_bpf_close(struct source_bpf *s)
{
	if (!s)
		return;
	ring_buffer__free(s->rb);
	imbalance__destroy(s->skel);
	free(s->heap);
	free(s->lost_cpu);
	free(s->drop_vals);
	free(s);
}

/* ---- opening ---- */

struct node_ctx {
	int16_t *map;
	int node;
};

static void node_mark(int cpu, void *ctx)
{
	struct node_ctx *c = ctx;

	if (cpu >= 0 && cpu < NODE_MAP_MAX)
		c->map[cpu] = (int16_t)c->node;
}

static void nodes_read(struct source_bpf *s)
{
	glob_t g;
	size_t i;

	for (i = 0; i < NODE_MAP_MAX; i++)
		s->node_of[i] = -1;
	if (glob("/sys/devices/system/node/node[0-9]*/cpulist", 0, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		struct node_ctx c = { s->node_of, -1 };
		char buf[4096];
		FILE *f;

		if (sscanf(g.gl_pathv[i], "/sys/devices/system/node/node%d/", &c.node) != 1)
			continue;
		f = fopen(g.gl_pathv[i], "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f))
			hostinfo_cpulist_parse(buf, node_mark, &c);
		fclose(f);
	}
	globfree(&g);
}

/* One program per tracepoint; the kind it produces. */
static const struct {
	const char *prog;		/* program name in imbalance.bpf.c */
	const char *tp;			/* tracepoint (BTF typedef btf_trace_<tp>) */
	unsigned int ev;		/* enum imb_ev_kind */
	unsigned int wire;		/* enum imb_wire_kind */
	bool required;
} prog_table[] = {
	{ "imb_switch", "sched_switch", IMB_EV_SWITCH, IMB_W_SWITCH, true },
	{ "imb_sched_exit", "sched_exit_tp", IMB_EV_SWITCH, IMB_W_SWITCH, false },
	{ "imb_pelt_cfs", "pelt_cfs_tp", IMB_EV_PELT_CFS, IMB_W_PELT_CFS, false },
	{ "imb_pelt_se", "pelt_se_tp", IMB_EV_PELT_SE, IMB_W_PELT_SE, false },
	{ "imb_wakeup", "sched_wakeup", IMB_EV_WAKEUP, IMB_W_WAKEUP, false },
	{ "imb_wakeup_new", "sched_wakeup_new", IMB_EV_WAKEUP_NEW, IMB_W_WAKEUP_NEW, false },
	{ "imb_waking", "sched_waking", IMB_EV_WAKING, IMB_W_WAKING, false },
	{ "imb_migrate", "sched_migrate_task", IMB_EV_MIGRATE, IMB_W_MIGRATE, false },
	{ "imb_fork", "sched_process_fork", IMB_EV_FORK, IMB_W_FORK, false },
	{ "imb_exit", "sched_process_exit", IMB_EV_EXIT, IMB_W_EXIT, false },
	{ "imb_runtime", "sched_stat_runtime", IMB_EV_RUNTIME, IMB_W_RUNTIME, false },
	{ "imb_timer_entry", "hrtimer_expire_entry", IMB_EV_RUNTIME, IMB_W_RUNTIME, false },
	{ "imb_timer_exit", "hrtimer_expire_exit", IMB_EV_RUNTIME, IMB_W_RUNTIME, false },
	{ "imb_numa_move", "sched_move_numa", IMB_EV_NUMA_MOVE, IMB_W_NUMA_MOVE, false },
	{ "imb_numa_swap", "sched_swap_numa", IMB_EV_NUMA_SWAP, IMB_W_NUMA_SWAP, false },
	{ "imb_numa_stick", "sched_stick_numa", IMB_EV_NUMA_STICK, IMB_W_NUMA_STICK, false },
};

/* The function prototype behind typedef btf_trace_<tp>, or NULL. */
static const struct btf_type *tp_proto(const struct btf *btf, const char *tp)
{
	const struct btf_type *t;
	char name[64];
	int id;

	snprintf(name, sizeof(name), "btf_trace_%s", tp);
	id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id < 0)
		return NULL;
	t = btf__type_by_id(btf, id);		/* typedef -> pointer -> func_proto */
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

static uint32_t pow2_round(uint32_t v)
{
	uint32_t r = 64 * 1024;

	while (r < v && r < (1u << 30))
		r <<= 1;
	return r;
}

/* The kernel can run the programs: BTF to relocate against, the right to load. */
static int bpf_check_host(char *err)
{
	uint64_t capeff = 0;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		err_set(err, "kernel has no BTF (/sys/kernel/btf/vmlinux)");
		return -ENOENT;
	}
	if (!hostinfo_cap_effective(&capeff) &&
	    !(capeff & (1ull << 21)) &&
	    !((capeff & (1ull << 39)) && (capeff & (1ull << 38)))) {
		err_set(err, "BPF not permitted: need CAP_BPF and CAP_PERFMON");
		return -EPERM;
	}
	return 0;
}

/* The source's state before any program: the CPUs, NUMA nodes, counters. */
static int bpf_state_init(struct source_bpf *s, const struct source_bpf_opts *o, char *err)
{
	int ret;

	s->reorder_ns = o->reorder_ns ? o->reorder_ns : SOURCE_BPF_REORDER_DEFAULT;
	nodes_read(s);
	ret = libbpf_num_possible_cpus();
	if (ret <= 0) {
		err_set(err, "cannot count possible CPUs");
		return ret < 0 ? ret : -EINVAL;
	}
	s->nr_cpus = ret;
	s->lost_cpu = calloc(s->nr_cpus, sizeof(uint64_t));
	s->drop_vals = calloc(s->nr_cpus, sizeof(uint64_t));
	if (!s->lost_cpu || !s->drop_vals) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/*
 * Mark which programs of the opened skeleton load: those of the @want kinds
 * whose tracepoint the kernel has.  Returns the wire records they send
 * (IMB_W_BIT() mask) in *@mask, 0 or -errno.
 */
static int bpf_pick_programs(struct source_bpf *s, const struct btf *btf, uint32_t want,
			     uint32_t *mask, char *err)
{
	for (size_t i = 0; i < sizeof(prog_table) / sizeof(prog_table[0]); i++) {
		struct bpf_program *p;
		const struct btf_type *proto = tp_proto(btf, prog_table[i].tp);
		bool on = proto && (want & SOURCE_BPF_EV(prog_table[i].ev));

		if (!proto && prog_table[i].required) {
			err_set(err, "kernel has no %s tracepoint in its BTF",
				prog_table[i].tp);
			return -ENOENT;
		}
		p = bpf_object__find_program_by_name(s->skel->obj, prog_table[i].prog);
		if (!p) {
			err_set(err, "BPF object lacks program %s",
				prog_table[i].prog);
			return -ENOENT;
		}
		bpf_program__set_autoload(p, on);
		if (!on)
			continue;
		*mask |= IMB_W_BIT(prog_table[i].wire);
		s->attached |= SOURCE_BPF_EV(prog_table[i].ev);
		/* 5.18 appended prev_state: (void *, bool, prev, next, unsigned int) */
		if (!strcmp(prog_table[i].tp, "sched_switch"))
			s->skel->rodata->switch_has_state_arg = btf_vlen(proto) >= 5;
	}
	return 0;
}

/* The update_load_avg() hook program: loads with the others when *@hook_on. */
static struct bpf_program *bpf_pick_hook(struct source_bpf *s, bool *hook_on)
{
	struct bpf_program *hook = bpf_object__find_program_by_name(s->skel->obj, "imb_ula_exit");

	if (hook) {
		/* attached by hand after the others: a refusal there is not an error */
		bpf_program__set_autoload(hook, *hook_on);
		bpf_program__set_autoattach(hook, false);
	} else if (*hook_on) {
		*hook_on = s->hook.usable = false;
		snprintf(s->hook.reason, sizeof(s->hook.reason), "the BPF object has no imb_ula_exit");
	}
	return hook;
}

/* The programs' settings (read-only data) and the ring buffer's size, @ring bytes. */
static int bpf_configure(struct source_bpf *s, const struct source_bpf_opts *o, uint32_t want,
			 uint32_t mask, uint32_t ring, char *err)
{
	int ret;

	if ((s->attached & SOURCE_BPF_EV(IMB_EV_PELT_CFS)) &&
	    (want & SOURCE_BPF_EV(IMB_EV_VRUNTIME)))
		s->attached |= SOURCE_BPF_EV(IMB_EV_VRUNTIME);
	/* the paths of task groups ride on pelt_cfs_tp, for a table to keep them */
	s->names = o->group_names;
	if ((mask & IMB_W_BIT(IMB_W_PELT_CFS)) && s->names)
		mask |= IMB_W_BIT(IMB_W_GROUP_PATH);
	s->skel->rodata->group_path_interval_ns = o->group_path_interval_ns;
	s->skel->rodata->events_mask = mask;
	s->skel->rodata->pelt_se_min_interval_ns = o->pelt_se_min_interval_ns;
	s->skel->rodata->runtime_all = o->runtime_all;
	if (o->wakeup_bytes != UINT32_MAX) {
		uint32_t wb = o->wakeup_bytes ? o->wakeup_bytes : SOURCE_BPF_WAKEUP_DEFAULT;

		/*
		 * The reader must wake well before the ring is full.  Below
		 * the threshold its 100 ms poll timeout collects the data:
		 * under a message-passing load (10 MB/s of records) 1 MiB
		 * means a dozen wake-ups a second instead of 64 KiB's 150,
		 * and a quarter less of the daemon's CPU (a batch keeps the
		 * model's and analyzers' tables in cache).
		 */
		s->skel->rodata->wakeup_bytes = wb < ring / 4 ? wb : ring / 4;
	}
	s->skel->rodata->ring_half = ring / 2;
	ret = bpf_map__set_max_entries(s->skel->maps.events, ring);
	if (ret)
		err_set(err, "cannot size the ring buffer: %s", strerror(-ret));
	return ret;
}

/*
 * Open the skeleton, choose and set up its programs and load them.  When
 * the hook program keeps the others from loading, it is left out and the
 * rest loads as ever (the probe loaded it alone).  Returns 0 with *@hook
 * (NULL: none), or -errno.
 */
static int bpf_load(struct source_bpf *s, const struct btf *btf, const struct source_bpf_opts *o,
		    uint32_t want, bool *hook_on, struct bpf_program **hook, char *err)
{
	uint32_t ring = pow2_round(o->ringbuf_bytes ? o->ringbuf_bytes : SOURCE_BPF_RINGBUF_DEFAULT);
	uint32_t mask;
	int ret;

	for (;;) {
		mask = 0;
		s->attached = 0;
		s->skel = imbalance__open();
		if (!s->skel) {
			ret = -errno;
			err_set(err, "cannot open the BPF object: %s",
				libbpf_last[0] ? libbpf_last : strerror(-ret));
			return ret;
		}
		ret = bpf_pick_programs(s, btf, want, &mask, err);
		if (ret)
			return ret;
		*hook = bpf_pick_hook(s, hook_on);
		ret = bpf_configure(s, o, want, mask, ring, err);
		if (ret)
			return ret;
		ret = imbalance__load(s->skel);
		if (!ret || !*hook_on)
			break;
		*hook_on = s->hook.usable = false;
		snprintf(s->hook.reason, sizeof(s->hook.reason), "%s at load with the other programs",
			 strerrorname_np(-ret) ? strerrorname_np(-ret) : "error");
		s->hook.err = -ret;
		imbalance__destroy(s->skel);
		s->skel = NULL;
		libbpf_last[0] = '\0';
	}
	if (ret == -EPERM)
		err_set(err, "BPF not permitted: need CAP_BPF and CAP_PERFMON%s%s",
			libbpf_last[0] ? ": " : "", libbpf_last);
	else if (ret)
		err_set(err, "loading the BPF programs failed%s: %s",
			ret == -EACCES ? " (verifier)" : "",
			libbpf_last[0] ? libbpf_last : strerror(-ret));
	return ret;
}

/* Attach the loaded programs (the hook by hand) and map the ring buffer. */
static int bpf_attach(struct source_bpf *s, struct bpf_program *hook, bool hook_on, char *err)
{
	int ret = imbalance__attach(s->skel);

	if (ret) {
		err_set(err, "attaching the BPF programs failed: %s",
			libbpf_last[0] ? libbpf_last : strerror(-ret));
		return ret;
	}
	if (hook_on) {
		/* the skeleton destroys the link with the others */
		s->skel->links.imb_ula_exit = bpf_program__attach(hook);
		if (!s->skel->links.imb_ula_exit) {
			s->hook.usable = false;
			s->hook.err = errno;
			snprintf(s->hook.reason, sizeof(s->hook.reason), "%s at attach",
				 strerrorname_np(errno) ? strerrorname_np(errno) : "error");
		}
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), ring_sample, s, NULL);
	if (!s->rb) {
		ret = -errno;
		err_set(err, "cannot map the ring buffer: %s", strerror(-ret));
	}
	return ret;
}

struct source_bpf *source_bpf_open(const struct source_bpf_opts *opts, char *err)
{
	struct source_bpf_opts o = { 0 };
	struct source_bpf *s = NULL;
	struct bpf_program *hook = NULL;
	struct btf *btf = NULL;
	bool hook_on = false;
	uint32_t want;
	int ret;

	if (opts)
		o = *opts;
	want = o.events ? o.events : ~0u;
	libbpf_set_print(libbpf_print_capture);
	libbpf_last[0] = '\0';

	ret = bpf_check_host(err);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		ret = -errno;
		err_set(err, "cannot read kernel BTF: %s", strerror(-ret));
		errno = -ret;
		return NULL;
	}

	s = calloc(1, sizeof(*s));
	if (!s) {
		ret = -ENOMEM;
		err_set(err, "out of memory");
		goto fail;
	}
	ret = bpf_state_init(s, &o, err);
	if (ret)
		goto fail;
	/* the update_load_avg() hook, where the kernel takes it (pelt_hook.h) */
	if (want & (SOURCE_BPF_EV(IMB_EV_PELT_CFS) | SOURCE_BPF_EV(IMB_EV_PELT_SE))) {
		pelt_hook_probe(&s->hook);
		hook_on = s->hook.usable;
	} else {
		snprintf(s->hook.reason, sizeof(s->hook.reason), "PELT events not asked for");
	}
	ret = bpf_load(s, btf, &o, want, &hook_on, &hook, err);
	if (!ret)
		ret = bpf_attach(s, hook, hook_on, err);
	if (ret)
		goto fail;
	btf__free(btf);
	return s;

fail:
	btf__free(btf);
	source_bpf_close(s);
	errno = ret < 0 ? -ret : EINVAL;
	return NULL;
}

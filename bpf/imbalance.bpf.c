// SPDX-License-Identifier: GPL-2.0-only
/*
 * imbalance.bpf.c - the kernel side of imbalanced's live source.
 *
 * tp_btf programs on the scheduler's tracepoints (sched_switch, wakeups,
 * migrations, fork/exit, sched_stat_runtime, the NUMA ones), on the bare
 * PELT tracepoints (pelt_cfs_tp, pelt_se_tp), optionally an fexit hook on
 * update_load_avg() that writes the same PELT records, and on sched_exit_tp to
 * recover context switches the kernel did not report; pelt_cfs_tp also sends,
 * at most once per group per interval, a task group's cgroup path
 * (IMB_W_GROUP_PATH).  Each writes one wire record
 * (imbalance.h) into a single ring buffer: a monotonic timestamp, the CPU,
 * the run queue's own clocks (clock_task, clock_pelt, lost_idle_time) and
 * the event's fields.  Field renames across kernels are resolved with CO-RE
 * (core_fixes.bpf.h).  Knobs are read-only globals set by the loader between
 * open and load, so the verifier prunes what is switched off.  A failed ring
 * buffer reservation is counted per CPU in `drops`, and the next record
 * that CPU commits is marked (IMB_WF_GAP); every program returns 0.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "core_fixes.bpf.h"
#include "imbalance.h"

char LICENSE[] SEC("license") = "GPL";

/* Knobs, set by daemon/source/bpf.c before load. */
const volatile __u32 events_mask = IMB_W_ALL;		/* IMB_W_BIT(kind) */
const volatile __u64 pelt_se_min_interval_ns = 0;	/* per task; 0: no limit */
const volatile __u32 runtime_all = 0;			/* 0: sched_stat_runtime at the tick only */
const volatile __u32 switch_has_state_arg = 1;		/* 5.18+: 4th arg prev_state */
const volatile __u64 wakeup_bytes = 0;			/* wake the reader at this fill; 0: always */
const volatile __u64 ring_half = 0;			/* half the ring's size */
const volatile __u64 group_path_interval_ns = 10000000000ull;	/* per group; 0: once */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);			/* resized by the loader */
} events SEC(".maps");

/* Reservations that failed, per CPU (key 0). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

/*
 * Per executing CPU: a reservation failed since its last committed record.
 * The next record committed there carries IMB_WF_GAP, so the reader knows
 * where in the stream events went missing, not only how many (drops).  A
 * global array: a plain load on the commit path, no map lookup.
 */
__u8 gap_pending[IMB_GAP_CPUS];

/* The task each CPU switched to last (sched_switch), to spot unreported switches. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_curr SEC(".maps");

/*
 * Per CPU: 0 no hrtimer expiry seen yet, 1 outside one, 2 inside one (the
 * scheduler tick runs from an hrtimer): marks sched_stat_runtime records.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} in_timer SEC(".maps");

/* Last pelt_se record sent per task, for the rate limit. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} se_last SEC(".maps");

/* When each group's path was last sent (IMB_W_GROUP_PATH), by imb_tg_id(). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} group_path_last SEC(".maps");

/* A task_struct layout without thread_info in the task (no THREAD_INFO_IN_TASK). */
struct task_struct___cpu {
	unsigned int cpu;
};

static __always_inline bool imb_on(unsigned int kind)
{
	return events_mask & IMB_W_BIT(kind);
}

static __always_inline void *imb_reserve(__u64 size)
{
	void *rec = bpf_ringbuf_reserve(&events, size, 0);

	if (!rec) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&drops, &zero);

		if (n)
			*n += 1;	/* per-CPU slot: no other writer */
		gap_pending[bpf_get_smp_processor_id() & (IMB_GAP_CPUS - 1)] = 1;
	}
	return rec;
}

/*
 * Commit @rec of @size bytes, marked IMB_WF_GAP when a reservation on this
 * CPU failed since its last commit.  A wake-up per record would make the reader's
 * own switches a good part of the load, and forcing one on every record once
 * the reader is behind floods irq_work: wake it only when this record
 * crosses wakeup_bytes or half the ring; below that the reader's poll
 * timeout collects the data.
 */
static __always_inline void imb_submit(void *rec, __u64 size)
{
	__u32 cpu = bpf_get_smp_processor_id() & (IMB_GAP_CPUS - 1);
	__u64 flags = 0;

	if (gap_pending[cpu]) {
		gap_pending[cpu] = 0;
		((struct imb_wire_hdr *)rec)->flags |= IMB_WF_GAP;
	}

	if (wakeup_bytes) {
		__u64 avail = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
		__u64 half = ring_half;

		flags = BPF_RB_NO_WAKEUP;
		if ((avail >= wakeup_bytes && avail - size < wakeup_bytes) ||
		    (avail >= half && avail - size < half))
			flags = BPF_RB_FORCE_WAKEUP;
	}
	bpf_ringbuf_submit(rec, flags);
}

/* Fill the common header from @rq (may be NULL: no clocks). */
static __always_inline void imb_hdr_fill(struct imb_wire_hdr *h, unsigned int kind,
					 struct rq *rq, __u32 cpu)
{
	h->ts_ns = bpf_ktime_get_ns();
	h->cpu = cpu;
	h->kind = kind;
	h->flags = 0;
	h->clock_task = 0;
	h->clock_pelt = 0;
	h->lost_idle_time = 0;
	if (!rq)
		return;
	/*
	 * clock_pelt first: a concurrent update then cannot make it pass
	 * clock_task.  @rq is a BTF pointer (loaded from a tracepoint
	 * argument): plain loads.
	 */
	h->clock_pelt = rq->clock_pelt;
	h->clock_task = rq->clock_task;
	h->flags = IMB_WF_CLOCKS;
	if (bpf_core_field_exists(rq->lost_idle_time)) {
		h->lost_idle_time = rq->lost_idle_time;
		h->flags |= IMB_WF_LOST_IDLE;
	}
}

static __always_inline __u32 imb_task_cpu(struct task_struct *p)
{
	if (bpf_core_field_exists(p->thread_info.cpu))
		return p->thread_info.cpu;
	return ((struct task_struct___cpu *)p)->cpu;
}

/* The cgroup id of a task group; autogroups get IMB_AUTOGROUP_MARK | id. */
static __always_inline __u64 imb_tg_id(struct task_group *tg)
{
	struct cgroup *cg;

	if (!tg)
		return 0;
	cg = tg->css.cgroup;
	if (cg)
		return cg->kn->id;
	if (bpf_core_field_exists(tg->autogroup)) {
		struct autogroup *ag = tg->autogroup;

		if (ag)
			return IMB_AUTOGROUP_MARK | (__u64)ag->id;
	}
	return 0;
}

/* A task group for next_group/parent_id: IMB_WG_ROOT for the root group. */
static __always_inline __u64 imb_tg_wire_id(struct task_group *tg)
{
	if (!tg)
		return 0;
	if (!tg->parent)
		return IMB_WG_ROOT;
	return imb_tg_id(tg);
}

/* The task group of the cfs_rq @se is queued on (group scheduling: cfs_rq->tg). */
static __always_inline __u64 imb_se_parent_group(struct sched_entity *se)
{
	struct cfs_rq *cfs_rq = NULL;	/* its type names the field checked below */

	if (!bpf_core_field_exists(se->cfs_rq) || !bpf_core_field_exists(cfs_rq->tg))
		return 0;
	cfs_rq = se->cfs_rq;
	if (!cfs_rq)
		return 0;
	return imb_tg_wire_id(cfs_rq->tg);
}

/* @sa points into a BTF-typed cfs_rq or sched_entity: plain (fault-safe) loads. */
static __always_inline void imb_avg_read(struct imb_w_avg *o, struct sched_avg *sa)
{
	o->last_update_time = sa->last_update_time;
	o->load_sum = sa->load_sum;
	o->runnable_sum = sa->runnable_sum;
	o->util_sum = sa->util_sum;
	o->period_contrib = sa->period_contrib;
	o->load_avg = sa->load_avg;
	o->runnable_avg = sa->runnable_avg;
	o->util_avg = sa->util_avg;
}

/* The rq owning @cfs_rq: cfs_rq->rq, or the enclosing rq without group scheduling. */
static __always_inline struct rq *imb_cfs_rq_rq(struct cfs_rq *cfs_rq)
{
	if (bpf_core_field_exists(cfs_rq->rq))
		return cfs_rq->rq;
	return (struct rq *)((void *)cfs_rq - bpf_core_field_offset(struct rq, cfs));
}

/*
 * The rq of @p's CPU, through p->se.cfs_rq, which set_task_rq() keeps
 * pointing at the task's CPU for every scheduling class (the idle task
 * included).  Not through bpf_this_cpu_ptr(&runqueues): a per-CPU ksym needs
 * the symbol in kallsyms, which kernels without CONFIG_KALLSYMS_ALL (this
 * one) do not list.  Without group scheduling there is no se.cfs_rq: NULL.
 */
static __always_inline struct rq *imb_task_rq(struct task_struct *p)
{
	struct cfs_rq *cfs_rq;

	if (!p || !bpf_core_field_exists(p->se.cfs_rq))
		return NULL;
	cfs_rq = p->se.cfs_rq;
	return cfs_rq ? imb_cfs_rq_rq(cfs_rq) : NULL;
}

/*
 * imb_group_path_emit - send the cgroup path of group @tg (id @id), rate
 * limited per group.  Only for groups with a cgroup: autogroups have none.
 * The walk goes up kn->parent from the group's node and stops below the
 * hierarchy's root node (parent NULL, its name empty): at most IMB_GP_DEPTH
 * names, the loop bounded for the verifier.
 */
static __always_inline void imb_group_path_emit(struct task_group *tg, __u64 id, __u64 parent_id)
{
	struct imb_w_group_path *r;
	struct kernfs_node *kn, *up;
	struct cgroup *cg;
	__u64 now, *last;
	__u32 n = 0;
	int i;

	if (!id || (id & IMB_AUTOGROUP_MARK))
		return;
	now = bpf_ktime_get_ns();
	last = bpf_map_lookup_elem(&group_path_last, &id);
	if (last && (!group_path_interval_ns || now - *last < group_path_interval_ns))
		return;
	cg = BPF_CORE_READ(tg, css.cgroup);
	if (!cg)
		return;
	kn = BPF_CORE_READ(cg, kn);
	if (!kn)
		return;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return;
	bpf_map_update_elem(&group_path_last, &id, &now, BPF_ANY);
	imb_hdr_fill(&r->h, IMB_W_GROUP_PATH, NULL, bpf_get_smp_processor_id());
	r->id = id;
	r->parent_id = parent_id;
	r->flags = BPF_CORE_READ(cg, root, hierarchy_id) == 0 ? IMB_GPF_DFL : 0;
	for (i = 0; i < IMB_GP_DEPTH; i++) {
		const char *name;
		long len;

		up = imb_kn_parent(kn);
		if (!up)
			break;		/* kn is the root: not a path component */
		name = BPF_CORE_READ(kn, name);
		len = bpf_probe_read_kernel_str(r->names[i], IMB_GP_NAME_LEN, name);
		if (len < 0)
			r->names[i][0] = '\0';
		else if (len == IMB_GP_NAME_LEN)
			r->flags |= IMB_GPF_NAME_CUT;
		n = i + 1;
		kn = up;
	}
	if (i == IMB_GP_DEPTH && imb_kn_parent(kn))
		r->flags |= IMB_GPF_TRUNCATED;
	r->nr_names = n;
	imb_submit(r, sizeof(*r));
}

/*
 * imb_pelt_cfs_emit - one IMB_W_PELT_CFS record of @cfs_rq's averages now
 * @hflags: extra IMB_WF_* bits (IMB_WF_HOOK from the update_load_avg() hook)
 *
 * Shared by the pelt_cfs_tp program and the fexit hook, so both feed the
 * same stream with the same record.
 */
static __always_inline int imb_pelt_cfs_emit(struct cfs_rq *cfs_rq, __u16 hflags)
{
	struct imb_w_pelt_cfs *r;
	struct sched_entity *curr;
	struct task_group *tg = NULL;
	struct rq *rq;
	int is_zero = 0;

	if (!imb_on(IMB_W_PELT_CFS) || !cfs_rq)
		return 0;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	rq = imb_cfs_rq_rq(cfs_rq);
	imb_hdr_fill(&r->h, IMB_W_PELT_CFS, rq, rq->cpu);
	r->h.flags |= hflags;

	r->root = 1;
	r->cgroup_id = 0;
	if (bpf_core_field_exists(cfs_rq->tg)) {
		tg = cfs_rq->tg;

		if (tg && tg->parent) {
			r->root = 0;
			r->cgroup_id = imb_tg_id(tg);
		}
		r->parent_id = r->root ? 0 : imb_tg_wire_id(tg->parent);
	} else {
		r->parent_id = 0;
	}
	r->nr_queued = imb_cfs_nr_queued(cfs_rq);
	r->h_nr_queued = imb_cfs_h_nr_queued(cfs_rq);
	r->h_nr_runnable = imb_cfs_h_nr_runnable(cfs_rq);
	imb_avg_read(&r->avg, &cfs_rq->avg);

	r->vflags = 0;
	r->vruntime_ref = imb_cfs_vruntime_ref(cfs_rq, &is_zero);
	if (is_zero)
		r->vflags |= IMB_WV_ZERO_VRUNTIME;
	r->sum_w_vruntime = 0;
	r->sum_weight = 0;
	if (imb_cfs_vsums(cfs_rq, &r->sum_w_vruntime, &r->sum_weight))
		r->vflags |= IMB_WV_SUMS;
	r->curr_vruntime = 0;
	r->curr_weight = 0;
	curr = cfs_rq->curr;
	if (curr && curr->on_rq) {
		r->curr_vruntime = curr->vruntime;
		r->curr_weight = curr->load.weight;
		r->vflags |= IMB_WV_CURR;
	}
	r->pad = 0;
	if (!r->root && imb_on(IMB_W_GROUP_PATH)) {
		__u64 id = r->cgroup_id, parent_id = r->parent_id;

		imb_submit(r, sizeof(*r));
		imb_group_path_emit(tg, id, parent_id);
		return 0;
	}
	imb_submit(r, sizeof(*r));
	return 0;
}

SEC("tp_btf/pelt_cfs_tp")
int BPF_PROG(imb_pelt_cfs, struct cfs_rq *cfs_rq)
{
	return imb_pelt_cfs_emit(cfs_rq, 0);
}

/*
 * imb_pelt_se_emit - one IMB_W_PELT_SE record of @se's averages now
 * @hflags: extra IMB_WF_* bits, as for imb_pelt_cfs_emit()
 */
static __always_inline int imb_pelt_se_emit(struct sched_entity *se, __u16 hflags)
{
	struct imb_w_pelt_se *r;
	struct cfs_rq *my_q = NULL;
	struct rq *rq = NULL;
	__u32 pid = 0, tgid = 0;
	__u64 cgid = 0;
	__u32 cpu;

	if (!imb_on(IMB_W_PELT_SE) || !se)
		return 0;
	if (bpf_core_field_exists(se->my_q))
		my_q = se->my_q;
	if (!my_q) {
		struct task_struct *cur = bpf_get_current_task_btf();

		/*
		 * Most updates are of the running task's own entity (its
		 * dequeue, put_prev, the tick): a BTF pointer, plain loads;
		 * another task is known here only by its address.
		 */
		if ((void *)se == (void *)&cur->se) {
			pid = cur->pid;
			tgid = cur->tgid;
		} else {
			struct task_struct *p = (void *)se -
						bpf_core_field_offset(struct task_struct, se);

			pid = BPF_CORE_READ(p, pid);
			tgid = BPF_CORE_READ(p, tgid);
		}
		if (pelt_se_min_interval_ns) {
			__u64 now = bpf_ktime_get_ns();
			__u64 *last = bpf_map_lookup_elem(&se_last, &pid);

			if (last && now - *last < pelt_se_min_interval_ns)
				return 0;
			bpf_map_update_elem(&se_last, &pid, &now, BPF_ANY);
		}
	} else if (bpf_core_field_exists(my_q->tg)) {
		cgid = imb_tg_id(my_q->tg);
	}
	if (bpf_core_field_exists(se->cfs_rq)) {
		struct cfs_rq *cfs_rq = se->cfs_rq;

		if (cfs_rq)
			rq = imb_cfs_rq_rq(cfs_rq);
	}
	cpu = rq ? rq->cpu : bpf_get_smp_processor_id();

	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, IMB_W_PELT_SE, rq, cpu);
	r->h.flags |= hflags;
	r->pid = pid;
	r->tgid = tgid;
	r->cgroup_id = cgid;
	r->parent_id = imb_se_parent_group(se);
	imb_avg_read(&r->avg, &se->avg);
	imb_submit(r, sizeof(*r));
	return 0;
}

SEC("tp_btf/pelt_se_tp")
int BPF_PROG(imb_pelt_se, struct sched_entity *se)
{
	return imb_pelt_se_emit(se, 0);
}

/*
 * The kernel's values after every update_load_avg(), not only where
 * pelt_cfs_tp/pelt_se_tp fire (those skip an update that crossed no
 * period, and the tracepoints sit in ___update_load_avg()'s callers).
 * fexit sees the entity and its run queue as the update left them.  Not
 * loaded unless the loader finds the function in the kernel's BTF and the
 * kernel lets a tracing program attach to it (BPF trampolines need
 * CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS and may be refused); the
 * tracepoint programs stay attached either way (update_blocked_averages(),
 * attach and detach update outside update_load_avg()).  A copy of the
 * function the compiler inlined into a caller is not seen.
 */
SEC("fexit/update_load_avg")
int BPF_PROG(imb_ula_exit, struct cfs_rq *cfs_rq, struct sched_entity *se, int flags)
{
	imb_pelt_se_emit(se, IMB_WF_HOOK);
	return imb_pelt_cfs_emit(cfs_rq, IMB_WF_HOOK);
}

/*
 * Fill the prev/next task fields of a switch record.  @prev and @next are
 * BTF pointers (tracepoint arguments, or bpf_get_current_task_btf()): plain
 * loads, which the verifier turns into fault-safe ones, are much cheaper
 * than a probe-read helper call per field.
 */
static __always_inline void imb_switch_tasks(struct imb_w_switch *r, struct task_struct *prev,
					     struct task_struct *next)
{
	r->prev_pid = prev->pid;
	r->prev_tgid = prev->tgid;
	r->prev_prio = prev->prio;
	r->prev_exit_state = prev->exit_state;
	__builtin_memcpy(r->prev_comm, prev->comm, sizeof(r->prev_comm));
	r->prev_delayed = imb_se_delayed(&prev->se);
	r->prev_sum_exec = prev->se.sum_exec_runtime;
	r->next_pid = next->pid;
	r->next_tgid = next->tgid;
	r->next_prio = next->prio;
	/* bpf_get_current_cgroup_id() would give prev's: read next's own. */
	r->next_cgroup = next->cgroups->dfl_cgrp->kn->id;
	r->next_group = imb_se_parent_group(&next->se);
	r->next_sum_exec = next->se.sum_exec_runtime;
	__builtin_memcpy(r->next_comm, next->comm, sizeof(r->next_comm));
}

/* The prev fields for a task known only by its address (probe reads). */
static __always_inline void imb_switch_prev_probe(struct imb_w_switch *r, struct task_struct *prev)
{
	r->prev_pid = BPF_CORE_READ(prev, pid);
	r->prev_tgid = BPF_CORE_READ(prev, tgid);
	r->prev_prio = BPF_CORE_READ(prev, prio);
	r->prev_exit_state = BPF_CORE_READ(prev, exit_state);
	r->prev_delayed = imb_se_delayed_probe(&prev->se);
	r->prev_sum_exec = BPF_CORE_READ(prev, se.sum_exec_runtime);
	BPF_CORE_READ_STR_INTO(&r->prev_comm, prev, comm);
}

static __always_inline void imb_curr_set(struct task_struct *next)
{
	__u32 zero = 0;
	__u64 *cur = bpf_map_lookup_elem(&cpu_curr, &zero);

	if (cur)
		*cur = (__u64)(long)next;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(imb_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct imb_w_switch *r;

	if (!imb_on(IMB_W_SWITCH))
		return 0;
	imb_curr_set(next);
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, IMB_W_SWITCH, imb_task_rq(prev), bpf_get_smp_processor_id());
	imb_switch_tasks(r, prev, next);
	/* 5.18 ("sched/tracing: Append prev_state to tp args instead") */
	if (switch_has_state_arg)
		r->prev_state = (unsigned int)ctx[3];
	else
		r->prev_state = imb_task_state(prev);
	r->preempt = preempt;
	r->synthetic = 0;
	imb_submit(r, sizeof(*r));
	return 0;
}

/*
 * sched_exit_tp (6.18+) fires at the end of every __schedule().  Some
 * kernels do not fire sched_switch for every switch (this host's kernel
 * never reports one whose prev is a thread of its PID 1 agent, in tracefs
 * nor BPF), which would leave the model believing the hidden task still
 * runs.  When the task now running is not the one the last sched_switch on
 * this CPU named, the switch was not reported: emit it, stamped now, with
 * prev = that last task (its state read now; still runnable counts as
 * preempted).  Reading it is safe: it cannot be freed before this CPU leaves
 * __schedule() (RCU), and probe reads never fault.
 */
SEC("tp_btf/sched_exit_tp")
int BPF_PROG(imb_sched_exit, bool is_switch)
{
	struct task_struct *prev, *next;
	struct imb_w_switch *r;
	__u64 *cur, last;
	__u32 zero = 0;
	unsigned int state;

	if (!imb_on(IMB_W_SWITCH) || !is_switch)
		return 0;
	cur = bpf_map_lookup_elem(&cpu_curr, &zero);
	next = bpf_get_current_task_btf();
	if (!cur)
		return 0;
	last = *cur;
	if (!last || last == (__u64)(long)next)
		return 0;
	*cur = (__u64)(long)next;
	prev = (struct task_struct *)(long)last;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, IMB_W_SWITCH, imb_task_rq(next), bpf_get_smp_processor_id());
	imb_switch_tasks(r, next, next);
	imb_switch_prev_probe(r, prev);
	state = imb_task_state_probe(prev);
	r->prev_state = state;
	r->preempt = state == 0;
	r->synthetic = 1;
	imb_submit(r, sizeof(*r));
	return 0;
}

static __always_inline int imb_wakeup_emit(struct task_struct *p, unsigned int kind)
{
	struct imb_w_wakeup *r;

	if (!imb_on(kind))
		return 0;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, kind, imb_task_rq(p), bpf_get_smp_processor_id());
	r->pid = p->pid;
	r->tgid = p->tgid;
	r->prio = p->prio;
	r->target_cpu = imb_task_cpu(p);
	__builtin_memcpy(r->comm, p->comm, sizeof(r->comm));
	imb_submit(r, sizeof(*r));
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(imb_wakeup, struct task_struct *p)
{
	return imb_wakeup_emit(p, IMB_W_WAKEUP);
}

/*
 * sched_waking of a task whose dequeue was delayed: the wake-up requeues it
 * in place (only its own run queue is updated, the levels above just count
 * it runnable again), where any other wake-up enqueues it through the whole
 * hierarchy.  Only these are written; the flag is cleared by the time
 * sched_wakeup fires.
 */
SEC("tp_btf/sched_waking")
int BPF_PROG(imb_waking, struct task_struct *p)
{
	if (!imb_se_delayed(&p->se))
		return 0;
	return imb_wakeup_emit(p, IMB_W_WAKING);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(imb_wakeup_new, struct task_struct *p)
{
	return imb_wakeup_emit(p, IMB_W_WAKEUP_NEW);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(imb_migrate, struct task_struct *p, int dest_cpu)
{
	struct imb_w_migrate *r;

	if (!imb_on(IMB_W_MIGRATE))
		return 0;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, IMB_W_MIGRATE, imb_task_rq(p), bpf_get_smp_processor_id());
	r->pid = p->pid;
	r->prio = p->prio;
	r->orig_cpu = imb_task_cpu(p);
	r->dest_cpu = dest_cpu;
	__builtin_memcpy(r->comm, p->comm, sizeof(r->comm));
	imb_submit(r, sizeof(*r));
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(imb_fork, struct task_struct *parent, struct task_struct *child)
{
	struct imb_w_fork *r;

	if (!imb_on(IMB_W_FORK))
		return 0;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, IMB_W_FORK, imb_task_rq(parent), bpf_get_smp_processor_id());
	r->parent_pid = parent->pid;
	r->child_pid = child->pid;
	r->child_tgid = child->tgid;
	r->pad = 0;
	__builtin_memcpy(r->child_comm, child->comm, sizeof(r->child_comm));
	imb_submit(r, sizeof(*r));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(imb_exit, struct task_struct *p)
{
	struct imb_w_exit *r;

	if (!imb_on(IMB_W_EXIT))
		return 0;
	if (pelt_se_min_interval_ns) {
		__u32 pid = p->pid;

		bpf_map_delete_elem(&se_last, &pid);
	}
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, IMB_W_EXIT, imb_task_rq(p), bpf_get_smp_processor_id());
	r->pid = p->pid;
	r->prio = p->prio;
	__builtin_memcpy(r->comm, p->comm, sizeof(r->comm));
	imb_submit(r, sizeof(*r));
	return 0;
}

static __always_inline void imb_timer_mark(__u32 v)
{
	__u32 zero = 0, *t = bpf_map_lookup_elem(&in_timer, &zero);

	if (t)
		*t = v;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(imb_timer_entry, struct hrtimer *timer, ktime_t *now)
{
	imb_timer_mark(2);
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(imb_timer_exit, struct hrtimer *timer)
{
	imb_timer_mark(1);
	return 0;
}

/*
 * sched_stat_runtime is update_curr(): about two per switch, the most
 * frequent scheduler event.  Only the ones inside an hrtimer expiry can be
 * the tick, which the model needs as an instant (it updates every level of
 * the current task's path); the run time of the others reaches the daemon
 * in the task's own counter, se.sum_exec_runtime, which every switch and
 * tick record carries.  Where expiries are not traced (yet) on this CPU,
 * or with runtime_all (a recording keeps what a tracefs one would), every
 * one is sent.
 */
SEC("tp_btf/sched_stat_runtime")
int BPF_PROG(imb_runtime, struct task_struct *p, __u64 runtime)
{
	struct imb_w_runtime *r;
	__u32 zero = 0, *t, timer;
	struct rq *rq;

	if (!imb_on(IMB_W_RUNTIME))
		return 0;
	t = bpf_map_lookup_elem(&in_timer, &zero);
	timer = t ? *t : 0;
	if (timer == 1 && !runtime_all)
		return 0;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	/* update_curr() may run for a remote rq's curr: stamp the task's CPU. */
	rq = imb_task_rq(p);
	imb_hdr_fill(&r->h, IMB_W_RUNTIME, rq, rq ? rq->cpu : bpf_get_smp_processor_id());
	r->pid = p->pid;
	r->flags = !timer ? 0 : IMB_WR_TIMER_KNOWN | (timer == 2 ? IMB_WR_IN_TIMER : 0);
	r->runtime_ns = runtime;
	r->sum_exec = p->se.sum_exec_runtime;
	imb_submit(r, sizeof(*r));
	return 0;
}

static __always_inline __s32 imb_numa_gid(struct task_struct *p)
{
	struct numa_group *ng;

	if (!p || !bpf_core_field_exists(p->numa_group))
		return 0;
	ng = BPF_CORE_READ(p, numa_group);
	return ng ? BPF_CORE_READ(ng, gid) : 0;
}

/* NUMA node ids are filled in by the loader from the CPU numbers (-1 here). */
static __always_inline int imb_numa_emit(unsigned int kind, struct task_struct *src, int src_cpu,
					 struct task_struct *dst, int dst_cpu)
{
	struct imb_w_numa *r;

	if (!imb_on(kind))
		return 0;
	r = imb_reserve(sizeof(*r));
	if (!r)
		return 0;
	imb_hdr_fill(&r->h, kind, imb_task_rq(src), bpf_get_smp_processor_id());
	r->src_pid = src ? BPF_CORE_READ(src, pid) : 0;
	r->src_tgid = src ? BPF_CORE_READ(src, tgid) : 0;
	r->src_ngid = imb_numa_gid(src);
	r->src_cpu = src_cpu;
	r->src_nid = -1;
	r->dst_pid = dst ? BPF_CORE_READ(dst, pid) : 0;
	r->dst_tgid = dst ? BPF_CORE_READ(dst, tgid) : 0;
	r->dst_ngid = imb_numa_gid(dst);
	r->dst_cpu = dst_cpu;
	r->dst_nid = -1;
	imb_submit(r, sizeof(*r));
	return 0;
}

SEC("tp_btf/sched_move_numa")
int BPF_PROG(imb_numa_move, struct task_struct *p, int src_cpu, int dst_cpu)
{
	return imb_numa_emit(IMB_W_NUMA_MOVE, p, src_cpu, NULL, dst_cpu);
}

SEC("tp_btf/sched_swap_numa")
int BPF_PROG(imb_numa_swap, struct task_struct *src, int src_cpu, struct task_struct *dst, int dst_cpu)
{
	return imb_numa_emit(IMB_W_NUMA_SWAP, src, src_cpu, dst, dst_cpu);
}

SEC("tp_btf/sched_stick_numa")
int BPF_PROG(imb_numa_stick, struct task_struct *src, int src_cpu, struct task_struct *dst, int dst_cpu)
{
	return imb_numa_emit(IMB_W_NUMA_STICK, src, src_cpu, dst, dst_cpu);
}

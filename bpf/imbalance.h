/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * imbalance.h - wire records from the BPF programs to daemon/source/bpf.c.
 *
 * Every record written into the ring buffer starts with struct imb_wire_hdr
 * (timestamp, CPU, the run queue's own clocks) followed by the body of its
 * kind.  Only fixed-width __u32/__u64 types here: this header is compiled
 * both by clang for the BPF target and by the host compiler.  The loader
 * copies what it needs out of each record (ring buffer samples are not
 * guaranteed to be 8-byte aligned beyond the record start).
 */
#ifndef IMB_BPF_IMBALANCE_H
#define IMB_BPF_IMBALANCE_H

#define IMB_W_COMM_LEN	16

/* imb_wire_hdr.kind */
enum imb_wire_kind {
	IMB_W_SWITCH = 1,
	IMB_W_WAKEUP,
	IMB_W_WAKEUP_NEW,
	IMB_W_MIGRATE,
	IMB_W_FORK,
	IMB_W_EXIT,
	IMB_W_RUNTIME,
	IMB_W_PELT_CFS,
	IMB_W_PELT_SE,
	IMB_W_NUMA_MOVE,
	IMB_W_NUMA_SWAP,
	IMB_W_NUMA_STICK,
	IMB_W_GROUP_PATH,
	IMB_W_WAKING,		/* sched_waking of a task whose dequeue was delayed */
	IMB_W__COUNT
};

/* Bits of the events_mask knob: 1 << IMB_W_<kind>. */
#define IMB_W_BIT(kind)		(1u << (kind))
#define IMB_W_ALL		(((1u << IMB_W__COUNT) - 1) & ~1u)

/* imb_wire_hdr.flags */
#define IMB_WF_CLOCKS		0x1	/* clock_task/clock_pelt/lost_idle_time valid */
#define IMB_WF_LOST_IDLE	0x2	/* the kernel has rq->lost_idle_time */
#define IMB_WF_HOOK		0x4	/* PELT record from the update_load_avg() hook */
#define IMB_WF_GAP		0x8	/* records of this CPU were lost just before (ring full) */

/* gap_pending[] slots: CPUs beyond share a slot (at worst a mark too many). */
#define IMB_GAP_CPUS		4096

/*
 * Cgroup ids of autogroups: an autogroup's task_group has no cgroup, so the
 * BPF side reports its autogroup id with this marker bit set (real kernfs
 * ids never reach bit 63).
 */
#define IMB_AUTOGROUP_MARK	(1ULL << 63)

/*
 * Task group ids in next_group and parent_id: IMB_WG_ROOT for the root
 * task group, else imb_tg_id() of the group (kernfs ids of non-root
 * cgroups are > 1); 0 when the kernel has no group scheduling.
 */
#define IMB_WG_ROOT		1ULL

struct imb_wire_hdr {
	__u64 ts_ns;		/* bpf_ktime_get_ns(), CLOCK_MONOTONIC */
	__u64 clock_task;	/* rq->clock_task, ns */
	__u64 clock_pelt;	/* rq->clock_pelt, ns (not minus lost_idle_time) */
	__u64 lost_idle_time;	/* rq->lost_idle_time, ns (0 where absent) */
	__u32 cpu;		/* recording CPU; for PELT records the rq's CPU */
	__u16 kind;		/* enum imb_wire_kind */
	__u16 flags;		/* IMB_WF_* */
};

struct imb_w_switch {
	struct imb_wire_hdr h;
	__u32 prev_pid, prev_tgid, prev_prio;
	__u32 prev_state;	/* raw task state (__state), see preempt */
	__u32 next_pid, next_tgid, next_prio;
	__u32 preempt;		/* 1: prev was preempted */
	__u32 prev_exit_state;	/* prev->exit_state (EXIT_ZOMBIE, EXIT_DEAD) */
	__u32 prev_delayed;	/* 1: prev blocked but stays queued (se.sched_delayed) */
	__u32 synthetic;	/* 1: switch the kernel did not report, seen at sched_exit_tp */
	__u32 pad2;
	__u64 next_cgroup;	/* next->cgroups->dfl_cgrp->kn->id */
	__u64 next_group;	/* next's task group on this CPU (IMB_WG_*), 0 unknown */
	__u64 prev_sum_exec;	/* prev->se.sum_exec_runtime: its run time so far */
	__u64 next_sum_exec;	/* next->se.sum_exec_runtime */
	char prev_comm[IMB_W_COMM_LEN];
	char next_comm[IMB_W_COMM_LEN];
};

/* IMB_W_WAKEUP, IMB_W_WAKEUP_NEW */
struct imb_w_wakeup {
	struct imb_wire_hdr h;
	__u32 pid, tgid, prio, target_cpu;
	char comm[IMB_W_COMM_LEN];
};

struct imb_w_migrate {
	struct imb_wire_hdr h;
	__u32 pid, prio, orig_cpu, dest_cpu;
	char comm[IMB_W_COMM_LEN];
};

struct imb_w_fork {
	struct imb_wire_hdr h;
	__u32 parent_pid, child_pid, child_tgid, pad;
	char child_comm[IMB_W_COMM_LEN];
};

struct imb_w_exit {
	struct imb_wire_hdr h;
	__u32 pid, prio;
	char comm[IMB_W_COMM_LEN];
};

/* imb_w_runtime.flags */
#define IMB_WR_TIMER_KNOWN	0x1	/* hrtimer expiries are traced on this CPU */
#define IMB_WR_IN_TIMER		0x2	/* ... and this update_curr() ran inside one (the tick) */

struct imb_w_runtime {
	struct imb_wire_hdr h;
	__u32 pid, flags;		/* IMB_WR_* */
	__u64 runtime_ns;
	__u64 sum_exec;			/* p->se.sum_exec_runtime after this step */
};

/* The PELT signals of struct sched_avg. */
struct imb_w_avg {
	__u64 last_update_time;
	__u64 load_sum;
	__u64 runnable_sum;
	__u64 load_avg;
	__u64 runnable_avg;
	__u64 util_avg;
	__u32 util_sum;
	__u32 period_contrib;
};

/* imb_w_pelt_cfs.vflags */
#define IMB_WV_ZERO_VRUNTIME	0x1	/* vruntime_ref is zero_vruntime (else min_vruntime) */
#define IMB_WV_SUMS		0x2	/* sum_w_vruntime/sum_weight valid */
#define IMB_WV_CURR		0x4	/* curr_* valid: curr is queued on this cfs_rq */

struct imb_w_pelt_cfs {
	struct imb_wire_hdr h;
	__u64 cgroup_id;	/* group: kernfs id (or autogroup id | IMB_AUTOGROUP_MARK); root: 0 */
	__u32 root;		/* 1: the CPU's root cfs_rq */
	__u32 nr_queued;	/* nr_queued / nr_running */
	__u32 h_nr_queued;	/* h_nr_queued / h_nr_running */
	__u32 h_nr_runnable;	/* h_nr_runnable (6.14+) or h_nr_queued */
	struct imb_w_avg avg;
	__u64 vruntime_ref;	/* zero_vruntime or min_vruntime */
	__s64 sum_w_vruntime;	/* sum_w_vruntime / avg_vruntime (6.6+) */
	__u64 sum_weight;	/* sum_weight / avg_load (6.6+) */
	__u64 curr_vruntime;	/* cfs_rq->curr->vruntime */
	__u64 curr_weight;	/* cfs_rq->curr->load.weight (full resolution) */
	__u32 vflags;		/* IMB_WV_* */
	__u32 pad;
	__u64 parent_id;	/* group: its parent task group (IMB_WG_*); root: 0 */
};

struct imb_w_pelt_se {
	struct imb_wire_hdr h;
	__u32 pid, tgid;	/* task entity; 0 for a group entity */
	__u64 cgroup_id;	/* group entity: cgroup id of se->my_q->tg */
	struct imb_w_avg avg;
	__u64 parent_id;	/* the task group of se->cfs_rq (IMB_WG_*), 0 unknown */
};

/*
 * IMB_W_GROUP_PATH: the cgroup path of a task group, sent from pelt_cfs_tp
 * for a group run queue at most once per group per group_path_interval_ns
 * (the first time the group is seen, then again after each interval, so a
 * lost record or an evicted table entry comes back).  Autogroups (no
 * cgroup) and the root group get none: their paths follow from their ids.
 * names[] holds the kernfs node names from the group's own (names[0]) up
 * to the child of the hierarchy's root, each NUL-terminated within its
 * slot; user space joins them in reverse as "/a/b/c".
 */
#define IMB_GP_DEPTH		8	/* names sent at most */
#define IMB_GP_NAME_LEN		128	/* per name, NUL included */

/* imb_w_group_path.flags */
#define IMB_GPF_TRUNCATED	0x1	/* deeper than IMB_GP_DEPTH: the top names are missing */
#define IMB_GPF_NAME_CUT	0x2	/* a name filled its slot and may be cut */
#define IMB_GPF_DFL		0x4	/* on the default (v2) hierarchy, whose ids tasks' cgroups use */

struct imb_w_group_path {
	struct imb_wire_hdr h;
	__u64 id;		/* imb_tg_id() of the group: its kernfs id */
	__u64 parent_id;	/* its parent task group (IMB_WG_*) */
	__u32 nr_names;		/* names[] filled, 0..IMB_GP_DEPTH */
	__u32 flags;		/* IMB_GPF_* */
	char names[IMB_GP_DEPTH][IMB_GP_NAME_LEN];
};

/* IMB_W_NUMA_MOVE (dst_pid.. = 0), IMB_W_NUMA_SWAP, IMB_W_NUMA_STICK */
struct imb_w_numa {
	struct imb_wire_hdr h;
	__s32 src_pid, src_tgid, src_ngid, src_cpu, src_nid;
	__s32 dst_pid, dst_tgid, dst_ngid, dst_cpu, dst_nid;
};

#endif /* IMB_BPF_IMBALANCE_H */

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * event.h - the one normalized scheduler event.
 *
 * Every source (BPF, tracefs, trace.dat, text) turns what it reads into a
 * stream of struct imb_event, time-ordered across CPUs, and everything
 * downstream (model, PELT engine, analyzers) reads only this struct.  Times
 * are u64 nanoseconds of the source's clock; pids are thread ids; a field
 * that the source does not know is 0 unless its comment says otherwise.
 */
#ifndef IMB_EVENT_H
#define IMB_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMB_COMM_LEN 16
#define IMB_MAX_CPUS 4096	/* imb_event.cpu is 0 .. IMB_MAX_CPUS - 1 */

enum imb_ev_kind {
	IMB_EV_NONE = 0,
	IMB_EV_SWITCH,		/* sched_switch */
	IMB_EV_WAKEUP,		/* sched_wakeup: task queued on target_cpu */
	IMB_EV_WAKEUP_NEW,	/* sched_wakeup_new: new task queued */
	IMB_EV_WAKING,		/* sched_waking: wake-up started (before placement) */
	IMB_EV_MIGRATE,		/* sched_migrate_task */
	IMB_EV_FORK,		/* sched_process_fork */
	IMB_EV_EXIT,		/* sched_process_exit */
	IMB_EV_RUNTIME,		/* sched_stat_runtime */
	IMB_EV_PELT_CFS,	/* kernel's cfs_rq PELT values (pelt_cfs_tp) */
	IMB_EV_PELT_SE,		/* kernel's sched_entity PELT values (pelt_se_tp) */
	IMB_EV_NUMA_MOVE,	/* sched_move_numa */
	IMB_EV_NUMA_SWAP,	/* sched_swap_numa */
	IMB_EV_NUMA_STICK,	/* sched_stick_numa */
	IMB_EV_VRUNTIME,	/* a run queue's vruntime reference sample */
	IMB_EV_LOST,		/* the source lost events on this CPU */
	IMB_EV__COUNT
};

/* Flags in imb_event.flags. */
#define IMB_EVF_RQ_CLOCKS	0x1	/* clock_task_ns/clock_pelt_ns are valid */
#define IMB_EVF_GAP		0x2	/* the source lost events of its CPU just before this one */

/*
 * Task group ids (next_group, parent_id): 0 unknown (offline traces),
 * IMB_TG_ROOT the root task group, else the group's cgroup id (kernfs
 * id, always > 1) or autogroup id | IMB_TG_AUTOGROUP.
 */
#define IMB_TG_ROOT		1ULL
#define IMB_TG_AUTOGROUP	(1ULL << 63)

/* prev_state values of sched_switch (kernel TASK_REPORT encoding). */
#define IMB_STATE_RUNNING	0x000	/* R: yielded, still queued */
#define IMB_STATE_PREEMPTED	0x100	/* R+: preempted, still queued */

struct imb_ev_switch {
	int32_t prev_pid;
	int32_t prev_tgid;		/* 0: unknown */
	int32_t prev_prio;		/* kernel prio, 120 = nice 0 */
	uint32_t prev_state;		/* 0 R, 0x100 R+, else blocked */
	int32_t next_pid;
	int32_t next_tgid;		/* 0: unknown */
	int32_t next_prio;
	uint32_t prev_delayed;		/* 1: prev blocked but stays queued (delayed dequeue), 0: no or unknown */
	uint64_t next_cgroup;		/* cgroup id of next, 0: unknown */
	uint64_t next_group;		/* next's task group (IMB_TG_*), 0: unknown */
	uint64_t prev_sum_exec_ns;	/* prev's run time so far (se.sum_exec_runtime), 0: unknown */
	uint64_t next_sum_exec_ns;	/* next's, 0: unknown */
	char prev_comm[IMB_COMM_LEN];
	char next_comm[IMB_COMM_LEN];
};

/* IMB_EV_WAKEUP, IMB_EV_WAKEUP_NEW, IMB_EV_WAKING */
struct imb_ev_wakeup {
	int32_t pid;
	int32_t tgid;			/* 0: unknown */
	int32_t prio;
	int32_t target_cpu;
	char comm[IMB_COMM_LEN];
	uint32_t delayed;		/* waking: 1 when the task's dequeue was delayed (requeued in place) */
};

struct imb_ev_migrate {
	int32_t pid;
	int32_t prio;
	int32_t orig_cpu;
	int32_t dest_cpu;
	char comm[IMB_COMM_LEN];
};

struct imb_ev_fork {
	int32_t parent_pid;
	int32_t child_pid;
	int32_t child_tgid;		/* 0: unknown */
	int32_t pad;
	char child_comm[IMB_COMM_LEN];
};

struct imb_ev_exit {
	int32_t pid;
	int32_t prio;
	char comm[IMB_COMM_LEN];
};

/* imb_ev_runtime.timer */
enum { IMB_TIMER_UNKNOWN, IMB_TIMER_OUTSIDE, IMB_TIMER_INSIDE };

struct imb_ev_runtime {
	int32_t pid;
	int32_t timer;			/* IMB_TIMER_*: inside an hrtimer expiry (the tick) or not */
	uint64_t runtime_ns;		/* clock_task delta of this accounting step */
	uint64_t sum_exec_ns;		/* the task's run time so far, after it; 0: unknown */
};

/* Kernel PELT values of a cfs_rq (pelt_cfs_tp / sched_pelt_cfs). */
struct imb_ev_pelt_cfs {
	uint64_t cgroup_id;		/* group run queue: its cgroup id; root: 0 */
	uint8_t root;			/* 1 when this is the CPU's root cfs_rq */
	uint8_t pad[3];
	uint32_t nr_queued;		/* nr_queued (nr_running on old kernels) */
	uint32_t h_nr_queued;		/* h_nr_queued (h_nr_running) */
	uint32_t h_nr_runnable;		/* h_nr_runnable (6.14+), else h_nr_queued */
	uint32_t util_sum;
	uint32_t period_contrib;
	uint64_t last_update_time;	/* ns of the PELT clock */
	uint64_t load_sum;
	uint64_t runnable_sum;
	uint64_t load_avg;
	uint64_t runnable_avg;
	uint64_t util_avg;
	uint64_t parent_id;		/* group run queue: its parent group (IMB_TG_*), 0: unknown */
};

/* Kernel PELT values of a sched_entity (pelt_se_tp / sched_pelt_se). */
struct imb_ev_pelt_se {
	int32_t pid;			/* task entity: pid; group entity: 0 */
	int32_t tgid;
	uint64_t cgroup_id;		/* group entity: its cgroup id */
	uint32_t util_sum;
	uint32_t period_contrib;
	uint64_t last_update_time;
	uint64_t load_sum;
	uint64_t runnable_sum;
	uint64_t load_avg;
	uint64_t runnable_avg;
	uint64_t util_avg;
	uint64_t parent_id;		/* group whose run queue holds it (IMB_TG_*), 0: unknown */
};

/* IMB_EV_NUMA_MOVE, _SWAP, _STICK (src = the task that moves) */
struct imb_ev_numa {
	int32_t src_pid, src_tgid, src_ngid, src_cpu, src_nid;
	int32_t dst_pid, dst_tgid, dst_ngid, dst_cpu, dst_nid;
};

struct imb_ev_vruntime {
	uint64_t vruntime_ref;		/* min_vruntime, or zero_vruntime */
	int64_t avg_vruntime;		/* V where known, else 0 */
	uint8_t is_zero_vruntime;	/* 1: vruntime_ref is zero_vruntime */
	uint8_t pad[7];
};

struct imb_ev_lost {
	uint64_t count;			/* events lost on this CPU since the last report */
	/*
	 * 1: runs of the BPF programs the kernel skipped (a tracepoint hit
	 * while the same program ran on that CPU, from an interrupt), whose
	 * CPU it does not say: cpu is 0 then
	 */
	uint32_t skipped;
	/*
	 * 1: the source also marked the first event it delivered on that CPU
	 * after the loss (IMB_EVF_GAP), where the engine takes the kernel's
	 * values again; this event only counts
	 */
	uint32_t marked;
};

struct imb_event {
	uint64_t ts_ns;			/* source clock */
	int32_t cpu;			/* CPU the event was recorded on */
	uint16_t kind;			/* enum imb_ev_kind */
	uint16_t flags;			/* IMB_EVF_* */
	uint64_t clock_task_ns;		/* rq->clock_task, when IMB_EVF_RQ_CLOCKS */
	uint64_t clock_pelt_ns;		/* rq_clock_pelt(), when IMB_EVF_RQ_CLOCKS */
	union {
		struct imb_ev_switch sw;
		struct imb_ev_wakeup wakeup;
		struct imb_ev_migrate migrate;
		struct imb_ev_fork fork;
		struct imb_ev_exit exit;
		struct imb_ev_runtime runtime;
		struct imb_ev_pelt_cfs pelt_cfs;
		struct imb_ev_pelt_se pelt_se;
		struct imb_ev_numa numa;
		struct imb_ev_vruntime vruntime;
		struct imb_ev_lost lost;
	};
};

/**
 * imb_ev_kind_name - the text-format name of an event kind
 * @kind: enum imb_ev_kind
 *
 * Returns a static string ("switch", "wakeup", ...), "?" when out of range.
 */
const char *imb_ev_kind_name(unsigned int kind);

/**
 * imb_ev_kind_parse - the kind named by @name
 *
 * Returns the enum imb_ev_kind value, or IMB_EV_NONE when unknown.
 */
unsigned int imb_ev_kind_parse(const char *name, size_t len);

/**
 * imb_comm_copy - copy a task name into a fixed IMB_COMM_LEN buffer
 * @dst: destination, always NUL-terminated
 * @src: source bytes, need not be terminated
 * @len: at most this many bytes of @src are read
 */
void imb_comm_copy(char dst[IMB_COMM_LEN], const char *src, size_t len);

/* Kernel prio to nice (prio 100..139 -> nice -20..19); others -> 0. */
static inline int imb_prio_to_nice(int prio)
{
	return (prio >= 100 && prio <= 139) ? prio - 120 : 0;
}

#endif /* IMB_EVENT_H */

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model.h - the system model the event stream drives.
 *
 * The model keeps what the scheduler state was at the current event: for
 * each CPU who runs and who waits, for each task whether it runs, waits or
 * sleeps and where, and, through the PELT engine (pelt.h), the load,
 * runnable and util averages of every task and every CPU's root run queue.
 * It also accumulates per-task CPU time, waiting time and migrations over
 * the whole run and over the current window.  Analyzers read it; nothing
 * but model_event() writes it.
 *
 * Assumptions (measured and documented in the README):
 * - the PELT clock of a CPU is the event clock plus a per-CPU offset, taken
 *   from the run queue's own clock_pelt when the source carries it
 *   (IMB_EVF_RQ_CLOCKS), else 0 (trace_clock perf ~ rq->clock ~ clock_task);
 * - task groups when the source names them (IMB_TG_* ids in sched_switch
 *   and the PELT records): per (CPU, group) a group run queue and the
 *   group's entity in its parent, with the kernel's propagation at the
 *   update points the events show, plus the kernel's own group pelt_cfs
 *   records as the instants of its lazy (blocked) updates; without group
 *   ids (offline traces) a flat hierarchy: tasks attach to the root;
 * - a task woken or migrated onto an idle CPU starts running at once (the
 *   trace may lack the switch out of the idle task).
 */
#ifndef IMB_MODEL_H
#define IMB_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "pelt.h"

#define MODEL_MAX_CPUS 1024
#define MODEL_MAX_GROUPS 4096	/* default bound of the group table, all CPUs */
#define MODEL_ANCESTORS 6	/* processes kept of a task's line (model_lineage.c) */

enum model_task_state {
	MODEL_TASK_UNKNOWN = 0,	/* seen, but state not yet known */
	MODEL_TASK_RUNNING,	/* current on its CPU */
	MODEL_TASK_QUEUED,	/* runnable, waiting on its CPU */
	MODEL_TASK_SLEEPING,	/* blocked */
	MODEL_TASK_DEAD,	/* exited */
};

/* Per-signal accuracy of the engine against the kernel's own values. */
#define MODEL_ERR_BUCKETS 2048
struct model_err_hist {
	uint64_t samples;
	uint64_t max_abs;
	uint32_t bucket[MODEL_ERR_BUCKETS + 1];	/* abs error; last = overflow */
};

enum model_signal { MODEL_SIG_UTIL, MODEL_SIG_RUNNABLE, MODEL_SIG_LOAD, MODEL_SIG__COUNT };

struct model_task {
	int32_t pid;
	int32_t tgid;			/* 0: unknown, treat as pid */
	int32_t parent_pid;		/* who forked it (sched_process_fork), 0 unknown */
	int32_t lineage;		/* guessed task group (model_lineage.c), 0: its process's */
	int32_t ancestors[MODEL_ANCESTORS];	/* processes that started its line, nearest first, 0 end */
	char comm[IMB_COMM_LEN];
	int prio;
	int nice;
	uint64_t cgroup;		/* cgroup id, 0 unknown */
	uint64_t group;			/* task group (IMB_TG_* id), 0 root or unknown */
	uint64_t att_group;		/* group whose run queue holds its averages, 0 root */
	uint64_t q_group;		/* group its queued counts went to, 0 root */
	unsigned long q_weight;		/* the weight they carry (its nice may change while queued) */
	int att_cpu;			/* CPU of att_group */
	int cpu;			/* current or last CPU, -1 unknown */
	uint8_t state;			/* enum model_task_state */
	bool has_runtime;		/* source gave sched_stat_runtime for it */
	bool sum_exec_known;		/* sum_exec_ns is a reading (or 0 at its fork) */
	bool pelt_valid;		/* se averages have been initialised */
	bool fair;			/* a CFS task (prio >= 100) */
	bool exited;			/* sched_process_exit seen */
	bool attach_pending;		/* removed at a wake-up migration: attach as is at the enqueue */
	bool delayed;			/* blocked, but the kernel keeps it queued (delayed dequeue) */
	bool requeue;			/* delayed, and a wake-up started: it requeues in place */
	uint64_t delayed_group;		/* the group it was queued in when it blocked */
	int held_cpu;			/* its delay holds delayed_group's path there (nr_held), -1 not */
	uint64_t delay_rec_ns;		/* when its own record last ended its delay (0: not) */
	int64_t vr;			/* vruntime estimate (model_eevdf.c), ns at weight 1024 */
	int64_t vlag;			/* ... the lag its last dequeue left it */
	int64_t vr_unplaced;		/* ... as it was before its last placement */
	uint64_t pulled_ns;		/* when its new CPU's balancer pulled it there, 0 not */

	uint64_t first_ns;		/* first event naming the task */
	uint64_t last_ns;		/* last event naming the task */
	uint64_t state_ns;		/* when the current state began */
	uint64_t runnable_since_ns;	/* start of the current runnable period */
	uint64_t sleep_ns_total;	/* time known asleep */
	uint64_t unknown_ns;		/* time before its state was known */

	uint64_t run_ns;		/* CPU time (sched_stat_runtime, else switches) */
	uint64_t switch_run_ns;		/* CPU time from switch intervals */
	uint64_t runtime_ns;		/* sum of sched_stat_runtime */
	uint64_t sum_exec_ns;		/* its run-time counter at the last reading */
	uint64_t runnable_ns;		/* running + waiting */
	uint32_t migrations;
	uint64_t fair_ns;		/* fair CPU time, summed over windows (pipeline.c) */

	/* current window */
	uint64_t win_switch_run_ns, win_runtime_ns, win_runnable_ns;
	uint64_t win_fair_ns;		/* fair CPU time in the window (pipeline.c) */
	uint32_t win_migrations;
	bool win_seen;

	struct pelt_avg avg;		/* its sched_entity averages */
	struct pelt_avg kavg;		/* kernel's values, last pelt_se event */
	uint64_t kavg_ns;		/* 0: none */
};

/* A guessed group's entity drift on one CPU (model_drift.c). */
#define MODEL_DRIFT_SLOTS 8
struct model_drift {
	int32_t key;			/* lineage, 0 free */
	uint32_t w_stale;		/* the entity's runnable count, as last refreshed */
	uint32_t w_cur;			/* its run queue's runnable count now */
	struct pelt_cfs pos, neg;	/* (w_stale - w_cur) integrated, its two signs */
};

struct model_cpu {
	int cpu;
	int32_t curr;			/* pid running, 0 idle, -1 unknown */
	uint32_t nr_queued;		/* fair tasks queued incl. curr */
	uint32_t nr_running;		/* all tasks queued incl. curr */
	uint32_t nr_delayed;		/* tasks blocked here whose dequeue the kernel delayed */
	uint64_t weight;		/* sum of se weights (scaled down) of queued fair tasks */
	uint64_t root_weight;		/* root cfs_rq load.weight: root tasks + group shares */
	uint32_t capacity;		/* 1024 unless known */
	int64_t pelt_offset;		/* PELT clock - event clock */
	uint64_t pelt_last;		/* last PELT clock used (never goes back) */
	uint64_t offset_ts;		/* when pelt_offset was last set, 0 never */
	uint64_t count_excess_ns;	/* since when the root records count fewer tasks than the model, 0 not */
	uint64_t delay_excess_lut;	/* a root record's instant that counted fewer delayed tasks, 0 none */
	bool k_counts;			/* the root records have shown a task count */
	uint64_t ev_clock;		/* the event being applied: its run queue's PELT clock, */
	uint64_t ev_clock_ts;		/* ... and its time (0: the event carries none for this CPU) */
	uint64_t moved_lut;		/* root instant of an autogroup exit taken from a record (no recount) */
	bool fair_curr;			/* curr is a CFS task */
	uint64_t idle_since_ns;		/* when curr became 0 */
	uint64_t switch_ns;		/* last sched_switch seen here */

	struct pelt_cfs cfs;		/* engine root run queue */
	struct imb_ev_pelt_cfs kcfs;	/* kernel's root values, last pelt_cfs */
	uint64_t kcfs_ns;		/* 0: none */
	struct imb_ev_pelt_cfs kcfs_prev;	/* the last root record of an older update */
	uint64_t kcfs_prev_ns;		/* its event time, 0: none */
	bool reseed;			/* a group was seeded, or events lost: seed the root again */
	bool gap_counts;		/* events lost: take the next root record's count at once */
	uint64_t kvruntime;		/* kernel min/zero_vruntime, last seen */
	int32_t tick_pid;		/* a lone update_curr() of this task here (model_tick_settle()) */
	uint64_t tick_ns, tick_clock;	/* ... its time and run-queue clock */
	bool tick_recs;			/* ... followed by records of its instant alone so far */
	int32_t tick_timer;		/* ... inside an hrtimer expiry (IMB_TIMER_*) */
	int32_t pick_pid;		/* a guessed delay ended at this task's update_curr() (pick_settle()) */
	uint64_t pick_ns, pick_now;	/* ... its time and PELT time */
	bool cmp_pending;		/* a kernel sample waits to be compared */
	uint64_t cmp_ns;		/* its event time */
	struct imb_ev_pelt_cfs cmp_k;	/* its values */
	bool tent;			/* a compared sample not yet counted (model_cpu_compare()) */
	uint64_t tent_lut;		/* its kernel update instant */
	uint64_t tent_e[MODEL_SIG__COUNT], tent_k[MODEL_SIG__COUNT];	/* engine, kernel */

	uint64_t busy_ns, win_busy_ns;	/* time with a task running */
	uint64_t last_ns;		/* last accounting instant */
	uint64_t vclock;		/* model virtual clock (ns * 1024 / weight) */
	uint64_t nr_running_area;	/* integral of nr_running dt (ns) for the window */
	struct model_drift drift[MODEL_DRIFT_SLOTS];	/* guessed groups (model_drift.c) */
};

/* A task group's run queue on one CPU and its entity in the parent. */
struct model_group {
	uint64_t id;			/* IMB_TG_* id, never IMB_TG_ROOT */
	uint64_t parent_id;		/* parent group, 0: the CPU's root run queue */
	int cpu;
	uint32_t nr_queued;		/* entities queued on its run queue */
	uint32_t h_nr_runnable;		/* runnable tasks below it */
	uint32_t nr_held;		/* delayed tasks below it: out of the model's counts, still queued in the kernel's */
	uint32_t se_runnable;		/* its entity's runnable weight: h_nr_runnable at the last walk */
	uint64_t weight;		/* load.weight of its run queue */
	uint32_t nr_tasks;		/* tasks whose averages or counts are here */
	uint32_t nr_children;		/* child groups in the table */
	unsigned long shares;		/* its entity's weight (calc_group_shares) */
	bool propagate;			/* cfs_rq->propagate */
	bool se_attached;		/* its entity's averages are in the parent */
	bool kseeded;			/* run queue seeded from a kernel record */
	bool kse_seeded;		/* entity seeded from its own record */
	uint64_t last_ns;		/* last event that touched it */
	struct pelt_cfs cfs;		/* its run queue */
	struct pelt_avg se;		/* its entity */
	/* the kernel's values of its run queue, from its last pelt_cfs record */
	uint64_t k_ns;			/* that record's event time, 0: none yet */
	uint64_t k_avg[MODEL_SIG__COUNT];	/* its util/runnable/load_avg */
	uint64_t k_lut;			/* that record's last_update_time */
	uint64_t k_prev_ns;		/* event time of the last record of an older update, 0: none */
	uint64_t k_prev_avg[MODEL_SIG__COUNT];	/* its averages */
	uint32_t k_h_nr_queued;		/* its h_nr_queued: tasks queued below the group */
	uint64_t k_compared;		/* records compared with the engine (not the seed) */
	int64_t k_err[MODEL_SIG__COUNT];	/* engine - kernel at the last compared record */
	bool k_pending;			/* a record of it waits to be compared (in gpend[]) */
	bool kcfs_cmp;			/* ... its run queue's last record */
	bool kse_cmp;			/* ... its entity's last record, kse_avg */
	uint64_t kcmp_ns;		/* event time of the newest record waiting */
	uint64_t kse_avg[MODEL_SIG__COUNT];	/* its entity's util/runnable/load_avg */
	bool k_after;			/* ... after the event being applied */
};

#define MODEL_GROUP_PENDING 64	/* group records waiting to be compared at most */

struct model_opts {
	int nr_cpus;			/* 0: grow as CPUs appear */
	uint32_t capacity[MODEL_MAX_CPUS];	/* 0 = 1024 */
	size_t max_tasks;		/* bound on the task table (0 = 65536) */
	size_t max_groups;		/* bound on the group table (0 = MODEL_MAX_GROUPS) */
	int pelt_version;		/* enum pelt_version + 1; 0: PELT_VERSION_DEFAULT */
	/*
	 * Take the stream as a plain sched-event recording (tracefs,
	 * trace.dat): no task-group ids, no run-queue clocks; the kernel's
	 * PELT records, where the stream has them, are only compared with
	 * the engine (at their event time, after PLAIN_WARMUP_NS of the run
	 * or of the task's life), never used to seed, place or update it.
	 */
	bool plain_events;
};

/*
 * Comparisons with the kernel's values start this long after the first
 * event: the model cannot know which tasks were queued before the trace
 * began until each one shows up, and PELT forgets an unknown past in
 * ~0.35 s (tasks: after as long in their own life, with --plain-events).
 */
#define MODEL_WARMUP_NS 500000000ull

struct model {
	struct model_opts opts;
	int nr_cpus;
	struct model_cpu *cpus;		/* nr_cpus entries */

	struct model_task *tasks;	/* dense array, nr_tasks used */
	size_t nr_tasks, cap_tasks;
	int32_t *hash;			/* open addressing: index+1 into tasks, 0 empty */
	size_t hash_cap;

	struct model_group *groups;	/* dense array, nr_groups used */
	size_t nr_groups, cap_groups;
	int32_t *ghash;			/* open addressing on (cpu, id): index+1 */
	size_t ghash_cap;
	bool has_groups;		/* the source named task groups */
	uint64_t groups_evicted;	/* empty idle groups dropped from a full table */
	uint64_t groups_overflow;	/* placements that fell back to the root */
	struct { int cpu; uint64_t id; } gpend[MODEL_GROUP_PENDING];	/* groups k_pending */
	int nr_gpend;
	int32_t fresh_pid;		/* task whose initial averages are in fresh_init */
	struct pelt_avg fresh_init;
	struct pelt_cfs post_init_k;	/* a run queue as post_init reads it (kernel's averages) */

	uint64_t t0_ns;			/* first event */
	uint64_t now_ns;		/* last event */
	uint64_t events;
	uint64_t lost_events;
	uint64_t evicted;		/* tasks dropped from a full table */
	uint64_t kind_count[IMB_EV__COUNT];
	uint64_t win_start_ns;
	uint64_t win_events, win_lost;
	bool has_runtime_events;
	bool has_kernel_pelt;
	bool has_tgids;			/* the source or hints gave tgids */
	int32_t *tgid_hint;		/* pairs pid,tgid, open addressing on pid */
	size_t tgid_hint_cap, nr_tgid_hints;
	uint64_t out_of_order;		/* events older than the previous one */
	uint64_t vanished;		/* running tasks replaced without a switch naming them */
	uint64_t unseen_dequeued;	/* queued or delayed tasks the kernel's counts showed gone (model_cpu_count_check()) */
	uint64_t gap_ns;		/* events lost before this instant (model_resync()), 0 never */
	uint64_t resyncs;		/* ... times the engine took the kernel's values again */
	uint64_t drift_propagations;	/* guessed group drifts taken off a root (model_drift.c) */
	uint64_t delays_guessed;	/* blocking switches taken as delayed dequeues without marks (model_eevdf.c) */
	uint64_t new_tasks;		/* wake-ups of new tasks (sched_wakeup_new) */
	uint64_t switch_out_fair;	/* fair tasks switched out */
	uint64_t switch_out_blocked;	/* ... of them going to sleep (periodic work) */

	struct model_err_hist err_cpu[MODEL_SIG__COUNT];
	struct model_err_hist err_task[MODEL_SIG__COUNT];
	struct model_err_hist err_group[MODEL_SIG__COUNT];	/* task groups' run queues */
	struct model_err_hist err_group_se[MODEL_SIG__COUNT];	/* task groups' entities */

	/* the averages model_advance() moved, for model_advance_undo() */
	struct model_adv_cpu { struct pelt_cfs cfs; uint64_t pelt_last; } *adv_cpu;
	struct model_adv_task { size_t idx; struct pelt_avg avg; } *adv_task;
	size_t adv_cpu_cap, nr_adv_task, adv_task_cap;
	bool adv_saved;
};

/**
 * model_new - an empty model
 *
 * Returns a model the caller frees with model_free(), or NULL with errno.
 */
struct model *model_new(const struct model_opts *opts);

/** model_free - free a model; accepts NULL */
void model_free(struct model *m);

/**
 * model_event - apply one event
 *
 * Events must come in time order; an older one is counted in
 * out_of_order and applied at the current time.  Returns 0, or -ENOMEM
 * when a table could not grow.
 */
int model_event(struct model *m, const struct imb_event *ev);

/**
 * model_advance - account every CPU and task up to @now_ns
 *
 * Called at window ends and at the end of the stream.
 */
void model_advance(struct model *m, uint64_t now_ns);

/**
 * model_advance_window - model_advance() for a window's figures
 *
 * The same, but the kernel samples still waiting to be compared wait on
 * for the events that follow; undone by model_advance_undo().
 */
void model_advance_window(struct model *m, uint64_t now_ns);

/**
 * model_advance_undo - put back the averages the last model_advance() moved
 *
 * model_advance() brings every CPU's root run queue and every queued
 * task's entity to @now_ns for a window's figures.  The kernel updates
 * nothing at a window's end, and the next events may carry run-queue
 * clocks older than it (model_event()): the engine goes on from the state
 * the events left, so its numbers do not depend on where windows end.
 * Without memory to save them, the averages stay advanced.
 */
void model_advance_undo(struct model *m);

/** model_window_reset - start a new window at @now_ns */
void model_window_reset(struct model *m, uint64_t now_ns);

/** model_task_find - the task with @pid, or NULL */
struct model_task *model_task_find(const struct model *m, int32_t pid);

/**
 * model_err_quantile - the q-quantile (0..1) of an error histogram
 */
uint64_t model_err_quantile(const struct model_err_hist *h, double q);

/**
 * model_evict_dead - drop tasks that died before @before_ns and shrink the
 * tables (the live daemon calls it at window ends, so memory returns to
 * its baseline after a burst of short-lived tasks); 0 or -ENOMEM
 */
int model_evict_dead(struct model *m, uint64_t before_ns);

/**
 * model_tgid_hint - tell the model that @pid belongs to process @tgid
 * (a pid->tgid map that came with the recording); 0 or -ENOMEM
 */
int model_tgid_hint(struct model *m, int32_t pid, int32_t tgid);

/**
 * model_task_job_pid - the process a task belongs to: its tgid when known;
 * when the run has no tgids at all, the task that forked it (threads and
 * worker processes join their creator); else its own pid
 */
int32_t model_task_job_pid(const struct model *m, const struct model_task *t);

/** model_group_find - the group @id on CPU @cpu, or NULL */
struct model_group *model_group_find(const struct model *m, int cpu, uint64_t id);

/** model_task_run_ns - CPU time: sched_stat_runtime sum, else switch intervals */
uint64_t model_task_run_ns(const struct model_task *t);

/** model_task_wait_ns - runnable but not running */
uint64_t model_task_wait_ns(const struct model_task *t);

/** model_task_is_idle - pid 0 (the idle task) */
static inline bool model_pid_is_idle(int32_t pid)
{
	return pid == 0;
}

#endif /* IMB_MODEL_H */

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model_internal.h - what the model's own files share, and nobody else.
 *
 * The model (model.h) is written in six files, one concern each:
 *   model_tables.c  the task table and its hash, CPUs, tgid hints,
 *                   eviction of dead tasks, the model's life cycle;
 *   model_groups.c  task groups: their table, run queues and entities,
 *                   the queued counts up the hierarchy, propagation;
 *   model_lineage.c where the input names no groups: the group a new
 *                   task starts in, guessed from who forked it;
 *   model_eevdf.c   where the input has no marks: which blocking tasks
 *                   the kernel keeps queued (delayed dequeue);
 *   model_events.c  the scheduler events: task states, CPU accounting and
 *                   the PELT updates at the kernel's update points;
 *   model_kernel.c  the kernel's own PELT records: seeding, the lazy
 *                   updates they reveal, and the engine's error at them.
 * Functions here are the model's internals (prefix model_, declared only
 * in this header); analyzers and sources use model.h.
 */
#ifndef IMB_MODEL_INTERNAL_H
#define IMB_MODEL_INTERNAL_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* model_tables.c */
int model_cpu_grow(struct model *m, int cpu);
struct model_task *model_task_get(struct model *m, int32_t pid, uint64_t ts);
void model_task_note(struct model_task *t, const char *comm, int prio, uint64_t ts);
void model_cpu_count_check(struct model *m, struct model_cpu *c, uint32_t k_h_nr_queued, uint64_t lut,
			   uint64_t ts);
void model_chain_hold(struct model *m, int cpu, uint64_t id, int d);
/*
 * A run queue's load.weight @w when one of its entities changes weight
 * from @from to @to (reweight_entity()); never below 0.
 */
static inline void model_weight_swap(uint64_t *w, unsigned long from, unsigned long to)
{
	*w = *w + to > from ? *w + to - from : 0;
}

void model_chain_reweight(struct model *m, int cpu, uint64_t id, unsigned long from, unsigned long to);
void model_task_set_tgid(struct model *m, struct model_task *t, int32_t tgid);

/* model_groups.c */
void model_chain_dequeue(struct model *m, int cpu, uint64_t id, unsigned long w, bool walk);
void model_chain_enqueue(struct model *m, int cpu, uint64_t id, unsigned long w, bool walk);
void model_chain_runnable(struct model *m, int cpu, uint64_t id, int d, bool walk);
bool model_chain_counts(const struct model *m, int cpu, uint64_t id);
struct pelt_cfs *model_group_cfs(struct model *m, int cpu, uint64_t id);
int model_group_evict_idle(struct model *m);
struct model_group *model_group_get(struct model *m, int cpu, uint64_t id, uint64_t parent_id,
		int depth);
bool model_group_is_curr(const struct model *m, const struct model_cpu *c,
		const struct model_group *g);
void model_group_mark_propagate(struct model *m, int cpu, uint64_t id);
void model_level_update(struct model *m, int cpu, uint64_t id, uint64_t now);
void model_path_update(struct model *m, int cpu, uint64_t id, uint64_t now);
void model_path_update_to(struct model *m, int cpu, uint64_t id, uint64_t stop, uint64_t now);
uint64_t model_group_common(const struct model *m, int cpu, uint64_t a, uint64_t b);
void model_rq_pelt_update(struct pelt_cfs *cfs, uint64_t now, unsigned long weight_sum,
		unsigned int h_nr_runnable, int curr);
void model_root_update(const struct model_cpu *c, struct pelt_cfs *cfs, uint64_t now);
uint64_t model_task_place(struct model *m, struct model_task *t, int cpu);
void model_task_set_att(struct model *m, struct model_task *t, uint64_t id);
uint64_t model_tg_internal(uint64_t wire);

/* model_events.c */
void model_cpu_account(struct model_cpu *c, uint64_t ts);
void model_cpu_offset_bound(struct model_cpu *c, int64_t bound, uint64_t ts);
void model_cpu_pelt_update(struct model_cpu *c, uint64_t ts);
void model_task_exit_autogroup(struct model *m, struct model_task *t, int cpu, uint64_t ts);
void model_task_pelt_update(struct model *m, struct model_task *t, uint64_t ts);
void model_task_delay_end(struct model *m, struct model_task *t, uint64_t now, bool walk);
unsigned long model_task_weight(const struct model_task *t);

/* model_lineage.c */
bool model_guess_groups(const struct model *m);
void model_lineage_fork(struct model_task *child, const struct model_task *parent,
			int32_t parent_pid);
bool model_lineage_related(const struct model_task *a, const struct model_task *b);
int32_t model_lineage_key(const struct model_task *t);
const struct pelt_cfs *model_lineage_cfs(struct model *m, const struct model_task *t, int cpu);

/* model_drift.c */
void model_drift_count(struct model *m, const struct model_task *t, int cpu, int delta, bool walk);
void model_drift_refresh(struct model *m, const struct model_task *t, int cpu);
void model_drift_propagate(struct model *m, const struct model_task *t, int cpu);

/* model_eevdf.c */
bool model_guess_delays(const struct model *m);
void model_eevdf_run(struct model_task *t, uint64_t d);
void model_eevdf_place(struct model *m, struct model_task *t, int cpu, uint64_t ts);
bool model_eevdf_block(struct model *m, struct model_task *t, int cpu, uint64_t ts);
void model_eevdf_leave(struct model *m, struct model_task *t, int cpu, uint64_t ts);
bool model_eevdf_eligible(const struct model *m, const struct model_task *t, int cpu, uint64_t ts);

/* model_kernel.c */
bool model_ev_is_record(const struct imb_event *ev);
bool model_ev_touches_cpu(const struct imb_event *ev, int cpu);
bool model_ev_same_clock(const struct imb_event *ev, int cpu, uint64_t clock);
void model_cpu_compare(struct model *m, struct model_cpu *c);
void model_cpu_commit(struct model *m, struct model_cpu *c);
int model_cpu_compare_pending(struct model *m, const struct imb_event *ev);
void model_ev_pelt_cfs(struct model *m, const struct imb_event *ev);
void model_ev_pelt_plain(struct model *m, const struct imb_event *ev);
void model_ev_pelt_se(struct model *m, const struct imb_event *ev);
void model_group_compare_after(struct model *m);
bool model_group_compare_pending(struct model *m, const struct imb_event *ev);
void model_resync(struct model *m, uint64_t ts);

#endif /* IMB_MODEL_INTERNAL_H */

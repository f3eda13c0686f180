/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * core_fixes.bpf.h - kernel field renames, handled in one place.
 *
 * Each helper reads one concept whatever the running kernel calls it.  The
 * `___flavour` structs describe older layouts; libbpf's CO-RE drops the
 * suffix when matching them against the kernel's BTF, and
 * bpf_core_field_exists() picks the branch at load time.  Decisions are
 * never keyed on the kernel version: the 6.18.y stable series back-ported
 * renames that mainline made in 6.19/7.0 (doc/pelt.md §6).
 */
#ifndef IMB_CORE_FIXES_BPF_H
#define IMB_CORE_FIXES_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>

/*
 * 6.14 ("sched/fair: Rename cfs_rq.nr_running into nr_queued",
 * "sched: Rename h_nr_running into h_nr_queued", and "sched/fair: Add new
 * cfs_rq.h_nr_runnable", one series by Vincent Guittot): the counts below
 * carried the _running names before, and h_nr_runnable did not exist.
 */
struct cfs_rq___pre614 {
	unsigned int nr_running;
	unsigned int h_nr_running;
};

/*
 * 6.6 (EEVDF, "sched/fair: Add cfs_rq::avg_vruntime") added the weighted
 * vruntime sums avg_vruntime/avg_load; cfs_rq::min_vruntime dates from CFS.
 * 6.18.35+ stable and 7.0 ("sched/fair: Fix zero_vruntime tracking" and the
 * renames that came with it) call them sum_w_vruntime/sum_weight, and
 * zero_vruntime replaces min_vruntime (6.19 has zero_vruntime with the old
 * sum names).
 */
struct cfs_rq___minv {
	u64 min_vruntime;
};

struct cfs_rq___avgv {
	s64 avg_vruntime;
	u64 avg_load;
};

/* 5.14 ("sched: Change task_struct::state") renamed state to __state. */
struct task_struct___pre514 {
	volatile long state;
};

/*
 * 6.15 ("kernfs: Use RCU to access kernfs_node::parent." and "kernfs: Use
 * RCU to access kernfs_node::name.", Sebastian Andrzej Siewior) renamed
 * kernfs_node::parent to __parent and made both it and name __rcu.  Both
 * are read with probe reads (BPF_CORE_READ), which an __rcu tag does not
 * concern.
 */
struct kernfs_node___pre615 {
	struct kernfs_node *parent;
};

static __always_inline struct kernfs_node *imb_kn_parent(struct kernfs_node *kn)
{
	struct kernfs_node___pre615 *old = (void *)kn;

	if (bpf_core_field_exists(kn->__parent))
		return BPF_CORE_READ(kn, __parent);
	return BPF_CORE_READ(old, parent);
}

/*
 * The helpers below take BTF pointers (tracepoint arguments, or pointers
 * loaded from them): their fields are read with plain loads, which the
 * verifier turns into fault-safe ones, far cheaper than a probe-read
 * helper call each.  The _probe variants are for an address known only as
 * a number (a task pointer kept in a map).
 */
static __always_inline unsigned int imb_cfs_nr_queued(struct cfs_rq *cfs_rq)
{
	if (bpf_core_field_exists(cfs_rq->nr_queued))
		return cfs_rq->nr_queued;
	return ((struct cfs_rq___pre614 *)cfs_rq)->nr_running;
}

static __always_inline unsigned int imb_cfs_h_nr_queued(struct cfs_rq *cfs_rq)
{
	if (bpf_core_field_exists(cfs_rq->h_nr_queued))
		return cfs_rq->h_nr_queued;
	return ((struct cfs_rq___pre614 *)cfs_rq)->h_nr_running;
}

/* Runnable tasks excluding delayed dequeues; before 6.14: h_nr_queued. */
static __always_inline unsigned int imb_cfs_h_nr_runnable(struct cfs_rq *cfs_rq)
{
	if (bpf_core_field_exists(cfs_rq->h_nr_runnable))
		return cfs_rq->h_nr_runnable;
	return imb_cfs_h_nr_queued(cfs_rq);
}

/*
 * imb_cfs_vruntime_ref - the queue's vruntime zero point
 * @is_zero: set to 1 when it is zero_vruntime, 0 for min_vruntime
 */
static __always_inline u64 imb_cfs_vruntime_ref(struct cfs_rq *cfs_rq, int *is_zero)
{
	struct cfs_rq___minv *old = (void *)cfs_rq;

	if (bpf_core_field_exists(cfs_rq->zero_vruntime)) {
		*is_zero = 1;
		return cfs_rq->zero_vruntime;
	}
	*is_zero = 0;
	if (bpf_core_field_exists(old->min_vruntime))
		return old->min_vruntime;
	return 0;
}

/*
 * imb_cfs_vsums - the weighted vruntime sums (6.6+)
 *
 * Returns 1 and fills @sum_w and @sum_weight when the kernel has them.
 */
static __always_inline int imb_cfs_vsums(struct cfs_rq *cfs_rq, s64 *sum_w, u64 *sum_weight)
{
	struct cfs_rq___avgv *old = (void *)cfs_rq;

	if (bpf_core_field_exists(cfs_rq->sum_w_vruntime)) {
		*sum_w = cfs_rq->sum_w_vruntime;
		*sum_weight = cfs_rq->sum_weight;
		return 1;
	}
	if (bpf_core_field_exists(old->avg_vruntime)) {
		*sum_w = old->avg_vruntime;
		*sum_weight = old->avg_load;
		return 1;
	}
	return 0;
}

/*
 * 6.12 (EEVDF's delayed dequeue, "sched/fair: Implement delayed dequeue"):
 * a task that blocks while not eligible stays queued with se.sched_delayed
 * set until it is picked or woken.  Older kernels dequeue at once: 0.
 */
static __always_inline unsigned int imb_se_delayed(struct sched_entity *se)
{
	if (bpf_core_field_exists(se->sched_delayed))
		return se->sched_delayed;
	return 0;
}

static __always_inline unsigned int imb_se_delayed_probe(struct sched_entity *se)
{
	if (bpf_core_field_exists(se->sched_delayed))
		return BPF_CORE_READ(se, sched_delayed);
	return 0;
}

/* The raw task state word (state before 5.14, __state since). */
static __always_inline unsigned int imb_task_state(struct task_struct *p)
{
	struct task_struct___pre514 *old = (void *)p;

	if (bpf_core_field_exists(p->__state))
		return p->__state;
	return (unsigned int)old->state;
}

static __always_inline unsigned int imb_task_state_probe(struct task_struct *p)
{
	struct task_struct___pre514 *old = (void *)p;

	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state);
	return (unsigned int)BPF_CORE_READ(old, state);
}

#endif /* IMB_CORE_FIXES_BPF_H */

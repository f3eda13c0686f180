// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_lineage.c - which task group a new task starts in, where the
 * recording does not say.
 *
 * A new task's initial util is read from its own group's run queue on the
 * CPU it lands on (post_init_entity_util_avg(): half the spare capacity,
 * or the group's util shared by weight), not from the root's.  On a busy
 * host the two differ most: a build's new compiler lands where the root
 * is saturated (cap near 0) but its autogroup holds nothing yet (util 0,
 * so the task starts at 512), and the root's runnable_avg and util_avg
 * carry that 512 for the next 100 ms.
 *
 * A tracefs or trace.dat recording names no groups.  But an autogroup is
 * the session's, and a task keeps its parent's session unless it calls
 * setsid(); cgroups are inherited at fork too.  So tasks forked within
 * the recording are taken to share the group of their oldest ancestor the
 * recording saw (their lineage), and a task the recording never saw
 * forked starts a lineage of its own (its process's).  Two exceptions
 * follow how hosts start things: the children of kthreadd are kernel
 * threads, in the root group; the children of init are services and
 * logins, each a session (and cgroup) of its own.  A process that calls
 * setsid() itself is not seen: its children stay in its parent's lineage.
 *
 * That is enough for a new task's initial util, a sum over the group; the
 * delay guess (model_eevdf.c) needs the run queue a task shares, and
 * there a wrong merge costs more than a missed one (a task taken as
 * delayed updates nothing above its group).  So there two tasks are
 * related only if they are threads of one process or one's process
 * started the other's line within the recording (a build's make and its
 * compilers, a recorder and its workload): siblings are not, as a shell's
 * `setsid` children are each a session of their own.
 */
#include "model_internal.h"

#define LINEAGE_ROOT (-1)	/* the root task group */

/*
 * Whether the input leaves task groups to guess: --plain-events, or no
 * kernel records and no task groups (tracefs, trace.dat, text).
 */
bool model_guess_groups(const struct model *m)
{
	return m->opts.plain_events || (!m->has_kernel_pelt && !m->has_groups);
}

static int32_t process_of(const struct model_task *t)
{
	return t->tgid > 0 ? t->tgid : t->pid;
}

static int32_t lineage_of(const struct model_task *t)
{
	if (t->lineage)
		return t->lineage;
	if (t->pid == 2)
		return LINEAGE_ROOT;	/* kthreadd */
	return t->tgid > 0 ? t->tgid : t->pid;
}

/*
 * A fork: @parent (NULL if the recording has not seen it) started @child,
 * whose tgid is already known where the stream gives it.
 */
void model_lineage_fork(struct model_task *child, const struct model_task *parent,
			int32_t parent_pid)
{
	int n = 0;

	memset(child->ancestors, 0, sizeof(child->ancestors));
	if (parent && parent_pid != 1 && parent_pid != 2) {
		if (process_of(parent) != process_of(child))
			child->ancestors[n++] = process_of(parent);
		for (int i = 0; i < MODEL_ANCESTORS && n < MODEL_ANCESTORS && parent->ancestors[i]; i++)
			child->ancestors[n++] = parent->ancestors[i];
	}
	if (parent_pid == 2)
		child->lineage = LINEAGE_ROOT;
	else if (parent_pid == 1 || !parent)
		child->lineage = 0;	/* its own, from its tgid */
	else
		child->lineage = lineage_of(parent);
}

/* The guessed group of @t as a key: its lineage, -1 the root group. */
int32_t model_lineage_key(const struct model_task *t)
{
	return lineage_of(t);
}

static bool has_ancestor(const struct model_task *t, int32_t process)
{
	for (int i = 0; i < MODEL_ANCESTORS && t->ancestors[i]; i++)
		if (t->ancestors[i] == process)
			return true;
	return false;
}

/*
 * Whether @a and @b are taken as sharing a run queue where the delay guess
 * needs one: threads of one process, or one's process among the other's
 * ancestors.  Nothing without tgids (a trace.dat without its saved_tgids
 * companion): threads cannot be told from processes there.
 */
bool model_lineage_related(const struct model_task *a, const struct model_task *b)
{
	if (a->tgid <= 0 || b->tgid <= 0)
		return false;
	return a->tgid == b->tgid || has_ancestor(a, b->tgid) || has_ancestor(b, a->tgid);
}

/*
 * The run queue @t's guessed group has on @cpu, as post_init reads it:
 * the root's for the root group, else the averages of the tasks of its
 * lineage attached there (queued, running or blocked since they last ran
 * there), decayed to the CPU's PELT clock (the kernel's blocked-average
 * updates keep an idle group's run queue near it).  The result lives in
 * the model until the next call.
 */
const struct pelt_cfs *model_lineage_cfs(struct model *m, const struct model_task *t, int cpu)
{
	uint64_t util = 0, load = 0, now = m->cpus[cpu].pelt_last;
	struct pelt_cfs *k = &m->post_init_k;
	int32_t key = lineage_of(t);

	if (key == LINEAGE_ROOT)
		return model_group_cfs(m, cpu, 0);
	for (size_t i = 0; i < m->nr_tasks; i++) {
		const struct model_task *o = &m->tasks[i];
		uint64_t n;

		if (o == t || o->cpu != cpu || !o->fair || !o->pelt_valid || o->attach_pending ||
		    o->state == MODEL_TASK_DEAD || o->state == MODEL_TASK_UNKNOWN ||
		    lineage_of(o) != key)
			continue;
		n = now > o->avg.last_update_time ? (now - o->avg.last_update_time) / PELT_PERIOD_NS : 0;
		util += pelt_decay_load(o->avg.util_avg, n);
		load += pelt_decay_load(o->avg.load_avg, n);
	}
	*k = *model_group_cfs(m, cpu, 0);
	k->avg.util_avg = (unsigned long)util;
	k->avg.load_avg = (unsigned long)load;
	return k;
}

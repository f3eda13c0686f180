// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * model_tables.c - the model's tables: tasks (a dense array with an open-
 * addressing hash on pid), CPUs (grown as they appear), the pid->tgid
 * hints of a recording, eviction of dead tasks, and the model's life
 * cycle (see model.h, and model_internal.h for how the model is split).
 */
#include "model_internal.h"

#define DEFAULT_MAX_TASKS 65536

static uint32_t pid_hash(int32_t pid)
{
	return (uint32_t)pid * 2654435761u;
}

static int hash_rebuild(struct model *m, size_t cap)
{
	int32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_tasks; i++) {
		size_t j = pid_hash(m->tasks[i].pid) & (cap - 1);

		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (int32_t)(i + 1);
	}
	free(m->hash);
	m->hash = h;
	m->hash_cap = cap;
	return 0;
}

struct model_task *model_task_find(const struct model *m, int32_t pid)
{
	size_t j;

	if (!m->hash_cap)
		return NULL;
	j = pid_hash(pid) & (m->hash_cap - 1);
	while (m->hash[j]) {
		struct model_task *t = &m->tasks[m->hash[j] - 1];

		if (t->pid == pid)
			return t;
		j = (j + 1) & (m->hash_cap - 1);
	}
	return NULL;
}

int model_cpu_grow(struct model *m, int cpu)
{
	struct model_cpu *c;
	int n = cpu + 1;

	if (cpu < 0 || cpu >= MODEL_MAX_CPUS)
		return -ERANGE;
	if (n <= m->nr_cpus)
		return 0;
	c = realloc(m->cpus, (size_t)n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	for (int i = m->nr_cpus; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].cpu = i;
		c[i].curr = -1;
		c[i].capacity = m->opts.capacity[i] ? m->opts.capacity[i] : 1024;
		c[i].last_ns = m->now_ns;
		c[i].idle_since_ns = m->now_ns;
		pelt_cfs_init(&c[i].cfs);
		c[i].cfs.version = m->opts.pelt_version ? (enum pelt_version)(m->opts.pelt_version - 1)
							: PELT_VERSION_DEFAULT;
	}
	m->cpus = c;
	m->nr_cpus = n;
	return 0;
}

struct model *model_new(const struct model_opts *opts)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (opts)
		m->opts = *opts;
	if (!m->opts.max_tasks)
		m->opts.max_tasks = DEFAULT_MAX_TASKS;
	if (hash_rebuild(m, 1024) || (m->opts.nr_cpus > 0 && model_cpu_grow(m, m->opts.nr_cpus - 1))) {
		model_free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	free(m->cpus);
	free(m->tasks);
	free(m->hash);
	free(m->groups);
	free(m->ghash);
	free(m->tgid_hint);
	free(m->adv_cpu);
	free(m->adv_task);
	free(m);
}

/* Drop the dead task seen longest ago to make room; -ENOSPC if none. */
static int task_evict_one(struct model *m)
{
	size_t victim = SIZE_MAX;

	for (size_t i = 0; i < m->nr_tasks; i++) {
		if (m->tasks[i].state != MODEL_TASK_DEAD)
			continue;
		if (victim == SIZE_MAX || m->tasks[i].last_ns < m->tasks[victim].last_ns)
			victim = i;
	}
	if (victim == SIZE_MAX)
		return -ENOSPC;
	model_task_set_att(m, &m->tasks[victim], 0);
	m->tasks[victim] = m->tasks[m->nr_tasks - 1];
	m->nr_tasks--;
	m->evicted++;
	return hash_rebuild(m, m->hash_cap);
}

static int32_t tgid_hint_find(const struct model *m, int32_t pid)
{
	size_t j;

	if (!m->tgid_hint_cap)
		return 0;
	j = pid_hash(pid) & (m->tgid_hint_cap - 1);
	while (m->tgid_hint[2 * j]) {
		if (m->tgid_hint[2 * j] == pid)
			return m->tgid_hint[2 * j + 1];
		j = (j + 1) & (m->tgid_hint_cap - 1);
	}
	return 0;
}

int model_tgid_hint(struct model *m, int32_t pid, int32_t tgid)
{
	struct model_task *t;
	size_t j;

	if (pid <= 0 || tgid <= 0)
		return 0;
	if ((m->nr_tgid_hints + 1) * 2 > m->tgid_hint_cap) {
		size_t cap = m->tgid_hint_cap ? m->tgid_hint_cap * 2 : 1024;
		int32_t *h = calloc(cap * 2, sizeof(*h));

		if (!h)
			return -ENOMEM;
		for (size_t i = 0; i < m->tgid_hint_cap; i++) {
			int32_t p = m->tgid_hint[2 * i];

			if (!p)
				continue;
			j = pid_hash(p) & (cap - 1);
			while (h[2 * j])
				j = (j + 1) & (cap - 1);
			h[2 * j] = p;
			h[2 * j + 1] = m->tgid_hint[2 * i + 1];
		}
		free(m->tgid_hint);
		m->tgid_hint = h;
		m->tgid_hint_cap = cap;
	}
	j = pid_hash(pid) & (m->tgid_hint_cap - 1);
	while (m->tgid_hint[2 * j] && m->tgid_hint[2 * j] != pid)
		j = (j + 1) & (m->tgid_hint_cap - 1);
	if (!m->tgid_hint[2 * j])
		m->nr_tgid_hints++;
	m->tgid_hint[2 * j] = pid;
	m->tgid_hint[2 * j + 1] = tgid;
	m->has_tgids = true;
	t = model_task_find(m, pid);
	if (t)
		t->tgid = tgid;
	return 0;
}

int32_t model_task_job_pid(const struct model *m, const struct model_task *t)
{
	if (t->tgid)
		return t->tgid;
	if (!m->has_tgids && t->parent_pid > 0)
		return t->parent_pid;
	return t->pid;
}

struct model_task *model_task_get(struct model *m, int32_t pid, uint64_t ts)
{
	struct model_task *t = model_task_find(m, pid);
	size_t j;

	if (t)
		return t;
	if (m->nr_tasks >= m->opts.max_tasks && task_evict_one(m))
		return NULL;
	if (m->nr_tasks == m->cap_tasks) {
		size_t cap = m->cap_tasks ? m->cap_tasks * 2 : 256;
		struct model_task *nt = realloc(m->tasks, cap * sizeof(*nt));

		if (!nt)
			return NULL;
		m->tasks = nt;
		m->cap_tasks = cap;
	}
	if ((m->nr_tasks + 1) * 2 > m->hash_cap && hash_rebuild(m, m->hash_cap * 2))
		return NULL;
	t = &m->tasks[m->nr_tasks];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->cpu = -1;
	t->held_cpu = -1;
	t->prio = 120;
	t->fair = true;
	t->first_ns = t->last_ns = t->state_ns = ts;
	t->tgid = tgid_hint_find(m, pid);
	j = pid_hash(pid) & (m->hash_cap - 1);
	while (m->hash[j])
		j = (j + 1) & (m->hash_cap - 1);
	m->hash[j] = (int32_t)(++m->nr_tasks);
	return t;
}

void model_task_set_tgid(struct model *m, struct model_task *t, int32_t tgid)
{
	if (tgid <= 0)
		return;
	t->tgid = tgid;
	m->has_tgids = true;
}

static void task_set_prio(struct model_task *t, int prio)
{
	if (prio < 0 && prio != -1)
		return;
	t->prio = prio;
	t->fair = prio >= 100;	/* 0: the stop class (migration/N), 1-99: real-time */
	t->nice = imb_prio_to_nice(prio);
}

void model_task_note(struct model_task *t, const char *comm, int prio, uint64_t ts)
{
	if (comm && comm[0])
		memcpy(t->comm, comm, IMB_COMM_LEN);
	if (prio >= 0)
		task_set_prio(t, prio);
	t->last_ns = ts;
}

void model_window_reset(struct model *m, uint64_t now_ns)
{
	for (int i = 0; i < m->nr_cpus; i++) {
		m->cpus[i].win_busy_ns = 0;
		m->cpus[i].nr_running_area = 0;
	}
	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		t->win_switch_run_ns = t->win_runtime_ns = 0;
		t->win_runnable_ns = 0;
		t->win_migrations = 0;
		t->win_seen = false;
	}
	m->win_start_ns = now_ns;
	m->win_events = m->win_lost = 0;
}

int model_evict_dead(struct model *m, uint64_t before_ns)
{
	size_t n = 0, cap;

	for (size_t i = 0; i < m->nr_tasks; i++) {
		struct model_task *t = &m->tasks[i];

		if (t->state == MODEL_TASK_DEAD && t->last_ns < before_ns) {
			model_task_set_att(m, t, 0);	/* a group's count never outlives its task */
			m->evicted++;
			continue;
		}
		if (n != i)
			m->tasks[n] = *t;
		n++;
	}
	/* after the tasks: a group the evicted tasks held can go in this pass */
	if (m->nr_groups && model_group_evict_idle(m))
		return -ENOMEM;
	if (n == m->nr_tasks)
		return 0;
	m->nr_tasks = n;
	/* give memory back after a burst of short-lived tasks */
	cap = m->cap_tasks;
	while (cap > 256 && n * 4 < cap)
		cap /= 2;
	if (cap != m->cap_tasks) {
		struct model_task *nt = realloc(m->tasks, cap * sizeof(*nt));

		if (nt) {
			m->tasks = nt;
			m->cap_tasks = cap;
		}
	}
	cap = m->hash_cap;
	while (cap > 1024 && n * 8 < cap)
		cap /= 2;
	return hash_rebuild(m, cap);
}

uint64_t model_task_run_ns(const struct model_task *t)
{
	return t->has_runtime ? t->runtime_ns : t->switch_run_ns;
}

uint64_t model_task_wait_ns(const struct model_task *t)
{
	uint64_t run = model_task_run_ns(t);

	return t->runnable_ns > run ? t->runnable_ns - run : 0;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * analyzer.h - the one small interface every analyzer implements.
 *
 * An analyzer sees each event after the model has applied it, and at each
 * window end the model (read-only) and the window being built (its CPU,
 * task and job rows are already filled), to which it may add findings and
 * fill the CPU columns it owns (group_type, overloaded_fraction, vruntime).
 * At the end of the run it sees the whole-run summary window once more.
 * Analyzers are listed in one table (pipeline.c) and hold their own state.
 */
#ifndef IMB_ANALYZER_H
#define IMB_ANALYZER_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "model.h"
#include "window.h"

/* Thresholds and knobs shared by the analyzers; defaults in pipeline.c. */
struct analyzer_config {
	uint64_t window_ns;		/* window length */
	double unfairness_threshold;	/* finding when above (0.10) */
	uint64_t unfairness_min_ns;	/* ... for at least this long */
	unsigned int imbalance_pct_smt;	/* SMT domain: CPUs of a core, when cores are known (110) */
	unsigned int imbalance_pct;	/* MC/LLC domain's imbalance_pct: CPU groups (117) */
	unsigned int imbalance_pct_pkg;	/* package domain: LLC groups (117; 125 before 5.10) */
	unsigned int imbalance_pct_numa;	/* NUMA domains: node groups (117; 125 before 5.10) */
	double overload_min_fraction;	/* window counts as overloaded above */
	double disagreement_min_fraction;	/* ... as fixed/scaled disagreement above (0.25) */
	uint64_t simultaneous_ns;	/* wake-ups this close count as together (100 us) */
	unsigned int drift_min_windows;	/* windows of drift before a finding (2) */
	unsigned int concentration_even_pct;	/* top task's share >= this % of an even spread (200) */
	unsigned int numa_min_count;	/* conflicting moves / bounces for a finding (2) */
	uint64_t numa_undo_ns;		/* a move undone within this is a bounce (1 s) */
	uint64_t numa_link_ns;		/* a migrate this soon after a NUMA move/swap of its task
					 * carries that move out (100 ms; migration and numa) */
	double competing_min;		/* competing: runnable >= this x the job's most (0.90) */
	double span_runnable_min;	/* runnable the whole span: >= this of its life (0.95) */
	double span_life_min;		/* ... and a life >= this of the run's longest (0.90) */
	double drift_threshold;		/* vruntime rate difference (0.10) */
	unsigned int migration_min;	/* migrations before concentration counts */
	double concentration_threshold;	/* share of migrations on one task (0.5) */
	uint64_t pingpong_ns;		/* A->B->A within this is ping-pong */
	uint64_t overload_min_ns;	/* overloaded windows spanning this make a finding */
	unsigned int pingpong_min;	/* ping-pongs of one task before a finding */
	int group_by;			/* enum analyzer_group_by */
	bool live;			/* evict tasks that died a window ago, keep only open findings (bounded memory) */
	int nr_nodes;			/* NUMA nodes (1 unless topology known) */
	int cpu_node[1024];		/* CPU -> node */
	int llc_of[1024];		/* CPU -> LLC id (0 unless known) */
	int core_of[1024];		/* CPU -> core id, SMT siblings share it (0 unless known) */
};

enum analyzer_group_by {
	ANALYZER_GROUP_PROCESS = 0,	/* by tgid (falls back to pid) */
	ANALYZER_GROUP_COMM,
	ANALYZER_GROUP_CGROUP,
};

/* Findings sink: analyzers call this to emit or update a finding. */
struct finding_list {
	struct imb_finding *items;
	size_t nr, cap;
	uint64_t next_id;
};

/**
 * finding_list_add - append a finding (copied); returns it or NULL on ENOMEM
 */
struct imb_finding *finding_list_add(struct finding_list *l, const struct imb_finding *f);

/**
 * analyzer_job_key - the job a task belongs to under cfg->group_by:
 * "process:TGID", "comm:NAME" or "cgroup:ID" into @key, its kind into @kind
 */
void analyzer_job_key(const struct analyzer_config *cfg, const struct model *m,
		      const struct model_task *t, char *key, size_t len, char *kind, size_t klen);

struct analyzer_ops {
	const char *name;
	/* returns private state or NULL on ENOMEM */
	void *(*create)(const struct analyzer_config *cfg);
	void (*destroy)(void *state);
	/* after the model applied @ev; may be NULL */
	void (*event)(void *state, const struct model *m, const struct imb_event *ev);
	/* at a window end: fill columns of @w, add findings to @out */
	void (*window)(void *state, const struct model *m, struct imb_window *w,
		       struct finding_list *out);
	/* new thresholds while running (SIGHUP; window_ns and group_by do not
	 * change); may be NULL when the analyzer reads none */
	void (*configure)(void *state, const struct analyzer_config *cfg);
	/* at the end of the run, with the whole-run summary; may be NULL */
	void (*finish)(void *state, const struct model *m, struct imb_window *summary,
		       struct finding_list *out);
};

#endif /* IMB_ANALYZER_H */

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * window.h - what the pipeline publishes at the end of each window.
 *
 * A window (default 1 s) closes with one immutable struct imb_window: a row
 * per CPU, per task that ran or waited, per job, and the findings that the
 * analyzers emitted or updated.  The sinks (store, HTTP, alerts, report)
 * read only these structs, never the live model, so they can be built and
 * tested on their own.  Field names match doc/interfaces.md.
 */
#ifndef IMB_WINDOW_H
#define IMB_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"

/* Load-balancer group classification (kernel enum group_type, 6.6+ order). */
enum imb_group_type {
	IMB_GROUP_HAS_SPARE = 0,
	IMB_GROUP_FULLY_BUSY,
	IMB_GROUP_MISFIT_TASK,
	IMB_GROUP_SMT_BALANCE,
	IMB_GROUP_ASYM_PACKING,
	IMB_GROUP_IMBALANCED,
	IMB_GROUP_OVERLOADED,
};

/* "has_spare", "fully_busy", ..., "overloaded" */
const char *imb_group_type_name(int type);

enum imb_severity {
	IMB_SEV_INFO = 0,
	IMB_SEV_WARNING,
	IMB_SEV_CRITICAL,
};

/* "info", "warning", "critical"; parse returns -1 when unknown. */
const char *imb_severity_name(int sev);
int imb_severity_parse(const char *name);

/* Sentinel for "the kernel's value is unknown" in kernel_* fields. */
#define IMB_UNKNOWN UINT64_MAX

struct imb_cpu_sample {
	int cpu;
	uint64_t util_avg;		/* engine, capacity units (0..1024) */
	uint64_t runnable_avg;		/* engine, 1024 per runnable task */
	uint64_t load_avg;		/* engine, weight units */
	uint32_t nr_running;		/* at window end */
	uint32_t capacity;		/* 1024 unless known */
	int group_type;			/* enum imb_group_type, fixed threshold */
	int group_type_scaled;		/* same, threshold scaled by nr_running */
	double overloaded_fraction;	/* of the window spent overloaded */
	uint64_t kernel_util_avg;	/* IMB_UNKNOWN when not in the stream */
	uint64_t kernel_runnable_avg;
	uint64_t kernel_load_avg;
	double vruntime_rate;		/* vruntime progress / wall time in window */
	uint64_t vruntime;		/* min/zero_vruntime or model equivalent */
	uint64_t busy_ns;		/* time a task ran in the window */
	uint64_t idle_with_waiters_ns;	/* idle while another CPU had waiters */
	uint64_t idle_with_waiters_llc_ns;	/* ... a CPU of its LLC (IMB_UNKNOWN: no LLC level) */
	uint64_t idle_with_waiters_node_ns;	/* ... a CPU of its node (IMB_UNKNOWN: no node level) */
};

struct imb_task_sample {
	int32_t pid;
	int32_t tgid;
	char comm[IMB_COMM_LEN];
	int cpu;			/* last CPU */
	int nice;
	uint64_t run_ns;		/* CPU time in the window (or run) */
	uint64_t wait_ns;		/* runnable but waiting */
	uint32_t migrations;
	double share;			/* run_ns / span */
	double fair_share;		/* what a fair scheduler would give */
	uint64_t util_avg;
	uint64_t runnable_avg;
	uint64_t load_avg;
};

struct imb_job_sample {
	char key[64];			/* "pid:1234", "cgroup:/x", "comm:hog" */
	char kind[12];			/* "process", "cgroup", "comm" */
	char path[256];			/* cgroup job: its v2 path ("/a/b"), "" unknown;
					 * filled only by a live pipeline's label callback */
	uint32_t tasks;
	double unfairness;		/* 1 - min/max run_ns, 0..1 */
	double mean_deviation;		/* mean |share - fair| / fair */
	double max_deviation;
	double jain_index;		/* Jain's fairness index over run_ns/fair */
};

struct imb_finding {
	uint64_t id;			/* unique within a run */
	char kind[24];			/* overload, unfairness, ... (doc/interfaces.md) */
	int severity;			/* enum imb_severity */
	uint64_t t_start_ns;
	uint64_t t_end_ns;
	char subject[64];		/* "cpu1", "job pid:42", "pid 1234" */
	double value;
	double threshold;
	char summary[256];		/* one sentence for people */
	char evidence[1024];		/* JSON object text with the numbers */
	bool open;			/* still ongoing at this window's end */
};

/* An alert: a condition that held long enough (or stopped holding). */
struct imb_alert {
	struct imb_finding finding;	/* kind, subject, value, threshold, time range */
	char state[12];			/* "fired" or "recovered" */
	uint64_t t_ns;			/* when, on the event clock */
	char evidence_file[256];	/* flight-recorder dump, "" none */
};

struct imb_window {
	uint64_t t_start_ns;
	uint64_t t_end_ns;
	uint64_t events;		/* events in the window */
	uint64_t lost_events;		/* lost events reported in the window */
	size_t nr_cpus;
	struct imb_cpu_sample *cpus;
	size_t nr_tasks;
	struct imb_task_sample *tasks;
	size_t nr_jobs;
	struct imb_job_sample *jobs;
	size_t nr_findings;		/* findings opened, updated or closed */
	struct imb_finding *findings;
	size_t nr_alerts;		/* alerts fired or recovered at this window's end */
	struct imb_alert *alerts;
};

/**
 * imb_window_free - free a window and all its arrays; accepts NULL
 */
void imb_window_free(struct imb_window *w);

#endif /* IMB_WINDOW_H */

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hostinfo.h - what this host offers the live daemon.
 *
 * hostinfo_probe() looks, without changing anything (it mounts nothing and
 * loads nothing), at the kernel release, its BTF, the process's
 * capabilities, tracefs, the scheduler tracepoints (as BTF typedefs for BPF
 * and as tracefs event formats), the kernel's field flavours (6.14 and
 * 6.18.35 renames), CPU capacities and NUMA nodes, and decides whether live
 * mode can run (through BPF or through the tracefs fallback).  `imbalanced
 * check` prints the result.
 */
#ifndef IMB_HOSTINFO_H
#define IMB_HOSTINFO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/source/pelt_hook.h"

#define HOSTINFO_MAX_CPUS	1024
#define HOSTINFO_MAX_NODES	64
#define HOSTINFO_NR_TP		14
#define HOSTINFO_REASON_LEN	256

/* One scheduler tracepoint. */
struct hostinfo_tp {
	const char *name;	/* static: "pelt_cfs_tp", "sched_switch", ... */
	bool btf;		/* btf_trace_<name> typedef in vmlinux BTF */
	bool tracefs;		/* events/sched/<name>/format exists (bare tracepoints: never) */
	bool bare;		/* bare tracepoint: BPF only, no tracefs event */
	bool required;		/* live mode needs it */
};

struct hostinfo_node {
	int id;			/* node number */
	char cpulist[128];	/* as in sysfs, e.g. "0-1" */
};

struct hostinfo {
	char kernel[65];		/* uname -r */
	char machine[65];		/* uname -m */
	bool btf;			/* /sys/kernel/btf/vmlinux readable and parsed */
	bool cap_bpf, cap_perfmon, cap_sys_admin;	/* effective capabilities */
	bool cap_sys_nice;		/* the event reader may raise its priority (the nice key) */
	char lockdown[32];		/* "none", "integrity", "confidentiality", "" unknown */
	bool bpf_permitted;		/* capabilities allow loading tracing BPF */
	bool tracefs_mounted;
	bool tracefs_mountable;		/* not mounted, but the kernel has tracefs and we may mount */
	char tracefs_path[256];		/* mount point, or where it would be mounted */
	struct hostinfo_tp tp[HOSTINFO_NR_TP];
	int nr_tp;
	/* field flavours of struct cfs_rq / struct rq ("" when BTF is absent) */
	char f_nr_queued[16];		/* "nr_queued" (6.14+) or "nr_running" */
	bool f_h_nr_runnable;		/* cfs_rq::h_nr_runnable (6.14+) */
	char f_vruntime_ref[16];	/* "zero_vruntime" or "min_vruntime" */
	char f_vsums[16];		/* "sum_w_vruntime", "avg_vruntime" or "" (pre-6.6) */
	bool f_lost_idle_time;		/* rq::lost_idle_time */
	bool f_switch_prev_state_arg;	/* sched_switch passes prev_state (5.18+) */
	int nr_cpus;			/* CPUs present (configured) */
	int nr_cpus_online;
	uint16_t capacity[HOSTINFO_MAX_CPUS];	/* cpu_capacity, 1024 when absent */
	int nr_nodes;
	struct hostinfo_node node[HOSTINFO_MAX_NODES];
	bool bpf_ok;			/* the BPF source can run */
	char bpf_reason[HOSTINFO_REASON_LEN];	/* why not ("" when ok) */
	bool tracefs_ok;		/* the tracefs fallback can run */
	char tracefs_reason[HOSTINFO_REASON_LEN];
	struct pelt_hook_status pelt_hook;	/* filled by pelt_hook_probe() (check), not by
					 * hostinfo_probe(), which loads nothing */
	bool live_ok;			/* bpf_ok || tracefs_ok */
	char reason[2 * HOSTINFO_REASON_LEN + 32];	/* why live mode cannot run ("" when it can) */
};

/**
 * hostinfo_probe - fill @h with what this host supports
 *
 * Never fails as a whole: what cannot be read is reported as absent.
 * Returns 0.
 */
int hostinfo_probe(struct hostinfo *h);

/** hostinfo_pelt_tracepoints - the kernel has pelt_cfs_tp and pelt_se_tp in its BTF */
bool hostinfo_pelt_tracepoints(const struct hostinfo *h);

/**
 * hostinfo_pelt_line - where the kernel's PELT values come from, one line:
 * "tracepoints (fexit update_load_avg: EPERM at attach)", "fexit ..."
 */
void hostinfo_pelt_line(const struct hostinfo *h, char *buf, size_t len);

/** hostinfo_print_text - the human report of `imbalanced check` */
void hostinfo_print_text(const struct hostinfo *h, FILE *f);

/** hostinfo_print_json - one JSON object (`imbalanced check --json`) */
void hostinfo_print_json(const struct hostinfo *h, FILE *f);

/**
 * hostinfo_cpulist_parse - parse a kernel CPU list ("0-3,8,10-11")
 * @s: the list (a trailing newline is allowed)
 * @fn: called once per CPU number
 *
 * Returns 0, or -EINVAL on a malformed list.
 */
int hostinfo_cpulist_parse(const char *s, void (*fn)(int cpu, void *ctx), void *ctx);

/**
 * hostinfo_cap_effective - the effective capability set of this process
 * @eff: receives CapEff of /proc/self/status (bit n = capability n)
 *
 * Returns 0, or -errno when it cannot be read.
 */
int hostinfo_cap_effective(uint64_t *eff);

/**
 * hostinfo_tp_find - the entry of tracepoint @name in @h, NULL if not probed
 */
const struct hostinfo_tp *hostinfo_tp_find(const struct hostinfo *h, const char *name);

#endif /* IMB_HOSTINFO_H */

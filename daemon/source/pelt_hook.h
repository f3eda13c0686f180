/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pelt_hook.h - may the BPF source hook update_load_avg()?
 *
 * The kernel's PELT values reach the BPF source through the bare
 * tracepoints pelt_cfs_tp and pelt_se_tp, which fire only at some of the
 * kernel's updates.  An fexit program on update_load_avg() sees every
 * update it makes.  Whether that hook can be used is a property of the
 * running kernel that only trying tells: the function must be in the
 * kernel's BTF (it is static and may be inlined away), and the kernel must
 * let a tracing program load and attach to it (trampolines need ftrace's
 * direct calls; lockdown or a missing config refuse them).  This file
 * finds out, once, by loading and attaching the real hook program alone
 * and detaching it at once, and words the answer for `check` and the log.
 */
#ifndef IMB_PELT_HOOK_H
#define IMB_PELT_HOOK_H

#include <stdbool.h>
#include <stddef.h>

#define PELT_HOOK_FUNC		"update_load_avg"
#define PELT_HOOK_REASON_LEN	160

struct pelt_hook_status {
	bool probed;			/* pelt_hook_probe() ran */
	bool in_btf;			/* PELT_HOOK_FUNC is a function in the kernel's BTF */
	bool usable;			/* the hook program loaded and attached */
	int err;			/* positive errno of the step that failed, 0 none */
	char reason[PELT_HOOK_REASON_LEN];	/* why not usable ("" when usable) */
};

/**
 * pelt_hook_probe - find out whether the update_load_avg() hook can run here
 * @st: receives the answer
 *
 * Looks the function up in /sys/kernel/btf/vmlinux, then loads the hook
 * program of the BPF object alone (every other program off) and attaches
 * it, and destroys both at once.  Never fails as a whole: a refusal is the
 * answer (@st->usable false, @st->reason saying which step and errno).
 */
void pelt_hook_probe(struct pelt_hook_status *st);

/**
 * pelt_hook_mode - the PELT source in one word
 * @st: a probe's answer (or the BPF source's, when it loaded the hook)
 * @tracepoints: the kernel has pelt_cfs_tp/pelt_se_tp in its BTF
 *
 * "fexit" (the hook, with the tracepoints), "tracepoints", or "none".
 */
const char *pelt_hook_mode(const struct pelt_hook_status *st, bool tracepoints);

/**
 * pelt_hook_describe - one line for `check` and the daemon's log, e.g.
 * "tracepoints (fexit update_load_avg: EPERM at attach)"
 */
void pelt_hook_describe(const struct pelt_hook_status *st, bool tracepoints, char *buf,
			size_t len);

#endif /* IMB_PELT_HOOK_H */

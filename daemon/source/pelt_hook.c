// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pelt_hook.c - find out whether the fexit hook on update_load_avg() can run.
 *
 * The probe opens the BPF object (the same skeleton the BPF source loads),
 * turns every program off but the hook, shrinks the ring buffer, loads and
 * attaches, and destroys the object: what the kernel refuses, and at which
 * step, is the answer `check` prints and the BPF source acts on.  libbpf's
 * own messages are caught for the duration and the previous printer put
 * back, so a refusal prints nothing on its own.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/imbalance.h"
#include "bpf/imbalance.skel.h"
#include "daemon/source/pelt_hook.h"

/* The hook's program in bpf/imbalance.bpf.c. */
#define HOOK_PROG	"imb_ula_exit"

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* "EPERM at attach": the errno's name (its number where glibc has none). */
static void refused(struct pelt_hook_status *st, int err, const char *step)
{
	const char *name = strerrorname_np(err);

	st->err = err;
	if (name)
		snprintf(st->reason, sizeof(st->reason), "%s at %s", name, step);
	else
		snprintf(st->reason, sizeof(st->reason), "errno %d at %s", err, step);
}

void pelt_hook_probe(struct pelt_hook_status *st)
{
	libbpf_print_fn_t old;
	struct imbalance *skel;
	struct bpf_program *p, *hook = NULL;
	struct bpf_link *link;
	struct btf *btf;
	int ret;

	memset(st, 0, sizeof(*st));
	st->probed = true;
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(st->reason, sizeof(st->reason), "no kernel BTF");
		st->err = ENOENT;
		return;
	}
	old = libbpf_set_print(quiet_print);
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		refused(st, errno ? errno : EINVAL, "reading BTF");
		goto out;
	}
	st->in_btf = btf__find_by_name_kind(btf, PELT_HOOK_FUNC, BTF_KIND_FUNC) >= 0;
	btf__free(btf);
	if (!st->in_btf) {
		snprintf(st->reason, sizeof(st->reason), "not in BTF");
		st->err = ENOENT;
		goto out;
	}
	skel = imbalance__open();
	if (!skel) {
		refused(st, errno ? errno : EINVAL, "open");
		goto out;
	}
	bpf_object__for_each_program(p, skel->obj) {
		bool on = !strcmp(bpf_program__name(p), HOOK_PROG);

		bpf_program__set_autoload(p, on);
		if (on)
			hook = p;
	}
	if (!hook) {
		snprintf(st->reason, sizeof(st->reason), "the BPF object has no %s", HOOK_PROG);
		st->err = ENOENT;
		goto destroy;
	}
	/* the body as the source loads it, writing where nobody reads */
	skel->rodata->events_mask = IMB_W_BIT(IMB_W_PELT_CFS) | IMB_W_BIT(IMB_W_PELT_SE);
	bpf_map__set_max_entries(skel->maps.events, 64 * 1024);
	ret = imbalance__load(skel);
	if (ret) {
		refused(st, -ret, "load");
		goto destroy;
	}
	link = bpf_program__attach(hook);
	if (!link) {
		refused(st, errno ? errno : EINVAL, "attach");
		goto destroy;
	}
	bpf_link__destroy(link);
	st->usable = true;
destroy:
	imbalance__destroy(skel);
out:
	libbpf_set_print(old);
}

const char *pelt_hook_mode(const struct pelt_hook_status *st, bool tracepoints)
{
	if (st->usable)
		return "fexit";
	return tracepoints ? "tracepoints" : "none";
}

void pelt_hook_describe(const struct pelt_hook_status *st, bool tracepoints, char *buf,
			size_t len)
{
	if (st->usable)
		snprintf(buf, len, "fexit %s%s", PELT_HOOK_FUNC,
			 tracepoints ? " and the tracepoints" : "");
	else
		snprintf(buf, len, "%s (fexit %s: %s)", tracepoints ? "tracepoints" : "none",
			 PELT_HOOK_FUNC, st->probed ? st->reason : "not tried");
}

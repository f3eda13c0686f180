// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hostinfo.c - probe what this host offers the live daemon (`imbalanced check`).
 *
 * Reads only: uname, /proc/self/status, /proc/mounts, /proc/filesystems,
 * /sys/kernel/security/lockdown, the kernel's BTF (through libbpf's BTF
 * parser, no program is loaded), tracefs event directories when tracefs is
 * already mounted, and sysfs CPU/NUMA files.  Nothing is mounted or changed.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/btf.h>

#include "daemon/host/hostinfo.h"

#define CAP_SYS_ADMIN_BIT	21
#define CAP_SYS_NICE_BIT	23
#define CAP_PERFMON_BIT		38
#define CAP_BPF_BIT		39

/* Tracepoints we use: bare ones are BPF only. */
static const struct {
	const char *name;
	bool bare;
	bool required;
} tp_list[HOSTINFO_NR_TP] = {
	{ "sched_switch", false, true },
	{ "sched_wakeup", false, true },
	{ "sched_wakeup_new", false, false },
	{ "sched_migrate_task", false, true },
	{ "sched_process_fork", false, false },
	{ "sched_process_exit", false, false },
	{ "sched_stat_runtime", false, false },
	{ "sched_move_numa", false, false },
	{ "sched_swap_numa", false, false },
	{ "sched_stick_numa", false, false },
	{ "pelt_cfs_tp", true, false },
	{ "pelt_se_tp", true, false },
	{ "pelt_rt_tp", true, false },
	{ "sched_update_nr_running_tp", true, false },
};

int hostinfo_cpulist_parse(const char *s, void (*fn)(int cpu, void *ctx), void *ctx)
{
	while (*s && *s != '\n') {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				return -EINVAL;
			b = strtol(s, &end, 10);
		}
		if (b < a || b > 1 << 20)
			return -EINVAL;
		for (; a <= b; a++)
			fn((int)a, ctx);
		s = end;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

int hostinfo_cap_effective(uint64_t *eff)
{
	char line[256];
	int ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "CapEff: %llx", &v) == 1) {
			*eff = v;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

const struct hostinfo_tp *hostinfo_tp_find(const struct hostinfo *h, const char *name)
{
	int i;

	for (i = 0; i < h->nr_tp; i++)
		if (!strcmp(h->tp[i].name, name))
			return &h->tp[i];
	return NULL;
}

/* First line of a small file, newline stripped; -errno when unreadable. */
static int file_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static void tracefs_probe(struct hostinfo *h)
{
	char line[512], dev[128], dir[256], type[64];
	bool have_fs = false;
	FILE *f;

	f = fopen("/proc/mounts", "re");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %255s %63s", dev, dir, type) != 3)
			continue;
		if (!strcmp(type, "tracefs") && !h->tracefs_mounted) {
			h->tracefs_mounted = true;
			snprintf(h->tracefs_path, sizeof(h->tracefs_path), "%s", dir);
		}
	}
	if (f)
		fclose(f);
	if (h->tracefs_mounted)
		return;
	f = fopen("/proc/filesystems", "re");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "\ttracefs"))
			have_fs = true;
	if (f)
		fclose(f);
	snprintf(h->tracefs_path, sizeof(h->tracefs_path), "/sys/kernel/tracing");
	h->tracefs_mountable = have_fs && h->cap_sys_admin &&
			       access("/sys/kernel/tracing", F_OK) == 0;
}

/* Does struct @sname have member @field (in the kernel's BTF)? */
static bool btf_member(const struct btf *btf, const char *sname, const char *field)
{
	const struct btf_type *t;
	const struct btf_member *m;
	int id, i;

	id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);

		if (n && !strcmp(n, field))
			return true;
	}
	return false;
}

static void btf_probe(struct hostinfo *h)
{
	struct btf *btf;
	int i;

	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return;
	h->btf = true;
	for (i = 0; i < h->nr_tp; i++) {
		char name[64];
		int id;

		snprintf(name, sizeof(name), "btf_trace_%s", h->tp[i].name);
		id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
		h->tp[i].btf = id >= 0;
		if (id >= 0 && !strcmp(h->tp[i].name, "sched_switch")) {
			const struct btf_type *t = btf__type_by_id(btf, id);

			t = t ? btf__type_by_id(btf, t->type) : NULL;
			t = t && btf_is_ptr(t) ? btf__type_by_id(btf, t->type) : NULL;
			h->f_switch_prev_state_arg = t && btf_is_func_proto(t) && btf_vlen(t) >= 5;
		}
	}
	snprintf(h->f_nr_queued, sizeof(h->f_nr_queued), "%s",
		 btf_member(btf, "cfs_rq", "nr_queued") ? "nr_queued" :
		 btf_member(btf, "cfs_rq", "nr_running") ? "nr_running" : "");
	h->f_h_nr_runnable = btf_member(btf, "cfs_rq", "h_nr_runnable");
	snprintf(h->f_vruntime_ref, sizeof(h->f_vruntime_ref), "%s",
		 btf_member(btf, "cfs_rq", "zero_vruntime") ? "zero_vruntime" :
		 btf_member(btf, "cfs_rq", "min_vruntime") ? "min_vruntime" : "");
	snprintf(h->f_vsums, sizeof(h->f_vsums), "%s",
		 btf_member(btf, "cfs_rq", "sum_w_vruntime") ? "sum_w_vruntime" :
		 btf_member(btf, "cfs_rq", "avg_vruntime") ? "avg_vruntime" : "");
	h->f_lost_idle_time = btf_member(btf, "rq", "lost_idle_time");
	btf__free(btf);
}

static void cpus_probe(struct hostinfo *h)
{
	char path[128], buf[64];
	int cpu;
	long n;

	n = sysconf(_SC_NPROCESSORS_CONF);
	h->nr_cpus = n > 0 ? (int)(n < HOSTINFO_MAX_CPUS ? n : HOSTINFO_MAX_CPUS) : 0;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	h->nr_cpus_online = n > 0 ? (int)n : 0;
	for (cpu = 0; cpu < h->nr_cpus; cpu++) {
		h->capacity[cpu] = 1024;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpu_capacity", cpu);
		if (!file_line(path, buf, sizeof(buf))) {
			long c = strtol(buf, NULL, 10);

			if (c > 0 && c <= 65535)
				h->capacity[cpu] = (uint16_t)c;
		}
	}
}

static int node_cmp(const void *a, const void *b)
{
	return ((const struct hostinfo_node *)a)->id - ((const struct hostinfo_node *)b)->id;
}

static void nodes_probe(struct hostinfo *h)
{
	glob_t g;
	size_t i;

	if (glob("/sys/devices/system/node/node[0-9]*", GLOB_ONLYDIR, NULL, &g))
		return;
	for (i = 0; i < g.gl_pathc && h->nr_nodes < HOSTINFO_MAX_NODES; i++) {
		struct hostinfo_node *nd = &h->node[h->nr_nodes];
		char path[300];

		if (sscanf(g.gl_pathv[i], "/sys/devices/system/node/node%d", &nd->id) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/cpulist", g.gl_pathv[i]);
		if (file_line(path, nd->cpulist, sizeof(nd->cpulist)))
			nd->cpulist[0] = '\0';
		h->nr_nodes++;
	}
	globfree(&g);
	qsort(h->node, h->nr_nodes, sizeof(h->node[0]), node_cmp);
}

/* May this process create an instance (and read its buffers)? */
static bool tracefs_writable(const struct hostinfo *h)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/instances", h->tracefs_path);
	return faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0;
}

static void verdict(struct hostinfo *h)
{
	const struct hostinfo_tp *sw = hostinfo_tp_find(h, "sched_switch");
	int i;

	if (!h->btf)
		snprintf(h->bpf_reason, sizeof(h->bpf_reason),
			 "kernel has no BTF (/sys/kernel/btf/vmlinux)");
	else if (!h->bpf_permitted)
		snprintf(h->bpf_reason, sizeof(h->bpf_reason),
			 "BPF not permitted: need CAP_BPF and CAP_PERFMON");
	else if (!strcmp(h->lockdown, "confidentiality"))
		snprintf(h->bpf_reason, sizeof(h->bpf_reason),
			 "kernel lockdown (confidentiality) forbids BPF reads of kernel memory");
	else if (!sw || !sw->btf)
		snprintf(h->bpf_reason, sizeof(h->bpf_reason),
			 "kernel BTF has no sched_switch tracepoint");
	else
		h->bpf_ok = true;

	if (!h->tracefs_mounted && !h->tracefs_mountable)
		snprintf(h->tracefs_reason, sizeof(h->tracefs_reason),
			 "tracefs is not mounted and cannot be mounted (need CAP_SYS_ADMIN and tracefs)");
	else if (h->tracefs_mounted && !tracefs_writable(h))
		/* the instance is a mkdir and the events are file writes:
		 * file permissions decide, not a capability */
		snprintf(h->tracefs_reason, sizeof(h->tracefs_reason),
			 "%.200s/instances is not writable (run as root)", h->tracefs_path);
	else if (h->tracefs_mounted) {
		for (i = 0; i < h->nr_tp; i++)
			if (h->tp[i].required && !h->tp[i].bare && !h->tp[i].tracefs) {
				snprintf(h->tracefs_reason, sizeof(h->tracefs_reason),
					 "tracefs has no sched/%s event", h->tp[i].name);
				break;
			}
		h->tracefs_ok = i == h->nr_tp;
	} else {
		h->tracefs_ok = true;	/* events checked once mounted */
	}

	h->live_ok = h->bpf_ok || h->tracefs_ok;
	if (!h->live_ok)
		snprintf(h->reason, sizeof(h->reason), "%s; tracefs fallback: %s",
			 h->bpf_reason, h->tracefs_reason);
}

int hostinfo_probe(struct hostinfo *h)
{
	struct utsname u;
	uint64_t eff = 0;
	char buf[128];
	int i;

	memset(h, 0, sizeof(*h));
	if (!uname(&u)) {
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
		snprintf(h->machine, sizeof(h->machine), "%s", u.machine);
	}
	if (!hostinfo_cap_effective(&eff)) {
		h->cap_bpf = eff & (1ull << CAP_BPF_BIT);
		h->cap_perfmon = eff & (1ull << CAP_PERFMON_BIT);
		h->cap_sys_admin = eff & (1ull << CAP_SYS_ADMIN_BIT);
		h->cap_sys_nice = eff & (1ull << CAP_SYS_NICE_BIT);
	}
	/* Tracing programs need CAP_BPF + CAP_PERFMON (5.8+) or CAP_SYS_ADMIN. */
	h->bpf_permitted = h->cap_sys_admin || (h->cap_bpf && h->cap_perfmon);
	if (!file_line("/sys/kernel/security/lockdown", buf, sizeof(buf))) {
		char *a = strchr(buf, '['), *b = a ? strchr(a, ']') : NULL;

		if (a && b) {
			*b = '\0';
			snprintf(h->lockdown, sizeof(h->lockdown), "%s", a + 1);
		}
	}
	h->nr_tp = HOSTINFO_NR_TP;
	for (i = 0; i < h->nr_tp; i++) {
		h->tp[i].name = tp_list[i].name;
		h->tp[i].bare = tp_list[i].bare;
		h->tp[i].required = tp_list[i].required;
	}
	tracefs_probe(h);
	if (h->tracefs_mounted) {
		for (i = 0; i < h->nr_tp; i++) {
			char path[300];

			if (h->tp[i].bare)
				continue;
			snprintf(path, sizeof(path), "%s/events/sched/%s/format",
				 h->tracefs_path, h->tp[i].name);
			h->tp[i].tracefs = access(path, F_OK) == 0;
		}
	}
	btf_probe(h);
	cpus_probe(h);
	nodes_probe(h);
	verdict(h);
	return 0;
}

bool hostinfo_pelt_tracepoints(const struct hostinfo *h)
{
	const struct hostinfo_tp *cfs = hostinfo_tp_find(h, "pelt_cfs_tp");
	const struct hostinfo_tp *se = hostinfo_tp_find(h, "pelt_se_tp");

	return cfs && cfs->btf && se && se->btf;
}

void hostinfo_pelt_line(const struct hostinfo *h, char *buf, size_t len)
{
	if (!h->bpf_ok)
		snprintf(buf, len, "none (the BPF source cannot run: no kernel PELT values)");
	else
		pelt_hook_describe(&h->pelt_hook, hostinfo_pelt_tracepoints(h), buf, len);
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

void hostinfo_print_text(const struct hostinfo *h, FILE *f)
{
	int i;

	fprintf(f, "kernel:          %s (%s)\n", h->kernel, h->machine);
	fprintf(f, "BTF:             %s\n", h->btf ? "yes (/sys/kernel/btf/vmlinux)" : "no");
	fprintf(f, "capabilities:    CAP_BPF %s, CAP_PERFMON %s, CAP_SYS_ADMIN %s, CAP_SYS_NICE %s%s\n",
		yes(h->cap_bpf), yes(h->cap_perfmon), yes(h->cap_sys_admin), yes(h->cap_sys_nice),
		h->cap_sys_nice ? "" : " (the event reader cannot go below its start nice level)");
	fprintf(f, "lockdown:        %s\n", h->lockdown[0] ? h->lockdown : "unknown");
	fprintf(f, "tracefs:         %s %s\n", h->tracefs_path,
		h->tracefs_mounted ? "(mounted)" :
		h->tracefs_mountable ? "(not mounted, mountable)" : "(not available)");
	fprintf(f, "tracepoints:     %-28s %-5s %s\n", "name", "BTF", "tracefs");
	for (i = 0; i < h->nr_tp; i++)
		fprintf(f, "                 %-28s %-5s %s\n", h->tp[i].name, yes(h->tp[i].btf),
			h->tp[i].bare ? "-" : !h->tracefs_mounted ? "?" : yes(h->tp[i].tracefs));
	fprintf(f, "cfs_rq fields:   %s, h_nr_runnable %s, %s, sums %s\n",
		h->f_nr_queued[0] ? h->f_nr_queued : "?", yes(h->f_h_nr_runnable),
		h->f_vruntime_ref[0] ? h->f_vruntime_ref : "?",
		h->f_vsums[0] ? h->f_vsums : "none");
	fprintf(f, "rq fields:       lost_idle_time %s; sched_switch prev_state arg %s\n",
		yes(h->f_lost_idle_time), yes(h->f_switch_prev_state_arg));
	fprintf(f, "CPUs:            %d (%d online), capacity", h->nr_cpus, h->nr_cpus_online);
	for (i = 0; i < h->nr_cpus; i++)
		fprintf(f, " %u", h->capacity[i]);
	fprintf(f, "\nNUMA nodes:      %d", h->nr_nodes);
	for (i = 0; i < h->nr_nodes; i++)
		fprintf(f, "%s node%d: %s", i ? "," : "", h->node[i].id, h->node[i].cpulist);
	fprintf(f, "\nBPF source:      %s%s%s\n", h->bpf_ok ? "ok" : "no",
		h->bpf_ok ? "" : " - ", h->bpf_reason);
	fprintf(f, "tracefs source:  %s%s%s\n", h->tracefs_ok ? "ok" : "no",
		h->tracefs_ok ? "" : " - ", h->tracefs_reason);
	if (h->pelt_hook.probed || h->bpf_ok) {
		char line[256];

		hostinfo_pelt_line(h, line, sizeof(line));
		fprintf(f, "pelt hooks:      %s\n", line);
	}
	fprintf(f, "live mode:       %s%s%s\n", h->live_ok ? "ok" : "not possible",
		h->live_ok ? "" : ": ", h->reason);
}

/* Strings we print come from the kernel or sysfs; escape what JSON needs. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static const char *jb(bool b)
{
	return b ? "true" : "false";
}

void hostinfo_print_json(const struct hostinfo *h, FILE *f)
{
	int i;

	fprintf(f, "{\"kernel\":");
	json_str(f, h->kernel);
	fprintf(f, ",\"machine\":");
	json_str(f, h->machine);
	fprintf(f, ",\"btf\":%s,\"capabilities\":{\"cap_bpf\":%s,\"cap_perfmon\":%s,"
		"\"cap_sys_admin\":%s,\"cap_sys_nice\":%s},\"bpf_permitted\":%s,\"lockdown\":",
		jb(h->btf), jb(h->cap_bpf), jb(h->cap_perfmon), jb(h->cap_sys_admin),
		jb(h->cap_sys_nice), jb(h->bpf_permitted));
	json_str(f, h->lockdown);
	fprintf(f, ",\"tracefs\":{\"path\":");
	json_str(f, h->tracefs_path);
	fprintf(f, ",\"mounted\":%s,\"mountable\":%s},\"tracepoints\":[",
		jb(h->tracefs_mounted), jb(h->tracefs_mountable));
	for (i = 0; i < h->nr_tp; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, h->tp[i].name);
		/* unknown (null) while tracefs is not mounted: check mounts nothing */
		fprintf(f, ",\"btf\":%s,\"tracefs\":%s,\"bare\":%s}", jb(h->tp[i].btf),
			!h->tp[i].bare && !h->tracefs_mounted ? "null" : jb(h->tp[i].tracefs),
			jb(h->tp[i].bare));
	}
	fprintf(f, "],\"fields\":{\"nr_queued\":");
	json_str(f, h->f_nr_queued);
	fprintf(f, ",\"h_nr_runnable\":%s,\"vruntime_ref\":", jb(h->f_h_nr_runnable));
	json_str(f, h->f_vruntime_ref);
	fprintf(f, ",\"vruntime_sums\":");
	json_str(f, h->f_vsums);
	fprintf(f, ",\"lost_idle_time\":%s,\"switch_prev_state_arg\":%s}",
		jb(h->f_lost_idle_time), jb(h->f_switch_prev_state_arg));
	fprintf(f, ",\"nr_cpus\":%d,\"nr_cpus_online\":%d,\"cpu_capacity\":[",
		h->nr_cpus, h->nr_cpus_online);
	for (i = 0; i < h->nr_cpus; i++)
		fprintf(f, "%s%u", i ? "," : "", h->capacity[i]);
	fprintf(f, "],\"numa_nodes\":[");
	for (i = 0; i < h->nr_nodes; i++) {
		fprintf(f, "%s{\"node\":%d,\"cpulist\":", i ? "," : "", h->node[i].id);
		json_str(f, h->node[i].cpulist);
		fputc('}', f);
	}
	fprintf(f, "],\"bpf_ok\":%s,\"bpf_reason\":", jb(h->bpf_ok));
	json_str(f, h->bpf_reason);
	fprintf(f, ",\"tracefs_ok\":%s,\"tracefs_reason\":", jb(h->tracefs_ok));
	json_str(f, h->tracefs_reason);
	if (h->pelt_hook.probed) {
		fprintf(f, ",\"pelt_hooks\":{\"mode\":");
		json_str(f, pelt_hook_mode(&h->pelt_hook, hostinfo_pelt_tracepoints(h)));
		fprintf(f, ",\"function\":");
		json_str(f, PELT_HOOK_FUNC);
		fprintf(f, ",\"in_btf\":%s,\"usable\":%s,\"reason\":",
			jb(h->pelt_hook.in_btf), jb(h->pelt_hook.usable));
		json_str(f, h->pelt_hook.reason);
		fputc('}', f);
	}
	fprintf(f, ",\"live_ok\":%s,\"reason\":", jb(h->live_ok));
	json_str(f, h->reason);
	fprintf(f, "}\n");
}

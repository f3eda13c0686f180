// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_hostinfo.c - hostinfo_probe() against this host, checked against
 * independent readings: uname, sysfs CPU and node directories, tracefs
 * format files, and the kernel's struct cfs_rq as bpftool dumps it.
 */
#include "config.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "daemon/host/hostinfo.h"
#include "tests/unit/tap.h"

/* Is "<field>;" declared inside "struct <sname> {" of the BTF C dump? */
static int dump_has(const char *dump, const char *sname, const char *field)
{
	char head[64], decl[64];
	const char *a, *b;

	snprintf(head, sizeof(head), "\nstruct %s {\n", sname);
	a = strstr(dump, head);
	if (!a)
		return -1;
	b = strstr(a, "\n};");
	snprintf(decl, sizeof(decl), " %s;", field);
	a = strstr(a, decl);
	return a && a < b;
}

static char *bpftool_dump(void)
{
	FILE *p = popen("bpftool btf dump file /sys/kernel/btf/vmlinux format c 2>/dev/null", "r");
	size_t len = 0, cap = 1 << 20;
	char *buf = malloc(cap);
	size_t n;

	if (!p || !buf) {
		if (p)
			pclose(p);
		free(buf);
		return NULL;
	}
	buf[0] = '\n';
	len = 1;
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	pclose(p);
	return buf;
}

static int count_glob(const char *pat)
{
	glob_t g;
	int n;

	if (glob(pat, 0, NULL, &g))
		return 0;
	n = (int)g.gl_pathc;
	globfree(&g);
	return n;
}

/* The tracepoint object of @name in @json, up to its '}', into @buf ("" none). */
static void json_object_of(const char *json, const char *name, char *buf, size_t len)
{
	char needle[64];
	const char *a, *b;

	snprintf(needle, sizeof(needle), "{\"name\":\"%s\",", name);
	buf[0] = '\0';
	a = strstr(json, needle);
	b = a ? strchr(a, '}') : NULL;
	if (b)
		snprintf(buf, len, "%.*s", (int)(b - a + 1), a);
}

/* The probe's readings of uname, the CPU and node directories and BTF. */
static void check_system(const struct hostinfo *h)
{
	struct utsname u;
	int i;

	uname(&u);
	ok(!strcmp(h->kernel, u.release), "kernel release is uname -r (%s)", h->kernel);
	is_int(h->nr_cpus, count_glob("/sys/devices/system/cpu/cpu[0-9]*"),
	       "CPU count matches sysfs (%d)", h->nr_cpus);
	for (i = 0; i < h->nr_cpus; i++) {
		char path[96];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpu_capacity", i);
		if (access(path, F_OK))
			is_int(h->capacity[i], 1024, "cpu %d: no cpu_capacity file, capacity 1024",
			       i);
	}
	is_int(h->nr_nodes, count_glob("/sys/devices/system/node/node[0-9]*"),
	       "NUMA node count matches sysfs (%d)", h->nr_nodes);
	if (h->nr_nodes)
		ok(h->node[0].cpulist[0] != '\0', "node%d has a CPU list (%s)", h->node[0].id,
		   h->node[0].cpulist);
	is_int(h->btf, access("/sys/kernel/btf/vmlinux", R_OK) == 0,
	       "BTF presence matches /sys/kernel/btf/vmlinux");
	if (geteuid() == 0)
		ok(h->bpf_permitted && h->cap_sys_admin, "root: BPF permitted");
}

/* The field flavours and tracepoint typedefs against bpftool's BTF dump. */
static void check_btf_dump(const struct hostinfo *h, const char *dump)
{
	const struct hostinfo_tp *tp;
	int q = dump_has(dump, "cfs_rq", "nr_queued");
	int z = dump_has(dump, "cfs_rq", "zero_vruntime");
	int sw = dump_has(dump, "cfs_rq", "sum_w_vruntime");
	int r = dump_has(dump, "cfs_rq", "h_nr_runnable");
	int li = dump_has(dump, "rq", "lost_idle_time");
	int i;

	ok(q >= 0, "bpftool dumps struct cfs_rq");
	ok(!strcmp(h->f_nr_queued, q ? "nr_queued" : "nr_running"),
	   "queue count flavour matches the kernel (%s)", h->f_nr_queued);
	ok(!strcmp(h->f_vruntime_ref, z ? "zero_vruntime" : "min_vruntime"),
	   "vruntime reference flavour matches the kernel (%s)", h->f_vruntime_ref);
	if (sw)
		ok(!strcmp(h->f_vsums, "sum_w_vruntime"), "vruntime sums flavour (%s)",
		   h->f_vsums);
	is_int(h->f_h_nr_runnable, r, "h_nr_runnable presence matches the kernel");
	is_int(h->f_lost_idle_time, li, "rq::lost_idle_time presence matches the kernel");
	for (i = 0; i < h->nr_tp; i++) {
		char needle[96];

		snprintf(needle, sizeof(needle), "(*btf_trace_%s)(", h->tp[i].name);
		is_int(h->tp[i].btf, strstr(dump, needle) != NULL,
		       "tracepoint %s: BTF typedef presence (%s)", h->tp[i].name,
		       h->tp[i].btf ? "present" : "absent");
	}
	tp = hostinfo_tp_find(h, "pelt_cfs_tp");
	ok(tp && tp->btf && tp->bare, "pelt_cfs_tp is a bare tracepoint present in BTF");
}

/* The tracefs events found against the format files, then whether live mode can run. */
static void check_tracefs(const struct hostinfo *h)
{
	int i;

	if (h->tracefs_mounted) {
		for (i = 0; i < h->nr_tp; i++) {
			char path[300];

			if (h->tp[i].bare)
				continue;
			snprintf(path, sizeof(path), "%s/events/sched/%s/format", h->tracefs_path,
				 h->tp[i].name);
			is_int(h->tp[i].tracefs, access(path, F_OK) == 0,
			       "tracefs event sched/%s presence", h->tp[i].name);
		}
		ok(hostinfo_tp_find(h, "sched_switch")->tracefs,
		   "tracefs has sched/sched_switch");
	} else {
		diag("tracefs not mounted: its events are not checked");
	}
	if (h->btf && h->bpf_permitted && strcmp(h->lockdown, "confidentiality"))
		ok(h->bpf_ok && h->live_ok && !h->reason[0], "live mode can run here");
}

/* The JSON report parses (jq, when installed) and the text report prints. */
static void check_reports(const struct hostinfo *h)
{
	char *jbuf = NULL;
	size_t jlen = 0;
	FILE *f;

	f = open_memstream(&jbuf, &jlen);
	hostinfo_print_json(h, f);
	fclose(f);
	ok(jlen > 2 && jbuf[0] == '{' && strstr(jbuf, "\"live_ok\":"), "JSON report written");
	if (!system("command -v jq >/dev/null 2>&1")) {
		FILE *p = popen("jq -e '.nr_cpus >= 1 and (.tracepoints | length) > 0' >/dev/null",
				"w");

		fwrite(jbuf, 1, jlen, p);
		is_int(pclose(p), 0, "the JSON report is valid JSON (jq)");
	}
	free(jbuf);
	jbuf = NULL;
	f = open_memstream(&jbuf, &jlen);
	hostinfo_print_text(h, f);
	fclose(f);
	ok(strstr(jbuf, "live mode:") != NULL, "text report written");
	fputs("# ", stdout);
	for (char *c = jbuf; *c; c++) {
		putchar(*c);
		if (*c == '\n' && c[1])
			fputs("# ", stdout);
	}
	free(jbuf);
}

/*
 * With tracefs not mounted, check cannot know which sched events it
 * has (it mounts nothing): the JSON says null, as the text says "?",
 * never false; bare tracepoints have no event either way.
 */
static void check_unmounted_json(const struct hostinfo *h)
{
	struct hostinfo unmounted = *h;
	char sw[128], pelt[128];
	char *jbuf = NULL;
	size_t jlen = 0;
	FILE *f;

	unmounted.tracefs_mounted = false;
	f = open_memstream(&jbuf, &jlen);
	hostinfo_print_json(&unmounted, f);
	fclose(f);
	json_object_of(jbuf, "sched_switch", sw, sizeof(sw));
	json_object_of(jbuf, "pelt_cfs_tp", pelt, sizeof(pelt));
	ok(strstr(sw, "\"tracefs\":null,") && strstr(pelt, "\"tracefs\":false,\"bare\":true"),
	   "tracefs not mounted: sched_switch's tracefs event is null (unknown), pelt_cfs_tp's false (bare): %s %s",
	   sw, pelt);
	free(jbuf);
}

int main(void)
{
	static struct hostinfo h;
	char *dump;

	setvbuf(stdout, NULL, _IOLBF, 0);
	is_int(hostinfo_probe(&h), 0, "hostinfo_probe succeeds");
	check_system(&h);
	dump = h.btf ? bpftool_dump() : NULL;
	if (dump) {
		check_btf_dump(&h, dump);
		free(dump);
	}
	check_tracefs(&h);
	check_reports(&h);
	check_unmounted_json(&h);
	return tap_done();
}

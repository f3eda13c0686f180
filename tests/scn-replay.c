// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * scn-replay.c - run the pipeline on a generated scenario, print JSON.
 *
 * A test harness for the analyzers that needs nothing but the core
 * library: it reads the lines tests/scenario-gen.py writes (the text event
 * format, the subset of kinds and keys the generator uses), feeds them to
 * a pipeline with the default thresholds (and the `cpu N node M [llc L]`
 * topology given with --topology), and prints the whole-run summary in the
 * shape `imbalanced analyze --json` uses for the parts the scenario checks
 * read: "jobs", "cpus" and "findings".  It is not the product's text
 * source: unknown keys and kinds are errors here, so a generator change
 * that the harness does not follow fails loudly.
 *
 * Usage: scn-replay [--topology FILE] [--window MS] EVENTS.txt
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/pipeline.h"

static int set_field(struct imb_event *ev, const char *k, const char *v)
{
	long long n = strtoll(v, NULL, 10);
	int st = 0x1;		/* S */

	switch (ev->kind) {
	case IMB_EV_SWITCH:
		if (!strcmp(k, "prev_state")) {
			if (!strcmp(v, "R"))
				st = IMB_STATE_RUNNING;
			else if (!strcmp(v, "R+"))
				st = IMB_STATE_PREEMPTED;
			ev->sw.prev_state = (uint32_t)st;
		} else if (!strcmp(k, "prev_pid")) {
			ev->sw.prev_pid = (int32_t)n;
		} else if (!strcmp(k, "next_pid")) {
			ev->sw.next_pid = (int32_t)n;
		} else if (!strcmp(k, "prev_tgid")) {
			ev->sw.prev_tgid = (int32_t)n;
		} else if (!strcmp(k, "next_tgid")) {
			ev->sw.next_tgid = (int32_t)n;
		} else if (!strcmp(k, "prev_prio")) {
			ev->sw.prev_prio = (int32_t)n;
		} else if (!strcmp(k, "next_prio")) {
			ev->sw.next_prio = (int32_t)n;
		} else if (!strcmp(k, "prev_comm")) {
			imb_comm_copy(ev->sw.prev_comm, v, strlen(v));
		} else if (!strcmp(k, "next_comm")) {
			imb_comm_copy(ev->sw.next_comm, v, strlen(v));
		} else {
			return -1;
		}
		return 0;
	case IMB_EV_WAKEUP:
	case IMB_EV_WAKEUP_NEW:
	case IMB_EV_WAKING:
		if (!strcmp(k, "pid"))
			ev->wakeup.pid = (int32_t)n;
		else if (!strcmp(k, "tgid"))
			ev->wakeup.tgid = (int32_t)n;
		else if (!strcmp(k, "prio"))
			ev->wakeup.prio = (int32_t)n;
		else if (!strcmp(k, "target_cpu"))
			ev->wakeup.target_cpu = (int32_t)n;
		else if (!strcmp(k, "comm"))
			imb_comm_copy(ev->wakeup.comm, v, strlen(v));
		else
			return -1;
		return 0;
	case IMB_EV_MIGRATE:
		if (!strcmp(k, "pid"))
			ev->migrate.pid = (int32_t)n;
		else if (!strcmp(k, "prio"))
			ev->migrate.prio = (int32_t)n;
		else if (!strcmp(k, "orig_cpu"))
			ev->migrate.orig_cpu = (int32_t)n;
		else if (!strcmp(k, "dest_cpu"))
			ev->migrate.dest_cpu = (int32_t)n;
		else if (!strcmp(k, "comm"))
			imb_comm_copy(ev->migrate.comm, v, strlen(v));
		else
			return -1;
		return 0;
	case IMB_EV_RUNTIME:
		if (!strcmp(k, "pid"))
			ev->runtime.pid = (int32_t)n;
		else if (!strcmp(k, "runtime_ns"))
			ev->runtime.runtime_ns = (uint64_t)n;
		else
			return -1;
		return 0;
	case IMB_EV_NUMA_MOVE:
	case IMB_EV_NUMA_SWAP:
	case IMB_EV_NUMA_STICK: {
		static const char *const keys[] = {
			"src_pid", "src_tgid", "src_ngid", "src_cpu", "src_nid",
			"dst_pid", "dst_tgid", "dst_ngid", "dst_cpu", "dst_nid",
		};
		int32_t *f = &ev->numa.src_pid;

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(k, keys[i])) {
				f[i] = (int32_t)n;
				return 0;
			}
		return -1;
	}
	case IMB_EV_LOST:
		if (!strcmp(k, "count"))
			ev->lost.count = (uint64_t)n;
		else
			return -1;
		return 0;
	default:
		return -1;
	}
}

static int parse_line(char *line, struct imb_event *ev)
{
	char *save = NULL, *tok;

	memset(ev, 0, sizeof(*ev));
	tok = strtok_r(line, " \t\n", &save);
	if (!tok || tok[0] == '#')
		return 1;
	ev->ts_ns = strtoull(tok, NULL, 10);
	tok = strtok_r(NULL, " \t\n", &save);
	if (!tok)
		return -1;
	ev->kind = (uint16_t)imb_ev_kind_parse(tok, strlen(tok));
	if (ev->kind == IMB_EV_NONE)
		return -1;
	while ((tok = strtok_r(NULL, " \t\n", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return -1;
		*eq = '\0';
		if (!strcmp(tok, "cpu"))
			ev->cpu = atoi(eq + 1);
		else if (set_field(ev, tok, eq + 1))
			return -1;
	}
	return 0;
}

static int topology_read(const char *path, struct analyzer_config *cfg)
{
	FILE *f = fopen(path, "r");
	int cpu, node, llc, n;
	char line[256];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		llc = 0;
		n = sscanf(line, "cpu %d node %d llc %d", &cpu, &node, &llc);
		if (n < 2 || cpu < 0 || cpu >= 1024 || node < 0)
			continue;
		cfg->cpu_node[cpu] = node;
		cfg->llc_of[cpu] = n == 3 ? llc : 0;
		if (node + 1 > cfg->nr_nodes)
			cfg->nr_nodes = node + 1;
	}
	fclose(f);
	return 0;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s >= 0x20)
			putchar(*s);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	struct analyzer_config cfg;
	struct pipeline *p;
	struct imb_window *w;
	const char *path = NULL;
	char line[1024];
	unsigned long lineno = 0;
	FILE *f;

	pipeline_config_defaults(&cfg);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--topology") && i + 1 < argc) {
			if (topology_read(argv[++i], &cfg)) {
				fprintf(stderr, "scn-replay: %s: cannot read\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
			cfg.window_ns = strtoull(argv[++i], NULL, 10) * 1000000ull;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		fprintf(stderr, "usage: scn-replay [--topology FILE] [--window MS] EVENTS.txt\n");
		return 2;
	}
	f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		fprintf(stderr, "scn-replay: %s: %s\n", path, strerror(errno));
		return 2;
	}
	p = pipeline_new(&cfg, NULL, NULL, NULL);
	if (!p)
		return 2;
	while (fgets(line, sizeof(line), f)) {
		struct imb_event ev;
		int rc;

		lineno++;
		rc = parse_line(line, &ev);
		if (rc > 0)
			continue;
		if (rc < 0 || pipeline_event(p, &ev)) {
			fprintf(stderr, "scn-replay: %s:%lu: bad event\n", path, lineno);
			return 2;
		}
	}
	if (f != stdin)
		fclose(f);
	w = pipeline_finish(p);
	if (!w)
		return 2;
	printf("{\"jobs\":[");
	for (size_t i = 0; i < w->nr_jobs; i++) {
		printf("%s{\"key\":", i ? "," : "");
		json_str(w->jobs[i].key);
		printf(",\"tasks\":%u,\"unfairness\":%.6f,\"jain_index\":%.6f}", w->jobs[i].tasks,
		       w->jobs[i].unfairness, w->jobs[i].jain_index);
	}
	printf("],\"cpus\":[");
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];

		printf("%s{\"cpu\":%d,\"util_avg\":%llu,\"runnable_avg\":%llu,"
		       "\"runnable_util_ratio\":%.4f,\"overloaded_fraction\":%.4f}", i ? "," : "",
		       c->cpu, (unsigned long long)c->util_avg, (unsigned long long)c->runnable_avg,
		       c->util_avg ? (double)c->runnable_avg / (double)c->util_avg : 0.0,
		       c->overloaded_fraction);
	}
	printf("],\"findings\":[");
	for (size_t i = 0; i < w->nr_findings; i++) {
		const struct imb_finding *x = &w->findings[i];

		printf("%s{\"kind\":", i ? "," : "");
		json_str(x->kind);
		printf(",\"severity\":");
		json_str(imb_severity_name(x->severity));
		printf(",\"t_start_ns\":%llu,\"t_end_ns\":%llu,\"subject\":",
		       (unsigned long long)x->t_start_ns, (unsigned long long)x->t_end_ns);
		json_str(x->subject);
		printf(",\"value\":%.6f,\"threshold\":%.6f,\"summary\":", x->value, x->threshold);
		json_str(x->summary);
		printf(",\"evidence\":%s}", x->evidence[0] ? x->evidence : "{}");
	}
	printf("]}\n");
	imb_window_free(w);
	pipeline_free(p);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * scn-replay.c - run the pipeline on a generated scenario, print JSON.
 *
 * A test harness for the analyzers that needs nothing but the core
 * library: it parses the text event format (event_text.h) that
 * tests/helpers/scenario-gen.py writes, feeds the events to a pipeline with the
 * default thresholds (and the `cpu N node M [llc L]` topology given with
 * --topology), and prints the whole-run summary in the shape
 * `imbalanced analyze --json` uses for the parts the scenario checks read:
 * "jobs", "cpus" and "findings".  The scenario checks use the real
 * `analyze` when it is built; this keeps them running on the core alone.
 *
 * Usage: scn-replay [--topology FILE] [--window MS] EVENTS.txt
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/event_text.h"
#include "analyzers/pipeline.h"

static int topology_read(const char *path, struct analyzer_config *cfg)
{
	FILE *f = fopen(path, "r");
	int cpu, node, llc, n;
	char line[256];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c;

		llc = 0;
		n = sscanf(line, "cpu %d node %d llc %d", &cpu, &node, &llc);
		if (n < 2 || cpu < 0 || cpu >= 1024 || node < 0)
			continue;
		cfg->cpu_node[cpu] = node;
		cfg->llc_of[cpu] = n == 3 ? llc : 0;
		c = strstr(line, " core ");
		cfg->core_of[cpu] = c ? atoi(c + 6) : cpu;
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

/* The options into @cfg and the events file into *@path; 0 or the exit status. */
static int parse_args(int argc, char **argv, struct analyzer_config *cfg, const char **path)
{
	*path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--topology") && i + 1 < argc) {
			if (topology_read(argv[++i], cfg)) {
				fprintf(stderr, "scn-replay: %s: cannot read\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--window") && i + 1 < argc) {
			cfg->window_ns = strtoull(argv[++i], NULL, 10) * 1000000ull;
		} else {
			*path = argv[i];
		}
	}
	if (!*path) {
		fprintf(stderr, "usage: scn-replay [--topology FILE] [--window MS] EVENTS.txt\n");
		return 2;
	}
	return 0;
}

/* Every event of @f (named @path) through @p; 0 or the exit status. */
static int replay(struct pipeline *p, FILE *f, const char *path)
{
	unsigned long lineno = 0;
	char line[1024];

	while (fgets(line, sizeof(line), f)) {
		struct imb_event ev;
		char err[128];
		int rc;

		lineno++;
		rc = event_text_parse(line, strlen(line), &ev, err, sizeof(err));
		if (rc > 0)
			continue;
		if (rc < 0) {
			fprintf(stderr, "scn-replay: %s:%lu: %s\n", path, lineno, err);
			return 2;
		}
		if (pipeline_event(p, &ev)) {
			fprintf(stderr, "scn-replay: %s:%lu: out of memory\n", path, lineno);
			return 2;
		}
	}
	return 0;
}

static void print_jobs(const struct imb_window *w)
{
	printf("{\"jobs\":[");
	for (size_t i = 0; i < w->nr_jobs; i++) {
		printf("%s{\"key\":", i ? "," : "");
		json_str(w->jobs[i].key);
		printf(",\"tasks\":%u,\"unfairness\":%.6f,\"jain_index\":%.6f}", w->jobs[i].tasks,
		       w->jobs[i].unfairness, w->jobs[i].jain_index);
	}
	printf("]");
}

static void print_tasks(const struct imb_window *w)
{
	printf(",\"span_ns\":%llu,\"tasks\":[", (unsigned long long)(w->t_end_ns - w->t_start_ns));
	for (size_t i = 0; i < w->nr_tasks; i++) {
		const struct imb_task_sample *t = &w->tasks[i];

		printf("%s{\"pid\":%d,\"tgid\":%d,\"comm\":", i ? "," : "", t->pid, t->tgid);
		json_str(t->comm);
		printf(",\"run_ns\":%llu,\"share\":%.6f,\"fair_share\":%.6f,\"migrations\":%u}",
		       (unsigned long long)t->run_ns, t->share, t->fair_share, t->migrations);
	}
	printf("]");
}

static void print_cpus(const struct imb_window *w)
{
	printf(",\"cpus\":[");
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];

		printf("%s{\"cpu\":%d,\"util_avg\":%llu,\"runnable_avg\":%llu,"
		       "\"runnable_util_ratio\":%.4f,\"overloaded_fraction\":%.4f,"
		       "\"idle_with_waiters_ns\":%llu,\"idle_with_waiters_by_level\":{", i ? "," : "",
		       c->cpu, (unsigned long long)c->util_avg, (unsigned long long)c->runnable_avg,
		       c->util_avg ? (double)c->runnable_avg / (double)c->util_avg : 0.0,
		       c->overloaded_fraction, (unsigned long long)c->idle_with_waiters_ns);
		if (c->idle_with_waiters_llc_ns != IMB_UNKNOWN)
			printf("\"llc\":%llu,", (unsigned long long)c->idle_with_waiters_llc_ns);
		if (c->idle_with_waiters_node_ns != IMB_UNKNOWN)
			printf("\"node\":%llu,", (unsigned long long)c->idle_with_waiters_node_ns);
		printf("\"machine\":%llu}}", (unsigned long long)c->idle_with_waiters_ns);
	}
	printf("]");
}

static void print_findings(const struct imb_window *w)
{
	printf(",\"findings\":[");
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
}

int main(int argc, char **argv)
{
	struct analyzer_config cfg;
	struct pipeline *p;
	struct imb_window *w;
	const char *path;
	FILE *f;
	int rc;

	pipeline_config_defaults(&cfg);
	rc = parse_args(argc, argv, &cfg, &path);
	if (rc)
		return rc;
	f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f) {
		fprintf(stderr, "scn-replay: %s: %s\n", path, strerror(errno));
		return 2;
	}
	p = pipeline_new(&cfg, NULL, NULL, NULL);
	if (!p)
		return 2;
	rc = replay(p, f, path);
	if (rc)
		return rc;
	if (f != stdin)
		fclose(f);
	w = pipeline_finish(p);
	if (!w)
		return 2;
	/* the parts of analyze --json that the scenario checks read */
	print_jobs(w);
	print_tasks(w);
	print_cpus(w);
	print_findings(w);
	imb_window_free(w);
	pipeline_free(p);
	return 0;
}

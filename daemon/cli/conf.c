// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * conf.c - every configuration key, its default and its parser
 * (conf.h).  One table describes each key once: its name, type, where
 * it lives in struct config, its bounds and its help text, so the file
 * parser, the command line, the shipped example file and the man page
 * cannot disagree.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analyzers/pipeline.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/conf.h"
#include "daemon/sink/flightrec.h"
#include "daemon/util.h"

enum key_type { K_UINT, K_NICE, K_NS, K_PCT, K_BOOL, K_STR, K_SOURCE, K_GROUP_BY, K_EVENTS };

/* The names of the `events` key; "numa" is the three NUMA tracepoints. */
static const struct {
	const char *name;
	uint32_t bits;
} ev_names[] = {
	{ "switch", CONFIG_EV(IMB_EV_SWITCH) },
	{ "wakeup", CONFIG_EV(IMB_EV_WAKEUP) },
	{ "wakeup_new", CONFIG_EV(IMB_EV_WAKEUP_NEW) },
	{ "waking", CONFIG_EV(IMB_EV_WAKING) },
	{ "migrate", CONFIG_EV(IMB_EV_MIGRATE) },
	{ "fork", CONFIG_EV(IMB_EV_FORK) },
	{ "exit", CONFIG_EV(IMB_EV_EXIT) },
	{ "runtime", CONFIG_EV(IMB_EV_RUNTIME) },
	{ "pelt_cfs", CONFIG_EV(IMB_EV_PELT_CFS) },
	{ "pelt_se", CONFIG_EV(IMB_EV_PELT_SE) },
	{ "vruntime", CONFIG_EV(IMB_EV_VRUNTIME) },
	{ "numa", CONFIG_EV(IMB_EV_NUMA_MOVE) | CONFIG_EV(IMB_EV_NUMA_SWAP) |
		  CONFIG_EV(IMB_EV_NUMA_STICK) },
};

static uint32_t ev_all(void)
{
	uint32_t all = 0;

	for (size_t i = 0; i < ARRAY_SIZE(ev_names); i++)
		all |= ev_names[i].bits;
	return all;
}

/* "all" or a comma-separated list of ev_names; switch is required. */
static int ev_parse(const char *value, uint32_t *out, char *err)
{
	char buf[512], *save = NULL, *tok;
	uint32_t bits = 0;

	if (strlen(value) >= sizeof(buf)) {
		err_set(err, "events: value too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", value);
	for (tok = strtok_r(buf, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		size_t i;

		if (!strcmp(tok, "all")) {
			bits |= ev_all();
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(ev_names); i++)
			if (!strcmp(tok, ev_names[i].name))
				break;
		if (i == ARRAY_SIZE(ev_names)) {
			err_set(err, "events: unknown event '%.40s' (want all or a list of switch, "
				"wakeup, wakeup_new, waking, migrate, fork, exit, runtime, pelt_cfs, "
				"pelt_se, vruntime, numa)", tok);
			return -EINVAL;
		}
		bits |= ev_names[i].bits;
	}
	if (!(bits & CONFIG_EV(IMB_EV_SWITCH))) {
		err_set(err, "events: '%.100s' lacks switch (every figure is built on it)",
			value);
		return -EINVAL;
	}
	*out = bits;
	return 0;
}

static void ev_format(uint32_t bits, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if ((bits & ev_all()) == ev_all()) {
		snprintf(buf, len, "all");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(ev_names) && n < len; i++)
		if ((bits & ev_names[i].bits) == ev_names[i].bits)
			n += snprintf(buf + n, len - n, "%s%s", n ? "," : "", ev_names[i].name);
}

struct key {
	const char *name;
	enum key_type type;
	size_t off;		/* offset in struct config */
	size_t size;		/* field size (uint) or buffer size (str) */
	uint64_t min, max;	/* bounds for K_UINT / K_NS */
	const char *help;
};

#define OFF(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)

static const struct key keys[] = {
	{ "window", K_NS, OFF(analyzer.window_ns), 1000000ull, 3600000000000ull,
	  "window length: samples, findings and store rows per window" },
	{ "source", K_SOURCE, OFF(source), 0, 0,
	  "event source: auto (BPF, else tracefs), bpf or tracefs" },
	{ "ring_buffer_kb", K_UINT, OFF(ring_buffer_kb), 64, 1048576,
	  "BPF ring buffer size in KiB (a power of two)" },
	{ "nice", K_NICE, OFF(nice), 0, 0,
	  "the event reader's nice level, -20 to 19 (raising it above 0 needs CAP_SYS_NICE)" },
	{ "tracefs_buffer_kb", K_UINT, OFF(tracefs_buffer_kb), 64, 1048576,
	  "tracefs per-CPU buffer size in KiB" },
	{ "pelt_se_rate", K_NS, OFF(pelt_se_rate_ns), 0, 1000000000ull,
	  "at most one pelt_se_tp record per task per this long (0: all)" },
	{ "runtime_all", K_BOOL, OFF(runtime_all), 0, 0,
	  "BPF: send every sched_stat_runtime, not only the tick's (switch and tick records "
	  "carry the tasks' run-time counters, which hold the rest); record sets it" },
	{ "numa_events", K_BOOL, OFF(numa_events), 0, 0,
	  "attach the NUMA balancing tracepoints where the kernel has them" },
	{ "events", K_EVENTS, OFF(events), 0, 0,
	  "events to attach: all, or a list of switch (required), wakeup, wakeup_new, "
	  "waking (tracefs only), migrate, fork, exit, runtime, pelt_cfs, pelt_se, vruntime "
	  "(BPF only, the last three), numa" },
	{ "max_tasks", K_UINT, OFF(max_tasks), 64, 4194304,
	  "bound on the task table; exited tasks are evicted first" },
	{ "max_groups", K_UINT, OFF(max_groups), 16, 1048576,
	  "bound on the (CPU, task group) table; empty decayed groups go first" },
	{ "group_path_interval", K_NS, OFF(group_path_interval_ns), 0, 86400000000000ull,
	  "BPF: send each task group's cgroup path again after this long (0: once)" },
	{ "db", K_STR, OFF(db), 0, 0, "SQLite database file (empty: no store)" },
	{ "retention_days", K_UINT, OFF(retention_days), 1, 3650,
	  "keep per-window rows this many days" },
	{ "downsample_days", K_UINT, OFF(downsample_days), 1, 36500,
	  "keep 1-minute rows this many days" },
	{ "db_max_bytes", K_UINT, OFF(db_max_bytes), 1048576, UINT64_MAX,
	  "soft bound on the database size; oldest rows go first" },
	{ "listen", K_STR, OFF(listen), 0, 0, "HTTP ADDR:PORT (empty: no HTTP)" },
	{ "allow_remote", K_BOOL, OFF(allow_remote), 0, 0,
	  "allow a non-loopback listen address" },
	{ "token_file", K_STR, OFF(token_file), 0, 0,
	  "file holding the bearer token HTTP clients must send (empty: none)" },
	{ "http_max_connections", K_UINT, OFF(http_max_connections), 1, 10000,
	  "HTTP connection limit" },
	{ "http_max_per_ip", K_UINT, OFF(http_max_per_ip), 1, 10000,
	  "HTTP connections per client address" },
	{ "http_timeout_s", K_UINT, OFF(http_timeout_s), 1, 3600,
	  "HTTP idle connection timeout in seconds" },
	{ "unfairness_threshold", K_PCT, OFF(analyzer.unfairness_threshold), 0, 0,
	  "unfairness finding above this percentage" },
	{ "unfairness_min", K_NS, OFF(analyzer.unfairness_min_ns), 0, 86400000000000ull,
	  "... held at least this long" },
	{ "imbalance_pct_smt", K_UINT, OFF(analyzer.imbalance_pct_smt), 100, 1000,
	  "imbalance_pct of the SMT domain: classifies the threads of a core (kernel: 110)" },
	{ "imbalance_pct", K_UINT, OFF(analyzer.imbalance_pct), 100, 1000,
	  "imbalance_pct of the MC/LLC domain: classifies cores, or CPUs (kernel: 117)" },
	{ "imbalance_pct_pkg", K_UINT, OFF(analyzer.imbalance_pct_pkg), 100, 1000,
	  "imbalance_pct of the package domain: classifies LLCs (kernel: 117, 125 before 5.10)" },
	{ "imbalance_pct_numa", K_UINT, OFF(analyzer.imbalance_pct_numa), 100, 1000,
	  "imbalance_pct of the NUMA domains: classifies nodes (kernel: 117, 125 before 5.10)" },
	{ "overload_min_fraction", K_PCT, OFF(analyzer.overload_min_fraction), 0, 0,
	  "a window counts as overloaded above this percentage of its time" },
	{ "disagreement_min_fraction", K_PCT, OFF(analyzer.disagreement_min_fraction), 0, 0,
	  "a window counts as a fixed vs nr_running-scaled threshold disagreement above this" },
	{ "simultaneous_wakeup", K_NS, OFF(analyzer.simultaneous_ns), 0, 1000000000ull,
	  "wake-ups of one process this close together count as simultaneous" },
	{ "drift_min_windows", K_UINT, OFF(analyzer.drift_min_windows), 1, 1000000,
	  "windows of vruntime drift in a row before a finding" },
	{ "concentration_even_pct", K_UINT, OFF(analyzer.concentration_even_pct), 100, 100000,
	  "same_task_migrated also needs the top task's share at this percentage of an even spread" },
	{ "migration_numa_link", K_NS, OFF(analyzer.numa_link_ns), 0, 3600000000000ull,
	  "the same setting as numa_link, under its older name" },
	{ "numa_min_count", K_UINT, OFF(analyzer.numa_min_count), 1, 1000000,
	  "moves onto an overloaded node, or bounces of a task, for a numa_conflict finding" },
	{ "numa_undo", K_NS, OFF(analyzer.numa_undo_ns), 0, 3600000000000ull,
	  "a cross-node move undone by the other policy within this is a bounce" },
	{ "numa_link", K_NS, OFF(analyzer.numa_link_ns), 0, 3600000000000ull,
	  "a migration this soon after a NUMA move/swap of the task carries that move out" },
	{ "competing_min", K_PCT, OFF(analyzer.competing_min), 0, 0,
	  "a job's task competes when runnable this percentage of its most runnable task's time" },
	{ "span_runnable_min", K_PCT, OFF(analyzer.span_runnable_min), 0, 0,
	  "unfairness counts tasks runnable at least this percentage of their life" },
	{ "span_life_min", K_PCT, OFF(analyzer.span_life_min), 0, 0,
	  "... and whose life is at least this percentage of the run's longest" },
	{ "drift_threshold", K_PCT, OFF(analyzer.drift_threshold), 0, 0,
	  "vruntime rate difference between CPUs for a finding (percent)" },
	{ "migration_min", K_UINT, OFF(analyzer.migration_min), 1, 1000000,
	  "balancer migrations before their concentration is judged" },
	{ "concentration_threshold", K_PCT, OFF(analyzer.concentration_threshold), 0, 0,
	  "share of migrations on one task for a same_task_migrated finding" },
	{ "pingpong", K_NS, OFF(analyzer.pingpong_ns), 1000000ull, 3600000000000ull,
	  "A->B->A within this is ping-pong" },
	{ "pingpong_min", K_UINT, OFF(analyzer.pingpong_min), 1, 1000000,
	  "ping-pongs of one task before a migration_pingpong finding" },
	{ "overload_min", K_NS, OFF(analyzer.overload_min_ns), 0, 86400000000000ull,
	  "overloaded windows spanning this long make an overload finding" },
	{ "group_by", K_GROUP_BY, OFF(analyzer.group_by), 0, 0,
	  "jobs by process, comm or cgroup" },
	{ "alert_hook", K_STR, OFF(alert_hook), 0, 0,
	  "command run for each alert (finding in the environment, JSON on stdin)" },
	{ "alert_hook_timeout_s", K_UINT, OFF(alert_hook_timeout_s), 1, 3600,
	  "the hook is killed after this many seconds" },
	{ "alert_min", K_NS, OFF(alert_min_ns), 0, 86400000000000ull,
	  "a condition must hold this long before it alerts" },
	{ "alert_hysteresis", K_PCT, OFF(alert_hysteresis), 0, 0,
	  "an alert clears only below threshold x (1 - this percentage)" },
	{ "alert_overload", K_NS, OFF(alert_overload_ns), 0, 86400000000000ull,
	  "alert when a CPU stays overloaded this long" },
	{ "alert_lost_events", K_UINT, OFF(alert_lost_events), 1, UINT64_MAX,
	  "alert when a window loses at least this many events" },
	{ "flight_recorder_s", K_UINT, OFF(flight_recorder_s), 0, 3600,
	  "seconds of raw events kept in memory for alert evidence (0: off)" },
	{ "flight_recorder_max_events", K_UINT, OFF(flight_recorder_max_events), 1000,
	  100000000, "bound on the events the flight recorder keeps" },
	{ "flight_recorder_keep", K_UINT, OFF(flight_recorder_keep), 1, 100000,
	  "flight-recorder files kept in state_dir; the oldest are deleted" },
	{ "state_dir", K_STR, OFF(state_dir), 0, 0,
	  "where flight-recorder files go (default: beside the database)" },
};

void config_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	pipeline_config_defaults(&c->analyzer);
	c->max_tasks = 65536;
	c->max_groups = MODEL_MAX_GROUPS;
	c->source = CONFIG_SOURCE_AUTO;
	c->ring_buffer_kb = 16384;
	c->nice = CONFIG_NICE_DEFAULT;
	c->tracefs_buffer_kb = 8192;
	c->pelt_se_rate_ns = 0;
	c->numa_events = true;
	c->events = ev_all();
	snprintf(c->db, sizeof(c->db), "%s", CONFIG_DEFAULT_DB);
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", CONFIG_DEFAULT_STATE_DIR);
	c->retention_days = 7;
	c->downsample_days = 90;
	c->db_max_bytes = 2ull << 30;
	snprintf(c->listen, sizeof(c->listen), "127.0.0.1:9464");
	c->http_max_connections = 64;
	c->http_max_per_ip = 16;
	c->http_timeout_s = 30;
	c->alert_hook_timeout_s = 10;
	c->alert_min_ns = 10000000000ull;
	c->alert_hysteresis = 0.2;
	c->alert_overload_ns = 30000000000ull;
	c->alert_lost_events = 1;
	c->flight_recorder_s = 30;
	c->flight_recorder_keep = FLIGHTREC_DEFAULT_KEEP;
	c->flight_recorder_max_events = 250000;	/* 34 MiB at most: within MemoryMax */
	c->group_path_interval_ns = CONFIG_GROUP_PATH_INTERVAL_DEFAULT;
}

static const struct key *key_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static int set_uint(void *p, size_t size, uint64_t v)
{
	switch (size) {
	case 4:
		*(uint32_t *)p = (uint32_t)v;
		return 0;
	case 8:
		*(uint64_t *)p = v;
		return 0;
	default:
		return -EINVAL;
	}
}

static uint64_t get_uint(const void *p, size_t size)
{
	return size == 4 ? *(const uint32_t *)p : *(const uint64_t *)p;
}

/* The value parsers of config_set(), one per key type: 0, or -EINVAL with @err set. */

static int set_k_uint(const struct key *k, void *p, const char *value, char *err)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno || end == value || *end || *value == '-' || v < k->min || v > k->max) {
		err_set(err, "%s: '%s': want a whole number from %llu to %llu", k->name,
			value, (unsigned long long)k->min, (unsigned long long)k->max);
		return -EINVAL;
	}
	return set_uint(p, k->size, v);
}

static int set_k_nice(const struct key *k, void *p, const char *value, char *err)
{
	long v;
	char *end;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || end == value || *end || v < -20 || v > 19) {
		err_set(err, "%s: '%s': want a nice level from -20 to 19", k->name, value);
		return -EINVAL;
	}
	*(int *)p = (int)v;
	return 0;
}

static int set_k_ns(const struct key *k, void *p, const char *value, char *err)
{
	uint64_t v;

	if (cli_parse_ns(value, 1000000000ull, &v) || v < k->min || v > k->max) {
		err_set(err, "%s: '%s': want a duration (e.g. 500ms, 10s)", k->name, value);
		return -EINVAL;
	}
	return set_uint(p, k->size, v);
}

static int set_k_pct(const struct key *k, void *p, const char *value, char *err)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(value, &end);
	if (errno || end == value || *end || v < 0 || v > 100) {
		err_set(err, "%s: '%s': want a percentage from 0 to 100", k->name, value);
		return -EINVAL;
	}
	*(double *)p = v / 100.0;
	return 0;
}

static int set_k_bool(const struct key *k, void *p, const char *value, char *err)
{
	if (!strcmp(value, "true") || !strcmp(value, "yes") || !strcmp(value, "1")) {
		*(bool *)p = true;
	} else if (!strcmp(value, "false") || !strcmp(value, "no") || !strcmp(value, "0")) {
		*(bool *)p = false;
	} else {
		err_set(err, "%s: '%s': want true or false", k->name, value);
		return -EINVAL;
	}
	return 0;
}

static int set_k_str(const struct key *k, void *p, const char *value, char *err)
{
	if (strlen(value) >= k->size) {
		err_set(err, "%s: value longer than %zu bytes", k->name, k->size - 1);
		return -EINVAL;
	}
	memcpy(p, value, strlen(value) + 1);
	return 0;
}

/* A value that is one of a few words, each standing for a number. */
struct key_word {
	const char *word;
	int value;
};

static int set_k_word(const struct key *k, int *p, const struct key_word *words, size_t n,
		      const char *want, const char *value, char *err)
{
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(value, words[i].word)) {
			*p = words[i].value;
			return 0;
		}
	}
	err_set(err, "%s: '%s': want %s", k->name, value, want);
	return -EINVAL;
}

static const struct key_word source_words[] = {
	{ "auto", CONFIG_SOURCE_AUTO },
	{ "bpf", CONFIG_SOURCE_BPF },
	{ "tracefs", CONFIG_SOURCE_TRACEFS },
};

static const struct key_word group_by_words[] = {
	{ "process", ANALYZER_GROUP_PROCESS },
	{ "comm", ANALYZER_GROUP_COMM },
	{ "cgroup", ANALYZER_GROUP_CGROUP },
};

int config_set(struct config *c, const char *key, const char *value, char *err)
{
	const struct key *k = key_find(key);
	void *p;

	if (!k) {
		err_set(err, "unknown key '%s'", key);
		return -ENOENT;
	}
	p = (char *)c + k->off;
	switch (k->type) {
	case K_UINT:
		return set_k_uint(k, p, value, err);
	case K_NICE:
		return set_k_nice(k, p, value, err);
	case K_NS:
		return set_k_ns(k, p, value, err);
	case K_PCT:
		return set_k_pct(k, p, value, err);
	case K_BOOL:
		return set_k_bool(k, p, value, err);
	case K_STR:
		return set_k_str(k, p, value, err);
	case K_SOURCE:
		return set_k_word(k, p, source_words, ARRAY_SIZE(source_words),
				  "auto, bpf or tracefs", value, err);
	case K_GROUP_BY:
		return set_k_word(k, p, group_by_words, ARRAY_SIZE(group_by_words),
				  "process, comm or cgroup", value, err);
	case K_EVENTS:
		return ev_parse(value, (uint32_t *)p, err);
	}
	return -EINVAL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

int config_load(struct config *c, const char *path, bool missing_ok, char *err)
{
	struct config tmp = *c;
	char line[CONFIG_PATH_MAX + 256];
	int lineno = 0, rc = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		if (errno == ENOENT && missing_ok)
			return 0;
		err_set(err, "%s", strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, kerr[256];

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			err_set(err, "line %d: longer than %zu bytes", lineno, sizeof(line) - 2);
			rc = -EINVAL;
			break;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			err_set(err, "line %d: want 'key = value'", lineno);
			rc = -EINVAL;
			break;
		}
		*eq = 0;
		rc = config_set(&tmp, trim(s), trim(eq + 1), kerr);
		if (rc) {
			err_set(err, "line %d: %.200s", lineno, kerr);
			break;
		}
	}
	fclose(f);
	if (!rc)
		*c = tmp;	/* all or nothing: a bad file changes nothing */
	return rc;
}

/* key_value_format - @k's value in @c as config-file text */
static void key_value_format(const struct config *c, const struct key *k, char *buf, size_t len)
{
	static const char *const src_names[] = { "auto", "bpf", "tracefs" };
	static const char *const grp_names[] = { "process", "comm", "cgroup" };
	const void *p = (const char *)c + k->off;

	switch (k->type) {
	case K_UINT:
		snprintf(buf, len, "%llu", (unsigned long long)get_uint(p, k->size));
		break;
	case K_NICE:
		snprintf(buf, len, "%d", *(const int *)p);
		break;
	case K_NS: {
		uint64_t v = get_uint(p, k->size);

		if (v % 1000000000ull == 0)
			snprintf(buf, len, "%llus", (unsigned long long)(v / 1000000000ull));
		else if (v % 1000000ull == 0)
			snprintf(buf, len, "%llums", (unsigned long long)(v / 1000000ull));
		else if (v % 1000ull == 0)
			snprintf(buf, len, "%lluus", (unsigned long long)(v / 1000ull));
		else
			snprintf(buf, len, "%lluns", (unsigned long long)v);
		break;
	}
	case K_PCT:
		snprintf(buf, len, "%g", *(const double *)p * 100.0);
		break;
	case K_BOOL:
		snprintf(buf, len, "%s", *(const bool *)p ? "true" : "false");
		break;
	case K_STR:
		snprintf(buf, len, "%s", (const char *)p);
		break;
	case K_SOURCE:
		snprintf(buf, len, "%s", src_names[*(const int *)p]);
		break;
	case K_GROUP_BY:
		snprintf(buf, len, "%s", grp_names[*(const int *)p]);
		break;
	case K_EVENTS:
		ev_format(*(const uint32_t *)p, buf, len);
		break;
	}
}

void config_write(const struct config *c, FILE *f)
{
	fprintf(f, "# imbalanced.conf - configuration of the imbalanced daemon.\n"
		   "# 'key = value' lines; '#' starts a comment. Command-line flags\n"
		   "# override these; SIGHUP (systemctl reload imbalanced) re-reads them.\n"
		   "# Durations take a unit (ns, us, ms, s, m, h, d; bare numbers are seconds).\n"
		   "# Values shown are the defaults. See imbalanced.conf(5).\n");
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		char v[CONFIG_PATH_MAX];

		key_value_format(c, &keys[i], v, sizeof(v));
		fprintf(f, "\n# %s\n%s = %s\n", keys[i].help, keys[i].name, v);
	}
}

const char *config_analyzer_key(size_t i, const struct config *c, const char **help,
				char *value, size_t len)
{
	size_t lo = offsetof(struct config, analyzer), hi = lo + sizeof(struct analyzer_config);

	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		if (keys[k].off < lo || keys[k].off >= hi)
			continue;
		if (i--)
			continue;
		if (help)
			*help = keys[k].help;
		if (value)
			key_value_format(c, &keys[k], value, len);
		return keys[k].name;
	}
	return NULL;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_analyze.c - `imbalanced analyze FILE...`: offline analysis.
 *
 * Each file is analysed as its own run through the same pipeline the live
 * daemon uses.  Every file is read before anything is printed, so a bad
 * file gives one line on stderr, exit 2 and nothing on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzers/pipeline.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/conf.h"
#include "daemon/cli/progress.h"
#include "daemon/host/topology.h"
#include "daemon/report/report.h"
#include "daemon/sink/store.h"
#include "daemon/source/source.h"
#include "daemon/util.h"

struct analyze_opts {
	bool json;
	bool per_window;	/* --per-window: each window's CPU signals in the JSON */
	bool verbose, quiet;
	const char *db;
	const char *topology;
	const char *tgids;
	int fail_on;		/* -1: never */
	unsigned int top;
	struct config conf;	/* .analyzer: the thresholds; flags of the other keys via config_set() */
	struct model_opts mopts;
};

#define ANALYZE_KEYS_MAX 64
#define OPT_KEY_BASE 1000	/* getopt value of the i-th generic key flag */

enum {
	OPT_JSON = 256, OPT_PER_WINDOW, OPT_DB, OPT_WINDOW, OPT_CAPACITY, OPT_TOPOLOGY, OPT_GROUP_BY,
	OPT_UNFAIR, OPT_UNFAIR_MIN, OPT_IMB_PCT, OPT_DRIFT, OPT_PINGPONG, OPT_FAIL_ON, OPT_TOP,
	OPT_DUMP, OPT_TGIDS, OPT_PP_MIN, OPT_MIG_MIN, OPT_CONC, OPT_OVL_MIN, OPT_OVL_FRAC,
	OPT_PLAIN,
};

static const struct option analyze_longopts[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "per-window", no_argument, NULL, OPT_PER_WINDOW },
	{ "db", required_argument, NULL, OPT_DB },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "capacity", required_argument, NULL, OPT_CAPACITY },
	{ "topology", required_argument, NULL, OPT_TOPOLOGY },
	{ "group-by", required_argument, NULL, OPT_GROUP_BY },
	{ "unfairness-threshold", required_argument, NULL, OPT_UNFAIR },
	{ "unfairness-min", required_argument, NULL, OPT_UNFAIR_MIN },
	{ "imbalance-pct", required_argument, NULL, OPT_IMB_PCT },
	{ "drift-threshold", required_argument, NULL, OPT_DRIFT },
	{ "pingpong", required_argument, NULL, OPT_PINGPONG },
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "dump-events", no_argument, NULL, OPT_DUMP },
	{ "tgids", required_argument, NULL, OPT_TGIDS },
	{ "plain-events", no_argument, NULL, OPT_PLAIN },
	{ "pingpong-min", required_argument, NULL, OPT_PP_MIN },
	{ "migration-min", required_argument, NULL, OPT_MIG_MIN },
	{ "concentration-threshold", required_argument, NULL, OPT_CONC },
	{ "overload-min", required_argument, NULL, OPT_OVL_MIN },
	{ "overload-min-fraction", required_argument, NULL, OPT_OVL_FRAC },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool longopt_known(const struct option *opts, const char *name);

/* The flags of the thresholds that have no hand-written option: --KEY-NAME VALUE. */
static void analyze_usage_keys(FILE *f, const struct option *fixed)
{
	struct config c;
	const char *name, *help;
	char val[64];

	config_defaults(&c);
	fprintf(f, "\nMore thresholds (each also a configuration key, see imbalanced.conf(5);\n"
		   "durations in seconds unless a unit is given):\n");
	for (size_t i = 0; (name = config_analyzer_key(i, &c, &help, val, sizeof(val))); i++) {
		char flag[48];

		snprintf(flag, sizeof(flag), "%s", name);
		for (char *p = flag; *p; p++)
			if (*p == '_')
				*p = '-';
		if (longopt_known(fixed, flag))
			continue;
		fprintf(f, "  --%s VALUE\n        %s (default %s)\n", flag, help, val);
	}
}

static void analyze_usage(FILE *f)
{
	fprintf(f,
		"Usage: imbalanced analyze [OPTIONS] FILE...\n"
		"\n"
		"Analyse scheduler recordings: trace.dat files (trace-cmd) or files in\n"
		"the text event format ('-' reads text from standard input). Each file\n"
		"is its own run.\n"
		"\n"
		"Options:\n"
		"  --json                 one JSON document on stdout (several files: {\"runs\":[...]})\n"
		"  --per-window           with --json: each window's CPU signals too (\"windows\")\n"
		"  --db FILE              also store the runs in this SQLite database\n"
		"  --window MS            window length (default 1000 ms)\n"
		"  --capacity LIST        CPU capacities: '1024,512' or '0-3:1024,4-7:512'\n"
		"  --topology FILE        CPU topology (lines 'cpu N node M [llc L] [core C]')\n"
		"  --tgids FILE           pid->tgid map ('PID TGID' lines; default: FILE.tgids\n"
		"                         or NAME.tgids beside NAME.dat when present)\n"
		"  --group-by KIND        jobs by process (default), comm or cgroup\n"
		"  --plain-events         analyse a recording as if it held only what a tracefs\n"
		"                         or trace.dat recording has (no task groups, no run\n"
		"                         queue clocks); its kernel PELT values are then only\n"
		"                         compared with the engine (after 0.5 s), never used\n"
		"  --unfairness-threshold PCT   finding above this unfairness (default 10)\n"
		"  --unfairness-min DURATION    ...sustained this long (default 5s)\n"
		"  --imbalance-pct N      imbalance_pct of the MC/LLC domain (default 117)\n"
		"  --drift-threshold PCT  vruntime rate difference finding (default 10)\n"
		"  --pingpong DURATION    A->B->A within this is ping-pong (default 100ms)\n"
		"  --pingpong-min N       ping-pongs of one task for a finding (default 3)\n"
		"  --migration-min N      balancer migrations before their spread is judged (default 10)\n"
		"  --concentration-threshold PCT  share of migrations on one task (default 50)\n"
		"  --overload-min DURATION        overloaded this long for a finding (default 2s)\n"
		"  --overload-min-fraction PCT    a window is overloaded above this (default 25)\n"
		"  --fail-on SEVERITY     exit 1 when a finding reaches info|warning|critical\n"
		"  --top N                tasks in the text report (default 20)\n"
		"  --dump-events          write the events in the text format and exit\n"
		"  -v, --verbose          more detail on stderr\n"
		"  -q, --quiet            no warnings or progress on stderr (progress: on a\n"
		"                         terminal, events read, rate, share done, time left)\n"
		"  -h, --help             this help\n"
		"\n"
		"Durations take a unit: ns, us, ms, s (default as stated).\n"
		"Exit status: 0 ok, 1 findings at or above --fail-on, 2 bad usage or input.\n");
	analyze_usage_keys(f, analyze_longopts);
}


static bool longopt_known(const struct option *opts, const char *name)
{
	for (; opts->name; opts++)
		if (!strcmp(opts->name, name))
			return true;
	return false;
}

/*
 * analyze_longopts_build - the fixed options, then --KEY-NAME for every
 * analyzer key (conf.c's table) that has no fixed option: one path for all
 * thresholds.  @names holds the flag texts, @keys the key of each.
 */
static void analyze_longopts_build(struct option *out, char names[][48], const char **keys)
{
	size_t n = 0, k = 0;
	const char *name;

	for (; analyze_longopts[n].name; n++)
		out[n] = analyze_longopts[n];
	for (size_t i = 0; k < ANALYZE_KEYS_MAX &&
	     (name = config_analyzer_key(i, NULL, NULL, NULL, 0)); i++) {
		snprintf(names[k], 48, "%s", name);
		for (char *p = names[k]; *p; p++)
			if (*p == '_')
				*p = '-';
		if (longopt_known(analyze_longopts, names[k]))
			continue;
		keys[k] = name;
		out[n++] = (struct option){ names[k], required_argument, NULL, OPT_KEY_BASE + (int)k };
		k++;
	}
	out[n] = (struct option){ NULL, 0, NULL, 0 };
}

static int parse_pct(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 100)
		return -EINVAL;
	*out = v / 100.0;
	return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (*s == '-')
		return -EINVAL;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int bad_value(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "imbalanced: analyze: --%s '%s': %s\n", opt, val, want);
	return CLI_EXIT_USAGE;
}

/* One run: its file, what the source said, and the pipeline's summary. */
struct analyze_run {
	const char *path;
	struct source src;	/* the file's source, open while it is read */
	struct source_info info;
	struct pipeline *p;
	struct imb_window *summary;
	struct store *store;	/* --db: windows go there as they close */
	int64_t run_id;		/* 0 until the first window */
	int store_rc;
	uint64_t window_ns;
	bool per_window;	/* keep each window's CPU rows for the report */
	struct report_window *windows;
	size_t nr_windows, cap_windows;
	struct imb_cpu_sample *win_cpus;
	size_t nr_win_cpus, cap_win_cpus;
	int keep_rc;
};

/* --per-window: copy the window's CPU rows for the report. */
static int keep_window(struct analyze_run *r, const struct imb_window *w)
{
	if (r->nr_windows == r->cap_windows) {
		size_t cap = r->cap_windows ? 2 * r->cap_windows : 64;
		struct report_window *n = realloc(r->windows, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->windows = n;
		r->cap_windows = cap;
	}
	if (r->nr_win_cpus + w->nr_cpus > r->cap_win_cpus) {
		size_t cap = r->cap_win_cpus ? 2 * r->cap_win_cpus : 256;
		struct imb_cpu_sample *n;

		while (cap < r->nr_win_cpus + w->nr_cpus)
			cap *= 2;
		n = realloc(r->win_cpus, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		r->win_cpus = n;
		r->cap_win_cpus = cap;
	}
	r->windows[r->nr_windows++] = (struct report_window){
		.t_start_ns = w->t_start_ns, .t_end_ns = w->t_end_ns,
		.first = r->nr_win_cpus, .nr_cpus = w->nr_cpus,
	};
	if (w->nr_cpus)
		memcpy(r->win_cpus + r->nr_win_cpus, w->cpus, w->nr_cpus * sizeof(*w->cpus));
	r->nr_win_cpus += w->nr_cpus;
	return 0;
}

/*
 * Each closed window: its CPU rows kept for --per-window; with --db into the
 * store, the run row at the first one.
 */
static void on_window(struct imb_window *w, void *ctx)
{
	struct analyze_run *r = ctx;

	if (r->per_window && !r->keep_rc)
		r->keep_rc = keep_window(r, w);
	if (!r->store) {
		imb_window_free(w);
		return;
	}
	if (!r->store_rc && !r->run_id) {
		struct store_run_info ri = {
			.started_ns = 0,	/* wall clock now: an offline run starts now */
			.source = r->src.name,
			.host = r->path,	/* offline: the file analysed */
			.kernel = "",
			.nr_cpus = (uint32_t)w->nr_cpus,
			.window_ns = r->window_ns,
		};

		r->run_id = store_run_begin(r->store, &ri);
		if (r->run_id < 0)
			r->store_rc = -EIO;
	}
	if (!r->store_rc && store_window_commit(r->store, r->run_id, w))
		r->store_rc = -EIO;
	imb_window_free(w);
}

static int feed_event(const struct imb_event *ev, void *ctx)
{
	struct pipeline *p = ctx;

	return pipeline_event(p, ev);
}

/* feed_event with the progress line on a terminal */
struct feed_progress {
	struct pipeline *p;
	struct progress prog;
	struct source *src;
	bool span;
};

static int feed_event_progress(const struct imb_event *ev, void *ctx)
{
	struct feed_progress *f = ctx;

	if (!f->span) {
		struct source_info info;

		/* the source knows the recording's span before its first event */
		source_info_get(f->src, &info);
		progress_span(&f->prog, info.first_ts_ns, info.last_ts_ns);
		f->span = true;
	}
	progress_event(&f->prog, ev->ts_ns);
	return pipeline_event(f->p, ev);
}

/* ctx: a bool, the header printed (not before the input proved readable) */
static int dump_event(const struct imb_event *ev, void *ctx)
{
	bool *header = ctx;

	if (!*header) {
		report_dump_header(stdout);
		*header = true;
	}
	return report_dump_event(stdout, ev);
}

/*
 * A pid->tgid map beside a recording ("pid tgid" lines, the format of
 * tracefs saved_tgids): FILE.tgids, or NAME.tgids for NAME.dat.  Returns 0
 * when there is none or it was read, -errno with @err on a bad file.
 */
static int load_tgids(struct pipeline *p, const char *path, const char *explicit_path, char *err,
		      const char **used)
{
	char buf[4096];
	const char *cand[2];
	size_t len = strlen(path);
	FILE *f = NULL;
	int lineno = 0, rc = 0;

	*used = NULL;
	if (explicit_path) {
		f = fopen(explicit_path, "re");
		if (!f) {
			err_set(err, "%s: %s", explicit_path, strerror(errno));
			return -errno;
		}
		*used = explicit_path;
	} else {
		static char a[4096], b[4096];

		if (!strcmp(path, "-") || len + 8 > sizeof(a))
			return 0;
		snprintf(a, sizeof(a), "%s.tgids", path);
		snprintf(b, sizeof(b), "%.*s.tgids", (int)(len > 4 && !strcmp(path + len - 4, ".dat") ?
							len - 4 : len), path);
		cand[0] = b;
		cand[1] = a;
		for (int i = 0; i < 2 && !f; i++) {
			f = fopen(cand[i], "re");
			if (f)
				*used = cand[i];
		}
		if (!f)
			return 0;
	}
	while (fgets(buf, sizeof(buf), f)) {
		long pid, tgid;
		char *end;

		lineno++;
		if (buf[0] == '#' || buf[0] == '\n')
			continue;
		pid = strtol(buf, &end, 10);
		tgid = strtol(end, &end, 10);
		while (*end == ' ' || *end == '\t' || *end == '\n')
			end++;
		if (pid <= 0 || tgid <= 0 || pid > INT32_MAX || tgid > INT32_MAX || *end) {
			err_set(err, "%.180s: line %d: want 'PID TGID'", *used, lineno);
			rc = -EINVAL;
			break;
		}
		if (pipeline_tgid_hint(p, (int32_t)pid, (int32_t)tgid)) {
			err_set(err, "%.200s: out of memory", *used);
			rc = -ENOMEM;
			break;
		}
	}
	fclose(f);
	return rc;
}

/*
 * read_source - every event of the open @src to @fn, then what the source
 * said into @info.  Returns 0, or -errno (or @fn's error) with @err filled
 * when the source could say why.
 */
static int read_source(struct source *src, imb_event_fn fn, void *ctx, struct source_info *info,
		       char *err)
{
	int rc;

	do
		rc = src->ops->next(src->impl, -1, fn, ctx, err);
	while (rc == SOURCE_MORE);
	source_info_get(src, info);
	return rc == SOURCE_END ? 0 : rc;
}

/* analyze_option() and its helpers: the option was taken, go on parsing */
#define ANALYZE_GO_ON (-1)

/* One of the analyzers' threshold flags; ANALYZE_GO_ON or the exit status. */
static int analyze_threshold_option(struct analyzer_config *a, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case OPT_UNFAIR:
		if (parse_pct(arg, &a->unfairness_threshold))
			return bad_value("unfairness-threshold", arg, "want a percentage 0..100");
		break;
	case OPT_UNFAIR_MIN:
		if (cli_parse_ns(arg, 1000000000ull, &a->unfairness_min_ns))
			return bad_value("unfairness-min", arg, "want a duration");
		break;
	case OPT_IMB_PCT:
		if (parse_uint(arg, 1000, &v) || v < 100)
			return bad_value("imbalance-pct", arg, "want 100..1000");
		a->imbalance_pct = (unsigned int)v;
		break;
	case OPT_DRIFT:
		if (parse_pct(arg, &a->drift_threshold))
			return bad_value("drift-threshold", arg, "want a percentage 0..100");
		break;
	case OPT_PINGPONG:
		if (cli_parse_ns(arg, 1000000, &a->pingpong_ns))
			return bad_value("pingpong", arg, "want a duration");
		break;
	case OPT_PP_MIN:
		if (parse_uint(arg, 1000000, &v) || !v)
			return bad_value("pingpong-min", arg, "want 1..1000000");
		a->pingpong_min = (unsigned int)v;
		break;
	case OPT_MIG_MIN:
		if (parse_uint(arg, 1000000, &v) || !v)
			return bad_value("migration-min", arg, "want 1..1000000");
		a->migration_min = (unsigned int)v;
		break;
	case OPT_CONC:
		if (parse_pct(arg, &a->concentration_threshold))
			return bad_value("concentration-threshold", arg, "want a percentage 0..100");
		break;
	case OPT_OVL_MIN:
		if (cli_parse_ns(arg, 1000000000ull, &a->overload_min_ns))
			return bad_value("overload-min", arg, "want a duration");
		break;
	case OPT_OVL_FRAC:
		if (parse_pct(arg, &a->overload_min_fraction))
			return bad_value("overload-min-fraction", arg, "want a percentage 0..100");
		break;
	default:
		analyze_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return ANALYZE_GO_ON;
}

/* One option of the command line; ANALYZE_GO_ON or the exit status. */
static int analyze_option(struct analyze_opts *o, int c, const char *arg, bool *dump)
{
	unsigned long v;
	uint64_t ns;

	switch (c) {
	case OPT_PER_WINDOW:
		o->per_window = true;
		break;
	case OPT_PLAIN:
		o->mopts.plain_events = true;
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_DB:
		o->db = arg;
		break;
	case OPT_WINDOW:
		if (cli_parse_ns(arg, 1000000, &ns) || ns < 1000000 || ns > 3600000000000ull)
			return bad_value("window", arg, "want a duration from 1ms to 1h");
		o->conf.analyzer.window_ns = ns;
		break;
	case OPT_CAPACITY:
		if (cli_parse_capacity(arg, o->mopts.capacity, MODEL_MAX_CPUS))
			return bad_value("capacity", arg,
					 "want '1024,512' or '0-3:1024,4-7:512' (1..1024)");
		break;
	case OPT_TOPOLOGY:
		o->topology = arg;
		break;
	case OPT_GROUP_BY:
		if (!strcmp(arg, "process"))
			o->conf.analyzer.group_by = ANALYZER_GROUP_PROCESS;
		else if (!strcmp(arg, "comm"))
			o->conf.analyzer.group_by = ANALYZER_GROUP_COMM;
		else if (!strcmp(arg, "cgroup"))
			o->conf.analyzer.group_by = ANALYZER_GROUP_CGROUP;
		else
			return bad_value("group-by", arg, "want process, comm or cgroup");
		break;
	case OPT_FAIL_ON:
		o->fail_on = imb_severity_parse(arg);
		if (o->fail_on < 0)
			return bad_value("fail-on", arg, "want info, warning or critical");
		break;
	case OPT_TOP:
		if (parse_uint(arg, 100000, &v))
			return bad_value("top", arg, "want 0..100000");
		o->top = (unsigned int)v;
		break;
	case OPT_DUMP:
		*dump = true;
		break;
	case OPT_TGIDS:
		o->tgids = arg;
		break;
	case 'v':
		o->verbose = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'h':
		analyze_usage(stdout);
		return CLI_EXIT_OK;
	default:
		return analyze_threshold_option(&o->conf.analyzer, c, arg);
	}
	return ANALYZE_GO_ON;
}

/* The command line into @o; ANALYZE_GO_ON or the exit status. */
static int analyze_parse(struct analyze_opts *o, int argc, char **argv, bool *dump)
{
	struct option longopts[ARRAY_SIZE(analyze_longopts) + ANALYZE_KEYS_MAX];
	char key_flags[ANALYZE_KEYS_MAX][48];
	const char *key_names[ANALYZE_KEYS_MAX];
	int c, rc;

	config_defaults(&o->conf);
	analyze_longopts_build(longopts, key_flags, key_names);
	optind = 1;
	while ((c = getopt_long(argc, argv, "vqh", longopts, NULL)) != -1) {
		if (c >= OPT_KEY_BASE && c < OPT_KEY_BASE + ANALYZE_KEYS_MAX) {
			char err[ERR_LEN];

			if (config_set(&o->conf, key_names[c - OPT_KEY_BASE], optarg, err)) {
				fprintf(stderr, "imbalanced: analyze: --%s: %s\n",
					key_flags[c - OPT_KEY_BASE], err);
				return CLI_EXIT_USAGE;
			}
			continue;
		}
		rc = analyze_option(o, c, optarg, dump);
		if (rc != ANALYZE_GO_ON)
			return rc;
	}
	return ANALYZE_GO_ON;
}

/* --dump-events: every file's events in the text format, nothing analysed */
static int analyze_dump(const struct analyze_opts *o, char *const *paths, int n)
{
	for (int i = 0; i < n; i++) {
		struct source_info info = { 0 };
		char err[SOURCE_ERR_LEN] = "";
		const char *path = paths[i];
		bool header = false;
		int r;

		struct source src;

		r = source_file_open(&src, path, err);
		if (!r)
			r = read_source(&src, dump_event, &header, &info, err);
		source_close(&src);
		if (!r && !header)
			report_dump_header(stdout);
		if (r) {
			fprintf(stderr, "imbalanced: %s: %s\n", path, err[0] ? err : strerror(-r));
			return CLI_EXIT_USAGE;
		}
		if (info.warning[0] && !o->quiet)
			fprintf(stderr, "imbalanced: %s: warning: %s\n", path, info.warning);
	}
	return fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/*
 * analyze_run_file - read one file through its own pipeline, into @r
 *
 * Opens the store when there is one, loads the tgid map, feeds every event,
 * finishes the pipeline and stores the findings' final state.  Returns
 * CLI_EXIT_OK, or CLI_EXIT_USAGE after one line on stderr.
 */
static int analyze_run_file(struct analyze_run *r, const struct analyze_opts *o, const char *path)
{
	char err[SOURCE_ERR_LEN] = "";
	const char *tgids_used;
	int e;

	r->path = path;
	r->window_ns = o->conf.analyzer.window_ns;
	if (o->db) {
		const char *serr = NULL;

		r->store = store_open(o->db, NULL, &serr);
		if (!r->store) {
			fprintf(stderr, "imbalanced: %s: %s\n", o->db, serr ? serr : strerror(errno));
			return CLI_EXIT_USAGE;
		}
	}
	r->per_window = o->per_window && o->json;
	r->p = pipeline_new(&o->conf.analyzer, &o->mopts,
			    o->db || r->per_window ? on_window : NULL, r);
	if (!r->p) {
		fprintf(stderr, "imbalanced: %s: out of memory\n", r->path);
		return CLI_EXIT_USAGE;
	}
	e = load_tgids(r->p, r->path, o->tgids, err, &tgids_used);
	if (e) {
		fprintf(stderr, "imbalanced: %s\n", err);
		return CLI_EXIT_USAGE;
	}
	if (tgids_used && o->verbose)
		fprintf(stderr, "imbalanced: %s: tgids from %s\n", r->path, tgids_used);
	e = source_file_open(&r->src, r->path, err);
	if (!e) {
		struct feed_progress fp = { .p = r->p, .src = &r->src };

		/* on a terminal, unless --quiet: how far the read is */
		if (!o->quiet && progress_start(&fp.prog, STDERR_FILENO, r->path)) {
			e = read_source(&r->src, feed_event_progress, &fp, &r->info, err);
			progress_end(&fp.prog);
		} else {
			e = read_source(&r->src, feed_event, r->p, &r->info, err);
		}
	}
	if (e) {
		fprintf(stderr, "imbalanced: %s: %s\n", r->path, err[0] ? err : strerror(-e));
		return CLI_EXIT_USAGE;
	}
	if (r->info.warning[0] && !o->quiet)
		fprintf(stderr, "imbalanced: %s: warning: %s\n", r->path, r->info.warning);
	if (r->info.reader[0] && o->verbose)
		fprintf(stderr, "imbalanced: %s: read with %s\n", r->path, r->info.reader);
	r->summary = pipeline_finish(r->p);
	if (!r->summary) {
		fprintf(stderr, "imbalanced: %s: out of memory\n", r->path);
		return CLI_EXIT_USAGE;
	}
	/* the findings' final state: closed episodes, whole-run findings */
	if (r->run_id > 0 && !r->store_rc &&
	    store_findings_commit(r->store, r->run_id, r->summary->findings,
				  r->summary->nr_findings))
		r->store_rc = -EIO;
	if (r->store_rc) {
		fprintf(stderr, "imbalanced: %s: %s\n", o->db, store_last_error(r->store));
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/*
 * analyze_report - print the runs, text or JSON, once every file was read
 *
 * Returns CLI_EXIT_FINDINGS when a finding reaches --fail-on, CLI_EXIT_OK,
 * or CLI_EXIT_USAGE after one line on stderr.
 */
static int analyze_report(const struct analyze_opts *o, struct analyze_run *runs, int nruns)
{
	struct report_run *rr;
	int rc = CLI_EXIT_OK;

	rr = calloc((size_t)nruns, sizeof(*rr));
	if (!rr) {
		fprintf(stderr, "imbalanced: analyze: out of memory\n");
		return CLI_EXIT_USAGE;
	}
	for (int i = 0; i < nruns; i++) {
		rr[i] = (struct report_run){
			.path = runs[i].path,
			.info = &runs[i].info,
			.model = pipeline_model(runs[i].p),
			.cfg = pipeline_config(runs[i].p),
			.summary = runs[i].summary,
			.windows = runs[i].per_window ? runs[i].windows : NULL,
			.nr_windows = runs[i].nr_windows,
			.win_cpus = runs[i].win_cpus,
		};
		if (runs[i].keep_rc) {
			fprintf(stderr, "imbalanced: %s: out of memory keeping the windows\n",
				runs[i].path);
			rc = CLI_EXIT_USAGE;
			goto out;
		}
		if (o->fail_on >= 0)
			for (size_t f = 0; f < runs[i].summary->nr_findings; f++)
				if (runs[i].summary->findings[f].severity >= o->fail_on)
					rc = CLI_EXIT_FINDINGS;
	}
	if (o->json) {
		int e = report_json(stdout, rr, (size_t)nruns);

		if (e) {
			fprintf(stderr, "imbalanced: analyze: writing the report: %s\n", strerror(-e));
			rc = CLI_EXIT_USAGE;
			goto out;
		}
	} else {
		for (int i = 0; i < nruns; i++)
			report_text(stdout, &rr[i], o->top, o->verbose);
	}
	if (fflush(stdout)) {
		fprintf(stderr, "imbalanced: analyze: writing the report: %s\n", strerror(errno));
		rc = CLI_EXIT_USAGE;
	}
out:
	free(rr);
	return rc;
}

int cmd_analyze(int argc, char **argv)
{
	struct analyze_opts o = { .fail_on = -1, .top = 20 };
	struct analyze_run *runs;
	bool dump = false;
	int nruns, rc;

	rc = analyze_parse(&o, argc, argv, &dump);
	if (rc != ANALYZE_GO_ON)
		return rc;
	nruns = argc - optind;
	if (nruns <= 0) {
		fprintf(stderr, "imbalanced: analyze: no input file (try 'imbalanced analyze --help')\n");
		return CLI_EXIT_USAGE;
	}
	if (o.topology) {
		char err[SOURCE_ERR_LEN];

		if (topology_load(o.topology, &o.conf.analyzer, err)) {
			fprintf(stderr, "imbalanced: %s: %s\n", o.topology, err);
			return CLI_EXIT_USAGE;
		}
	}
	if (dump)
		return analyze_dump(&o, argv + optind, nruns);

	runs = calloc((size_t)nruns, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "imbalanced: analyze: out of memory\n");
		return CLI_EXIT_USAGE;
	}
	rc = CLI_EXIT_OK;
	for (int i = 0; i < nruns && rc == CLI_EXIT_OK; i++)
		rc = analyze_run_file(&runs[i], &o, argv[optind + i]);
	if (rc == CLI_EXIT_OK)
		rc = analyze_report(&o, runs, nruns);
	for (int i = 0; i < nruns; i++) {
		imb_window_free(runs[i].summary);
		pipeline_free(runs[i].p);
		source_close(&runs[i].src);
		free(runs[i].windows);
		free(runs[i].win_cpus);
		store_close(runs[i].store);
	}
	free(runs);
	return rc;
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h - the verbs of the command line and what they share.
 */
#ifndef IMB_CLI_H
#define IMB_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzers/analyzer.h"

enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FINDINGS = 1,
	CLI_EXIT_USAGE = 2,
	CLI_EXIT_NOKERNEL = 3,
};

struct cli_verb {
	const char *name;
	int (*main)(int argc, char **argv);	/* argv[0] is the verb */
};

extern const struct cli_verb cli_verbs[];

int cmd_analyze(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_config(int argc, char **argv);

/*
 * cli_version_asked - true when a verb's arguments (@argv[1..], up to a
 * "--") hold --version: every verb answers it the same way.
 */
bool cli_version_asked(int argc, char **argv);

/**
 * cli_parse_ns - parse a duration with optional unit (ns, us, ms, s; bare
 * number: @default_unit_ns) into nanoseconds; 0 or -EINVAL
 */
int cli_parse_ns(const char *s, uint64_t default_unit_ns, uint64_t *out);

/*
 * The flags of the live verbs (run, record) that are configuration keys,
 * kept as KEY, VALUE pairs in the order given and applied over the file.
 */
#define CLI_MAX_OVERRIDES 64
struct cli_overrides {
	const char *kv[CLI_MAX_OVERRIDES][2];
	int n;
};

/** cli_override_add - append the pair @key, @value; 0, or -1 when full */
int cli_override_add(struct cli_overrides *o, const char *key, const char *value);

/* The options run and record share; a verb's own take values from CLI_OPT_LIVE_NEXT on. */
enum { CLI_OPT_CONFIG = 256, CLI_OPT_SET, CLI_OPT_DURATION, CLI_OPT_REPORT, CLI_OPT_LIVE_NEXT };

/* What the shared options of run and record set. */
struct cli_live_args {
	struct cli_overrides ov;	/* the verb's key flags and --set, in order */
	const char *config_path;	/* --config; NULL: the default, which may be absent */
	const char *report_path;	/* --report */
	uint64_t duration_ns;		/* --duration; 0: until signalled */
	bool verbose, quiet;
};

/**
 * cli_live_option - take getopt_long()'s @c (with optarg) when it is one of
 * the shared options of @verb (--config, --set, --duration, --report, -v,
 * -q): 1 taken, 0 not one of them, -1 a bad value (its usage line printed)
 */
int cli_live_option(int c, const char *verb, struct cli_live_args *a);

struct runtime_opts;

/** cli_live_runtime_opts - what the shared options set, into @ro (which keeps @a's pairs) */
void cli_live_runtime_opts(struct cli_live_args *a, struct runtime_opts *ro);

/** cli_live_signals - SIGTERM, SIGINT and SIGHUP go to @handler; SIGPIPE is ignored */
void cli_live_signals(void (*handler)(int sig));

/** cli_parse_capacity - "1024,512" or "0-3:1024,4-7:512" into cfg; 0 or -EINVAL */
int cli_parse_capacity(const char *s, uint32_t *cap, int max_cpus);

#endif /* IMB_CLI_H */

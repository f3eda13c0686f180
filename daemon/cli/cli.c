// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cli.c - the verb table and the option parsers the verbs share.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cli/cli.h"
#include "daemon/cli/conf.h"
#include "daemon/live/runtime.h"
#include "daemon/util.h"

const struct cli_verb cli_verbs[] = {
	{ "analyze", cmd_analyze },
	{ "check", cmd_check },
	{ "run", cmd_run },
	{ "record", cmd_record },
	{ "serve", cmd_serve },
	{ "config", cmd_config },
	{ NULL, NULL },
};

bool cli_version_asked(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--version"))
			return true;
	}
	return false;
}

int cli_parse_ns(const char *s, uint64_t default_unit_ns, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000ull },
		{ "m", 60000000000ull }, { "h", 3600000000000ull }, { "d", 86400000000000ull },
	};
	char *end;
	double v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	if (!*end) {
		v *= (double)default_unit_ns;
	} else {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (!strcmp(end, units[i].suffix))
				break;
		if (i == ARRAY_SIZE(units))
			return -EINVAL;
		v *= (double)units[i].mult;
	}
	if (v > 1e19)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

int cli_override_add(struct cli_overrides *o, const char *key, const char *value)
{
	if (o->n >= CLI_MAX_OVERRIDES)
		return -1;
	o->kv[o->n][0] = key;
	o->kv[o->n++][1] = value;
	return 0;
}

/* A --set KEY=VALUE argument, split in place; 0, or -1 after its usage line. */
static int cli_override_set(struct cli_overrides *o, const char *verb, char *arg)
{
	char *eq = strchr(arg, '=');

	if (!eq || o->n >= CLI_MAX_OVERRIDES) {
		fprintf(stderr, "imbalanced: %s: --set '%s': want KEY=VALUE\n", verb, arg);
		return -1;
	}
	*eq = 0;
	return cli_override_add(o, arg, eq + 1);
}

/* A --duration argument (seconds when bare, not 0); 0, or -1 after its usage line. */
static int cli_parse_duration(const char *verb, const char *arg, uint64_t *ns)
{
	if (cli_parse_ns(arg, 1000000000ull, ns) || !*ns) {
		fprintf(stderr, "imbalanced: %s: --duration '%s': want a duration\n", verb, arg);
		return -1;
	}
	return 0;
}

int cli_live_option(int c, const char *verb, struct cli_live_args *a)
{
	switch (c) {
	case CLI_OPT_CONFIG:
		a->config_path = optarg;
		return 1;
	case CLI_OPT_SET:
		return cli_override_set(&a->ov, verb, optarg) ? -1 : 1;
	case CLI_OPT_DURATION:
		return cli_parse_duration(verb, optarg, &a->duration_ns) ? -1 : 1;
	case CLI_OPT_REPORT:
		a->report_path = optarg;
		return 1;
	case 'v':
		a->verbose = true;
		return 1;
	case 'q':
		a->quiet = true;
		return 1;
	default:
		return 0;
	}
}

void cli_live_runtime_opts(struct cli_live_args *a, struct runtime_opts *ro)
{
	ro->config_path = a->config_path ? a->config_path : CONFIG_DEFAULT_PATH;
	ro->config_missing_ok = !a->config_path;
	ro->overrides = a->ov.kv;
	ro->nr_overrides = a->ov.n;
	ro->duration_ns = a->duration_ns;
	ro->report_path = a->report_path;
	ro->verbose = a->verbose;
	ro->quiet = a->quiet;
}

void cli_live_signals(void (*handler)(int sig))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cli_parse_capacity(const char *s, uint32_t *cap, int max_cpus)
{
	const char *p = s;
	int cpu = 0;

	while (*p) {
		char *end;
		long a, b, v;

		a = strtol(p, &end, 10);
		if (end == p || a < 0)
			return -EINVAL;
		if (*end == '-' || *end == ':') {
			/* ranged form: A-B:V or A:V */
			b = a;
			if (*end == '-') {
				p = end + 1;
				b = strtol(p, &end, 10);
				if (end == p || b < a)
					return -EINVAL;
			}
			if (*end != ':')
				return -EINVAL;
			p = end + 1;
			v = strtol(p, &end, 10);
			if (end == p || v < 1 || v > 1024 || b >= max_cpus)
				return -EINVAL;
			for (long c = a; c <= b; c++)
				cap[c] = (uint32_t)v;
			cpu = (int)b + 1;
		} else {
			/* plain list: capacity of CPU 0, 1, ... */
			if (a < 1 || a > 1024 || cpu >= max_cpus)
				return -EINVAL;
			cap[cpu++] = (uint32_t)a;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	return cpu ? 0 : -EINVAL;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * main.c - the imbalanced command line: one binary, verbs.
 *
 * Exit status: 0 ok, 1 findings at or above --fail-on, 2 bad usage or
 * unreadable input, 3 the kernel lacks what live mode needs.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "daemon/cli/cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: imbalanced VERB [OPTIONS]\n"
		"\n"
		"Tell, with evidence, when the CPU scheduler leaves CPUs overloaded,\n"
		"cannot balance a workload, or treats tasks unfairly.\n"
		"\n"
		"Verbs:\n"
		"  analyze FILE...   analyse trace.dat or text event files offline\n"
		"  check             what this host supports for live mode\n"
		"  run               the live daemon (BPF, or tracefs as a fallback)\n"
		"  record [-- CMD]   write the live events (and the kernel's PELT values) to a file\n"
		"  serve --db FILE   the HTTP API and dashboard over a stored database\n"
		"  config            print the configuration file (--defaults: the defaults)\n"
		"\n"
		"Common options: --help, --version, -v/--verbose, -q/--quiet.\n"
		"'imbalanced VERB --help' describes each verb.\n"
		"Exit status: 0 ok, 1 findings at or above --fail-on, 2 bad usage or\n"
		"unreadable input, 3 the kernel lacks what live mode needs.\n");
}

int main(int argc, char **argv)
{
	const char *verb;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	verb = argv[1];
	if (!strcmp(verb, "--help") || !strcmp(verb, "-h") || !strcmp(verb, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(verb, "--version") || !strcmp(verb, "-V")) {
		printf("imbalanced %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (const struct cli_verb *v = cli_verbs; v->name; v++)
		if (!strcmp(v->name, verb)) {
			if (cli_version_asked(argc - 1, argv + 1)) {
				printf("imbalanced %s\n", PACKAGE_VERSION);
				return 0;
			}
			return v->main(argc - 1, argv + 1);
		}
	fprintf(stderr, "imbalanced: unknown verb '%s' (try 'imbalanced --help')\n", verb);
	return CLI_EXIT_USAGE;
}

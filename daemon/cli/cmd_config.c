// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_config.c - `imbalanced config`: print the configuration as a
 * documented file: the defaults (--defaults, how the shipped
 * imbalanced.conf is made) or what a file plus overrides amount to.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "daemon/cli/cli.h"
#include "daemon/cli/conf.h"

static void config_usage(FILE *f)
{
	fprintf(f,
		"Usage: imbalanced config [--defaults] [--config FILE] [--set KEY=VALUE]...\n"
		"\n"
		"Print the daemon's configuration, every key with its help, as a file\n"
		"that 'imbalanced run --config' reads: the defaults, or FILE (default\n"
		"%s) with the --set overrides applied. A bad file or value is\n"
		"reported with its line and exit status 2.\n", CONFIG_DEFAULT_PATH);
}

int cmd_config(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "defaults", no_argument, NULL, 'd' },
		{ "config", required_argument, NULL, 'c' },
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct config c;
	const char *path = NULL;
	bool defaults = false;
	char err[256];
	int opt;

	config_defaults(&c);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			defaults = true;
			break;
		case 'c':
			path = optarg;
			break;
		case 's': {
			char *eq = strchr(optarg, '=');

			if (!eq) {
				fprintf(stderr, "imbalanced: config: --set '%s': want KEY=VALUE\n", optarg);
				return CLI_EXIT_USAGE;
			}
			*eq = 0;
			if (config_set(&c, optarg, eq + 1, err)) {
				fprintf(stderr, "imbalanced: config: %s\n", err);
				return CLI_EXIT_USAGE;
			}
			break;
		}
		case 'h':
			config_usage(stdout);
			return CLI_EXIT_OK;
		default:
			config_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (!defaults) {
		struct config file;

		config_defaults(&file);
		if (config_load(&file, path ? path : CONFIG_DEFAULT_PATH, !path, err)) {
			fprintf(stderr, "imbalanced: %s: %s\n", path ? path : CONFIG_DEFAULT_PATH, err);
			return CLI_EXIT_USAGE;
		}
		/* the file, then the --set values again over it */
		optind = 1;
		while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1)
			if (opt == 's')
				config_set(&file, optarg, optarg + strlen(optarg) + 1, err);
		c = file;
	}
	config_write(&c, stdout);
	return fflush(stdout) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

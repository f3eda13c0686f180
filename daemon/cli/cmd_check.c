// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_check.c - `imbalanced check`: what this host supports for live mode.
 *
 * It mounts nothing and changes nothing: it reads BTF, capabilities,
 * tracefs and sysfs (hostinfo.c) and says whether `run` can work here.
 * Where BPF can run, it loads and attaches the update_load_avg() hook for
 * a moment (pelt_hook.c) to say where the kernel's PELT values would come
 * from.
 * Exit 0 when live mode can run, 3 (with the reason) when it cannot.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "daemon/cli/cli.h"
#include "daemon/host/hostinfo.h"

static void check_usage(FILE *f)
{
	fprintf(f,
		"Usage: imbalanced check [--json] [-q]\n"
		"\n"
		"Report what this host supports for live mode: kernel, BTF, BPF permission,\n"
		"tracefs, the tracepoints and event formats, cfs_rq field flavours, CPU\n"
		"capacities and NUMA nodes, and where the kernel's PELT values come from\n"
		"(pelt hooks: an fexit hook on update_load_avg() where the kernel takes it,\n"
		"which check loads and detaches at once to find out, else the tracepoints).\n"
		"Mounts nothing, changes nothing.\n"
		"\n"
		"  --json       one JSON document on stdout\n"
		"  -q, --quiet  print nothing; the exit status tells\n"
		"Exit status: 0 live mode can run, 3 it cannot (the reason is printed).\n");
}

int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hostinfo h;
	bool json = false, quiet = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			break;
		case 'h':
			check_usage(stdout);
			return CLI_EXIT_OK;
		default:
			check_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "imbalanced: check: unexpected argument '%s'\n", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	if (hostinfo_probe(&h) < 0) {
		fprintf(stderr, "imbalanced: check: cannot probe this host\n");
		return CLI_EXIT_NOKERNEL;
	}
	if (h.bpf_ok)
		pelt_hook_probe(&h.pelt_hook);
	if (!quiet) {
		if (json)
			hostinfo_print_json(&h, stdout);
		else
			hostinfo_print_text(&h, stdout);
	}
	if (!h.live_ok) {
		if (!json && !quiet)
			fprintf(stderr, "imbalanced: check: live mode cannot run: %s\n", h.reason);
		return CLI_EXIT_NOKERNEL;
	}
	return CLI_EXIT_OK;
}

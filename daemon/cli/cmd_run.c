// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_run.c - `imbalanced run`: the live daemon.
 *
 * One thread drains the event source (BPF, else tracefs) and runs the
 * pipeline; each closed window is published to the HTTP readers, committed
 * to the store and given to the alerts.  Windows close on event time and,
 * when the host is quiet, on a timer.  SIGTERM/SIGINT flush and exit 0;
 * SIGHUP re-reads the configuration; readiness and the watchdog go through
 * sd_notify.
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

static volatile sig_atomic_t run_stop, run_reload;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		run_reload = 1;
	else
		run_stop = 1;
}

static void run_usage(FILE *f)
{
	fprintf(f,
		"Usage: imbalanced run [OPTIONS]\n"
		"\n"
		"The live daemon: attach to the scheduler (BPF on pelt_cfs_tp, pelt_se_tp,\n"
		"sched_switch and friends; tracefs events where BPF cannot load), analyse\n"
		"each window, store it, serve it over HTTP and raise alerts. Runs in the\n"
		"foreground (systemd runs it this way).\n"
		"\n"
		"Options (they override the configuration file):\n"
		"  --config FILE       configuration (default %s; see imbalanced.conf(5))\n"
		"  --db FILE           SQLite database ('' for none)\n"
		"  --listen ADDR:PORT  HTTP API and dashboard (default 127.0.0.1:9464, '' for none)\n"
		"  --window MS         window length in ms (default 1000)\n"
		"  --source KIND       auto (default: BPF, else tracefs), bpf or tracefs\n"
		"  --set KEY=VALUE     any configuration key\n"
		"  --duration SECONDS  stop after this long (default: until SIGTERM)\n"
		"  --report FILE       at exit, write the run's report (as analyze --json)\n"
		"  --record FILE       also write every event in the text format (analyze reads it)\n"
		"  --replay FILE       run a recording (trace.dat or text) through the daemon's\n"
		"                      store, alerts and HTTP instead of the live kernel, then stop\n"
		"  -v, --verbose       log every window\n"
		"  -q, --quiet         log only errors\n"
		"  -h, --help          this help\n"
		"Signals: SIGTERM/SIGINT stop (flushing the last window), SIGHUP re-reads\n"
		"the configuration.\n", CONFIG_DEFAULT_PATH);
}

enum { OPT_DB = CLI_OPT_LIVE_NEXT, OPT_LISTEN, OPT_WINDOW, OPT_SOURCE, OPT_RECORD, OPT_REPLAY };

/* An option went through: go on (any other value is the exit status). */
#define RUN_GO (-1)

/* The configuration key an option stands for, NULL when it is none. */
static const char *run_option_key(int c)
{
	switch (c) {
	case OPT_DB:
		return "db";
	case OPT_LISTEN:
		return "listen";
	case OPT_WINDOW:
		return "window";
	case OPT_SOURCE:
		return "source";
	default:
		return NULL;
	}
}

/* An option that is a configuration key, as its pair; RUN_GO or the exit status. */
static int run_key_option(int c, const char *key, struct cli_live_args *a)
{
	/* --window takes milliseconds, like analyze's */
	if (c == OPT_WINDOW) {
		static char ms[64];

		snprintf(ms, sizeof(ms), "%sms", optarg);
		if (cli_override_add(&a->ov, key, strchr(optarg, 's') ? optarg : ms))
			return CLI_EXIT_USAGE;
	} else if (cli_override_add(&a->ov, key, optarg)) {
		return CLI_EXIT_USAGE;
	}
	return RUN_GO;
}

/* One option from getopt_long(); RUN_GO or the exit status. */
static int run_option(int c, struct cli_live_args *a, struct runtime_opts *ro)
{
	const char *key = run_option_key(c);
	int taken;

	if (key)
		return run_key_option(c, key, a);
	taken = cli_live_option(c, "run", a);
	if (taken)
		return taken > 0 ? RUN_GO : CLI_EXIT_USAGE;
	switch (c) {
	case OPT_REPLAY:
		ro->replay_path = optarg;
		break;
	case OPT_RECORD:
		ro->record_path = optarg;
		break;
	case 'h':
		run_usage(stdout);
		return CLI_EXIT_OK;
	default:
		run_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return RUN_GO;
}

/* The whole command line, which takes no operands; RUN_GO or the exit status. */
static int run_parse_args(int argc, char **argv, struct cli_live_args *a, struct runtime_opts *ro)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, CLI_OPT_CONFIG },
		{ "db", required_argument, NULL, OPT_DB },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "set", required_argument, NULL, CLI_OPT_SET },
		{ "duration", required_argument, NULL, CLI_OPT_DURATION },
		{ "report", required_argument, NULL, CLI_OPT_REPORT },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vqh", longopts, NULL)) != -1)
		if ((rc = run_option(c, a, ro)) != RUN_GO)
			return rc;
	if (optind < argc) {
		fprintf(stderr, "imbalanced: run: unexpected argument '%s'\n", argv[optind]);
		return CLI_EXIT_USAGE;
	}
	return RUN_GO;
}

int cmd_run(int argc, char **argv)
{
	struct cli_live_args a = { 0 };
	struct runtime_opts ro;
	char err[256];
	int rc;

	memset(&ro, 0, sizeof(ro));
	if ((rc = run_parse_args(argc, argv, &a, &ro)) != RUN_GO)
		return rc;
	cli_live_runtime_opts(&a, &ro);
	cli_live_signals(on_signal);

	rc = runtime_main(&ro, &run_stop, &run_reload, err);
	if (rc < 0) {
		fprintf(stderr, "imbalanced: run: %s\n", err);
		return rc == -ENOTSUP ? CLI_EXIT_NOKERNEL : CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

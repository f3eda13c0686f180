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

enum {
	OPT_CONFIG = 256, OPT_DB, OPT_LISTEN, OPT_WINDOW, OPT_SOURCE, OPT_SET, OPT_DURATION,
	OPT_REPORT, OPT_RECORD, OPT_REPLAY,
};

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "db", required_argument, NULL, OPT_DB },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "set", required_argument, NULL, OPT_SET },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "record", required_argument, NULL, OPT_RECORD },
		{ "replay", required_argument, NULL, OPT_REPLAY },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* flags are applied over the file, so remember them */
	const char *overrides[64][2];
	int nover = 0, c, rc;
	const char *config_path = NULL;
	uint64_t duration_ns = 0;
	struct runtime_opts ro;
	char err[256];
	struct sigaction sa;

	memset(&ro, 0, sizeof(ro));
	optind = 1;
	while ((c = getopt_long(argc, argv, "vqh", longopts, NULL)) != -1) {
		const char *key = NULL;

		switch (c) {
		case OPT_CONFIG:
			config_path = optarg;
			break;
		case OPT_DB:
			key = "db";
			break;
		case OPT_LISTEN:
			key = "listen";
			break;
		case OPT_WINDOW:
			key = "window";
			break;
		case OPT_SOURCE:
			key = "source";
			break;
		case OPT_SET: {
			char *eq = strchr(optarg, '=');

			if (!eq || nover >= 64) {
				fprintf(stderr, "imbalanced: run: --set '%s': want KEY=VALUE\n", optarg);
				return CLI_EXIT_USAGE;
			}
			*eq = 0;
			overrides[nover][0] = optarg;
			overrides[nover++][1] = eq + 1;
			break;
		}
		case OPT_DURATION:
			if (cli_parse_ns(optarg, 1000000000ull, &duration_ns) || !duration_ns) {
				fprintf(stderr, "imbalanced: run: --duration '%s': want a duration\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_REPLAY:
			ro.replay_path = optarg;
			break;
		case OPT_RECORD:
			ro.record_path = optarg;
			break;
		case OPT_REPORT:
			ro.report_path = optarg;
			break;
		case 'v':
			ro.verbose = true;
			break;
		case 'q':
			ro.quiet = true;
			break;
		case 'h':
			run_usage(stdout);
			return CLI_EXIT_OK;
		default:
			run_usage(stderr);
			return CLI_EXIT_USAGE;
		}
		if (key) {
			if (nover >= 64)
				return CLI_EXIT_USAGE;
			/* --window takes milliseconds, like analyze's */
			if (c == OPT_WINDOW) {
				static char ms[64];

				snprintf(ms, sizeof(ms), "%sms", optarg);
				overrides[nover][0] = key;
				overrides[nover++][1] = strchr(optarg, 's') ? optarg : ms;
			} else {
				overrides[nover][0] = key;
				overrides[nover++][1] = optarg;
			}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "imbalanced: run: unexpected argument '%s'\n", argv[optind]);
		return CLI_EXIT_USAGE;
	}

	ro.config_path = config_path ? config_path : CONFIG_DEFAULT_PATH;
	ro.config_missing_ok = !config_path;
	ro.overrides = overrides;
	ro.nr_overrides = nover;
	ro.duration_ns = duration_ns;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	rc = runtime_main(&ro, &run_stop, &run_reload, err);
	if (rc < 0) {
		fprintf(stderr, "imbalanced: run: %s\n", err);
		return rc == -ENOTSUP ? CLI_EXIT_NOKERNEL : CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

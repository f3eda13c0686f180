// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_serve.c - `imbalanced serve --db FILE`: the HTTP API and the
 * dashboard over a stored database (offline results, or a live daemon's
 * database read from another process).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cli/cli.h"
#include "daemon/sink/http.h"

static volatile sig_atomic_t serve_stop;

static void on_signal(int sig)
{
	(void)sig;
	serve_stop = 1;
}

static void serve_usage(FILE *f)
{
	fprintf(f,
		"Usage: imbalanced serve --db FILE [OPTIONS]\n"
		"\n"
		"Serve the HTTP API and the dashboard over a stored database (written by\n"
		"'imbalanced analyze --db' or 'imbalanced run').\n"
		"\n"
		"  --db FILE           the database (required)\n"
		"  --listen ADDR:PORT  where to listen (default %s)\n"
		"  --allow-remote      allow a non-loopback address\n"
		"  --token-file FILE   require 'Authorization: Bearer <token>' with this token\n"
		"  -q, --quiet         no start-up line\n"
		"  -h, --help          this help\n", HTTP_DEFAULT_LISTEN);
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "allow-remote", no_argument, NULL, 'r' },
		{ "token-file", required_argument, NULL, 't' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct http_opts ho = { 0 };
	struct http_backend be = { .version = PACKAGE_VERSION };
	struct http_server *h;
	struct sigaction sa;
	const char *err = NULL;
	bool quiet = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "qvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			be.db_path = optarg;
			break;
		case 'l':
			ho.listen = optarg;
			break;
		case 'r':
			ho.allow_remote = true;
			break;
		case 't':
			ho.token_file = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			break;
		case 'h':
			serve_usage(stdout);
			return CLI_EXIT_OK;
		default:
			serve_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (!be.db_path || optind < argc) {
		fprintf(stderr, "imbalanced: serve: %s (try 'imbalanced serve --help')\n",
			!be.db_path ? "--db FILE is required" : "unexpected argument");
		return CLI_EXIT_USAGE;
	}
	if (access(be.db_path, R_OK)) {
		fprintf(stderr, "imbalanced: %s: %s\n", be.db_path, strerror(errno));
		return CLI_EXIT_USAGE;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	h = http_start(&ho, &be, &err);
	if (!h) {
		fprintf(stderr, "imbalanced: serve: %s\n", err ? err : strerror(errno));
		return CLI_EXIT_USAGE;
	}
	if (!quiet)
		fprintf(stderr, "imbalanced: serving %s on http://%s/\n", be.db_path,
			ho.listen ? ho.listen : HTTP_DEFAULT_LISTEN);
	while (!serve_stop)
		pause();
	http_stop(h);
	return CLI_EXIT_OK;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_record.c - `imbalanced record`: write the live event stream to a file.
 *
 * The live daemon's machinery (runtime.c) with its sinks off: the event
 * source (BPF: the scheduler's events, the kernel's own PELT values from
 * pelt_cfs_tp/pelt_se_tp or the update_load_avg() hook, task group ids;
 * tracefs where BPF cannot load) drains into the text event format through
 * event_writer.c, plain or gzip, for `analyze` to read.  No HTTP, no store,
 * no flight recorder, no alert hook.  It stops when the duration is over,
 * when the command it started exits (started once the source is attached,
 * at the nice level record itself started with) or on SIGINT/SIGTERM, and
 * says how many events it wrote and lost; the file carries the losses as
 * `lost` events.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/cli/cli.h"
#include "daemon/cli/conf.h"
#include "daemon/live/runtime.h"

#define RECORD_DEFAULT_PATH	"imbalanced.events.gz"

static volatile sig_atomic_t rec_stop, rec_reload;
static volatile sig_atomic_t rec_child_done;
static volatile pid_t rec_child;
static int rec_child_status;

struct record_cmd {
	char **argv;		/* the command, NULL none */
	int nice0;		/* record's own nice level at start, for the command */
	int exec_errno;		/* the command could not be started */
	bool started;
};

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		rec_reload = 1;
	else
		rec_stop = 1;
}

/* The command's end stops the recording; only our child is reaped here. */
static void on_child(int sig)
{
	int saved = errno, st;

	(void)sig;
	if (rec_child > 0 && waitpid(rec_child, &st, WNOHANG) == rec_child) {
		rec_child_status = st;
		rec_child_done = 1;
		rec_stop = 1;
	}
	errno = saved;
}

static void record_usage(FILE *f)
{
	fprintf(f,
		"Usage: imbalanced record [OPTIONS] [-- COMMAND [ARGS...]]\n"
		"\n"
		"Record the live event stream into FILE in the text event format, which\n"
		"'imbalanced analyze FILE' reads. With BPF the file has the scheduler's\n"
		"events, the kernel's own PELT values (pelt_cfs_tp/pelt_se_tp records, or\n"
		"the update_load_avg() hook where the kernel allows it: see 'imbalanced\n"
		"check') and the task groups' ids, so analyze reports the engine's error\n"
		"against the kernel per signal, CPU and group. With tracefs, the events\n"
		"only. Stops after --duration, when COMMAND exits (started once the\n"
		"events flow; its exit status is reported) or on SIGINT/SIGTERM (a\n"
		"command still running then gets SIGTERM). Lost events are reported at\n"
		"the end and kept in the file as 'lost' events.\n"
		"\n"
		"  -o, --output FILE   where to write (default %s); a name ending\n"
		"                      in .gz is gzip-compressed, '-' is standard output\n"
		"  -f, --force         replace FILE if it exists (default: refuse)\n"
		"  --duration SECONDS  stop after this long (a unit may follow: 500ms, 2m)\n"
		"  --source KIND       auto (default: BPF, else tracefs), bpf or tracefs\n"
		"  --report FILE       also the live analysis's report (as run --report):\n"
		"                      the daemon's own engine-vs-kernel comparison\n"
		"  --config FILE       configuration (default %s)\n"
		"  --set KEY=VALUE     any configuration key (ring_buffer_kb, events, ...)\n"
		"  -v, --verbose       log every window\n"
		"  -q, --quiet         log only errors\n"
		"  -h, --help          this help\n"
		"Exit status: 0 recorded, 2 bad usage or the file cannot be written (or the\n"
		"command cannot be started), 3 the kernel lacks what live mode needs.\n",
		RECORD_DEFAULT_PATH, CONFIG_DEFAULT_PATH);
}

/* runtime_opts.on_ready: the source is attached, start the command. */
static void record_ready(void *ctx)
{
	struct record_cmd *c = ctx;
	sigset_t chld, old;
	int pfd[2];
	pid_t pid;

	if (!c->argv)
		return;
	if (pipe2(pfd, O_CLOEXEC)) {
		c->exec_errno = errno;
		rec_stop = 1;
		return;
	}
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);	/* rec_child is set before on_child runs */
	pid = fork();
	if (pid == 0) {
		int e;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* the event reader raised its own priority: not the workload's */
		setpriority(PRIO_PROCESS, 0, c->nice0);
		close(pfd[0]);
		execvp(c->argv[0], c->argv);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (pid < 0) {
		c->exec_errno = errno;
		rec_stop = 1;
	} else {
		int e;
		ssize_t n;

		rec_child = pid;
		close(pfd[1]);
		pfd[1] = -1;
		do
			n = read(pfd[0], &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(e)) {
			c->exec_errno = e;
			rec_stop = 1;
		} else {
			c->started = true;
		}
	}
	close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* After the recording: a command still running is told to stop, then reaped. */
static void record_reap(void)
{
	sigset_t chld, old;
	int st, i;
	pid_t p;

	if (rec_child <= 0)
		return;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	if (!rec_child_done) {
		kill(rec_child, SIGTERM);
		for (i = 0; i < 100; i++) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };

			p = waitpid(rec_child, &st, WNOHANG);
			if (p == rec_child || (p < 0 && errno != EINTR))
				break;
			nanosleep(&ts, NULL);
		}
		if (i == 100) {
			kill(rec_child, SIGKILL);
			p = waitpid(rec_child, &st, 0);
		}
		if (p == rec_child) {
			rec_child_status = st;
			rec_child_done = 1;
		}
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static void record_child_say(const struct record_cmd *c, bool stopped_by_us)
{
	int st = rec_child_status;

	if (!c->started || !rec_child_done)
		return;
	if (WIFEXITED(st))
		fprintf(stderr, "imbalanced: record: %s exited with status %d\n", c->argv[0],
			WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		fprintf(stderr, "imbalanced: record: %s killed by signal %d (%s)%s\n", c->argv[0],
			WTERMSIG(st), strsignal(WTERMSIG(st)),
			stopped_by_us ? ", sent at the end of the recording" : "");
}

/*
 * Can execvp() find @name?  Asked before anything is attached, so that a
 * mistyped command costs one line; the exec's own error stays the word.
 */
static int command_findable(const char *name)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(name, '/'))
		return access(name, X_OK) ? errno : 0;
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if ((int)snprintf(buf, sizeof(buf), "%.*s%s%s", (int)n, path, n ? "/" : "",
				  name) < (int)sizeof(buf) && !access(buf, X_OK))
			return 0;
		path += n;
		if (*path == ':')
			path++;
	}
	return ENOENT;
}

enum { OPT_SOURCE = CLI_OPT_LIVE_NEXT };

/* What record's command line asks for. */
struct record_args {
	struct cli_live_args live;	/* the fixed pairs, then --source and --set */
	const char *out;
	bool force;
};

/* An option or check went through: go on (any other value is the exit status). */
#define RECORD_GO (-1)

/* One option from getopt_long(); RECORD_GO or the exit status. */
static int record_option(int c, struct record_args *a)
{
	int taken = cli_live_option(c, "record", &a->live);

	if (taken)
		return taken > 0 ? RECORD_GO : CLI_EXIT_USAGE;
	switch (c) {
	case 'o':
		if (!*optarg) {
			fprintf(stderr, "imbalanced: record: --output: want a file name\n");
			return CLI_EXIT_USAGE;
		}
		a->out = optarg;
		break;
	case 'f':
		a->force = true;
		break;
	case OPT_SOURCE:
		if (strcmp(optarg, "auto") && strcmp(optarg, "bpf") && strcmp(optarg, "tracefs")) {
			fprintf(stderr, "imbalanced: record: --source '%s': want auto, bpf or "
				"tracefs\n", optarg);
			return CLI_EXIT_USAGE;
		}
		if (cli_override_add(&a->live.ov, "source", optarg))
			return CLI_EXIT_USAGE;
		break;
	case 'h':
		record_usage(stdout);
		return CLI_EXIT_OK;
	default:
		record_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return RECORD_GO;
}

/* The options up to the command; RECORD_GO or the exit status. */
static int record_parse_options(int argc, char **argv, struct record_args *a)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "duration", required_argument, NULL, CLI_OPT_DURATION },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "report", required_argument, NULL, CLI_OPT_REPORT },
		{ "config", required_argument, NULL, CLI_OPT_CONFIG },
		{ "set", required_argument, NULL, CLI_OPT_SET },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* the sinks record needs none of; user --set pairs come after these */
	static const char *const fixed[][2] = {
		{ "listen", "" }, { "db", "" }, { "flight_recorder_s", "0" },
		{ "alert_hook", "" }, { "state_dir", "" },
		/* a recording keeps every update_curr(), as a tracefs one would */
		{ "runtime_all", "true" },
	};
	int c, rc;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		cli_override_add(&a->live.ov, fixed[i][0], fixed[i][1]);
	optind = 1;
	/* '+': the command's own options are not ours */
	while ((c = getopt_long(argc, argv, "+o:fvqh", longopts, NULL)) != -1)
		if ((rc = record_option(c, a)) != RECORD_GO)
			return rc;
	return RECORD_GO;
}

/*
 * The command after the options, which must be one execvp() can find, and
 * the one output each run has; RECORD_GO or the exit status.
 */
static int record_check_args(int argc, char **argv, const struct record_args *a,
			     struct record_cmd *cmd)
{
	if (optind < argc) {
		int e = ENOENT;		/* an empty name */

		cmd->argv = &argv[optind];
		if (!*cmd->argv[0] || (e = command_findable(cmd->argv[0]))) {
			fprintf(stderr, "imbalanced: record: %s: cannot start: %s\n", cmd->argv[0],
				strerror(e));
			return CLI_EXIT_USAGE;
		}
	}
	if (!strcmp(a->out, "-") && a->live.report_path && !strcmp(a->live.report_path, "-")) {
		fprintf(stderr, "imbalanced: record: the recording and the report cannot both go "
			"to standard output\n");
		return CLI_EXIT_USAGE;
	}
	return RECORD_GO;
}

/* The runtime's options from the arguments; the command starts once the source is ready. */
static void record_runtime_opts(struct runtime_opts *ro, struct record_args *a,
				struct runtime_result *res, struct record_cmd *cmd)
{
	cli_live_runtime_opts(&a->live, ro);
	ro->record_path = a->out;
	ro->record_no_clobber = !a->force;
	ro->result = res;
	ro->on_ready = record_ready;
	ro->ready_ctx = cmd;
	errno = 0;
	cmd->nice0 = getpriority(PRIO_PROCESS, 0);
}

static void record_signals(void)
{
	struct sigaction sa;

	cli_live_signals(on_signal);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
}

/* After runtime_main() returned @rc: what went wrong or what was written; the exit status. */
static int record_finish(int rc, const char *err, const struct record_args *a,
			 const struct runtime_opts *ro, const struct runtime_result *res,
			 const struct record_cmd *cmd, bool stopped_by_signal)
{
	if (rc < 0) {
		fprintf(stderr, "imbalanced: record: %s\n", err);
		/* a file made by this run holds no recording worth keeping */
		if (res->record_created && strcmp(a->out, "-"))
			unlink(a->out);
		return rc == -ENOTSUP ? CLI_EXIT_NOKERNEL : CLI_EXIT_USAGE;
	}
	if (cmd->exec_errno) {
		fprintf(stderr, "imbalanced: record: %s: cannot start: %s\n", cmd->argv[0],
			strerror(cmd->exec_errno));
		if (res->record_created && strcmp(a->out, "-"))
			unlink(a->out);
		return CLI_EXIT_USAGE;
	}
	record_child_say(cmd, stopped_by_signal || !rec_child_done);
	if (!ro->quiet || res->record_failed || res->lost)
		fprintf(stderr, "imbalanced: record: %s: %llu events written, %llu lost%s\n",
			a->out, (unsigned long long)res->recorded, (unsigned long long)res->lost,
			res->record_failed ? " (the file is incomplete)" : "");
	return res->record_failed ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { .out = RECORD_DEFAULT_PATH };
	struct record_cmd cmd = { 0 };
	struct runtime_result res = { 0 };
	struct runtime_opts ro;
	bool stopped_by_signal;
	char err[256];
	int rc;

	memset(&ro, 0, sizeof(ro));
	if ((rc = record_parse_options(argc, argv, &a)) != RECORD_GO ||
	    (rc = record_check_args(argc, argv, &a, &cmd)) != RECORD_GO)
		return rc;
	record_runtime_opts(&ro, &a, &res, &cmd);
	record_signals();

	rc = runtime_main(&ro, &rec_stop, &rec_reload, err);
	stopped_by_signal = rec_stop && !rec_child_done;
	record_reap();
	return record_finish(rc, err, &a, &ro, &res, &cmd, stopped_by_signal);
}

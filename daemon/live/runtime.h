/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * runtime.h - the live daemon's process: configuration, event source,
 * pipeline and sinks, and its main loop (`imbalanced run`).
 */
#ifndef IMB_RUNTIME_H
#define IMB_RUNTIME_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct runtime_opts {
	const char *config_path;	/* configuration file */
	bool config_missing_ok;		/* the default path may be absent */
	const char *(*overrides)[2];	/* KEY, VALUE pairs applied over the file */
	int nr_overrides;
	uint64_t duration_ns;		/* stop after this long; 0: until signalled */
	const char *replay_path;	/* a recording instead of the live kernel; NULL live */
	const char *record_path;	/* every event in the text format; NULL none */
	const char *report_path;	/* at exit, the run's report as analyze --json; NULL none */
	bool verbose, quiet;
};

/**
 * runtime_main - run the daemon until *@stop is set (or the duration ends)
 * @reload: set by SIGHUP; the loop re-reads the configuration and clears it
 * @err: 256 bytes, the reason on failure
 *
 * Returns 0 after a clean stop, -ENOTSUP when the kernel lacks what live
 * mode needs, another -errno on a setup error.
 */
int runtime_main(const struct runtime_opts *o, volatile sig_atomic_t *stop,
		 volatile sig_atomic_t *reload, char *err);

#endif /* IMB_RUNTIME_H */

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
	bool record_no_clobber;		/* fail rather than replace an existing record_path */
	void (*on_ready)(void *ctx);	/* once the source is attached, before the first poll */
	void *ready_ctx;
	struct runtime_result *result;	/* filled at the end when not NULL */
	bool verbose, quiet;
};

/* What a run did, for a caller that reports it (`record`). */
struct runtime_result {
	uint64_t events;		/* events through the pipeline */
	uint64_t lost;			/* events the source lost */
	uint64_t recorded;		/* events written to record_path */
	bool record_created;		/* record_path was created (or replaced) by this run */
	bool record_failed;		/* the recording could not be written whole */
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

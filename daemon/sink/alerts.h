/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * alerts.h - thresholds with hysteresis and a minimum duration over the
 * closed windows, delivered to the journal (structured fields), to an
 * optional exec hook, to the store and to the HTTP event stream.
 *
 * One alert per episode: "fired" once when a condition has held long
 * enough, "recovered" once when it falls below threshold x (1 - hysteresis).
 * Conditions: a job's unfairness, a CPU's overloaded fraction, an open
 * vruntime_drift finding, lost events in a window.
 */
#ifndef IMB_ALERTS_H
#define IMB_ALERTS_H

#include <stdint.h>

#include "analyzers/window.h"
#include "daemon/cli/conf.h"
#include "daemon/sink/flightrec.h"

struct alerts;

struct alerts_sink {
	/* called for each alert (e.g. the store row); may be NULL */
	void (*deliver)(void *ctx, const struct imb_alert *a);
	void *ctx;
	bool journal;		/* also send to the systemd journal */
};

/**
 * alerts_new - alerts with @cfg's thresholds (copied); @fr may be NULL
 *
 * Returns the alerts (free with alerts_free()) or NULL with errno.
 */
struct alerts *alerts_new(const struct config *cfg, const struct alerts_sink *sink,
			  struct flightrec *fr);

/** alerts_config - take new thresholds and hook (SIGHUP) */
void alerts_config(struct alerts *a, const struct config *cfg);

/**
 * alerts_window - judge a closed window; the alerts it raises are appended
 * to @w->alerts (so they reach the stream with it) and delivered.  Never
 * blocks on the hook.  Returns 0 or -ENOMEM.
 */
int alerts_window(struct alerts *a, struct imb_window *w);

/** alerts_poll - reap finished hooks, kill those past their time limit */
void alerts_poll(struct alerts *a);

/**
 * alerts_drain - let running hooks finish, waiting at most @max_wait_ns
 * (and never past their own time limit)
 */
void alerts_drain(struct alerts *a, uint64_t max_wait_ns);

/** alerts_free - kill hooks still running; accepts NULL */
void alerts_free(struct alerts *a);

#endif /* IMB_ALERTS_H */

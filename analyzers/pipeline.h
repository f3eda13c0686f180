/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pipeline.h - events in, windows and a whole-run summary out.
 *
 * The pipeline owns the model and the analyzers.  Feed it events in time
 * order; each time a window closes it builds a struct imb_window (CPU, task
 * and job rows, then the analyzers' columns and findings) and hands it to
 * the window callback.  At the end, pipeline_finish() returns the
 * whole-run summary that `analyze` reports.  Live and offline use the same
 * pipeline, so a finding seen live is reproduced from a recording.
 */
#ifndef IMB_PIPELINE_H
#define IMB_PIPELINE_H

#include "analyzer.h"
#include "model.h"
#include "window.h"

struct pipeline;

/* Receives each closed window; the callee owns it (imb_window_free()). */
typedef void (*pipeline_window_fn)(struct imb_window *w, void *ctx);

/** pipeline_config_defaults - fill @cfg with the default thresholds */
void pipeline_config_defaults(struct analyzer_config *cfg);

/**
 * pipeline_new - a pipeline with a fresh model
 * @cfg: thresholds (copied)
 * @mopts: model options (copied)
 * @fn, @ctx: window callback, may be NULL
 *
 * Returns a pipeline to free with pipeline_free(), or NULL with errno.
 */
struct pipeline *pipeline_new(const struct analyzer_config *cfg, const struct model_opts *mopts,
			      pipeline_window_fn fn, void *ctx);

/** pipeline_free - free it; accepts NULL */
void pipeline_free(struct pipeline *p);

/** pipeline_event - apply one event; closes the windows it passes. 0 or -errno */
int pipeline_event(struct pipeline *p, const struct imb_event *ev);

/**
 * pipeline_flush - close every window that ended at or before @now_ns
 * (live: on a timer, so windows close when no event arrives); the first
 * call starts the window clock if no event has.  0 or -errno
 */
int pipeline_flush(struct pipeline *p, uint64_t now_ns);

/**
 * pipeline_finish - close the last window and build the whole-run summary
 *
 * Returns the summary window (whole span; tasks with their whole-run
 * figures; jobs; CPUs at the end; every finding of the run, or with
 * cfg.live those still open at the last window and those the end made:
 * the others went out with their windows); the caller
 * frees it with imb_window_free().  NULL with errno on ENOMEM.
 */
struct imb_window *pipeline_finish(struct pipeline *p);

/**
 * pipeline_reconfigure - the analyzers' thresholds from @cfg, from now on
 *
 * The window length, the grouping of jobs, live mode and the topology stay
 * as the pipeline was created with: they shape state already built.
 */
void pipeline_reconfigure(struct pipeline *p, const struct analyzer_config *cfg);

/*
 * Labels cgroup job @id (a cgroup v2 id): copies its path into @buf (cut to
 * @len, NUL-terminated) and returns 0, or returns nonzero to leave it
 * unlabelled.  Must not block for long: it runs on the pipeline's thread.
 */
typedef int (*pipeline_cgroup_label_fn)(uint64_t id, char *buf, size_t len, void *ctx);

/**
 * pipeline_set_cgroup_label - name cgroup jobs with @fn (NULL: none, the default)
 *
 * With group_by cgroup, the pipeline calls @fn once for each cgroup job when
 * it builds a window's job rows (never per event) and stores the result in
 * the job's path; the key stays "cgroup:<id>".  Only the live daemon sets
 * it: a recording's ids are another host's, and analyze leaves paths empty.
 */
void pipeline_set_cgroup_label(struct pipeline *p, pipeline_cgroup_label_fn fn, void *ctx);

/** pipeline_tgid_hint - see model_tgid_hint(); 0 or -ENOMEM */
int pipeline_tgid_hint(struct pipeline *p, int32_t pid, int32_t tgid);

/** pipeline_model - the model, read-only */
const struct model *pipeline_model(const struct pipeline *p);

/** pipeline_config - the thresholds in use */
const struct analyzer_config *pipeline_config(const struct pipeline *p);

#endif /* IMB_PIPELINE_H */

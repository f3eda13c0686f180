// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * alerts.c - conditions over closed windows, with hysteresis and a minimum
 * duration, and their delivery (alerts.h).
 *
 * Each condition is keyed by kind and subject and walks: quiet -> holding
 * (since a window start) -> fired (held long enough) -> quiet again once
 * the value falls below threshold x (1 - hysteresis).  The exec hook runs
 * through fork/exec with an environment built beforehand (the daemon has
 * HTTP threads, so the child only calls async-signal-safe functions) and
 * the finding as JSON on a pipe; it is reaped by alerts_poll() and killed
 * with its process group past the time limit, so it never blocks the
 * pipeline.  A fired alert's flight-recorder dump is written by the
 * recorder's worker thread (alerts in the same window share one file); the
 * journal and the store name the file at once, the hook starts once the
 * file is complete, so it can read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sink/alerts.h"
#include "daemon/live/priority.h"
#include "daemon/sink/json.h"
#include "daemon/sink/window_json.h"
#include "daemon/util.h"

#define ALERTS_MAX_CONDS 256
#define ALERTS_MAX_HOOKS 4
#define ALERTS_MAX_PENDING 8	/* hooks waiting for their dump */

struct cond {
	char kind[24];
	char subject[64];
	uint32_t key;		/* cond_key() of kind and subject */
	bool used;
	bool seen;		/* reported in the current window */
	bool fired;
	uint64_t since_ns;	/* start of the holding run, 0 quiet */
	double value, threshold;
	uint64_t last_ns;
};

struct hook {
	pid_t pid;		/* 0: free slot */
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC */
};

struct pending {
	int64_t seq;		/* the dump it waits for, 0: free slot */
	struct imb_alert al;
};

struct alerts {
	struct config cfg;
	struct alerts_sink sink;
	struct flightrec *fr;
	struct cond conds[ALERTS_MAX_CONDS];
	struct hook hooks[ALERTS_MAX_HOOKS];
	struct pending pend[ALERTS_MAX_PENDING];
	/* the last dump: alerts of the same window share it */
	uint64_t dump_t_ns;
	int64_t dump_seq;
	char dump_path[sizeof(((struct imb_alert *)0)->evidence_file)];
};

struct alerts *alerts_new(const struct config *cfg, const struct alerts_sink *sink,
			  struct flightrec *fr)
{
	struct alerts *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->cfg = *cfg;
	if (sink)
		a->sink = *sink;
	a->fr = fr;
	return a;
}

void alerts_config(struct alerts *a, const struct config *cfg)
{
	a->cfg = *cfg;
}

/*
 * A hash of a condition's kind and subject, so that the search for each
 * finding of a window compares strings only where it will likely match (a
 * host with hundreds of jobs has hundreds of findings each window).
 */
static uint32_t cond_key(const char *kind, const char *subject)
{
	uint32_t h = 2166136261u;

	for (const char *p = kind; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (const char *p = subject; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

static struct cond *cond_get(struct alerts *a, const char *kind, const char *subject)
{
	struct cond *free_slot = NULL;
	uint32_t key = cond_key(kind, subject);

	for (int i = 0; i < ALERTS_MAX_CONDS; i++) {
		struct cond *c = &a->conds[i];

		if (!c->used) {
			if (!free_slot)
				free_slot = c;
			continue;
		}
		if (c->key == key && !strcmp(c->kind, kind) && !strcmp(c->subject, subject))
			return c;
	}
	if (!free_slot) {
		/* full: reuse a quiet one (bounded: a host with many jobs) */
		for (int i = 0; i < ALERTS_MAX_CONDS && !free_slot; i++)
			if (!a->conds[i].fired && !a->conds[i].since_ns)
				free_slot = &a->conds[i];
		if (!free_slot)
			return NULL;
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = true;
	snprintf(free_slot->kind, sizeof(free_slot->kind), "%s", kind);
	snprintf(free_slot->subject, sizeof(free_slot->subject), "%s", subject);
	free_slot->key = cond_key(free_slot->kind, free_slot->subject);
	return free_slot;
}

static void hook_reap(struct alerts *a, bool kill_all)
{
	uint64_t now = mono_ns();

	for (int i = 0; i < ALERTS_MAX_HOOKS; i++) {
		struct hook *h = &a->hooks[i];
		int status;
		pid_t r;

		if (!h->pid)
			continue;
		if (kill_all || now > h->deadline_ns) {
			kill(-h->pid, SIGKILL);
			kill(h->pid, SIGKILL);
			waitpid(h->pid, &status, 0);
			h->pid = 0;
			continue;
		}
		r = waitpid(h->pid, &status, WNOHANG);
		if (r == h->pid || (r < 0 && errno == ECHILD))
			h->pid = 0;
	}
}


static void env_add(char **envp, int *n, char *buf, size_t *used, size_t cap, const char *key,
		    const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void env_add(char **envp, int *n, char *buf, size_t *used, size_t cap, const char *key,
		    const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*used >= cap)
		return;
	k = snprintf(buf + *used, cap - *used, "%s=", key);
	if (k < 0 || (size_t)k >= cap - *used)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + *used + k, cap - *used - (size_t)k, fmt, ap);
	va_end(ap);
	envp[(*n)++] = buf + *used;
	*used += strlen(buf + *used) + 1;
}

/* Start the hook with the alert in its environment and as JSON on stdin. */
static void hook_run(struct alerts *a, const struct imb_alert *al, const char *json)
{
	static char envbuf[4096];
	char *envp[16];
	const struct imb_finding *f = &al->finding;
	struct hook *slot = NULL;
	size_t used = 0;
	int n = 0, pfd[2];
	pid_t pid;
	ssize_t wr;

	if (!a->cfg.alert_hook[0])
		return;
	hook_reap(a, false);
	for (int i = 0; i < ALERTS_MAX_HOOKS && !slot; i++)
		if (!a->hooks[i].pid)
			slot = &a->hooks[i];
	if (!slot)
		return;
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "PATH", "%s", "/usr/sbin:/usr/bin:/sbin:/bin");
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_KIND", "%s", f->kind);
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_STATE", "%s", al->state);
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_SUBJECT", "%s", f->subject);
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_SEVERITY", "%s",
		imb_severity_name(f->severity));
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_VALUE", "%g", f->value);
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_THRESHOLD", "%g", f->threshold);
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_SUMMARY", "%s", f->summary);
	env_add(envp, &n, envbuf, &used, sizeof(envbuf), "IMBALANCED_EVIDENCE_FILE", "%s",
		al->evidence_file);
	envp[n] = NULL;
	if (pipe2(pfd, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		/* child: async-signal-safe calls only */
		setpgid(0, 0);
		priority_restore_self();	/* the hook runs at the daemon's start level */
		dup2(pfd[0], STDIN_FILENO);
		execle("/bin/sh", "sh", "-c", a->cfg.alert_hook, (char *)NULL, envp);
		_exit(127);
	}
	close(pfd[0]);
	/* the JSON is small (< pipe buffer): a non-blocking write never waits */
	fcntl(pfd[1], F_SETFL, O_NONBLOCK);
	wr = write(pfd[1], json, strlen(json));
	(void)wr;	/* a failed write leaves the hook an empty stdin */
	close(pfd[1]);
	slot->pid = pid;
	slot->deadline_ns = mono_ns() + (uint64_t)a->cfg.alert_hook_timeout_s * 1000000000ull;
}

static char *alert_json(const struct imb_alert *al);

/* Start the hook now: the alert's dump is written (or failed, or none). */
static void hook_start(struct alerts *a, struct imb_alert *al)
{
	char *json = alert_json(al);

	if (json) {
		hook_run(a, al, json);
		free(json);
	}
}

/* Start the hooks whose dump is no longer being written; returns how many wait. */
static int pending_run(struct alerts *a)
{
	int waiting = 0;

	for (int i = 0; i < ALERTS_MAX_PENDING; i++) {
		struct pending *p = &a->pend[i];
		int r;

		if (!p->seq)
			continue;
		r = flightrec_dump_result(a->fr, p->seq);
		if (r == 1) {
			waiting++;
			continue;
		}
		if (r < 0 && r != -ESTALE)	/* the write failed: no file to read */
			p->al.evidence_file[0] = 0;
		p->seq = 0;
		hook_start(a, &p->al);
	}
	return waiting;
}

void alerts_poll(struct alerts *a)
{
	hook_reap(a, false);
	pending_run(a);
}

static char *alert_json(const struct imb_alert *al)
{
	struct json j;

	json_init(&j);
	json_object_begin(&j);
	json_kv_str(&j, "state", al->state);
	json_kv_uint(&j, "t_ns", al->t_ns);
	json_kv_str(&j, "evidence_file", al->evidence_file);
	json_key(&j, "finding");
	window_json_finding(&j, &al->finding);
	json_object_end(&j);
	return json_steal(&j, NULL);
}

static int alert_emit(struct alerts *a, struct imb_window *w, struct cond *c, const char *state,
		      const char *summary)
{
	struct imb_alert al, *n;
	int64_t seq = 0;

	memset(&al, 0, sizeof(al));
	snprintf(al.state, sizeof(al.state), "%s", state);
	al.t_ns = w->t_end_ns;
	snprintf(al.finding.kind, sizeof(al.finding.kind), "%s", c->kind);
	snprintf(al.finding.subject, sizeof(al.finding.subject), "%s", c->subject);
	al.finding.severity = IMB_SEV_WARNING;
	al.finding.t_start_ns = c->since_ns;
	al.finding.t_end_ns = w->t_end_ns;
	al.finding.value = c->value;
	al.finding.threshold = c->threshold;
	al.finding.open = !strcmp(state, "fired");
	snprintf(al.finding.summary, sizeof(al.finding.summary), "%s", summary);
	if (!strcmp(state, "fired") && a->fr && flightrec_count(a->fr)) {
		char tag[96], err[256];

		if (a->dump_seq && a->dump_t_ns == w->t_end_ns) {
			/* no event since: the same evidence */
			seq = a->dump_seq;
			snprintf(al.evidence_file, sizeof(al.evidence_file), "%s", a->dump_path);
		} else {
			snprintf(tag, sizeof(tag), "%s-%s", c->kind, c->subject);
			seq = flightrec_dump_async(a->fr, a->cfg.state_dir, tag, al.evidence_file,
						   sizeof(al.evidence_file), err);
			if (seq < 0) {
				al.evidence_file[0] = 0;
				seq = 0;
			} else {
				a->dump_seq = seq;
				a->dump_t_ns = w->t_end_ns;
				snprintf(a->dump_path, sizeof(a->dump_path), "%s", al.evidence_file);
			}
		}
	}
	snprintf(al.finding.evidence, sizeof(al.finding.evidence),
		 "{\"state\":\"%s\",\"since_ns\":%" PRIu64 ",\"value\":%g,\"threshold\":%g,"
		 "\"hysteresis\":%g,\"flight_recorder\":\"%s\"}", state, c->since_ns, c->value,
		 c->threshold, a->cfg.alert_hysteresis, al.evidence_file);
	if (a->sink.journal)
		sd_journal_send("MESSAGE=imbalanced alert %s: %s %s: %s", state, c->kind,
				c->subject, summary, "PRIORITY=%d", !strcmp(state, "fired") ? 4 : 6,
				"SYSLOG_IDENTIFIER=imbalanced", "IMBALANCED_KIND=%s", c->kind,
				"IMBALANCED_SUBJECT=%s", c->subject, "IMBALANCED_STATE=%s", state,
				"IMBALANCED_SEVERITY=%s", imb_severity_name(al.finding.severity),
				"IMBALANCED_VALUE=%g", c->value, "IMBALANCED_THRESHOLD=%g",
				c->threshold, "IMBALANCED_EVIDENCE_FILE=%s", al.evidence_file, NULL);
	if (a->cfg.alert_hook[0]) {
		int r = seq ? flightrec_dump_result(a->fr, seq) : 0;
		struct pending *slot = NULL;

		for (int i = 0; r == 1 && i < ALERTS_MAX_PENDING && !slot; i++)
			if (!a->pend[i].seq)
				slot = &a->pend[i];
		if (slot) {
			slot->seq = seq;	/* started by alerts_poll() once written */
			slot->al = al;
		} else if (r != 1) {	/* r == 1: too many waiting, dropped */
			if (r < 0 && r != -ESTALE)
				al.evidence_file[0] = 0;
			hook_start(a, &al);
		}
	}
	if (a->sink.deliver)
		a->sink.deliver(a->sink.ctx, &al);
	n = realloc(w->alerts, (w->nr_alerts + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	w->alerts = n;
	w->alerts[w->nr_alerts++] = al;
	return 0;
}

/*
 * One observation of a condition in this window: @holds above the
 * threshold, @clear below threshold x (1 - hysteresis).
 */
static int cond_observe(struct alerts *a, struct imb_window *w, const char *kind,
			const char *subject, double value, double threshold, uint64_t min_ns,
			const char *what)
{
	struct cond *c = cond_get(a, kind, subject);
	bool holds = value > threshold || (threshold == 0 && value > 0);
	bool clear = value < threshold * (1.0 - a->cfg.alert_hysteresis) ||
		     (threshold == 0 && value <= 0);
	char summary[256];

	if (!c)
		return 0;
	c->seen = true;
	c->value = value;
	c->threshold = threshold;
	c->last_ns = w->t_end_ns;
	if (c->fired) {
		if (!clear)
			return 0;
		c->fired = false;
		snprintf(summary, sizeof(summary), "%s back to %.3g (threshold %.3g, hysteresis %g %%)",
			 what, value, threshold, 100.0 * a->cfg.alert_hysteresis);
		{
			int rc = alert_emit(a, w, c, "recovered", summary);

			c->since_ns = 0;
			return rc;
		}
	}
	if (!holds) {
		c->since_ns = 0;
		return 0;
	}
	if (!c->since_ns)
		c->since_ns = w->t_start_ns;
	if (w->t_end_ns - c->since_ns < min_ns)
		return 0;
	c->fired = true;
	snprintf(summary, sizeof(summary), "%s %.3g above %.3g for %.1f s", what, value, threshold,
		 (double)(w->t_end_ns - c->since_ns) / 1e9);
	return alert_emit(a, w, c, "fired", summary);
}

int alerts_window(struct alerts *a, struct imb_window *w)
{
	const struct analyzer_config *ac = &a->cfg.analyzer;
	char subject[64];
	int rc = 0;

	if (a->fr)
		pending_run(a);
	for (int i = 0; i < ALERTS_MAX_CONDS; i++)
		a->conds[i].seen = false;
	for (size_t i = 0; i < w->nr_jobs; i++)
		rc |= cond_observe(a, w, "unfairness", w->jobs[i].key, w->jobs[i].unfairness,
				   ac->unfairness_threshold, a->cfg.alert_min_ns, "unfairness");
	for (size_t i = 0; i < w->nr_cpus; i++) {
		snprintf(subject, sizeof(subject), "cpu%d", w->cpus[i].cpu);
		rc |= cond_observe(a, w, "overload", subject, w->cpus[i].overloaded_fraction,
				   ac->overload_min_fraction, a->cfg.alert_overload_ns,
				   "overloaded fraction");
	}
	for (size_t i = 0; i < w->nr_findings; i++) {
		const struct imb_finding *f = &w->findings[i];

		if (!strcmp(f->kind, "vruntime_drift") && f->open)
			rc |= cond_observe(a, w, "vruntime_drift", f->subject, f->value,
					   f->threshold, a->cfg.alert_min_ns, "vruntime drift");
	}
	rc |= cond_observe(a, w, "lost_events", "events", (double)w->lost_events,
			   (double)a->cfg.alert_lost_events - 0.5, 0, "lost events per window");
	/* conditions not reported in this window (a job gone, no drift) read as 0 */
	for (int i = 0; i < ALERTS_MAX_CONDS; i++) {
		struct cond *c = &a->conds[i];

		if (c->used && !c->seen)
			rc |= cond_observe(a, w, c->kind, c->subject, 0, c->threshold, 0, c->kind);
	}
	return rc ? -ENOMEM : 0;
}

void alerts_drain(struct alerts *a, uint64_t max_wait_ns)
{
	uint64_t end = mono_ns() + max_wait_ns;

	for (;;) {
		bool running = false;

		hook_reap(a, false);
		if (a->fr)
			running |= pending_run(a) > 0;
		for (int i = 0; i < ALERTS_MAX_HOOKS; i++)
			running |= a->hooks[i].pid != 0;
		if (!running || mono_ns() >= end)
			return;
		usleep(10000);
	}
}

void alerts_free(struct alerts *a)
{
	if (!a)
		return;
	hook_reap(a, true);	/* hooks still waiting for their dump are dropped */
	free(a);
}

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * finding_util.h - small helpers the analyzers share to build findings.
 *
 * Finding ids: the pipeline merges findings across windows by id, so an
 * analyzer keeps one id per episode (opened, updated, closed).  Ids are
 * unique across analyzers: the analyzer's number in the top byte, its own
 * counter below.  Evidence is a JSON object built into the finding's fixed
 * buffer; when it would not fit, the members that do not fit are dropped
 * and the object is still closed, so the text stays valid JSON.
 *
 * Episodes: a condition an analyzer watches window by window (a group
 * overloaded, a job unfair, the run queues' clocks drifting) is one
 * finding from the first window it holds to the first it does not.  The
 * analyzer extends the episode each window the condition holds, publishes
 * the finding (open) once the episode is long enough by its own measure,
 * and ends the episode at the first window without the condition or at
 * the end of the run: the last published version goes out again, closed.
 * An episode that never got long enough ends without a finding.
 */
#ifndef IMB_FINDING_UTIL_H
#define IMB_FINDING_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyzer.h"
#include "window.h"

enum finding_source {
	FINDING_SRC_OVERLOAD = 1,
	FINDING_SRC_FAIRNESS,
	FINDING_SRC_VRUNTIME,
	FINDING_SRC_MIGRATION,
	FINDING_SRC_NUMA,
	FINDING_SRC_LOST,
};

/* finding_id_make - id @n of analyzer @src */
static inline uint64_t finding_id_make(enum finding_source src, uint64_t n)
{
	return ((uint64_t)src << 56) | (n & ((1ull << 56) - 1));
}

/* Evidence builder over a finding's evidence buffer. */
struct evb {
	char *buf;
	size_t cap, len;
	bool first;
};

static inline void evb_init(struct evb *e, char *buf, size_t cap)
{
	e->buf = buf;
	e->cap = cap;
	e->len = 1;
	e->first = true;
	buf[0] = '{';
	buf[1] = '\0';
}

/*
 * evb_add - append one member: @fmt makes `"key":value` text; a member
 * that would not leave room for the closing brace is dropped whole.
 */
static inline void __attribute__((format(printf, 2, 3))) evb_add(struct evb *e, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	if (e->len + 2 >= e->cap)
		return;
	room = e->cap - e->len - 1;	/* keep one byte for '}' */
	if (!e->first) {
		if (room < 2)
			return;
		e->buf[e->len] = ',';
	}
	va_start(ap, fmt);
	n = vsnprintf(e->buf + e->len + !e->first, room - !e->first, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room - !e->first) {
		e->buf[e->len] = '\0';	/* drop the partial member */
		return;
	}
	e->len += (size_t)n + !e->first;
	e->first = false;
}

/* evb_close - close the object (always fits) */
static inline void evb_close(struct evb *e)
{
	e->buf[e->len++] = '}';
	e->buf[e->len] = '\0';
}

/* finding_init - zero @f and set the fields every finding has */
static inline void finding_init(struct imb_finding *f, uint64_t id, const char *kind, int severity,
				uint64_t t_start, uint64_t t_end)
{
	memset(f, 0, sizeof(*f));
	f->id = id;
	snprintf(f->kind, sizeof(f->kind), "%s", kind);
	f->severity = severity;
	f->t_start_ns = t_start;
	f->t_end_ns = t_end;
}

/* One episode of a finding; zeroed, it is none. */
struct finding_episode {
	uint64_t id;			/* 0: no episode */
	uint64_t start_ns, end_ns;	/* its first window's start, last window's end */
	bool emitted;			/* @last went out (open) at least once */
	struct imb_finding last;	/* as last published, for the close */
};

/*
 * finding_episode_extend - the condition held in [@t_start, @t_end): open
 * an episode (a new id of analyzer @src from @next_id) if none is, and
 * extend it to @t_end.  Returns true when it opened one, for the caller to
 * reset what it sums over an episode.
 */
static inline bool finding_episode_extend(struct finding_episode *ep, enum finding_source src,
					  uint64_t *next_id, uint64_t t_start, uint64_t t_end)
{
	bool opened = !ep->id;

	if (opened) {
		ep->id = finding_id_make(src, ++*next_id);
		ep->start_ns = t_start;
		ep->emitted = false;
	}
	ep->end_ns = t_end;
	return opened;
}

/* finding_episode_publish - @ep->last, which the caller just built, goes out open */
static inline void finding_episode_publish(struct finding_episode *ep, struct finding_list *out)
{
	ep->last.open = true;
	ep->emitted = true;
	finding_list_add(out, &ep->last);
}

/*
 * finding_episode_end - the condition no longer holds (or the run ends):
 * a published episode's last version goes out closed; there is no episode
 * any more.  Does nothing without an episode.
 */
static inline void finding_episode_end(struct finding_episode *ep, struct finding_list *out)
{
	if (ep->id && ep->emitted) {
		ep->last.open = false;
		finding_list_add(out, &ep->last);
	}
	ep->id = 0;
}

#endif /* IMB_FINDING_UTIL_H */

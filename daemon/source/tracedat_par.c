// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracedat_par.c - the analysing side of a parallel trace.dat read
 * (tracedat_par.h): the shared mapping, the queues' layout, and the merge
 * of the per-CPU queues into one time-ordered stream with the delivery
 * rules the serial reader applies (td_emit in source_tracedat.c), so that
 * both give the same events byte for byte.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "daemon/source/evmerge.h"
#include "daemon/source/tracedat_par.h"

#define TDP_MAX_PENDING (1 << 20)	/* as the serial reader's TD_MAX_PENDING */

struct tdp_shm *tdp_shm_new(void)
{
	struct tdp_shm *s = mmap(NULL, sizeof(*s) + TDP_DATA_BYTES, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return s == MAP_FAILED ? NULL : s;
}

void tdp_shm_free(struct tdp_shm *s)
{
	if (s)
		munmap(s, sizeof(*s) + TDP_DATA_BYTES);
}

void tdp_queues_init(struct tdp_shm *s, uint32_t n, uint32_t nreaders)
{
	uint32_t cap = TDP_QUEUE_MAX;

	while (cap > 16 && (uint64_t)cap * n * sizeof(struct evring_slot) > TDP_DATA_BYTES)
		cap /= 2;
	s->nstreams = n;
	s->nreaders = nreaders ? nreaders : 1;
	s->cap = cap;
	for (uint32_t i = 0; i < n; i++) {
		struct tdp_slot *w = &s->slot[1 + tdp_reader_of(s, i)];

		evring_init(&s->ring[i], s->data + (size_t)i * cap, cap, &w->pseq, &w->pwait);
	}
}

/* The serial reader's td_emit, on the merged stream. */
struct tdp_out {
	imb_event_fn fn;
	void *ctx;
	struct tdp_result *res;
	uint64_t last_ts;
	struct imb_event *pend;
	size_t npend, cap;
	char *err;
};

static int tdp_emit(struct tdp_out *o, const struct imb_event *in)
{
	struct imb_event e;
	int rc;

	/* the common case: in order, nothing held back; from the queue as it is */
	if (o->res->switches && !o->npend && in->ts_ns >= o->last_ts &&
	    in->kind != IMB_EV_LOST) {
		if (in->kind == IMB_EV_SWITCH)
			o->res->switches++;
		o->last_ts = in->ts_ns;
		if (in->cpu > o->res->max_cpu)
			o->res->max_cpu = in->cpu;
		o->res->events++;
		return o->fn(in, o->ctx);
	}
	e = *in;

	if (e.kind == IMB_EV_LOST)
		o->res->lost_events += e.lost.count ? e.lost.count : 1;
	else if (e.kind == IMB_EV_SWITCH)
		o->res->switches++;
	if (e.ts_ns < o->last_ts)
		e.ts_ns = o->last_ts;
	o->last_ts = e.ts_ns;
	if (e.cpu > o->res->max_cpu)
		o->res->max_cpu = e.cpu;
	if (!o->res->switches) {
		if (o->npend >= TDP_MAX_PENDING) {
			snprintf(o->err, SOURCE_ERR_LEN, "no sched_switch in the first %d events: "
				 "record with sched:sched_switch enabled", TDP_MAX_PENDING);
			return -ENODATA;
		}
		if (o->npend == o->cap) {
			size_t cap = o->cap ? o->cap * 2 : 256;
			struct imb_event *p = realloc(o->pend, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			o->pend = p;
			o->cap = cap;
		}
		o->pend[o->npend++] = e;
		return 0;
	}
	for (size_t i = 0; i < o->npend; i++) {
		o->res->events++;
		rc = o->fn(&o->pend[i], o->ctx);
		if (rc < 0)
			return rc;
	}
	o->npend = 0;
	o->res->events++;
	return o->fn(&e, o->ctx);
}

/* The next event of @r; NULL with *dead when the readers' side stopped. */
static const struct imb_event *tdp_next(struct tdp_shm *s, struct evring *r,
					bool (*gone)(void *arg), void *arg, bool *dead)
{
	const struct imb_event *e = evring_next(r, &s->abort, gone, arg);

	if (e)
		return e;
	if (!atomic_load(&s->abort) && atomic_load(&r->done))
		return evring_next(r, &s->abort, NULL, NULL);	/* the last ones, or none */
	*dead = true;
	return NULL;
}

int tdp_merge(struct tdp_shm *s, imb_event_fn fn, void *ctx, struct tdp_result *res,
	      char *err, bool (*gone)(void *arg), void *arg)
{
	struct tdp_out o = { .fn = fn, .ctx = ctx, .res = res, .err = err };
	struct evmerge m;
	bool dead = false;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	res->max_cpu = -1;
	if (evmerge_init(&m, s->nstreams)) {
		snprintf(err, SOURCE_ERR_LEN, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->nstreams; i++) {
		const struct imb_event *e = tdp_next(s, &s->ring[i], gone, arg, &dead);

		if (e)
			evmerge_push(&m, i, e->ts_ns);
		else if (dead)
			goto aborted;
	}
	while (m.n) {
		uint32_t i = evmerge_top(&m);
		struct evring *r = &s->ring[i];
		const struct imb_event *e = tdp_next(s, r, gone, arg, &dead);

		if (!e)
			goto aborted;
		if (e->kind == TDP_ERR_KIND) {
			rc = e->cpu < 0 ? e->cpu : -EINVAL;
			snprintf(err, SOURCE_ERR_LEN, "%s", s->stream_err[i]);
			goto out;
		}
		rc = tdp_emit(&o, e);
		if (rc < 0) {
			if (!err[0])
				snprintf(err, SOURCE_ERR_LEN, "%s", strerror(-rc));
			goto out;
		}
		evring_take(r);
		e = tdp_next(s, r, gone, arg, &dead);
		if (e)
			evmerge_update_top(&m, e->ts_ns);
		else if (dead)
			goto aborted;
		else
			evmerge_pop(&m);
	}
	goto out;
aborted:
	rc = 1;
out:
	evmerge_free(&m);
	free(o.pend);
	return rc;
}

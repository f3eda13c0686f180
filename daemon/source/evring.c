// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evring.c - bounded single-producer single-consumer event queues shared
 * between processes (evring.h).
 *
 * The indices only grow (modulo 2^32); tail - head is the fill.  Each side
 * keeps a private index and publishes it in batches: the producer whenever
 * its caller says (evring_publish), the consumer every quarter queue and
 * before it sleeps.  A sleeper first raises its wait flag, then looks once
 * more, then sleeps on a futex; the other side stores its index, then
 * looks at the flag (both sequentially consistent), so one of the two
 * always sees the other.  Futexes are process-shared: the memory is a
 * MAP_SHARED mapping inherited across fork().
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "daemon/source/evring.h"

static void fx_wait(_Atomic uint32_t *w, uint32_t val, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };

	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void fx_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void evring_init(struct evring *r, struct evring_slot *ev, uint32_t cap, _Atomic uint32_t *pseq,
		 _Atomic uint32_t *pwait)
{
	atomic_init(&r->tail, 0);
	atomic_init(&r->head, 0);
	atomic_init(&r->done, 0);
	atomic_init(&r->cwait, 0);
	r->ptail = 0;
	r->phead = 0;
	r->pcap = cap;
	r->pev = ev;
	r->chead = 0;
	r->ctail = 0;
	r->cap = cap;
	r->ev = ev;
	r->pseq = pseq;
	r->pwait = pwait;
}

void evring_publish(struct evring *r)
{
	if (atomic_load_explicit(&r->tail, memory_order_relaxed) == r->ptail)
		return;
	atomic_store(&r->tail, r->ptail);
	if (atomic_load(&r->cwait))
		fx_wake(&r->tail);
}

void evring_finish(struct evring *r)
{
	atomic_store(&r->tail, r->ptail);
	atomic_store(&r->done, 1);
	fx_wake(&r->tail);
}

uint32_t evring_room_begin(_Atomic uint32_t *pseq, _Atomic uint32_t *pwait)
{
	atomic_store(pwait, 1);
	return atomic_load(pseq);
}

void evring_room_cancel(_Atomic uint32_t *pwait)
{
	atomic_store(pwait, 0);
}

void evring_room_wait(_Atomic uint32_t *pseq, _Atomic uint32_t *pwait, uint32_t seen,
		      int timeout_ms)
{
	fx_wait(pseq, seen, timeout_ms);
	atomic_store(pwait, 0);
}

void evring_release(struct evring *r)
{
	atomic_store(&r->head, r->chead);
	if (atomic_load(r->pwait)) {
		atomic_fetch_add(r->pseq, 1);
		fx_wake(r->pseq);
	}
}

const struct imb_event *evring_next(struct evring *r, const _Atomic uint32_t *abort,
				    bool (*gone)(void *arg), void *arg)
{
	for (;;) {
		uint32_t t = r->ctail;

		if (t == r->chead)
			t = r->ctail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (t != r->chead) {
			/*
			 * The producer wrote these on another CPU: ask for the
			 * lines of one a few ahead while this one is used.
			 */
			if (t - r->chead > 4) {
				const char *p = (const char *)&r->ev[(r->chead + 4) & (r->cap - 1)];

				for (size_t o = 0; o < sizeof(struct evring_slot); o += 64)
					__builtin_prefetch(p + o);
			}
			return &r->ev[r->chead & (r->cap - 1)].ev;
		}
		if (atomic_load(&r->done)) {
			if (atomic_load(&r->tail) != r->chead)
				continue;
			return NULL;
		}
		if (abort && atomic_load(abort))
			return NULL;
		if (gone && gone(arg))
			return NULL;
		/* the producer may be waiting for what was taken */
		if (atomic_load_explicit(&r->head, memory_order_relaxed) != r->chead)
			evring_release(r);
		atomic_store(&r->cwait, 1);
		t = atomic_load(&r->tail);
		if (t == r->chead && !atomic_load(&r->done))
			fx_wait(&r->tail, t, 20);
		atomic_store(&r->cwait, 0);
	}
}

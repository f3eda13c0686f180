/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evring.h - bounded single-producer single-consumer queues of struct
 * imb_event in memory shared between processes.
 *
 * One producer process writes events at the tail, one consumer process
 * takes them from the head; both sides batch their index updates and sleep
 * on a futex when the queue is full or empty, so a queue costs one cache
 * line hand-over per batch rather than per event: each side keeps what it
 * alone writes on a line of its own and reads the other side's index only
 * when the copy it last read says the queue is empty (consumer) or nearly
 * full (producer).  The queues hold a fixed
 * number of events: memory does not grow with the length of the stream.
 * Waits time out now and then so that a caller can notice an abort word
 * (a peer that died never wakes anyone).
 */
#ifndef IMB_EVRING_H
#define IMB_EVRING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "analyzers/event.h"

/*
 * One queue slot: an event, its size rounded up to whole cache lines and
 * aligned to one, so that each event a consumer takes costs whole lines
 * of its own (a 120-byte event packed at a 120-byte stride straddles three
 * lines, and every line crosses between the CPUs once per side).
 */
struct evring_slot {
	struct imb_event ev;
} __attribute__((aligned(64)));

struct evring {
	/* written by the producer, read by the consumer */
	_Atomic uint32_t tail;		/* events published */
	_Atomic uint32_t done;		/* producer finished: nothing after tail */
	char pad0[56];
	/* the producer's own line: never touched by the consumer */
	uint32_t ptail;			/* written, not yet published */
	uint32_t phead;			/* head as last read (room is at least this) */
	uint32_t pcap;
	uint32_t pad1;
	struct evring_slot *pev;
	char pad2[40];
	/* written by the consumer, read by the producer */
	_Atomic uint32_t head;		/* events released to the producer */
	_Atomic uint32_t cwait;		/* the consumer sleeps on tail */
	char pad3[56];
	/* the consumer's own line: never touched by the producer */
	uint32_t chead;			/* taken, not yet released */
	uint32_t ctail;			/* tail as last read (events at least up to it) */
	uint32_t cap;			/* events, a power of two */
	uint32_t pad4;
	struct evring_slot *ev;		/* cap events, shared */
	_Atomic uint32_t *pseq;		/* the producer's wake-up word (several queues share it) */
	_Atomic uint32_t *pwait;	/* set while the producer sleeps on *pseq */
	char pad5[24];
};

/* Set up @r over @ev (cap events, a power of two) for producer wake-up words. */
void evring_init(struct evring *r, struct evring_slot *ev, uint32_t cap, _Atomic uint32_t *pseq,
		 _Atomic uint32_t *pwait);

/* --- producer side --- */

/* Room for this many more events now. */
static inline uint32_t evring_room(struct evring *r)
{
	uint32_t room = r->pcap - (r->ptail - r->phead);

	if (room < 4) {
		r->phead = atomic_load_explicit(&r->head, memory_order_acquire);
		room = r->pcap - (r->ptail - r->phead);
	}
	return room;
}

/* The next free slot (evring_room() > 0); evring_commit() counts it written. */
static inline struct imb_event *evring_slot(struct evring *r)
{
	return &r->pev[r->ptail & (r->pcap - 1)].ev;
}

static inline void evring_commit(struct evring *r)
{
	r->ptail++;
}

/* Make the committed events visible to the consumer and wake it. */
void evring_publish(struct evring *r);

/* Publish and say that no more events follow. */
void evring_finish(struct evring *r);

/*
 * Waiting for room on any of the queues that share *pseq: evring_room_begin()
 * announces the wait and returns the word's value; the caller then checks
 * its queues once more and either calls evring_room_cancel() (room found)
 * or evring_room_wait(), which sleeps until the consumer releases room on
 * one of them, at most @timeout_ms.  No wake-up is lost in between.
 */
uint32_t evring_room_begin(_Atomic uint32_t *pseq, _Atomic uint32_t *pwait);
void evring_room_cancel(_Atomic uint32_t *pwait);
void evring_room_wait(_Atomic uint32_t *pseq, _Atomic uint32_t *pwait, uint32_t seen,
		      int timeout_ms);

/* --- consumer side --- */

/*
 * The event at the head, waiting for one as long as needed: NULL when the
 * producer finished and everything was taken, when *abort became non-zero,
 * or when @gone (called now and then while waiting, may be NULL) says the
 * producer's side died.
 */
const struct imb_event *evring_next(struct evring *r, const _Atomic uint32_t *abort,
				    bool (*gone)(void *arg), void *arg);

/* Release the taken events to the producer, waking it when it sleeps. */
void evring_release(struct evring *r);

/* Take the head event (after evring_next() returned it). */
static inline void evring_take(struct evring *r)
{
	r->chead++;
	if (r->chead - atomic_load_explicit(&r->head, memory_order_relaxed) >= r->cap / 4)
		evring_release(r);
}

#endif /* IMB_EVRING_H */

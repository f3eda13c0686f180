/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracedat_par.h - the memory a parallel trace.dat read shares between the
 * analysing process, the reading coordinator and its per-CPU readers, and
 * the analysing side's merge.
 *
 * The coordinator (a child of the analysing process) opens the file (with
 * the project's own reader, tracedat_layout.h, or libtracecmd), fills the
 * header below and sets `ready`; its readers (its
 * own children, one per group of CPUs, each with its own file offset)
 * decode their CPUs' records into one queue per CPU.  The analysing
 * process merges the queues in time order (tdp_merge) and hands each event
 * to the pipeline.  Neither libtracecmd nor the decoding ever runs in the
 * analysing process, so a crash on a damaged file stays a crash of a child.
 */
#ifndef IMB_TRACEDAT_PAR_H
#define IMB_TRACEDAT_PAR_H

#include <stdatomic.h>
#include <stdint.h>

#include "daemon/source/evring.h"
#include "daemon/source/source.h"

#define TDP_MAX_READERS 64
#define TDP_MAX_STREAMS IMB_MAX_CPUS
#define TDP_DATA_BYTES (16u << 20)	/* all queues together, at most */
#define TDP_QUEUE_MAX 16384u		/* events per queue, at most */
#define TDP_ERR_KIND 0xfffe		/* in a queue: decoding failed here (.cpu = -errno) */
#define TDP_CURSOR_DONE UINT64_MAX

/* Where a reading process is (see source_tracedat.c): for telling a crash
 * of libtracecmd from a crash in our own code. */
struct td_watch {
	volatile int phase;
	volatile int sanitizer;		/* a sanitizer report ended the process */
};

struct tdp_slot {			/* one reading process; 0 is the coordinator */
	struct td_watch watch;
	_Atomic uint32_t pseq, pwait;	/* its queues' wake-up word */
	volatile int more;		/* a reader stopped at its segment's end */
	uint64_t records;		/* records it read */
};

struct tdp_shm {
	_Atomic uint32_t ready;		/* header below filled in */
	_Atomic uint32_t abort;		/* stop: rc and err say why (coordinator) or the
					 * analysing side gave up */
	int32_t rc;			/* coordinator's verdict, with err */
	int32_t show_stderr;		/* the children's stderr explains err */
	char err[SOURCE_ERR_LEN];
	struct source_info info;	/* format, clock, truncated, warning */
	int32_t cpus;			/* CPUs the file's headers name */
	uint32_t nstreams, cap, nreaders;
	uint64_t first_ts, last_ts;	/* the recording's span, 0 unknown */
	struct tdp_slot slot[1 + TDP_MAX_READERS];
	struct evring ring[TDP_MAX_STREAMS];
	uint64_t cursor[TDP_MAX_STREAMS];	/* each CPU's next record's offset */
	char stream_err[TDP_MAX_STREAMS][SOURCE_ERR_LEN];
	struct evring_slot data[];	/* the queues' events */
};

/* The shared mapping (MAP_SHARED anonymous, pages touched on use). */
struct tdp_shm *tdp_shm_new(void);
void tdp_shm_free(struct tdp_shm *s);

/* Set up @n queues sharing the data area (coordinator, before `ready`). */
void tdp_queues_init(struct tdp_shm *s, uint32_t n, uint32_t nreaders);

/* Which reader feeds stream @i. */
static inline uint32_t tdp_reader_of(const struct tdp_shm *s, uint32_t i)
{
	return i % s->nreaders;
}

/* What the merge delivered, for the caller's checks. */
struct tdp_result {
	uint64_t events, lost_events, switches;
	int max_cpu;
};

/**
 * tdp_merge - the queues of @s merged in time order (equal times: lower
 * stream first) into @fn, with the trace.dat source's delivery rules:
 * times never go backwards, events before the first sched_switch are held
 * back (and dropped when none comes).  Returns 0 when every queue ended, 1 when the
 * readers aborted (s->rc, s->err say why), or -errno with @err (a
 * decoding error in a stream, @fn's error, memory).  @gone(@arg), asked
 * while a queue is empty, says that the readers' side died (returns 1).
 */
int tdp_merge(struct tdp_shm *s, imb_event_fn fn, void *ctx, struct tdp_result *res,
	      char *err, bool (*gone)(void *arg), void *arg);

#endif /* IMB_TRACEDAT_PAR_H */

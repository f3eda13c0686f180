/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sched_fields.h - the scheduler's trace events, their fields, and the
 * decoding of one raw record of them into struct imb_event.
 *
 * One table and one decoder for the two sources that read the kernel's
 * trace event records: trace.dat (records from libtracecmd) and the live
 * tracefs source (records from the per-CPU raw buffers).  Event ids and
 * field offsets come from the event formats (libtraceevent) once, when a
 * source opens; per record the decoder reads fields at known offsets, with
 * no allocation and no string lookup, and never past the record's end.
 */
#ifndef IMB_SCHED_FIELDS_H
#define IMB_SCHED_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyzers/event.h"

struct tep_handle;
struct tep_event;

/* The events decoded, in the order of sched_desc[]. */
enum sched_ev {
	SCHED_SWITCH, SCHED_WAKEUP, SCHED_WAKEUP_NEW, SCHED_WAKING, SCHED_MIGRATE, SCHED_FORK,
	SCHED_EXIT, SCHED_RUNTIME, SCHED_NUMA_MOVE, SCHED_NUMA_SWAP, SCHED_NUMA_STICK,
	SCHED_PELT_CFS, SCHED_PELT_SE,
	SCHED__COUNT
};

/* The last event of the kernel's own "sched" system (the rest are out of tree). */
#define SCHED_LAST_TRACEPOINT SCHED_NUMA_STICK

/* Up to this many fields per event, in the order of sched_desc[].fields. */
#define SCHED_MAX_FIELDS 10

/* struct sched_desc - one event as its format names it. */
struct sched_desc {
	const char *system;			/* NULL: any system */
	const char *name;
	const char *alt_name;			/* same meaning, other name */
	const char *fields[SCHED_MAX_FIELDS];	/* NULL-terminated */
	const char *alt[SCHED_MAX_FIELDS];	/* alternative field names */
	unsigned int required;			/* bit k: fields[k] must exist */
	int kind;				/* enum imb_ev_kind */
};

extern const struct sched_desc sched_desc[SCHED__COUNT];

/* Where one field sits in a record. */
struct sched_field {
	int offset;
	int size;
	bool dynamic;		/* __data_loc: u32 offset | len << 16 */
	bool relative;		/* __rel_loc: the offset counts from the field's end */
	bool present;
};

/* One event as a source's formats have it. */
struct sched_event {
	int id;			/* tep event id, -1 absent */
	const char *name;	/* the name found (sched_desc name or alt_name) */
	const char *missing;	/* a required field the format lacks, or NULL */
	struct sched_field f[SCHED_MAX_FIELDS];
};

/* The events of one source's formats, and how to read their numbers. */
struct sched_fields {
	struct tep_handle *tep;
	bool native;		/* the records' byte order is the host's */
	struct sched_event ev[SCHED__COUNT];
};

/**
 * sched_fields_init - start @sf over @tep: every event absent
 * @native: the records are in the host's byte order
 */
void sched_fields_init(struct sched_fields *sf, struct tep_handle *tep, bool native);

/**
 * sched_fields_find - the format of event @i (enum sched_ev) under its name
 * or its other name, noting the name found; NULL when the formats lack it
 */
struct tep_event *sched_fields_find(struct sched_fields *sf, int i);

/**
 * sched_fields_resolve - note event @i's id and field offsets from its
 * format @e; a required field it lacks is noted in ev[i].missing (the
 * first one), for the caller to refuse now or at the event's first record
 */
void sched_fields_resolve(struct sched_fields *sf, int i, struct tep_event *e);

/**
 * sched_fields_decode - fill @e's kind and payload from a record of event
 * @i (its data, @size bytes); a field that is absent or would lie past the
 * record's end reads as 0 (a string as "").  The PELT events set @e->cpu
 * from their record; the caller sets the time and otherwise the CPU.
 */
void sched_fields_decode(const struct sched_fields *sf, int i, const void *data,
			 unsigned int size, struct imb_event *e);

#endif /* IMB_SCHED_FIELDS_H */

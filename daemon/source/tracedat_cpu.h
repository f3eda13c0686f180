/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracedat_cpu.h - one CPU's event records in a trace.dat, read without
 * libtracecmd: its data (compressed chunks or raw pages, tracedat_layout.h)
 * read in large pieces into buffers that are reused, and the kernel's
 * ring-buffer pages in them walked record by record.
 *
 * The records, their times and their missed-event counts are exactly
 * those libtracecmd gives: a page's missed events go with its first record
 * when that record opens the page (a time extend before it hides them, as
 * in libtraceevent's kbuffer).  Every length is checked against the page:
 * a damaged page ends the CPU's data with an error naming the CPU and the
 * file offset.
 */
#ifndef IMB_TRACEDAT_CPU_H
#define IMB_TRACEDAT_CPU_H

#include <stdint.h>

#include "daemon/source/tracedat_layout.h"

/* One record. */
struct tdc_rec {
	uint64_t ts;
	const void *data;
	unsigned int size;
	int missed;		/* missed events before it: 0 none, -1 an unknown number */
};

struct tdc {
	const struct tdl *l;
	uint32_t idx;			/* the CPU's entry in the data map */
	uint64_t pos, end;		/* the file range still to read */
	uint32_t chunks;		/* compressed: chunks still to read */
	unsigned char *buf;		/* pages read (uncompressed) */
	size_t cap, len, at;		/* its size, its pages' bytes, the next page */
	unsigned char *zbuf;		/* a compressed chunk */
	size_t zcap;
	void *zctx;
	uint64_t buf_pos;		/* file offset of the chunk or pages in buf */
	/* the page being walked */
	const unsigned char *page;
	uint32_t psize, poff;		/* its data's bytes, the next record's offset */
	uint64_t pts;			/* the time so far */
	int pmissed;			/* its missed events, until its first record */
	char err[160];
};

/* tdc_open - start reading the data of CPU entry @idx of @l; 0 or -1 (c->err). */
int tdc_open(struct tdc *c, const struct tdl *l, uint32_t idx);

/*
 * tdc_next - the next record into @r (valid until the next call): 1, 0 at
 * the end of the CPU's data, -1 on damaged data (c->err).
 */
int tdc_next(struct tdc *c, struct tdc_rec *r);

/* tdc_last_ts - the time of CPU entry @idx's last record, 0 when unknown */
uint64_t tdc_last_ts(const struct tdl *l, uint32_t idx);

void tdc_close(struct tdc *c);

#endif /* IMB_TRACEDAT_CPU_H */

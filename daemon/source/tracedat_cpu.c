// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracedat_cpu.c - one CPU's records in a trace.dat (tracedat_cpu.h).
 *
 * The ring buffer's page layout is the kernel's (kernel/trace/ring_buffer.c,
 * described by the file's header_page format): a u64 time, a commit word
 * of the kernel's long size whose low 27 bits are the data's length and
 * whose bits 31 and 30 say that events were missed before the page and
 * that their count is stored after the data; then the events, each a u32
 * of a 5-bit type/length and a 27-bit time delta: 1 to 28 are data of that
 * many u32 words, 0 data whose length follows, 29 padding (a discarded
 * event: length follows), 30 a time extend (delta += next u32 << 27), 31
 * an absolute time (the same, with the top 5 bits kept from the page).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/source/tracedat_cpu.h"

#define COMMIT_MASK	((1u << 27) - 1)
#define MISSED_EVENTS	(1ull << 31)
#define MISSED_STORED	(1ull << 30)
#define TS_MSB		(0xf8ull << 56)
#define TYPE_PADDING	29
#define TYPE_EXTEND	30
#define TYPE_STAMP	31
#define RAW_BLOCK	(1u << 20)	/* raw pages read at a time */
#define CHUNK_MAX	(64u << 20)	/* a chunk, uncompressed, at most */

static uint64_t le(const unsigned char *p, unsigned int n)
{
	uint64_t x = 0;

	for (unsigned int i = 0; i < n; i++)
		x |= (uint64_t)p[i] << (8 * i);
	return x;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int cpu_fail(struct tdc *c, const char *what)
{
	snprintf(c->err, sizeof(c->err), "CPU %u's data: %s (at file offset %llu)",
		 c->l->cpu[c->idx].id, what, (unsigned long long)c->buf_pos);
	return -1;
}

static int grow(unsigned char **b, size_t *cap, size_t n)
{
	unsigned char *p;

	if (n <= *cap)
		return 0;
	p = realloc(*b, n);
	if (!p)
		return -1;
	*b = p;
	*cap = n;
	return 0;
}

int tdc_open(struct tdc *c, const struct tdl *l, uint32_t idx)
{
	const struct tdl_cpu *cd = &l->cpu[idx];
	unsigned char n[4];

	memset(c, 0, sizeof(*c));
	c->l = l;
	c->idx = idx;
	c->pos = cd->off;
	c->end = cd->off + cd->size;
	c->buf_pos = cd->off;
	if (!l->data_compressed)
		return 0;
	/*
	 * trace-cmd 3.1.6 writes the size of the chunks without the count
	 * before them: the count says how many there are, the file bounds them
	 */
	c->end = l->file_size;
	if (!cd->size || c->end - c->pos < 4) {
		c->end = c->pos;
		return 0;
	}
	if (tdl_pread(l->fd, n, sizeof(n), c->pos))
		return cpu_fail(c, "cannot read its chunk count");
	c->chunks = le32(n);
	c->pos += 4;
	c->zctx = tdl_uncompress_ctx(l);
	return 0;
}

/* The next compressed chunk into buf; 1, 0 at the end, -1. */
static int fill_chunk(struct tdc *c)
{
	unsigned char h[8];
	uint32_t clen, ulen;

	if (!c->chunks || c->end - c->pos < sizeof(h))
		return 0;
	c->buf_pos = c->pos;
	if (tdl_pread(c->l->fd, h, sizeof(h), c->pos))
		return cpu_fail(c, "cannot read a chunk");
	clen = le32(h);
	ulen = le32(h + 4);
	if (clen > c->end - c->pos - sizeof(h) || ulen > CHUNK_MAX)
		return cpu_fail(c, "a chunk's size is out of range");
	if (grow(&c->zbuf, &c->zcap, clen ? clen : 1) || grow(&c->buf, &c->cap, ulen ? ulen : 1))
		return cpu_fail(c, "out of memory");
	if (tdl_pread(c->l->fd, c->zbuf, clen, c->pos + sizeof(h)))
		return cpu_fail(c, "cannot read a chunk");
	if (tdl_uncompress(c->l, c->zctx, c->zbuf, clen, c->buf, ulen))
		return cpu_fail(c, "a chunk does not uncompress");
	c->pos += sizeof(h) + clen;
	c->chunks--;
	c->len = ulen;
	c->at = 0;
	return 1;
}

/* The next raw pages into buf; 1, 0 at the end, -1. */
static int fill_raw(struct tdc *c)
{
	uint32_t ps = c->l->page_size;
	uint64_t n = c->end - c->pos;

	if (n > RAW_BLOCK)
		n = RAW_BLOCK;
	n -= n % ps;
	if (!n)
		return 0;
	if (grow(&c->buf, &c->cap, RAW_BLOCK))
		return cpu_fail(c, "out of memory");
	c->buf_pos = c->pos;
	if (tdl_pread(c->l->fd, c->buf, (size_t)n, c->pos))
		return cpu_fail(c, "cannot read its pages");
	c->pos += n;
	c->len = (size_t)n;
	c->at = 0;
	return 1;
}

/* The next page with its header read; 1, 0 at the end of the data, -1. */
static int next_page(struct tdc *c)
{
	unsigned int cs = c->l->commit_size, hdr = 8 + cs;
	uint32_t ps = c->l->page_size;
	uint64_t commit;

	while (c->len - c->at < ps) {
		int rc = c->l->data_compressed ? fill_chunk(c) : fill_raw(c);

		if (rc <= 0)
			return rc;
	}
	c->page = c->buf + c->at;
	c->at += ps;
	c->pts = le(c->page, 8);
	commit = le(c->page + 8, cs);
	c->psize = (uint32_t)(commit & COMMIT_MASK);
	c->poff = 0;
	if (c->psize > ps - hdr)
		return cpu_fail(c, "a page's length is out of range");
	c->pmissed = 0;
	if (commit & MISSED_EVENTS) {
		c->pmissed = -1;
		if ((commit & MISSED_STORED) && c->psize + cs <= ps - hdr)
			c->pmissed = (int)le(c->page + hdr + c->psize, cs);
	}
	c->page += hdr;
	return 1;
}

/*
 * The next data record of the page into @r: 1, 0 at the page's end, -1.
 * Lengths that run past the page's data end it, as in kbuffer, except a
 * data record's own, which is damage.
 */
static int page_record(struct tdc *c, struct tdc_rec *r)
{
	while (c->poff < c->psize) {
		const unsigned char *e = c->page + c->poff;
		uint32_t left = c->psize - c->poff, w, type, len;
		uint64_t delta, x;

		if (left < 4)
			return 0;
		w = le32(e);
		type = w & 31;
		delta = w >> 5;
		if (type >= TYPE_PADDING || type == 0) {
			if (left < 8)
				return 0;
			x = le32(e + 4);
		}
		switch (type) {
		case TYPE_PADDING:
			c->pts += delta;
			if (x >= left - 4)
				return 0;
			c->poff += 4 + (uint32_t)x;
			continue;
		case TYPE_EXTEND:
			c->pts += (x << 27) + delta;
			c->poff += 8;
			continue;
		case TYPE_STAMP:
			c->pts = ((x << 27) + delta) | (c->pts & TS_MSB);
			c->poff += 8;
			continue;
		case 0:
			if (x < 4 || x - 4 > left - 8)
				return cpu_fail(c, "a record's length is out of range");
			len = ((uint32_t)x - 4 + 3) & ~3u;
			r->data = e + 8;
			break;
		default:
			len = type * 4;
			r->data = e + 4;
			break;
		}
		if ((const unsigned char *)r->data + len > c->page + c->psize)
			return cpu_fail(c, "a record runs past its page");
		c->pts += delta;
		r->ts = c->pts;
		r->size = len;
		r->missed = c->poff == 0 ? c->pmissed : 0;
		c->poff = (uint32_t)((const unsigned char *)r->data + len - c->page);
		return 1;
	}
	return 0;
}

int tdc_next(struct tdc *c, struct tdc_rec *r)
{
	for (;;) {
		int rc = c->page ? page_record(c, r) : 0;

		if (rc)
			return rc;
		rc = next_page(c);
		if (rc <= 0) {
			c->page = NULL;
			return rc;
		}
	}
}

void tdc_close(struct tdc *c)
{
	if (c->l)
		tdl_uncompress_ctx_free(c->l, c->zctx);
	free(c->buf);
	free(c->zbuf);
	memset(c, 0, sizeof(*c));
}

/* Skip to the last chunk (compressed) or the last pages (raw). */
static int seek_tail(struct tdc *c)
{
	unsigned char h[8];

	if (!c->l->data_compressed) {
		uint64_t tail = 16ull * c->l->page_size, n = c->end - c->pos;

		n -= n % c->l->page_size;
		if (n > tail)
			c->pos += n - tail;
		return 0;
	}
	while (c->chunks > 1) {
		if (c->end - c->pos < sizeof(h) || tdl_pread(c->l->fd, h, sizeof(h), c->pos) ||
		    le32(h) > c->end - c->pos - sizeof(h))
			return -1;
		c->pos += sizeof(h) + le32(h);
		c->chunks--;
	}
	return 0;
}

uint64_t tdc_last_ts(const struct tdl *l, uint32_t idx)
{
	struct tdc c;
	struct tdc_rec r;
	uint64_t ts = 0;

	if (tdc_open(&c, l, idx) || seek_tail(&c)) {
		tdc_close(&c);
		return 0;
	}
	while (tdc_next(&c, &r) > 0)
		ts = r.ts;
	tdc_close(&c);
	return ts;
}

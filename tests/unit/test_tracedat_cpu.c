// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tracedat_cpu.c - one CPU's records read from hand-made ring-buffer
 * pages (tracedat_cpu.c): every kind of event header (data of a given
 * length, data with a length word, padding, time extend, absolute time),
 * missed-event counts stored, unknown and hidden behind a time extend, an
 * empty page, a damaged page; raw and in zstd chunks; the last time.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

#include "daemon/source/tracedat_cpu.h"
#include "tests/unit/tap.h"

#define PS 4096
#define HDR 16

struct pg {
	unsigned char b[PS];
	uint32_t len;		/* data bytes so far */
};

static void put(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void pg_init(struct pg *p, uint64_t ts)
{
	memset(p, 0, sizeof(*p));
	put(p->b, ts, 8);
}

static void word(struct pg *p, uint32_t w)
{
	put(p->b + HDR + p->len, w, 4);
	p->len += 4;
}

/* a data event of @n u32 words (its first word @tag) after @delta */
static void ev_small(struct pg *p, uint32_t delta, uint32_t n, uint32_t tag)
{
	word(p, n | delta << 5);
	for (uint32_t i = 0; i < n; i++)
		word(p, tag + i);
}

/* a data event with a length word: @bytes of data */
static void ev_long(struct pg *p, uint32_t delta, uint32_t bytes, uint32_t tag)
{
	word(p, 0 | delta << 5);
	word(p, bytes + 4);
	for (uint32_t i = 0; i < (bytes + 3) / 4; i++)
		word(p, tag + i);
}

static void ev_meta(struct pg *p, uint32_t type, uint32_t delta, uint32_t x)
{
	word(p, type | delta << 5);
	word(p, x);
}

/* padding of @bytes after its length word */
static void ev_pad(struct pg *p, uint32_t delta, uint32_t bytes)
{
	ev_meta(p, 29, delta, bytes + 4);
	for (uint32_t i = 0; i < bytes / 4; i++)
		word(p, 0xdead);
}

/* the commit word: length and flags; @missed stored after the data when > 0 */
static void pg_done(struct pg *p, int missed)
{
	uint64_t c = p->len;

	if (missed)
		c |= 1ull << 31;
	if (missed > 0) {
		c |= 1ull << 30;
		put(p->b + HDR + p->len, (uint64_t)missed, 8);
	}
	put(p->b + 8, c, 8);
}

struct want {
	uint64_t ts;
	unsigned int size;
	uint32_t first;
	int missed;
};

static const struct want expect[] = {
	{ 1010, 8, 0x100, 5 },
	{ 1010 + (1ull << 27) + 5, 4, 0x200, 0 },
	{ 1010 + (1ull << 27) + 5 + 7 + 1, 12, 0x300, 0 },
	{ (3ull << 27) + 9, 4, 0x400, 0 },
	{ 2000 + (1ull << 27) + 2, 4, 0x500, 0 },	/* missed hidden by the extend */
	{ 3004, 4, 0x600, -1 },
	{ 3010, 112, 0x700, 0 },
};
#define NWANT (sizeof(expect) / sizeof(expect[0]))

/* Pages 0-4 of the stream; page 3 empty. */
static void make_pages(struct pg *p)
{
	pg_init(&p[0], 1000);
	ev_small(&p[0], 10, 2, 0x100);
	ev_meta(&p[0], 30, 3, 1);
	ev_small(&p[0], 2, 1, 0x200);
	ev_pad(&p[0], 7, 8);
	ev_long(&p[0], 1, 10, 0x300);
	ev_meta(&p[0], 31, 9, 3);
	ev_small(&p[0], 0, 1, 0x400);
	pg_done(&p[0], 5);
	pg_init(&p[1], 2000);
	ev_meta(&p[1], 30, 1, 1);
	ev_small(&p[1], 1, 1, 0x500);
	pg_done(&p[1], -1);
	pg_init(&p[2], 3000);
	ev_small(&p[2], 4, 1, 0x600);
	ev_long(&p[2], 6, 112, 0x700);
	pg_done(&p[2], -1);
	pg_init(&p[3], 3500);
	pg_done(&p[3], 0);
	pg_init(&p[4], 4000);
	ev_small(&p[4], 1, 1, 0x800);
	pg_done(&p[4], 0);
}

/* the pages one after the other, as in a file */
static unsigned char *flat(const struct pg *p, int n)
{
	static unsigned char b[5 * PS];

	for (int i = 0; i < n; i++)
		memcpy(b + (size_t)i * PS, p[i].b, PS);
	return b;
}

static int write_file(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(b, 1, n, f) != n) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

/* Read every record of the one CPU of @l and compare with expect[]. */
static void check_stream(struct tdl *l, const char *what, int npages)
{
	struct tdc c;
	struct tdc_rec r;
	size_t n = 0, bad = 0;
	int rc;

	ok(tdc_open(&c, l, 0) == 0, "%s: open", what);
	while ((rc = tdc_next(&c, &r)) > 0) {
		uint32_t first = 0;

		memcpy(&first, r.data, 4);
		if (n < NWANT && (r.ts != expect[n].ts || r.size != expect[n].size ||
				  first != expect[n].first || r.missed != expect[n].missed)) {
			diag("%s: record %zu: ts %llu size %u first %#x missed %d", what, n,
			     (unsigned long long)r.ts, r.size, first, r.missed);
			bad++;
		}
		n++;
	}
	is_int(rc, 0, "%s: the data end cleanly (%s)", what, rc ? c.err : "ok");
	ok(n == NWANT + (npages > 4) && !bad, "%s: %zu records, as written (%zu differ)", what, n,
	   bad);
	tdc_close(&c);
	ok(tdc_last_ts(l, 0) == (npages > 4 ? 4001 : expect[NWANT - 1].ts), "%s: the last time",
	   what);
}

static void check_raw(const char *path, struct pg *p)
{
	struct tdl l = { .page_size = PS, .commit_size = 8, .ncpu = 1 };
	struct tdl_cpu cpu = { .id = 3, .off = 0, .size = 5 * PS };
	struct tdc c;
	struct tdc_rec r;
	int rc;

	write_file(path, flat(p, 5), 5 * PS);
	l.fd = open(path, O_RDONLY);
	l.file_size = 5 * PS;
	l.cpu = &cpu;
	check_stream(&l, "raw pages", 5);

	/* a page whose length runs past it */
	put(p[2].b + 8, PS, 8);
	write_file(path, flat(p, 5), 5 * PS);
	tdc_open(&c, &l, 0);
	while ((rc = tdc_next(&c, &r)) > 0)
		;
	ok(rc < 0 && strstr(c.err, "CPU 3's data: a page's length is out of range (at file offset 0)"),
	   "a damaged page: '%s'", c.err);
	tdc_close(&c);
	close(l.fd);
}

/* pages 0-2 in one zstd chunk, 3-4 in another, after the chunk count */
static void check_zstd(const char *path, struct pg *p)
{
	static unsigned char out[8 * PS];
	struct tdl l = { .page_size = PS, .commit_size = 8, .ncpu = 1, .compression = TDL_ZSTD,
			 .data_compressed = true };
	struct tdl_cpu cpu = { .id = 3, .off = 0 };
	size_t at = 4;
	int starts[] = { 0, 3, 5 };
	const unsigned char *pages;

	make_pages(p);
	pages = flat(p, 5);
	put(out, 2, 4);
	for (int k = 0; k < 2; k++) {
		size_t ulen = (size_t)(starts[k + 1] - starts[k]) * PS;
		size_t z = ZSTD_compress(out + at + 8, sizeof(out) - at - 8, pages + (size_t)starts[k] * PS, ulen,
					 3);

		if (ZSTD_isError(z)) {
			ok(0, "zstd: compress");
			return;
		}
		put(out + at, z, 4);
		put(out + at + 4, ulen, 4);
		at += 8 + z;
	}
	cpu.size = at - 4;	/* as trace-cmd 3.1.6 writes it: without the count */
	write_file(path, out, at);
	l.fd = open(path, O_RDONLY);
	l.file_size = at;
	l.cpu = &cpu;
	check_stream(&l, "zstd chunks", 5);
	close(l.fd);
}

int main(void)
{
	static struct pg p[5];
	char path[] = "/tmp/imb-tdcXXXXXX";
	int fd = mkstemp(path);

	if (fd < 0) {
		ok(0, "mkstemp");
		return tap_done();
	}
	close(fd);
	make_pages(p);
	check_raw(path, p);
	check_zstd(path, p);
	unlink(path);
	return tap_done();
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracedat_layout.c - the parts of a version-7 trace.dat that the
 * scheduler analysis needs, read without libtracecmd (tracedat_layout.h).
 *
 * The file format facts (section and option ids, their layouts, the
 * compression framing) are those of trace-cmd's file format documentation,
 * trace-cmd.dat.v7(5), checked against files written by trace-cmd 3.1.6
 * here.  Every offset and size read from the file is checked against the
 * file's size before use.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <zlib.h>
#include <zstd.h>

#include "daemon/source/tracedat_layout.h"

#define SEC_HDR_SIZE	16		/* u16 id, u16 flags, u32 string id, u64 size */
#define SEC_COMPRESSED	0x1
#define SEC_MAX		(256u << 20)	/* a metadata section, uncompressed, at most */
#define MAX_CPUS	4096

enum {	/* option (and section) ids */
	OPT_DONE = 0, OPT_DATE = 1, OPT_BUFFER = 3, OPT_TRACECLOCK = 4, OPT_OFFSET = 7,
	OPT_CPUCOUNT = 8, OPT_TIME_SHIFT = 12, OPT_TSC2NSEC = 14, OPT_HEADER_INFO = 16,
	OPT_EVENT_FORMATS = 18, OPT_BUFFER_TEXT = 22,
};

/* A bounded view of bytes read from the file. */
struct view {
	const unsigned char *p;
	size_t len, at;
	bool bad;	/* a read ran past the end */
};

static const unsigned char *take(struct view *v, uint64_t n)
{
	const unsigned char *p = v->p + v->at;

	if (v->bad || n > v->len - v->at) {
		v->bad = true;
		return NULL;
	}
	v->at += (size_t)n;
	return p;
}

static uint64_t take_le(struct view *v, size_t n)
{
	const unsigned char *p = take(v, n);
	uint64_t x = 0;

	for (size_t i = 0; p && i < n; i++)
		x |= (uint64_t)p[i] << (8 * i);
	return x;
}

static const char *take_str(struct view *v)
{
	const unsigned char *z;
	const char *s;

	if (v->bad || v->at >= v->len || !(z = memchr(v->p + v->at, 0, v->len - v->at))) {
		v->bad = true;
		return NULL;
	}
	s = (const char *)v->p + v->at;
	v->at = (size_t)(z - v->p) + 1;
	return s;
}

static int why_set(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int why_set(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

int tdl_pread(int fd, void *p, size_t n, uint64_t off)
{
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p = (char *)p + r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

void *tdl_uncompress_ctx(const struct tdl *l)
{
	return l->compression == TDL_ZSTD ? (void *)ZSTD_createDCtx() : NULL;
}

void tdl_uncompress_ctx_free(const struct tdl *l, void *ctx)
{
	if (l->compression == TDL_ZSTD)
		ZSTD_freeDCtx(ctx);
}

int tdl_uncompress(const struct tdl *l, void *ctx, const void *src, size_t slen, void *dst,
		   size_t dlen)
{
	if (l->compression == TDL_ZSTD) {
		size_t r = ctx ? ZSTD_decompressDCtx(ctx, dst, dlen, src, slen)
			       : ZSTD_decompress(dst, dlen, src, slen);

		return ZSTD_isError(r) || r != dlen ? -1 : 0;
	}
	if (l->compression == TDL_ZLIB) {
		uLongf out = dlen;

		return uncompress(dst, &out, src, slen) != Z_OK || out != dlen ? -1 : 0;
	}
	return -1;
}

/*
 * The section at @off: its id, and its content (uncompressed) in a new
 * buffer *@buf of *@len bytes.  0 or -1 with @why.
 */
static int read_section(const struct tdl *l, uint64_t off, uint16_t *id, unsigned char **buf,
			size_t *len, char *why, size_t wlen)
{
	unsigned char h[SEC_HDR_SIZE], *raw;
	struct view hv = { h, sizeof(h), 0, false };
	uint64_t size;
	uint16_t flags;

	*buf = NULL;
	if (off > l->file_size || l->file_size - off < SEC_HDR_SIZE ||
	    tdl_pread(l->fd, h, sizeof(h), off))
		return why_set(why, wlen, "section at offset %llu past the end",
			       (unsigned long long)off);
	*id = (uint16_t)take_le(&hv, 2);
	flags = (uint16_t)take_le(&hv, 2);
	take_le(&hv, 4);
	size = take_le(&hv, 8);
	if (size > l->file_size - off - SEC_HDR_SIZE || size > SEC_MAX)
		return why_set(why, wlen, "section at offset %llu: bad size",
			       (unsigned long long)off);
	raw = malloc(size ? size : 1);
	if (!raw || tdl_pread(l->fd, raw, size, off + SEC_HDR_SIZE)) {
		free(raw);
		return why_set(why, wlen, "section at offset %llu: cannot read it",
			       (unsigned long long)off);
	}
	if (flags & SEC_COMPRESSED) {
		struct view v = { raw, size, 0, false };
		uint32_t clen = (uint32_t)take_le(&v, 4), ulen = (uint32_t)take_le(&v, 4);
		unsigned char *u = v.bad || clen > size - 8 || ulen > SEC_MAX ? NULL
										: malloc(ulen ? ulen : 1);

		if (!u || tdl_uncompress(l, NULL, raw + 8, clen, u, ulen)) {
			free(u);
			free(raw);
			return why_set(why, wlen, "section at offset %llu: cannot uncompress it",
				       (unsigned long long)off);
		}
		free(raw);
		raw = u;
		size = ulen;
	}
	*buf = raw;
	*len = (size_t)size;
	return 0;
}

/* The BUFFER option: the top buffer's clock, page size and CPU data map. */
static int opt_buffer(struct tdl *l, struct view *v, char *why, size_t wlen)
{
	const char *name, *clock;
	uint32_t n;

	if (l->cpu)
		return why_set(why, wlen, "more than one buffer (instances)");
	l->data_section = take_le(v, 8);
	name = take_str(v);
	clock = take_str(v);
	l->page_size = (uint32_t)take_le(v, 4);
	n = (uint32_t)take_le(v, 4);
	if (v->bad || n > MAX_CPUS || (uint64_t)n * 20 > v->len - v->at)
		return why_set(why, wlen, "BUFFER option cut short");
	if (name[0])
		return why_set(why, wlen, "an instance buffer");
	if (!l->clock[0] && strlen(clock) < sizeof(l->clock))
		snprintf(l->clock, sizeof(l->clock), "%s", clock);
	l->cpu = calloc(n ? n : 1, sizeof(*l->cpu));
	if (!l->cpu)
		return why_set(why, wlen, "out of memory");
	l->ncpu = n;
	for (uint32_t i = 0; i < n; i++) {
		struct tdl_cpu *c = &l->cpu[i];

		c->id = (uint32_t)take_le(v, 4);
		c->off = take_le(v, 8);
		c->size = take_le(v, 8);
		if (c->off > l->file_size || c->size > l->file_size - c->off || c->id >= MAX_CPUS)
			return why_set(why, wlen, "CPU %u's data lie past the end", c->id);
	}
	return 0;
}

/* "local global [perf] mono": the bracketed one */
static void opt_clock(struct tdl *l, const unsigned char *p, size_t n)
{
	const char *s = (const char *)p, *lb = memchr(s, '[', n), *rb;

	rb = lb ? memchr(lb, ']', n - (size_t)(lb - s)) : NULL;
	if (lb && rb && (size_t)(rb - lb - 1) < sizeof(l->clock))
		snprintf(l->clock, sizeof(l->clock), "%.*s", (int)(rb - lb - 1), lb + 1);
}

/* One option; 1 at DONE (*@next: the next section), 0 go on, -1 not for us. */
static int opt_one(struct tdl *l, uint16_t id, struct view *v, uint64_t *next, char *why,
		   size_t wlen)
{
	switch (id) {
	case OPT_DONE:
		*next = take_le(v, 8);
		return v->bad ? why_set(why, wlen, "DONE option cut short") : 1;
	case OPT_BUFFER:
		return opt_buffer(l, v, why, wlen);
	case OPT_TRACECLOCK:
		opt_clock(l, v->p, v->len);
		return 0;
	case OPT_CPUCOUNT:
		l->cpus = (uint32_t)take_le(v, 4);
		return 0;
	case OPT_HEADER_INFO:
		l->header_info = take_le(v, 8);
		return 0;
	case OPT_EVENT_FORMATS:
		l->event_formats = take_le(v, 8);
		return 0;
	case OPT_DATE:
	case OPT_OFFSET:
	case OPT_TIME_SHIFT:
	case OPT_TSC2NSEC:
		return why_set(why, wlen, "option %u moves the timestamps", id);
	case OPT_BUFFER_TEXT:
		return why_set(why, wlen, "a latency trace");
	default:
		return 0;
	}
}

/* One options section's options; 0 with *@next, or -1. */
static int options_section(struct tdl *l, uint64_t off, uint64_t *next, char *why, size_t wlen)
{
	unsigned char *buf;
	size_t len;
	uint16_t id;
	int rc = 0;

	if (read_section(l, off, &id, &buf, &len, why, wlen))
		return -1;
	if (id != 0) {
		free(buf);
		return why_set(why, wlen, "no options section at offset %llu",
			       (unsigned long long)off);
	}
	for (struct view v = { buf, len, 0, false }; !rc;) {
		uint16_t oid = (uint16_t)take_le(&v, 2);
		uint32_t olen = (uint32_t)take_le(&v, 4);
		const unsigned char *p = take(&v, olen);
		struct view ov = { p, olen, 0, false };

		if (v.bad) {
			rc = why_set(why, wlen, "options section at offset %llu without its end",
				     (unsigned long long)off);
			break;
		}
		rc = opt_one(l, oid, &ov, next, why, wlen);
		if (!rc && ov.bad)
			rc = why_set(why, wlen, "option %u cut short", oid);
	}
	free(buf);
	return rc < 0 ? -1 : 0;
}

/* magic, "7\0", endian, long size, page size, compression, version, first options */
static int read_header(struct tdl *l, uint64_t *opt, char *why, size_t wlen)
{
	unsigned char h[256];
	struct view v = { h, 0, 10, false };
	const char *zname;
	ssize_t n = pread(l->fd, h, sizeof(h), 0);

	if (n < 32)
		return why_set(why, wlen, "header cut short");
	v.len = (size_t)n;
	if (h[10] != '7' || h[11])
		return why_set(why, wlen, "file version %c", h[10]);
	v.at = 12;
	if (take_le(&v, 1) != 0)
		return why_set(why, wlen, "big-endian file");
	l->long_size = (int)take_le(&v, 1);
	take_le(&v, 4);		/* the host's page size; the buffer's is in BUFFER */
	zname = take_str(&v);
	take_str(&v);
	*opt = take_le(&v, 8);
	if (v.bad || (l->long_size != 4 && l->long_size != 8))
		return why_set(why, wlen, "header cut short");
	if (!strcmp(zname, "none"))
		l->compression = TDL_NONE;
	else if (!strcmp(zname, "zstd"))
		l->compression = TDL_ZSTD;
	else if (!strcmp(zname, "zlib"))
		l->compression = TDL_ZLIB;
	else
		return why_set(why, wlen, "compression %s", zname);
	return 0;
}

int tdl_open(struct tdl *l, int fd, char *why, size_t wlen)
{
	unsigned char sh[4];
	struct stat st;
	uint64_t opt = 0;
	int hops = 0;

	memset(l, 0, sizeof(*l));
	l->fd = fd;
	if (fstat(fd, &st))
		return why_set(why, wlen, "fstat: %s", strerror(errno));
	l->file_size = (uint64_t)st.st_size;
	if (read_header(l, &opt, why, wlen))
		return -1;
	while (opt) {
		uint64_t next = 0;

		if (++hops > 64 || options_section(l, opt, &next, why, wlen))
			goto fail;
		if (next && next <= opt) {
			why_set(why, wlen, "options chain loops");
			goto fail;
		}
		opt = next;
	}
	if (!l->cpu || !l->header_info || !l->event_formats || !l->page_size ||
	    l->page_size > (1u << 20) || (l->page_size & (l->page_size - 1))) {
		why_set(why, wlen, "no data map, page header or event formats");
		goto fail;
	}
	/* the data section's flags say whether its chunks are compressed */
	if (l->data_section > l->file_size - sizeof(sh) ||
	    tdl_pread(fd, sh, sizeof(sh), l->data_section) || (sh[0] | sh[1] << 8) != OPT_BUFFER) {
		why_set(why, wlen, "no data section at offset %llu",
			(unsigned long long)l->data_section);
		goto fail;
	}
	l->data_compressed = (sh[2] | sh[3] << 8) & SEC_COMPRESSED;
	if (l->data_compressed && l->compression == TDL_NONE) {
		why_set(why, wlen, "compressed data without a compression");
		goto fail;
	}
	return 0;
fail:
	tdl_close(l);
	return -1;
}

void tdl_close(struct tdl *l)
{
	free(l->cpu);
	l->cpu = NULL;
	l->ncpu = 0;
}

/* header info: "header_page\0", u64 size, the page header's format, then the event header's */
static int parse_header_info(const struct tdl *l, struct tep_handle *tep, char *why, size_t wlen)
{
	unsigned char *buf;
	size_t len;
	uint16_t id;
	int rc;

	if (read_section(l, l->header_info, &id, &buf, &len, why, wlen))
		return -1;
	struct view v = { buf, len, 0, false };
	const char *name = take_str(&v);
	uint64_t size = take_le(&v, 8);
	const unsigned char *p = take(&v, size);

	rc = id != OPT_HEADER_INFO || !p || strcmp(name, "header_page") ||
	     tep_parse_header_page(tep, (char *)p, (unsigned long)size, l->long_size);
	free(buf);
	return rc ? why_set(why, wlen, "page header format unreadable") : 0;
}

/* "name: NAME\n" at the start of a format */
static bool format_name(const unsigned char *p, size_t n, char *name, size_t cap)
{
	const unsigned char *e;

	if (n < 7 || memcmp(p, "name: ", 6))
		return false;
	e = memchr(p + 6, '\n', n - 6);
	if (!e || (size_t)(e - p - 6) >= cap)
		return false;
	memcpy(name, p + 6, (size_t)(e - p - 6));
	name[e - p - 6] = 0;
	return true;
}

/* event formats: u32 systems; each: name, u32 events; each: u64 size, the format */
static int parse_formats(const struct tdl *l, struct tep_handle *tep,
			 bool (*want)(const char *system, const char *name), char *why, size_t wlen)
{
	unsigned char *buf;
	size_t len;
	uint16_t id;
	uint32_t nsys;

	if (read_section(l, l->event_formats, &id, &buf, &len, why, wlen))
		return -1;
	struct view v = { buf, len, 0, false };

	nsys = (uint32_t)take_le(&v, 4);
	for (uint32_t s = 0; s < nsys && !v.bad && id == OPT_EVENT_FORMATS; s++) {
		const char *sys = take_str(&v);
		uint32_t nev = (uint32_t)take_le(&v, 4);

		for (uint32_t e = 0; e < nev && !v.bad; e++) {
			uint64_t size = take_le(&v, 8);
			const unsigned char *p = take(&v, size);
			char name[128];

			if (!p)
				break;	/* take() marked the view bad */
			if (format_name(p, (size_t)size, name, sizeof(name)) && want(sys, name))
				tep_parse_event(tep, (const char *)p, (unsigned long)size, sys);
		}
	}
	free(buf);
	return v.bad || id != OPT_EVENT_FORMATS ? why_set(why, wlen, "event formats unreadable")
						 : 0;
}

struct tep_handle *tdl_tep(struct tdl *l, bool (*want)(const char *system, const char *name),
			   char *why, size_t wlen)
{
	struct tep_handle *tep = tep_alloc();

	if (!tep) {
		why_set(why, wlen, "out of memory");
		return NULL;
	}
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, l->long_size);
	tep_set_page_size(tep, (int)l->page_size);
	tep_set_cpus(tep, (int)(l->cpus ? l->cpus : l->ncpu));
	if (parse_header_info(l, tep, why, wlen) || parse_formats(l, tep, want, why, wlen))
		goto fail;
	l->commit_size = (unsigned int)tep_get_header_page_size(tep);
	if (tep_is_old_format(tep) || (l->commit_size != 4 && l->commit_size != 8)) {
		why_set(why, wlen, "old ring buffer page format");
		goto fail;
	}
	return tep;
fail:
	tep_free(tep);
	return NULL;
}

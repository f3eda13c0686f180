// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracedat_repair.c - make a truncated version-7 trace.dat readable up to
 * the cut (tracedat_repair.h).
 *
 * trace-cmd writes a version-7 file as: headers, a chain of options
 * sections, the per-CPU event data ("flyrecord" section) and, last of all,
 * an options section with the BUFFER option that says where each CPU's data
 * is.  A recording cut off inside its event data (a full disk) therefore
 * loses the map to the data it still holds, and libtracecmd refuses it.
 * This walks the chain as far as the file goes, walks each CPU's data
 * (compressed: a count, then size-prefixed chunks; raw: whole pages) up to
 * the last complete chunk or page, and writes a copy into a memfd with the
 * chunk count fixed and a new final options section holding the BUFFER
 * option — a well-formed file of the events that survived.
 *
 * The format facts (section and option ids, field layout) are from
 * trace-cmd's file format documentation, checked against files written by
 * trace-cmd 3.1.6 here.  Little-endian files only.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/source/source.h"
#include "daemon/source/tracedat_repair.h"

#define OPT_DONE	0
#define OPT_BUFFER	3
#define OPT_TRACECLOCK	4
#define OPT_CPUCOUNT	8
#define SEC_HDR_SIZE	16	/* u16 id, u16 flags, u32 string id, u64 size */
#define SEC_COMPRESSED	0x1
#define SEC_STRINGS	15	/* the string table section */
#define MAX_CPUS	4096

struct buf {
	const unsigned char *p;
	size_t len;
};

static bool rd16(const struct buf *b, size_t off, uint16_t *v)
{
	if (off + 2 > b->len)
		return false;
	*v = (uint16_t)(b->p[off] | b->p[off + 1] << 8);
	return true;
}

static bool rd32(const struct buf *b, size_t off, uint32_t *v)
{
	if (off + 4 > b->len)
		return false;
	*v = (uint32_t)b->p[off] | (uint32_t)b->p[off + 1] << 8 | (uint32_t)b->p[off + 2] << 16 |
	     (uint32_t)b->p[off + 3] << 24;
	return true;
}

static bool rd64(const struct buf *b, size_t off, uint64_t *v)
{
	uint32_t lo, hi;

	if (!rd32(b, off, &lo) || !rd32(b, off + 4, &hi))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

static void wr32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void wr64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Skip a NUL-terminated string at *off; false if it runs off the end. */
static bool skip_str(const struct buf *b, size_t *off)
{
	const unsigned char *z;

	if (*off >= b->len)
		return false;
	z = memchr(b->p + *off, 0, b->len - *off);
	if (!z)
		return false;
	*off = (size_t)(z - b->p) + 1;
	return true;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

struct cpu_data {
	uint64_t off, size;
};

static int repair_fail(char *err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int repair_fail(char *err, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, SOURCE_ERR_LEN, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * After the last options section, ending at @last_end, trace-cmd writes the
 * string table that the sections' names (string ids) point into: missing
 * or cut, the file was cut after its events (TRACEDAT_CUT_STRINGS).
 */
static int strings_cut(int fd, uint64_t last_end, uint64_t file_size)
{
	unsigned char sh[SEC_HDR_SIZE];
	struct buf sb = { sh, sizeof(sh) };
	uint64_t size;
	uint16_t id;

	if (last_end + SEC_HDR_SIZE > file_size ||
	    pread(fd, sh, sizeof(sh), (off_t)last_end) != (ssize_t)sizeof(sh))
		return TRACEDAT_CUT_STRINGS;
	rd16(&sb, 0, &id);
	rd64(&sb, 8, &size);
	if (id == SEC_STRINGS && last_end + SEC_HDR_SIZE + size > file_size)
		return TRACEDAT_CUT_STRINGS;
	return TRACEDAT_COMPLETE;
}

int tracedat_tail_cut(const char *path)
{
	unsigned char hdr[64], sh[SEC_HDR_SIZE];
	struct buf b = { hdr, 0 };
	uint64_t opt_off, size, next = 0, last_end = 0;
	uint32_t strid = 0;
	size_t off = 18;
	struct stat st;
	ssize_t n;
	int fd, cut = TRACEDAT_COMPLETE;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, hdr, sizeof(hdr), 0);
	if (fstat(fd, &st) || n < 32 || hdr[10] != '7' || hdr[11] || hdr[12]) {
		close(fd);
		return 0;
	}
	b.len = (size_t)n;
	/* magic, "7\0", endian, long size, page size, then two strings */
	if (!skip_str(&b, &off) || !skip_str(&b, &off) || !rd64(&b, off, &opt_off)) {
		close(fd);
		return 0;
	}
	/* each options section ends with a DONE option: the next one's offset */
	for (int hops = 0; opt_off && hops < 64; hops++) {
		struct buf sb = { sh, sizeof(sh) };
		unsigned char done[14];
		struct buf db = { done, sizeof(done) };
		uint16_t id;
		uint32_t olen;

		if (opt_off + SEC_HDR_SIZE > (uint64_t)st.st_size ||
		    pread(fd, sh, sizeof(sh), (off_t)opt_off) != (ssize_t)sizeof(sh)) {
			cut = TRACEDAT_CUT_MAP;
			break;
		}
		rd64(&sb, 8, &size);
		rd16(&sb, 2, &id);
		rd32(&sb, 4, &strid);
		if (sh[0] || sh[1] || (id & SEC_COMPRESSED))
			break;		/* not a plain options section: libtracecmd's call */
		if (opt_off + SEC_HDR_SIZE + size > (uint64_t)st.st_size || size < sizeof(done)) {
			if (size >= sizeof(done))
				cut = TRACEDAT_CUT_MAP;
			break;
		}
		last_end = opt_off + SEC_HDR_SIZE + size;
		if (pread(fd, done, sizeof(done), (off_t)(opt_off + SEC_HDR_SIZE + size -
							 sizeof(done))) != (ssize_t)sizeof(done))
			break;
		rd16(&db, 0, &id);
		rd32(&db, 2, &olen);
		if (id != OPT_DONE || olen != 8)
			break;
		rd64(&db, 6, &next);
		if (next && next <= opt_off)
			break;
		opt_off = next;
	}
	if (cut == TRACEDAT_COMPLETE && !opt_off && last_end && strid)
		cut = strings_cut(fd, last_end, (uint64_t)st.st_size);
	close(fd);
	return cut;
}

/* What the stages of tracedat_repair() learn about the file. */
struct repair {
	struct buf b;			/* the file, mapped */
	uint32_t page_size, ncpus;
	uint32_t strid;			/* string id of the last options section */
	uint64_t opt_off;		/* next options section (0: none; past the end: cut) */
	uint64_t done_pos;		/* the last DONE option's link, to point at our section */
	uint64_t fly_off;		/* the flyrecord section */
	size_t sect;			/* end of the last options section read */
	size_t data_end;		/* where the event data can end */
	size_t end;			/* end of the good event data */
	size_t cut_cpu;			/* first CPU whose data are cut (SIZE_MAX: none) */
	bool compressed;		/* the event data are in compressed chunks */
	bool tail_cut;			/* cut in the last options section, data whole */
	char clock[32];
	struct cpu_data *cpu;		/* ncpus entries: each CPU's good data */
};

/* header: magic, "7\0", endian, long size, page size, compression, version */
static int repair_header(struct repair *r, char *err)
{
	const struct buf *b = &r->b;
	size_t off = 10;

	if (b->p[off] != '7' || b->p[off + 1] != 0)
		return repair_fail(err, -EINVAL, "cannot read the trace.dat headers (truncated or "
				   "corrupted file of a version other than 7)");
	off += 2;
	if (b->p[off] != 0)
		return repair_fail(err, -EINVAL, "cannot read a big-endian trace.dat");
	off += 2;
	if (!rd32(b, off, &r->page_size) || r->page_size < 512 || r->page_size > (1u << 20) ||
	    (r->page_size & (r->page_size - 1)))
		return repair_fail(err, -EINVAL, "trace.dat header: bad page size");
	off += 4;
	if (!skip_str(b, &off) || !skip_str(b, &off) || !rd64(b, off, &r->opt_off))
		return repair_fail(err, -EINVAL, "trace.dat header cut off");
	return 0;
}

/*
 * repair_option_list - the options of one section, [o, oend): the CPU
 * count, the trace clock and the DONE option's link.  A BUFFER option means
 * the data map is there, so the file is not cut but corrupted.
 */
static int repair_option_list(struct repair *r, size_t o, size_t oend, char *err)
{
	const struct buf *b = &r->b;

	r->done_pos = 0;
	while (o + 6 <= oend) {
		uint16_t oid = 0;
		uint32_t olen = 0;

		rd16(b, o, &oid);
		rd32(b, o + 2, &olen);
		if (o + 6 + olen > oend)
			break;
		if (oid == OPT_CPUCOUNT && olen >= 4)
			rd32(b, o + 6, &r->ncpus);
		if (oid == OPT_TRACECLOCK) {
			/* "local global [perf] mono": the bracketed one */
			const char *s = (const char *)b->p + o + 6;
			const char *l = memchr(s, '[', olen), *rb;

			rb = l ? memchr(l, ']', olen - (size_t)(l - s)) : NULL;
			if (l && rb && (size_t)(rb - l - 1) < sizeof(r->clock))
				snprintf(r->clock, sizeof(r->clock), "%.*s", (int)(rb - l - 1),
					 l + 1);
		}
		if (oid == OPT_BUFFER)
			return repair_fail(err, -EINVAL, "the file has its data map but "
					   "libtracecmd cannot read it (corrupted)");
		if (oid == OPT_DONE && olen == 8)
			r->done_pos = o + 6;
		o += 6 + olen;
	}
	return 0;
}

/* follow the options chain as far as the file goes */
static int repair_options(struct repair *r, char *err)
{
	const struct buf *b = &r->b;
	uint16_t id, flags;
	uint64_t size;
	int rc;

	for (;;) {
		size_t o, oend;
		uint16_t fid = 0;

		if (!rd16(b, r->opt_off, &id) || !rd16(b, r->opt_off + 2, &flags) ||
		    !rd32(b, r->opt_off + 4, &r->strid) || !rd64(b, r->opt_off + 8, &size) ||
		    r->opt_off + SEC_HDR_SIZE + size > b->len) {
			/*
			 * Cut inside the last options section, the one after
			 * the event data (it holds the data map): the data
			 * are all there.
			 */
			if (r->done_pos && r->opt_off > r->sect && rd16(b, r->sect, &fid) &&
			    fid == OPT_BUFFER) {
				r->tail_cut = true;
				break;
			}
			return repair_fail(err, -EINVAL,
					   "options section at offset %llu cut off (before the event data)",
					   (unsigned long long)r->opt_off);
		}
		if (id != 0 || (flags & SEC_COMPRESSED))
			return repair_fail(err, -EINVAL,
					   "options section at offset %llu is not readable for repair",
					   (unsigned long long)r->opt_off);
		o = (size_t)r->opt_off + SEC_HDR_SIZE;
		oend = o + (size_t)size;
		rc = repair_option_list(r, o, oend, err);
		if (rc)
			return rc;
		if (!r->done_pos)
			return repair_fail(err, -EINVAL,
					   "options section at offset %llu has no end marker (corrupted)",
					   (unsigned long long)r->opt_off);
		rd64(b, r->done_pos, &r->opt_off);
		r->sect = oend;
		if (!r->opt_off)
			break;
		if (r->opt_off >= b->len) {
			/* the next section is past the cut */
			r->tail_cut = r->opt_off > r->sect && rd16(b, r->sect, &fid) &&
				      fid == OPT_BUFFER;
			break;
		}
		if (r->opt_off < oend)
			return repair_fail(err, -EINVAL, "options chain loops (corrupted)");
	}
	if (!r->opt_off)
		return repair_fail(err, -EINVAL, "the file ends its options without event data");
	if (r->ncpus == 0 || r->ncpus > MAX_CPUS)
		return repair_fail(err, -EINVAL, "no CPU count in the options (corrupted)");
	return 0;
}

/*
 * repair_cpu_data - each CPU's good data in the flyrecord section: the
 * complete chunks of compressed data, the whole pages of raw data, up to
 * the first CPU whose data are cut.
 */
static int repair_cpu_data(struct repair *r, char *err)
{
	const struct buf *b = &r->b;
	uint16_t id, flags;
	size_t off;

	/* with the last options section cut, the data end where it starts */
	r->data_end = r->tail_cut && r->opt_off < b->len ? (size_t)r->opt_off : b->len;

	/* the flyrecord section follows the last options section read */
	r->fly_off = r->sect;
	if (!rd16(b, r->fly_off, &id) || !rd16(b, r->fly_off + 2, &flags) || id != OPT_BUFFER)
		return repair_fail(err, -EINVAL, "cut off before the event data");
	r->compressed = flags & SEC_COMPRESSED;
	r->cpu = calloc(r->ncpus, sizeof(*r->cpu));
	if (!r->cpu)
		return repair_fail(err, -ENOMEM, "out of memory");
	off = align_up((size_t)r->fly_off + SEC_HDR_SIZE, r->page_size);
	r->end = off;
	for (uint32_t c = 0; c < r->ncpus; c++) {
		struct cpu_data *cd = &r->cpu[c];
		size_t start = off;

		cd->off = start;
		if (r->cut_cpu != SIZE_MAX || start >= r->data_end) {
			if (r->cut_cpu == SIZE_MAX)
				r->cut_cpu = c;
			cd->off = r->end;
			continue;
		}
		if (r->compressed) {
			uint32_t count, good = 0, csize;
			size_t pos = start + 4;

			if (!rd32(b, start, &count)) {
				r->cut_cpu = c;
				cd->off = r->end;
				continue;
			}
			while (good < count && rd32(b, pos, &csize) &&
			       pos + 8 + csize <= r->data_end) {
				pos += 8 + csize;
				good++;
			}
			if (good < count)
				r->cut_cpu = c;
			cd->size = good ? pos - start : 0;
			if (!good)
				cd->off = r->end;
			r->end = good ? pos : r->end;
			off = align_up(pos, r->page_size);
		} else {
			/* raw pages: as many whole pages as the file holds for this CPU */
			size_t pages = (r->data_end - start) / r->page_size;

			cd->size = pages * r->page_size;
			r->end = start + cd->size;
			r->cut_cpu = c;	/* without the map we cannot tell where it ends */
			off = r->end;
		}
	}
	if (r->cut_cpu == SIZE_MAX && (!r->tail_cut || r->end > r->opt_off))
		return repair_fail(err, -EINVAL, "event data complete but its map is missing "
				   "(corrupted)");
	return 0;
}

/*
 * repair_copy - the repaired file in memory: the good data, the cut CPU's
 * chunk count fixed, and a new final options section with the data map.
 */
static int repair_copy(const struct repair *r, unsigned char **out_p, size_t *out_len, char *err)
{
	size_t clen = strlen(r->clock) + 1;
	size_t bopt = 8 + 1 + clen + 4 + 4 + (size_t)r->ncpus * 20;
	size_t sect_len = (6 + bopt) + (6 + 8);
	size_t new_off = align_up(r->end, 8);
	unsigned char *out, *p;

	*out_len = new_off + SEC_HDR_SIZE + sect_len;
	out = calloc(1, *out_len);
	if (!out)
		return repair_fail(err, -ENOMEM, "out of memory");
	*out_p = out;
	memcpy(out, r->b.p, r->end);
	/* the options chain now goes on to our section */
	wr64(out + r->done_pos, new_off);
	/* the flyrecord section's size */
	wr64(out + r->fly_off + 8, r->end - (r->fly_off + SEC_HDR_SIZE));
	if (r->compressed) {
		/* the cut CPU keeps only its complete chunks */
		size_t c = r->cut_cpu;

		if (c < r->ncpus && r->cpu[c].size) {
			uint32_t good = 0, csize;
			size_t pos = r->cpu[c].off + 4;

			while (pos < r->cpu[c].off + r->cpu[c].size && rd32(&r->b, pos, &csize)) {
				pos += 8 + csize;
				good++;
			}
			wr32(out + r->cpu[c].off, good);
		}
	}
	p = out + new_off;
	p[0] = p[1] = p[2] = p[3] = 0;		/* id 0 options, flags 0 */
	wr32(p + 4, r->strid);
	wr64(p + 8, sect_len);
	p += SEC_HDR_SIZE;
	p[0] = OPT_BUFFER;
	p[1] = 0;
	wr32(p + 2, (uint32_t)bopt);
	p += 6;
	wr64(p, r->fly_off);
	p += 8;
	*p++ = 0;				/* top buffer: name "" */
	memcpy(p, r->clock, clen);
	p += clen;
	wr32(p, r->page_size);
	wr32(p + 4, r->ncpus);
	p += 8;
	for (uint32_t c = 0; c < r->ncpus; c++) {
		wr32(p, c);
		wr64(p + 4, r->cpu[c].size ? r->cpu[c].off : 0);
		wr64(p + 12, r->cpu[c].size);
		p += 20;
	}
	p[0] = OPT_DONE;
	p[1] = 0;
	wr32(p + 2, 8);
	wr64(p + 6, 0);
	return 0;
}

/* repair_memfd - @out in a memfd, rewound; 0 and *mfd_out, or -errno */
static int repair_memfd(const unsigned char *out, size_t out_len, int *mfd_out, char *err)
{
	int mfd = memfd_create("imbalanced-repaired.dat", MFD_CLOEXEC);

	if (mfd < 0)
		return repair_fail(err, -errno, "memfd: %s", strerror(errno));
	for (size_t w = 0; w < out_len;) {
		ssize_t n = write(mfd, out + w, out_len - w);

		if (n <= 0) {
			int rc = repair_fail(err, -EIO, "memfd write: %s", strerror(errno));

			close(mfd);
			return rc;
		}
		w += (size_t)n;
	}
	lseek(mfd, 0, SEEK_SET);
	*mfd_out = mfd;
	return 0;
}

int tracedat_repair(const char *path, int *fd_out, char *warning, size_t wlen, char *err)
{
	struct repair r = { .cut_cpu = SIZE_MAX, .clock = "local" };
	struct stat st;
	unsigned char *map, *out = NULL;
	size_t out_len = 0;
	int fd, mfd = -1, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return repair_fail(err, -errno, "%s", strerror(errno));
	if (fstat(fd, &st) || st.st_size < 64) {
		close(fd);
		return repair_fail(err, -EINVAL, "not a trace.dat file (too short)");
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return repair_fail(err, -errno, "%s", strerror(errno));
	r.b.p = map;
	r.b.len = (size_t)st.st_size;

	rc = repair_header(&r, err);
	if (!rc)
		rc = repair_options(&r, err);
	if (!rc)
		rc = repair_cpu_data(&r, err);
	if (!rc)
		rc = repair_copy(&r, &out, &out_len, err);
	if (!rc)
		rc = repair_memfd(out, out_len, &mfd, err);
	if (rc)
		goto out;
	if (r.cut_cpu == SIZE_MAX)
		snprintf(warning, wlen, "file cut off at offset %zu, in its last options section "
			 "after the event data (the data map, rebuilt); every event read", r.b.len);
	else
		snprintf(warning, wlen, "file cut off inside the event data of CPU %zu at offset "
			 "%zu; analysed up to the cut", r.cut_cpu, r.b.len);
	*fd_out = mfd;
	rc = 0;
out:
	free(r.cpu);
	free(out);
	munmap(map, r.b.len);
	return rc;
}

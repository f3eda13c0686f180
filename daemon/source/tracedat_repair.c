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
	/*
	 * After the last options section trace-cmd writes the string table
	 * that the sections' names (string ids) point into: missing or cut,
	 * the file was cut after its events.
	 */
	if (cut == TRACEDAT_COMPLETE && !opt_off && last_end && strid) {
		if (last_end + SEC_HDR_SIZE > (uint64_t)st.st_size ||
		    pread(fd, sh, sizeof(sh), (off_t)last_end) != (ssize_t)sizeof(sh)) {
			cut = TRACEDAT_CUT_STRINGS;
		} else {
			struct buf sb = { sh, sizeof(sh) };
			uint16_t id;

			rd16(&sb, 0, &id);
			rd64(&sb, 8, &size);
			if (id == SEC_STRINGS && last_end + SEC_HDR_SIZE + size > (uint64_t)st.st_size)
				cut = TRACEDAT_CUT_STRINGS;
		}
	}
	close(fd);
	return cut;
}

int tracedat_repair(const char *path, int *fd_out, char *warning, size_t wlen, char *err)
{
	struct buf b;
	struct stat st;
	unsigned char *map, *out = NULL;
	uint32_t page_size, ncpus = 0, strid = 0;
	uint64_t opt_off, done_pos = 0, fly_off;
	char clock[32] = "local";
	struct cpu_data *cpu = NULL;
	size_t off, end, out_len, sect = 0, cut_cpu = SIZE_MAX, data_end;
	uint16_t id, flags;
	uint64_t size;
	bool compressed, tail_cut = false;
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
	b.p = map;
	b.len = (size_t)st.st_size;

	/* header: magic, "7\0", endian, long size, page size, compression, version */
	off = 10;
	if (b.p[off] != '7' || b.p[off + 1] != 0) {
		rc = repair_fail(err, -EINVAL, "cannot read the trace.dat headers (truncated or "
				 "corrupted file of a version other than 7)");
		goto out;
	}
	off += 2;
	if (b.p[off] != 0) {
		rc = repair_fail(err, -EINVAL, "cannot read a big-endian trace.dat");
		goto out;
	}
	off += 2;
	if (!rd32(&b, off, &page_size) || page_size < 512 || page_size > (1u << 20) ||
	    (page_size & (page_size - 1))) {
		rc = repair_fail(err, -EINVAL, "trace.dat header: bad page size");
		goto out;
	}
	off += 4;
	if (!skip_str(&b, &off) || !skip_str(&b, &off) || !rd64(&b, off, &opt_off)) {
		rc = repair_fail(err, -EINVAL, "trace.dat header cut off");
		goto out;
	}

	/* follow the options chain as far as the file goes */
	for (;;) {
		size_t o, oend;
		uint16_t fid = 0;

		if (!rd16(&b, opt_off, &id) || !rd16(&b, opt_off + 2, &flags) ||
		    !rd32(&b, opt_off + 4, &strid) || !rd64(&b, opt_off + 8, &size) ||
		    opt_off + SEC_HDR_SIZE + size > b.len) {
			/*
			 * Cut inside the last options section, the one after
			 * the event data (it holds the data map): the data
			 * are all there.
			 */
			if (done_pos && opt_off > sect && rd16(&b, sect, &fid) &&
			    fid == OPT_BUFFER) {
				tail_cut = true;
				break;
			}
			rc = repair_fail(err, -EINVAL, "options section at offset %llu cut off "
					 "(before the event data)", (unsigned long long)opt_off);
			goto out;
		}
		if (id != 0 || (flags & SEC_COMPRESSED)) {
			rc = repair_fail(err, -EINVAL, "options section at offset %llu is not "
					 "readable for repair", (unsigned long long)opt_off);
			goto out;
		}
		o = (size_t)opt_off + SEC_HDR_SIZE;
		oend = o + (size_t)size;
		done_pos = 0;
		while (o + 6 <= oend) {
			uint16_t oid = 0;
			uint32_t olen = 0;

			rd16(&b, o, &oid);
			rd32(&b, o + 2, &olen);
			if (o + 6 + olen > oend)
				break;
			if (oid == OPT_CPUCOUNT && olen >= 4)
				rd32(&b, o + 6, &ncpus);
			if (oid == OPT_TRACECLOCK) {
				/* "local global [perf] mono": the bracketed one */
				const char *s = (const char *)b.p + o + 6;
				const char *l = memchr(s, '[', olen), *r;

				r = l ? memchr(l, ']', olen - (size_t)(l - s)) : NULL;
				if (l && r && (size_t)(r - l - 1) < sizeof(clock))
					snprintf(clock, sizeof(clock), "%.*s", (int)(r - l - 1), l + 1);
			}
			if (oid == OPT_BUFFER) {
				rc = repair_fail(err, -EINVAL, "the file has its data map but "
						 "libtracecmd cannot read it (corrupted)");
				goto out;
			}
			if (oid == OPT_DONE && olen == 8)
				done_pos = o + 6;
			o += 6 + olen;
		}
		if (!done_pos) {
			rc = repair_fail(err, -EINVAL, "options section at offset %llu has no end "
					 "marker (corrupted)", (unsigned long long)opt_off);
			goto out;
		}
		rd64(&b, done_pos, &opt_off);
		sect = oend;
		if (!opt_off)
			break;
		if (opt_off >= b.len) {
			/* the next section is past the cut */
			tail_cut = opt_off > sect && rd16(&b, sect, &fid) && fid == OPT_BUFFER;
			break;
		}
		if (opt_off < oend) {
			rc = repair_fail(err, -EINVAL, "options chain loops (corrupted)");
			goto out;
		}
	}
	if (!opt_off) {
		rc = repair_fail(err, -EINVAL, "the file ends its options without event data");
		goto out;
	}
	if (ncpus == 0 || ncpus > MAX_CPUS) {
		rc = repair_fail(err, -EINVAL, "no CPU count in the options (corrupted)");
		goto out;
	}

	/* with the last options section cut, the data end where it starts */
	data_end = tail_cut && opt_off < b.len ? (size_t)opt_off : b.len;

	/* the flyrecord section follows the last options section read */
	fly_off = sect;
	if (!rd16(&b, fly_off, &id) || !rd16(&b, fly_off + 2, &flags) || id != OPT_BUFFER) {
		rc = repair_fail(err, -EINVAL, "cut off before the event data");
		goto out;
	}
	compressed = flags & SEC_COMPRESSED;
	cpu = calloc(ncpus, sizeof(*cpu));
	if (!cpu) {
		rc = repair_fail(err, -ENOMEM, "out of memory");
		goto out;
	}
	off = align_up((size_t)fly_off + SEC_HDR_SIZE, page_size);
	end = off;
	for (uint32_t c = 0; c < ncpus; c++) {
		size_t start = off;

		cpu[c].off = start;
		if (cut_cpu != SIZE_MAX || start >= data_end) {
			if (cut_cpu == SIZE_MAX)
				cut_cpu = c;
			cpu[c].off = end;
			continue;
		}
		if (compressed) {
			uint32_t count, good = 0, csize;
			size_t pos = start + 4;

			if (!rd32(&b, start, &count)) {
				cut_cpu = c;
				cpu[c].off = end;
				continue;
			}
			while (good < count && rd32(&b, pos, &csize) && pos + 8 + csize <= data_end) {
				pos += 8 + csize;
				good++;
			}
			if (good < count)
				cut_cpu = c;
			cpu[c].size = good ? pos - start : 0;
			if (!good)
				cpu[c].off = end;
			end = good ? pos : end;
			off = align_up(pos, page_size);
		} else {
			/* raw pages: as many whole pages as the file holds for this CPU */
			size_t pages = (data_end - start) / page_size;

			cpu[c].size = pages * page_size;
			end = start + cpu[c].size;
			cut_cpu = c;	/* without the map we cannot tell where it ends */
			off = end;
		}
	}
	if (cut_cpu == SIZE_MAX && (!tail_cut || end > opt_off)) {
		rc = repair_fail(err, -EINVAL, "event data complete but its map is missing "
				 "(corrupted)");
		goto out;
	}

	/* the copy: good data, fixed chunk count, a new final options section */
	{
		size_t clen = strlen(clock) + 1;
		size_t bopt = 8 + 1 + clen + 4 + 4 + (size_t)ncpus * 20;
		size_t sect_len = (6 + bopt) + (6 + 8);
		size_t new_off = align_up(end, 8);
		unsigned char *p;

		out_len = new_off + SEC_HDR_SIZE + sect_len;
		out = calloc(1, out_len);
		if (!out) {
			rc = repair_fail(err, -ENOMEM, "out of memory");
			goto out;
		}
		memcpy(out, b.p, end);
		/* the options chain now goes on to our section */
		wr64(out + done_pos, new_off);
		/* the flyrecord section's size */
		wr64(out + fly_off + 8, end - (fly_off + SEC_HDR_SIZE));
		if (compressed) {
			/* the cut CPU keeps only its complete chunks */
			size_t c = cut_cpu;

			if (c < ncpus && cpu[c].size) {
				uint32_t good = 0, csize;
				size_t pos = cpu[c].off + 4;

				while (pos < cpu[c].off + cpu[c].size && rd32(&b, pos, &csize)) {
					pos += 8 + csize;
					good++;
				}
				wr32(out + cpu[c].off, good);
			}
		}
		p = out + new_off;
		p[0] = p[1] = p[2] = p[3] = 0;		/* id 0 options, flags 0 */
		wr32(p + 4, strid);
		wr64(p + 8, sect_len);
		p += SEC_HDR_SIZE;
		p[0] = OPT_BUFFER;
		p[1] = 0;
		wr32(p + 2, (uint32_t)bopt);
		p += 6;
		wr64(p, fly_off);
		p += 8;
		*p++ = 0;				/* top buffer: name "" */
		memcpy(p, clock, clen);
		p += clen;
		wr32(p, page_size);
		wr32(p + 4, ncpus);
		p += 8;
		for (uint32_t c = 0; c < ncpus; c++) {
			wr32(p, c);
			wr64(p + 4, cpu[c].size ? cpu[c].off : 0);
			wr64(p + 12, cpu[c].size);
			p += 20;
		}
		p[0] = OPT_DONE;
		p[1] = 0;
		wr32(p + 2, 8);
		wr64(p + 6, 0);
	}

	mfd = memfd_create("imbalanced-repaired.dat", MFD_CLOEXEC);
	if (mfd < 0) {
		rc = repair_fail(err, -errno, "memfd: %s", strerror(errno));
		goto out;
	}
	for (size_t w = 0; w < out_len;) {
		ssize_t n = write(mfd, out + w, out_len - w);

		if (n <= 0) {
			rc = repair_fail(err, -EIO, "memfd write: %s", strerror(errno));
			close(mfd);
			mfd = -1;
			goto out;
		}
		w += (size_t)n;
	}
	lseek(mfd, 0, SEEK_SET);
	if (cut_cpu == SIZE_MAX)
		snprintf(warning, wlen, "file cut off at offset %zu, in its last options section "
			 "after the event data (the data map, rebuilt); every event read", b.len);
	else
		snprintf(warning, wlen, "file cut off inside the event data of CPU %zu at offset "
			 "%zu; analysed up to the cut", cut_cpu, b.len);
	*fd_out = mfd;
	rc = 0;
out:
	free(cpu);
	free(out);
	munmap(map, b.len);
	return rc;
}

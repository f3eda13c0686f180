/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracedat_layout.h - what a version-7 trace.dat holds and where, read
 * without libtracecmd: the sections and options, the event formats that
 * are asked for (into a libtraceevent handle) and each CPU's event data.
 *
 * libtracecmd parses every part of a file when it opens it: the kernel's
 * symbol table (megabytes in a `trace-cmd extract` file), every event
 * format of every system, the printk formats.  An analysis of the
 * scheduler's events needs the page header, a dozen formats and the data
 * map, so reading just those makes opening a file take milliseconds.
 *
 * Only the files whose timestamps libtracecmd would hand over unchanged are
 * taken: little-endian, one buffer (no instances), no option that moves or
 * converts time (DATE, OFFSET, TIME_SHIFT, TSC2NSEC), data compressed with
 * zstd or zlib or not at all.  Anything else, and any file whose headers do
 * not parse, is left to libtracecmd (tdl_open() says why).
 */
#ifndef IMB_TRACEDAT_LAYOUT_H
#define IMB_TRACEDAT_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tep_handle;

enum tdl_compression { TDL_NONE, TDL_ZSTD, TDL_ZLIB };

/* One CPU's event data in the file. */
struct tdl_cpu {
	uint32_t id;		/* the CPU */
	uint64_t off, size;	/* where its data are (compressed: the chunk list) */
};

struct tdl {
	int fd;
	uint64_t file_size;
	int long_size;			/* user space's long, 4 or 8 */
	uint32_t page_size;		/* the ring buffer's page */
	enum tdl_compression compression;
	uint64_t data_section;		/* the data's section (BUFFER FLYRECORD) */
	bool data_compressed;		/* the CPUs' data are in compressed chunks */
	uint32_t cpus;			/* CPUs of the system (CPUCOUNT), 0 unknown */
	uint32_t ncpu;			/* CPUs with data in the file */
	struct tdl_cpu *cpu;
	char clock[16];		/* as struct source_info's */
	uint64_t header_info, event_formats;	/* the sections' offsets */
	unsigned int commit_size;	/* the kernel's long: a page's commit word (tdl_tep) */
};

/*
 * tdl_open - read the layout of the file open as @fd.  Returns 0, or -1
 * when the file is one for libtracecmd, with the reason in @why (@len
 * bytes): a version other than 7, big-endian, instances, time options,
 * headers that do not parse.
 */
int tdl_open(struct tdl *l, int fd, char *why, size_t len);

/*
 * tdl_tep - a libtraceevent handle with the file's page header and the
 * formats of the events @want accepts (by system and name); notes the
 * page's commit word size.  NULL with @why when the sections do not parse
 * or the page header is one libtracecmd alone reads (the old format).
 */
struct tep_handle *tdl_tep(struct tdl *l, bool (*want)(const char *system, const char *name),
			   char *why, size_t len);

void tdl_close(struct tdl *l);

/*
 * tdl_uncompress - @src (@slen bytes) into @dst (@dlen bytes, exactly) with
 * the file's compression; @ctx is a per-thread decompression context
 * (tdl_uncompress_ctx(), freed with tdl_uncompress_ctx_free()).  0 or -1.
 */
/* tdl_pread - @n bytes of @fd at @off, all of them: 0, or -1 (a short file, an error) */
int tdl_pread(int fd, void *p, size_t n, uint64_t off);

void *tdl_uncompress_ctx(const struct tdl *l);
void tdl_uncompress_ctx_free(const struct tdl *l, void *ctx);
int tdl_uncompress(const struct tdl *l, void *ctx, const void *src, size_t slen, void *dst,
		   size_t dlen);

#endif /* IMB_TRACEDAT_LAYOUT_H */

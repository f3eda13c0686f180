// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_tracedat_cpu.c - libFuzzer target for one CPU's event data in a
 * trace.dat as the project's own reader walks it (tracedat_cpu.c).
 *
 * The first byte chooses the layout: bit 0 set, the rest is a chunk list
 * (a count, then size-prefixed zstd chunks); clear, the rest is raw
 * ring-buffer pages.  Bit 1 chooses a 4-byte commit word instead of 8,
 * bit 2 pages of 4096 bytes instead of 512 (small inputs hold several).  Every record
 * handed out must lie inside the page it came from; the sanitizers check
 * every read.  tdc_last_ts() runs on the same data.
 *
 * Build: see tests/fuzz/fuzz.sh (target tracedat_cpu).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/source/tracedat_cpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tdl_cpu cpu = { .id = 1 };
	struct tdl l = { .page_size = 512, .ncpu = 1, .cpu = &cpu };
	struct tdc c;
	struct tdc_rec r;
	unsigned long n = 0;
	int fd;

	if (size < 1)
		return 0;
	l.data_compressed = data[0] & 1;
	l.compression = l.data_compressed ? TDL_ZSTD : TDL_NONE;
	l.commit_size = data[0] & 2 ? 4 : 8;
	l.page_size = data[0] & 4 ? 4096 : 512;
	fd = memfd_create("fuzz", 0);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1))
		abort();
	l.fd = fd;
	l.file_size = size - 1;
	cpu.size = size - 1;
	if (!tdc_open(&c, &l, 0)) {
		while (tdc_next(&c, &r) > 0) {
			/* inside the buffer the pages were read into */
			if ((const unsigned char *)r.data < c.buf ||
			    (const unsigned char *)r.data + r.size > c.buf + c.len)
				abort();
			n++;
		}
	}
	tdc_close(&c);
	(void)tdc_last_ts(&l, 0);
	close(fd);
	return n > (size_t)1 << 30;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_tracedat.c - libFuzzer target for the trace.dat source.
 *
 * Each input is written to a memfd and read by source_tracedat_read_inproc()
 * through /proc/self/fd/N, the same path libtracecmd takes for a file: the
 * production reader minus its child process, so that our record decoding,
 * field reads and tracedat_repair run in this process, where the sanitizers
 * and libFuzzer's coverage see them (a crash in a child would only be a
 * clean "corrupted" error).  Events delivered must come in time order, and
 * an error must carry a reason.  Any crash, sanitizer report or broken
 * contract aborts.
 *
 * libtracecmd itself crashes on some damaged files (why production reads
 * in a child): each input first goes through source_tracedat_read(), and
 * one that the library died on ("corrupted trace.dat: the trace library
 * failed") is not read in-process; one that died in our code ("internal
 * error") aborts at once.
 *
 * Build and run: tests/fuzz/fuzz.sh tracedat [seconds] (see there).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/source/source.h"
#include "daemon/source/tracedat.h"

struct fz {
	uint64_t last_ts, n;
};

static int fz_fn(const struct imb_event *ev, void *ctx)
{
	struct fz *z = ctx;

	if (ev->ts_ns < z->last_ts || ev->kind >= IMB_EV__COUNT)
		abort();
	z->last_ts = ev->ts_ns;
	z->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[SOURCE_ERR_LEN];
	struct source_info info;
	struct fz z = { 0, 0 };
	int fd, rc;

	fd = memfd_create("fuzz.dat", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = 0;
	rc = source_tracedat_read(path, fz_fn, &z, &info, err);
	if (rc == -ENOTRECOVERABLE || (rc < 0 && !err[0]))
		abort();
	if (rc == -EINVAL && strstr(err, "the trace library failed")) {
		close(fd);
		return 0;
	}
	memset(&z, 0, sizeof(z));
	err[0] = 0;
	rc = source_tracedat_read_inproc(path, fz_fn, &z, &info, err);
	close(fd);
	if (rc < 0 && !err[0])
		abort();
	if (rc == 0 && info.events != z.n)
		abort();
	return 0;
}

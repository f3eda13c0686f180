// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_text.c - libFuzzer target for the text event format.
 *
 * Each input is split into lines; every line goes through
 * event_text_parse(), and a line that parses must survive
 * format -> parse unchanged and re-format to the same text (so the
 * canonical form is a fixed point).  The whole input is then read as a file
 * by source_text_read() through a memfd.  Any crash, sanitizer report or
 * broken round trip aborts.
 *
 * Build: clang -g -O1 -fsanitize=fuzzer,address,undefined -I. \
 *   tests/fuzz/fuzz_text.c analyzers/event_text.c analyzers/event.c \
 *   daemon/source/text.c -lz
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analyzers/event_text.h"
#include "daemon/source/source.h"

static int count_fn(const struct imb_event *ev, void *ctx)
{
	char line[EVENT_TEXT_MAX_LINE];

	/* every event a source delivers must be formattable */
	if (event_text_format(ev, line, sizeof(line)) < 0)
		abort();
	(*(unsigned long *)ctx)++;
	return 0;
}

static void check_line(const char *s, size_t len)
{
	char err[256], a[EVENT_TEXT_MAX_LINE], b[EVENT_TEXT_MAX_LINE];
	struct imb_event e1, e2;
	int n1, n2;

	if (event_text_parse(s, len, &e1, err, sizeof(err)) != 0)
		return;
	n1 = event_text_format(&e1, a, sizeof(a));
	if (n1 < 0)
		abort();
	if (event_text_parse(a, (size_t)n1, &e2, err, sizeof(err)) != 0)
		abort();
	if (memcmp(&e1, &e2, sizeof(e1)))
		abort();
	n2 = event_text_format(&e2, b, sizeof(b));
	if (n2 != n1 || memcmp(a, b, (size_t)n1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *e = s + size;
	char path[64], err[SOURCE_ERR_LEN];
	struct source_info info;
	unsigned long n = 0;
	int fd;

	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *end = nl ? nl : e;

		check_line(s, (size_t)(end - s));
		s = nl ? nl + 1 : e;
	}

	fd = memfd_create("fuzz_text", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		source_text_sniff(path);
		source_text_read(path, count_fn, &n, &info, err);
	}
	close(fd);
	return 0;
}

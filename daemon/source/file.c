// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * file.c - the offline sources (trace.dat, the text event format) behind
 * struct source_ops, and the choice of reader for a file.
 *
 * Both readers take a whole file in one call and push its events to the
 * callback (the trace.dat one from child processes), so a file is one
 * batch: the first next() reads it all and says SOURCE_END, later ones
 * only say SOURCE_END again.  Nothing is held back, so the ops for held
 * events stay NULL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/source/source.h"
#include "daemon/util.h"

typedef int (*file_read_fn)(const char *path, imb_event_fn fn, void *ctx,
			    struct source_info *info, char *err);

/* One open file: its reader and what the reader said so far. */
struct file_source {
	const char *path;
	file_read_fn read;
	bool done;
	struct source_info info;
};

/*
 * The reader fills info as it goes (the recording's span before the first
 * event), so info() asked from inside the callback already has it.
 */
static int file_next(void *impl, int timeout_ms, imb_event_fn fn, void *ctx, char *err)
{
	struct file_source *f = impl;
	int rc;

	(void)timeout_ms;
	if (f->done)
		return SOURCE_END;
	f->done = true;
	rc = f->read(f->path, fn, ctx, &f->info, err);
	return rc ? rc : SOURCE_END;
}

static void file_info(void *impl, struct source_info *info)
{
	const struct file_source *f = impl;

	*info = f->info;
}

static void file_close(void *impl)
{
	free(impl);
}

static const struct source_ops file_ops = {
	.next = file_next,
	.info = file_info,
	.close = file_close,
};

int source_file_open(struct source *src, const char *path, char *err)
{
	bool text = !strcmp(path, "-") || source_text_sniff(path);
	struct file_source *f = calloc(1, sizeof(*f));

	memset(src, 0, sizeof(*src));
	if (!f) {
		err_set(err, "out of memory");
		return -ENOMEM;
	}
	f->path = path;
	f->read = text ? source_text_read : source_tracedat_read;
	src->name = text ? "text" : "trace.dat";
	src->caps = 0;	/* a recording's losses come as IMB_EV_LOST in its events */
	src->ops = &file_ops;
	src->impl = f;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * event_writer.c - write a live event stream as text events, plain or gzip.
 *
 * Each event is formatted by event_text_format() (the one writer of the
 * format) and appended to a stdio stream or, for a ".gz" name, to a zlib
 * stream at a fast compression level: the writer runs in the thread that
 * drains the kernel's ring buffer, so its cost is taken from the reader's.
 * The file is created exclusively unless the caller allows replacing it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analyzers/event_text.h"
#include "daemon/sink/event_writer.h"

struct event_writer {
	char *path;
	FILE *f;		/* plain text (NULL for gzip) */
	gzFile gz;		/* gzip (NULL for plain) */
	bool is_stdout;
	uint64_t count;
	int err;		/* first write error, -errno */
};

static bool name_is_gz(const char *path)
{
	size_t n = strlen(path);

	return n > 3 && !strcmp(path + n - 3, ".gz");
}

static int writer_out(struct event_writer *w, const char *s, size_t len)
{
	if (w->err)
		return w->err;
	if (w->gz) {
		if (gzwrite(w->gz, s, (unsigned int)len) != (int)len) {
			int zerr;

			gzerror(w->gz, &zerr);
			w->err = zerr == Z_ERRNO && errno ? -errno : -EIO;
		}
	} else if (fwrite(s, 1, len, w->f) != len) {
		w->err = errno ? -errno : -EIO;
	}
	return w->err;
}

struct event_writer *event_writer_open(const char *path, bool clobber, char *err)
{
	struct event_writer *w = calloc(1, sizeof(*w));
	const char *hdr = event_text_header();
	int fd = -1, e;

	if (!w || !(w->path = strdup(path))) {
		free(w);
		snprintf(err, EVENT_WRITER_ERR_LEN, "%.200s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	if (!strcmp(path, "-")) {
		w->is_stdout = true;
		w->f = stdout;
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (clobber ? O_TRUNC : O_EXCL), 0644);
		if (fd < 0) {
			e = errno;
			snprintf(err, EVENT_WRITER_ERR_LEN, "%.200s: %s", path,
				 e == EEXIST ? "exists (--force replaces it)" : strerror(e));
			goto fail;
		}
		if (name_is_gz(path))
			w->gz = gzdopen(fd, "wb3");
		else
			w->f = fdopen(fd, "we");
		if (!w->gz && !w->f) {
			e = errno ? errno : ENOMEM;
			snprintf(err, EVENT_WRITER_ERR_LEN, "%.200s: %s", path, strerror(e));
			close(fd);
			goto fail;
		}
		if (w->gz)
			gzbuffer(w->gz, 1 << 16);
	}
	if (writer_out(w, hdr, strlen(hdr)) || writer_out(w, "\n", 1)) {
		e = -w->err;
		snprintf(err, EVENT_WRITER_ERR_LEN, "%.200s: %s", path, strerror(e));
		event_writer_close(w, NULL);
		errno = e;
		return NULL;
	}
	return w;
fail:
	free(w->path);
	free(w);
	errno = e;
	return NULL;
}

int event_writer_put(struct event_writer *w, const struct imb_event *ev)
{
	char line[EVENT_TEXT_MAX_LINE + 1];
	int n;

	if (w->err)
		return w->err;
	n = event_text_format(ev, line, sizeof(line) - 1);
	if (n <= 0)
		return 0;	/* a kind without a line form: nothing to keep */
	line[n] = '\n';
	if (writer_out(w, line, (size_t)n + 1))
		return w->err;
	w->count++;
	return 0;
}

uint64_t event_writer_count(const struct event_writer *w)
{
	return w->count;
}

bool event_writer_gzip(const struct event_writer *w)
{
	return w->gz != NULL;
}

int event_writer_close(struct event_writer *w, char *err)
{
	int ret;

	if (!w)
		return 0;
	ret = w->err;
	if (w->gz) {
		int zret = gzclose(w->gz);

		if (!ret && zret != Z_OK)
			ret = zret == Z_ERRNO && errno ? -errno : -EIO;
	} else if (w->is_stdout) {
		if (fflush(stdout) && !ret)
			ret = errno ? -errno : -EIO;
	} else if (fclose(w->f) && !ret) {
		ret = errno ? -errno : -EIO;
	}
	if (ret && err)
		snprintf(err, EVENT_WRITER_ERR_LEN, "%.200s: %s", w->path, strerror(-ret));
	free(w->path);
	free(w);
	return ret;
}

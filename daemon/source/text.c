// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * text.c - read the text event format (analyzers/event_text.h)
 * from a file, a gzip-compressed file (flight-recorder dumps) or standard
 * input, one line at a time, and hand each event to the callback.
 *
 * A line that does not parse stops the read with "line N: reason"; lines
 * must be in time order (an older timestamp is an error naming the line,
 * since the text format is also what people write by hand).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "analyzers/event_text.h"
#include "daemon/source/source.h"
#include "daemon/util.h"

_Static_assert(ERR_LEN == SOURCE_ERR_LEN, "one size for every err buffer");

bool source_text_sniff(const char *path)
{
	unsigned char buf[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		return true;	/* gzip: only our dumps are gzip */
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r')
			continue;
		return buf[i] == '#' || (buf[i] >= '0' && buf[i] <= '9');
	}
	return false;
}

/* @path ("-": standard input) as a gzip stream; plain text reads through it as it is. */
static int text_open(const char *path, gzFile *gz, char *err)
{
	int fd, rc;

	if (!strcmp(path, "-")) {
		fd = dup(STDIN_FILENO);
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		err_set(err, "%s", strerror(errno));
		return rc;
	}
	*gz = gzdopen(fd, "rb");
	if (!*gz) {
		close(fd);
		err_set(err, "cannot read: out of memory");
		return -ENOMEM;
	}
	gzbuffer(*gz, 1 << 16);
	return 0;
}

/* After the last line read: a read error, or a gzip stream cut off (read up to the cut). */
static int text_end(gzFile gz, uint64_t lineno, struct source_info *info, char *err)
{
	int zerr;
	const char *msg = gzerror(gz, &zerr);

	if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
		err_set(err, "after line %llu: %s",
			(unsigned long long)lineno,
			zerr == Z_ERRNO ? strerror(errno) : msg);
		return -EIO;
	}
	if (zerr == Z_BUF_ERROR) {
		/* a gzip stream cut off: read up to the cut, like trace.dat */
		info->truncated = true;
		snprintf(info->warning, sizeof(info->warning),
			 "compressed data cut off after line %llu; analysed up to there",
			 (unsigned long long)lineno);
	}
	return 0;
}

int source_text_read(const char *path, imb_event_fn fn, void *ctx, struct source_info *info,
		     char *err)
{
	char line[EVENT_TEXT_MAX_LINE + 2], perr_buf[200];
	struct imb_event ev;
	uint64_t last_ts = 0, lineno = 0;
	int max_cpu = -1, rc;
	gzFile gz = NULL;

	memset(info, 0, sizeof(*info));
	snprintf(info->format, sizeof(info->format), "text");
	rc = text_open(path, &gz, err);
	if (rc)
		return rc;
	while (gzgets(gz, line, sizeof(line))) {
		size_t len = strlen(line);
		int r;

		lineno++;
		if (len == sizeof(line) - 1 && line[len - 1] != '\n') {
			err_set(err, "line %llu: longer than %d bytes",
				(unsigned long long)lineno, EVENT_TEXT_MAX_LINE);
			rc = -EINVAL;
			break;
		}
		r = event_text_parse(line, len, &ev, perr_buf, sizeof(perr_buf));
		if (r == 1) {
			/* the header may name the clock: "# clock=perf" */
			const char *c = strstr(line, "clock=");

			if (line[0] == '#' && c && !info->clock[0])
				sscanf(c + 6, "%15[a-z_0-9]", info->clock);
			continue;
		}
		if (r < 0) {
			err_set(err, "line %llu: %s", (unsigned long long)lineno,
				perr_buf);
			rc = -EINVAL;
			break;
		}
		if (ev.ts_ns < last_ts) {
			err_set(err,
				"line %llu: timestamp %llu is older than the line before (%llu)",
				(unsigned long long)lineno, (unsigned long long)ev.ts_ns,
				(unsigned long long)last_ts);
			rc = -EINVAL;
			break;
		}
		last_ts = ev.ts_ns;
		if (ev.cpu > max_cpu)
			max_cpu = ev.cpu;
		if (ev.kind == IMB_EV_LOST)
			info->lost_events += ev.lost.count;
		info->events++;
		rc = fn(&ev, ctx);
		if (rc < 0) {
			err_set(err, "line %llu: %s", (unsigned long long)lineno,
				strerror(-rc));
			break;
		}
		rc = 0;
	}
	if (!rc)
		rc = text_end(gz, lineno, info, err);
	gzclose(gz);
	info->nr_cpus = max_cpu + 1;
	return rc;
}

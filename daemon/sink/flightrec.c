// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * flightrec.c - a bounded ring of the most recent events (flightrec.h).
 *
 * Adding is a copy into a fixed ring plus dropping events older than the
 * window from its tail: no allocation, no system call.  A dump writes the
 * ring oldest first in the text event format through zlib, so `imbalanced
 * analyze FILE.events.gz` reads it back.  Formatting, compressing and
 * fsync'ing 250k events takes about half a second, so the pipeline's dumps
 * are a copy of the ring handed to a worker thread (flightrec_dump_async);
 * the worker writes them in order and then prunes the oldest files.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "analyzers/event_text.h"
#include "daemon/sink/flightrec.h"
#include "daemon/live/priority.h"
#include "daemon/util.h"

#define RESULTS 16	/* outcomes of the last dumps, by sequence number */

struct dump_job {
	struct imb_event *ev;	/* oldest first */
	size_t n;
	int64_t seq;
	char dir[4096];
	char path[4096];
};

struct flightrec {
	uint64_t window_ns;
	unsigned int keep;

	/* the worker and its queue, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;	/* job queued, job done, stop */
	pthread_t thread;
	bool started, stop;
	struct dump_job *queue[FLIGHTREC_MAX_QUEUED];
	size_t queued;		/* queue[0] is being written when busy */
	bool busy;
	int64_t next_seq;
	struct { int64_t seq; int rc; } results[RESULTS];
	struct flightrec_stats st;
	struct imb_event *spare;	/* a dump buffer kept for the next dump */

	size_t cap, head, n;	/* ring: n events ending before head */
	struct imb_event ev[];
};

/* a dump buffer holds a whole ring (see buf_get) */
static size_t buf_bytes(const struct flightrec *fr)
{
	return fr->cap * sizeof(struct imb_event);
}

struct flightrec *flightrec_new(unsigned int seconds, size_t max_events)
{
	struct flightrec *fr;

	if (!seconds || !max_events) {
		errno = EINVAL;
		return NULL;
	}
	fr = calloc(1, sizeof(*fr) + max_events * sizeof(fr->ev[0]));
	if (!fr)
		return NULL;
	fr->window_ns = (uint64_t)seconds * 1000000000ull;
	fr->cap = max_events;
	fr->keep = FLIGHTREC_DEFAULT_KEEP;
	fr->next_seq = 1;
	pthread_mutex_init(&fr->mu, NULL);
	pthread_cond_init(&fr->cv, NULL);
	return fr;
}

void flightrec_set_keep(struct flightrec *fr, unsigned int keep)
{
	pthread_mutex_lock(&fr->mu);
	fr->keep = keep ? keep : FLIGHTREC_DEFAULT_KEEP;
	pthread_mutex_unlock(&fr->mu);
}

void flightrec_free(struct flightrec *fr)
{
	if (!fr)
		return;
	pthread_mutex_lock(&fr->mu);
	fr->stop = true;
	pthread_cond_broadcast(&fr->cv);
	pthread_mutex_unlock(&fr->mu);
	if (fr->started)
		pthread_join(fr->thread, NULL);	/* it writes what is queued first */
	for (size_t i = 0; i < fr->queued; i++) {
		munmap(fr->queue[i]->ev, buf_bytes(fr));
		free(fr->queue[i]);
	}
	if (fr->spare)
		munmap(fr->spare, buf_bytes(fr));
	pthread_cond_destroy(&fr->cv);
	pthread_mutex_destroy(&fr->mu);
	free(fr);
}

size_t flightrec_count(const struct flightrec *fr)
{
	return fr->n;
}

void flightrec_add(struct flightrec *fr, const struct imb_event *ev)
{
	size_t tail;

	fr->ev[fr->head] = *ev;
	if (++fr->head == fr->cap)
		fr->head = 0;
	if (fr->n < fr->cap)
		fr->n++;
	/* drop what fell out of the time window */
	while (fr->n > 1) {
		tail = fr->head >= fr->n ? fr->head - fr->n : fr->head + fr->cap - fr->n;
		if (ev->ts_ns - fr->ev[tail].ts_ns <= fr->window_ns)
			break;
		fr->n--;
	}
}

/* File names: keep [A-Za-z0-9_-], turn the rest into '_'. */
static void sanitize(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i]; i++) {
		char c = src[i];

		dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '-' || c == '_' ? c : '_';
	}
	dst[i] = 0;
}

/* flight-<stamp>-<ns>-: the fixed-width prefix that sorts by time */
static bool is_dump_name(const char *name)
{
	size_t len = strlen(name);

	return !strncmp(name, "flight-", 7) && len > 23 && name[22] == 'Z' &&
	       !strcmp(name + len - 10, ".events.gz");
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Delete the oldest dump files in @dir beyond @keep. */
static void prune(const char *dir, unsigned int keep)
{
	char **names = NULL, p[4352];
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!is_dump_name(de->d_name))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap ? cap * 2 : 32) * sizeof(*nn));

			if (!nn)
				break;
			names = nn;
			cap = cap ? cap * 2 : 32;
		}
		names[n] = strdup(de->d_name);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i + keep < n) {
			snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
			unlink(p);
		}
		free(names[i]);
	}
	free(names);
}

static int dump_path(const char *dir, const char *tag, char *path, size_t len, char *err)
{
	char safe[96], stamp[32];
	struct timespec now;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	sanitize(safe, sizeof(safe), tag);
	if ((size_t)snprintf(path, len, "%s/flight-%s-%09ld-%s.events.gz", dir, stamp,
			     (long)now.tv_nsec, safe) >= len || strlen(path) + 5 > 4095) {
		err_set(err, "%.100s: path too long", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Write @n events (oldest first, or a ring when @cap) to @path. */
static int write_events(const struct imb_event *ev, size_t n, size_t cap, size_t first,
			const char *path, char *err)
{
	char tmp[4096], line[EVENT_TEXT_MAX_LINE];
	gzFile gz;
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0) {
		rc = -errno;
		err_set(err, "%.200s: %s", tmp, strerror(errno));
		return rc;
	}
	gz = gzdopen(dup(fd), "wb6");
	if (!gz) {
		close(fd);
		unlink(tmp);
		err_set(err, "%.200s: out of memory", tmp);
		return -ENOMEM;
	}
	if (gzprintf(gz, "%s\n", event_text_header()) <= 0)
		rc = -EIO;
	for (size_t i = 0; !rc && i < n; i++) {
		int k = event_text_format(&ev[cap ? (first + i) % cap : i], line, sizeof(line));

		if (k < 0)
			continue;
		line[k] = '\n';
		if (gzwrite(gz, line, (unsigned int)k + 1) != k + 1)
			rc = -EIO;
	}
	if (gzclose(gz) != Z_OK)
		rc = -EIO;
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		err_set(err, "%.200s: %s", tmp, strerror(-rc));
		unlink(tmp);
	}
	return rc;
}

int flightrec_dump(struct flightrec *fr, const char *dir, const char *tag, char *path,
		   size_t len, char *err)
{
	unsigned int keep;
	int rc;

	rc = dump_path(dir, tag, path, len, err);
	if (rc)
		return rc;
	rc = write_events(fr->ev, fr->n, fr->cap, (fr->head + fr->cap - fr->n) % fr->cap, path,
			  err);
	pthread_mutex_lock(&fr->mu);
	keep = fr->keep;
	pthread_mutex_unlock(&fr->mu);
	if (!rc)
		prune(dir, keep);
	return rc;
}

/*
 * Dump buffers hold a whole ring.  Fresh pages cost a fault each, about
 * 200 ms for 30 MB on a loaded VM, against 2-9 ms to copy into pages
 * already touched: one buffer is kept for the next dump (huge pages where
 * the kernel gives them), a second one while two dumps wait is freed after.
 */
static struct imb_event *buf_get(struct flightrec *fr)
{
	struct imb_event *b;

	pthread_mutex_lock(&fr->mu);
	b = fr->spare;
	fr->spare = NULL;
	pthread_mutex_unlock(&fr->mu);
	if (b)
		return b;
	b = mmap(NULL, buf_bytes(fr), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return NULL;
	madvise(b, buf_bytes(fr), MADV_HUGEPAGE);
	return b;
}

/* under mu */
static void buf_put_locked(struct flightrec *fr, struct imb_event *b)
{
	if (!fr->spare)
		fr->spare = b;
	else
		munmap(b, buf_bytes(fr));
}

static void *worker(void *arg)
{
	struct flightrec *fr = arg;

	priority_restore_self();	/* compressing is no reader's work */
	pthread_mutex_lock(&fr->mu);
	for (;;) {
		struct dump_job *j;
		char err[256] = "";
		uint64_t t0;
		unsigned int keep;
		int rc;

		while (!fr->queued && !fr->stop)
			pthread_cond_wait(&fr->cv, &fr->mu);
		if (!fr->queued)
			break;	/* stop, and nothing left to write */
		j = fr->queue[0];
		fr->busy = true;
		keep = fr->keep;
		pthread_mutex_unlock(&fr->mu);

		t0 = mono_ns();
		rc = write_events(j->ev, j->n, 0, 0, j->path, err);
		if (!rc)
			prune(j->dir, keep);

		pthread_mutex_lock(&fr->mu);
		fr->st.last_write_ns = mono_ns() - t0;
		if (rc) {
			fr->st.failed++;
			snprintf(fr->st.last_error, sizeof(fr->st.last_error), "%s", err);
		} else {
			fr->st.written++;
		}
		fr->results[j->seq % RESULTS].seq = j->seq;
		fr->results[j->seq % RESULTS].rc = rc;
		memmove(&fr->queue[0], &fr->queue[1], (fr->queued - 1) * sizeof(fr->queue[0]));
		fr->queued--;
		fr->busy = false;
		pthread_cond_broadcast(&fr->cv);
		buf_put_locked(fr, j->ev);
		free(j);
	}
	pthread_mutex_unlock(&fr->mu);
	return NULL;
}

int64_t flightrec_dump_async(struct flightrec *fr, const char *dir, const char *tag,
			     char *path, size_t len, char *err)
{
	struct dump_job *j;
	size_t first, part;
	uint64_t t0 = mono_ns();
	int64_t seq;
	bool full;
	int rc;

	pthread_mutex_lock(&fr->mu);
	full = fr->queued >= FLIGHTREC_MAX_QUEUED;
	if (full)
		fr->st.refused++;
	pthread_mutex_unlock(&fr->mu);
	if (full) {
		err_set(err, "%d flight-recorder dumps are being written already",
			FLIGHTREC_MAX_QUEUED);
		return -EBUSY;
	}
	rc = dump_path(dir, tag, path, len, err);
	if (rc)
		return rc;
	j = calloc(1, sizeof(*j));
	if (j)
		j->ev = buf_get(fr);
	if (!j || !j->ev) {
		free(j);
		err_set(err, "out of memory copying %zu events", fr->n);
		return -ENOMEM;
	}
	/* the ring, oldest first: at most two pieces */
	first = (fr->head + fr->cap - fr->n) % fr->cap;
	part = fr->cap - first < fr->n ? fr->cap - first : fr->n;
	memcpy(j->ev, &fr->ev[first], part * sizeof(*j->ev));
	memcpy(j->ev + part, &fr->ev[0], (fr->n - part) * sizeof(*j->ev));
	j->n = fr->n;
	snprintf(j->dir, sizeof(j->dir), "%s", dir);
	snprintf(j->path, sizeof(j->path), "%s", path);

	pthread_mutex_lock(&fr->mu);
	if (!fr->started) {
		if (pthread_create(&fr->thread, NULL, worker, fr)) {
			buf_put_locked(fr, j->ev);
			pthread_mutex_unlock(&fr->mu);
			free(j);
			err_set(err, "cannot start the flight-recorder writer thread");
			return -EAGAIN;
		}
		fr->started = true;
	}
	seq = j->seq = fr->next_seq++;
	fr->queue[fr->queued++] = j;
	fr->st.last_copy_ns = mono_ns() - t0;
	pthread_cond_broadcast(&fr->cv);
	pthread_mutex_unlock(&fr->mu);
	return seq;
}

int flightrec_dump_result(struct flightrec *fr, int64_t seq)
{
	int rc = -ESTALE;

	pthread_mutex_lock(&fr->mu);
	for (size_t i = 0; i < fr->queued; i++)
		if (fr->queue[i]->seq == seq)
			rc = 1;
	if (rc < 0 && fr->results[seq % RESULTS].seq == seq)
		rc = fr->results[seq % RESULTS].rc;
	pthread_mutex_unlock(&fr->mu);
	return rc;
}

void flightrec_stats_get(struct flightrec *fr, struct flightrec_stats *st)
{
	pthread_mutex_lock(&fr->mu);
	*st = fr->st;
	pthread_mutex_unlock(&fr->mu);
}

void flightrec_flush(struct flightrec *fr)
{
	pthread_mutex_lock(&fr->mu);
	while (fr->queued)
		pthread_cond_wait(&fr->cv, &fr->mu);
	pthread_mutex_unlock(&fr->mu);
}

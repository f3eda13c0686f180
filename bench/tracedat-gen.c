// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracedat-gen.c - write a synthetic scheduler trace.dat of any size and
 * CPU count, for benchmarks and tests of the trace.dat reader.
 *
 * The headers and event formats (sched_switch, sched_wakeup, ...) are
 * copied from a template trace.dat with libtracecmd's output API; the
 * per-CPU event data is generated here as kernel ring-buffer pages (page
 * header, then records with a 32-bit type_len/time_delta header, time
 * extends for long gaps) holding a deterministic load: on every CPU four
 * tasks take turns, each turn a sched_waking, sched_wakeup,
 * sched_stat_runtime and sched_switch, and every 64th turn a task moves
 * to the next CPU (sched_migrate_task).  libtracecmd writes the pages into
 * the file, compressed as asked.
 *
 *   tracedat-gen [--cpus N] [--events N] [--compression zstd|none]
 *                [--seed N] TEMPLATE.dat OUT.dat
 *
 * Prints "events N cpus N bytes N".
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <trace-cmd/trace-cmd.h>

/* exported by libtracecmd 3.1, declared only in its private header */
struct tracecmd_output;
struct tracecmd_output *tracecmd_copy(struct tracecmd_input *ihandle, const char *file,
				      int state, int file_version, const char *compression);
int tracecmd_write_cpu_data(struct tracecmd_output *handle, int cpus,
			    char * const *cpu_data_files, const char *buff_name);
void tracecmd_output_close(struct tracecmd_output *handle);
struct tracecmd_option;
struct tracecmd_option *tracecmd_add_option(struct tracecmd_output *handle, unsigned short id,
					    int size, const void *data);
int tracecmd_write_options(struct tracecmd_output *handle);
void tracecmd_set_quiet(struct tracecmd_output *handle, bool set_quiet);
struct tracecmd_input *tracecmd_open_head(const char *file, int flags);
int tracecmd_page_size(struct tracecmd_input *handle);

#define STATE_CMD_LINES 7	/* enum tracecmd_file_states: copy the headers only */
#define OPT_TRACECLOCK 4	/* the file format's option ids */
#define OPT_CPUCOUNT 8

struct fld {
	int off, size;
};

struct evfmt {
	int id, size;
	struct fld f[8];
};

enum { E_SWITCH, E_WAKING, E_WAKEUP, E_RUNTIME, E_MIGRATE, E__N };

static const char *const names[E__N] = {
	"sched_switch", "sched_waking", "sched_wakeup", "sched_stat_runtime",
	"sched_migrate_task",
};

static const char *const fields[E__N][8] = {
	{ "prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid",
	  "next_prio" },
	{ "comm", "pid", "prio", "target_cpu" },
	{ "comm", "pid", "prio", "target_cpu" },
	{ "comm", "pid", "runtime", "vruntime" },
	{ "comm", "pid", "prio", "orig_cpu", "dest_cpu" },
};

static struct evfmt fmt[E__N];

/* one CPU's page writer */
struct cpuw {
	FILE *f;
	unsigned char *page;
	int psize, used;	/* bytes of records in the page */
	uint64_t page_ts, last_ts;
	uint64_t records;
};

static void put(unsigned char *p, int size, uint64_t v)
{
	memcpy(p, &v, (size_t)size);	/* little-endian host, as the template */
}

static void page_flush(struct cpuw *c)
{
	if (!c->used)
		return;
	put(c->page, 8, c->page_ts);
	put(c->page + 8, 8, (uint64_t)c->used);
	memset(c->page + 16 + c->used, 0, (size_t)(c->psize - 16 - c->used));
	if (fwrite(c->page, 1, (size_t)c->psize, c->f) != (size_t)c->psize) {
		perror("tracedat-gen: write");
		exit(1);
	}
	c->used = 0;
}

/* append one record of @len payload bytes at time @ts; returns the payload */
static unsigned char *rec(struct cpuw *c, uint64_t ts, int len)
{
	int need = 4 + ((len + 3) & ~3);
	uint64_t delta;
	unsigned char *p;

	if (c->used && 16 + c->used + need + 8 > c->psize)
		page_flush(c);
	if (!c->used) {
		c->page_ts = ts;
		c->last_ts = ts;
	}
	delta = ts - c->last_ts;
	p = c->page + 16 + c->used;
	if (delta >= (1u << 27)) {
		/* time extend: type_len 30, low 27 bits, then the high bits */
		uint32_t h = 30 | (uint32_t)(delta & ((1u << 27) - 1)) << 5;

		put(p, 4, h);
		put(p + 4, 4, delta >> 27);
		p += 8;
		c->used += 8;
		delta = 0;
	}
	put(p, 4, (uint32_t)((need - 4) / 4) | (uint32_t)delta << 5);
	memset(p + 4, 0, (size_t)(need - 4));
	c->used += need;
	c->last_ts = ts;
	c->records++;
	return p + 4;
}

static unsigned char *ev(struct cpuw *c, uint64_t ts, int e, int pid)
{
	unsigned char *p = rec(c, ts, fmt[e].size);

	put(p, 2, (uint64_t)fmt[e].id);
	put(p + 4, 4, (uint64_t)pid);	/* common_pid */
	return p;
}

static void fnum(unsigned char *p, int e, int k, uint64_t v)
{
	if (fmt[e].f[k].size > 0)
		put(p + fmt[e].f[k].off, fmt[e].f[k].size > 8 ? 8 : fmt[e].f[k].size, v);
}

static void fstr(unsigned char *p, int e, int k, const char *s)
{
	if (fmt[e].f[k].size > 0)
		memcpy(p + fmt[e].f[k].off, s, strnlen(s, (size_t)fmt[e].f[k].size - 1));
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static void usage(void)
{
	fprintf(stderr, "usage: tracedat-gen [--cpus N] [--events N] [--compression zstd|none] "
		"[--seed N] TEMPLATE.dat OUT.dat\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "cpus", required_argument, NULL, 'c' },
		{ "events", required_argument, NULL, 'e' },
		{ "compression", required_argument, NULL, 'z' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *zname = "zstd";
	long ncpu = 64, nev = 1000000, seed = 1;
	struct tracecmd_input *in;
	struct tracecmd_output *out;
	struct tep_handle *tep;
	struct cpuw *cw;
	char **files, tmpl[] = "/tmp/tracedat-gen-XXXXXX";
	uint64_t total = 0, ts0 = 1000000000ULL;
	int (*cur)[1], opt, psize;
	struct stat st;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'c':
			ncpu = strtol(optarg, NULL, 10);
			break;
		case 'e':
			nev = strtol(optarg, NULL, 10);
			break;
		case 'z':
			zname = optarg;
			break;
		case 's':
			seed = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || ncpu < 1 || ncpu > 4096 || nev < 1)
		usage();
	tracecmd_set_loglevel(TEP_LOG_NONE);
	in = tracecmd_open(argv[optind], TRACECMD_FL_LOAD_NO_PLUGINS |
			   TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!in) {
		fprintf(stderr, "tracedat-gen: %s: cannot open the template\n", argv[optind]);
		return 1;
	}
	tep = tracecmd_get_tep(in);
	psize = tracecmd_page_size(in);
	for (int e = 0; e < E__N; e++) {
		struct tep_event *te = tep_find_event_by_name(tep, "sched", names[e]);
		int end = 0;

		if (!te) {
			fprintf(stderr, "tracedat-gen: %s: no %s format\n", argv[optind], names[e]);
			return 1;
		}
		fmt[e].id = te->id;
		for (int k = 0; k < 8 && fields[e][k]; k++) {
			struct tep_format_field *f = tep_find_field(te, fields[e][k]);

			if (!f || (f->flags & TEP_FIELD_IS_DYNAMIC))
				continue;	/* absent, or __data_loc: left empty */
			fmt[e].f[k].off = f->offset;
			fmt[e].f[k].size = f->size;
			if (f->offset + f->size > end)
				end = f->offset + f->size;
		}
		fmt[e].size = end;
	}
	if (!mkdtemp(tmpl)) {
		perror("tracedat-gen: mkdtemp");
		return 1;
	}
	cw = calloc((size_t)ncpu, sizeof(*cw));
	files = calloc((size_t)ncpu, sizeof(*files));
	cur = calloc((size_t)ncpu, sizeof(*cur));
	if (!cw || !files || !cur)
		return 1;
	for (long c = 0; c < ncpu; c++) {
		if (asprintf(&files[c], "%s/cpu%ld", tmpl, c) < 0)
			return 1;
		cw[c].f = fopen(files[c], "wb");
		cw[c].page = malloc((size_t)psize);
		cw[c].psize = psize;
		if (!cw[c].f || !cw[c].page) {
			perror("tracedat-gen");
			return 1;
		}
		cur[c][0] = 0;
	}
	/*
	 * Round-robin over the CPUs, one turn (4 or 5 events) each, with
	 * per-CPU clocks that drift apart so the merge has work to do.
	 */
	{
		uint64_t *now = calloc((size_t)ncpu, sizeof(*now)), s = (uint64_t)seed;
		uint64_t turn = 0;

		for (long c = 0; c < ncpu; c++)
			now[c] = ts0 + rnd(&s) % 1000;
		while (total < (uint64_t)nev) {
			for (long c = 0; c < ncpu && total < (uint64_t)nev; c++) {
				struct cpuw *w = &cw[c];
				int prev = 1000 + (int)c * 4 + cur[c][0];
				int nk = (cur[c][0] + 1) % 4, next = 1000 + (int)c * 4 + nk;
				uint64_t run = 20000 + rnd(&s) % 2000000;
				char comm[16];
				unsigned char *p;

				snprintf(comm, sizeof(comm), "gen-%d", next);
				now[c] += run;
				p = ev(w, now[c], E_WAKING, prev);
				fstr(p, E_WAKING, 0, comm);
				fnum(p, E_WAKING, 1, (uint64_t)next);
				fnum(p, E_WAKING, 2, 120);
				fnum(p, E_WAKING, 3, (uint64_t)c);
				p = ev(w, now[c] + 500, E_WAKEUP, prev);
				fstr(p, E_WAKEUP, 0, comm);
				fnum(p, E_WAKEUP, 1, (uint64_t)next);
				fnum(p, E_WAKEUP, 2, 120);
				fnum(p, E_WAKEUP, 3, (uint64_t)c);
				p = ev(w, now[c] + 1000, E_RUNTIME, prev);
				snprintf(comm, sizeof(comm), "gen-%d", prev);
				fstr(p, E_RUNTIME, 0, comm);
				fnum(p, E_RUNTIME, 1, (uint64_t)prev);
				fnum(p, E_RUNTIME, 2, run);
				fnum(p, E_RUNTIME, 3, turn * 1000);
				p = ev(w, now[c] + 1500, E_SWITCH, prev);
				fstr(p, E_SWITCH, 0, comm);
				fnum(p, E_SWITCH, 1, (uint64_t)prev);
				fnum(p, E_SWITCH, 2, 120);
				fnum(p, E_SWITCH, 3, (turn + (uint64_t)c) % 3 ? 0 : 1);
				snprintf(comm, sizeof(comm), "gen-%d", next);
				fstr(p, E_SWITCH, 4, comm);
				fnum(p, E_SWITCH, 5, (uint64_t)next);
				fnum(p, E_SWITCH, 6, 120);
				total += 4;
				if (ncpu > 1 && turn % 64 == (uint64_t)c % 64) {
					p = ev(w, now[c] + 2000, E_MIGRATE, next);
					snprintf(comm, sizeof(comm), "gen-%d", prev);
					fstr(p, E_MIGRATE, 0, comm);
					fnum(p, E_MIGRATE, 1, (uint64_t)prev);
					fnum(p, E_MIGRATE, 2, 120);
					fnum(p, E_MIGRATE, 3, (uint64_t)c);
					fnum(p, E_MIGRATE, 4, (uint64_t)((c + 1) % ncpu));
					total++;
				}
				now[c] += 2000;
				cur[c][0] = nk;
			}
			turn++;
		}
		free(now);
	}
	for (long c = 0; c < ncpu; c++) {
		page_flush(&cw[c]);
		if (fclose(cw[c].f)) {
			perror("tracedat-gen: close");
			return 1;
		}
	}
	out = tracecmd_copy(in, argv[optind + 1], STATE_CMD_LINES, 7, zname);
	if (!out) {
		fprintf(stderr, "tracedat-gen: %s: cannot write the headers\n", argv[optind + 1]);
		return 1;
	}
	tracecmd_set_quiet(out, true);
	{
		/* as trace-cmd record writes them: the CPU count and the clock */
		int n = (int)ncpu;
		static const char clock[] = "local global counter uptime [perf] mono";

		tracecmd_add_option(out, OPT_CPUCOUNT, sizeof(n), &n);
		tracecmd_add_option(out, OPT_TRACECLOCK, sizeof(clock), clock);
		/* in a section before the data, where a cut file still has them */
		tracecmd_write_options(out);
	}
	if (tracecmd_write_cpu_data(out, (int)ncpu, files, NULL) < 0) {
		fprintf(stderr, "tracedat-gen: %s: cannot write the event data\n",
			argv[optind + 1]);
		return 1;
	}
	tracecmd_output_close(out);
	tracecmd_close(in);
	for (long c = 0; c < ncpu; c++) {
		unlink(files[c]);
		free(files[c]);
		free(cw[c].page);
	}
	rmdir(tmpl);
	free(cw);
	free(files);
	free(cur);
	if (stat(argv[optind + 1], &st))
		return 1;
	printf("events %llu cpus %ld bytes %lld\n", (unsigned long long)total, ncpu,
	       (long long)st.st_size);
	return 0;
}

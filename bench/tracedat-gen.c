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

/* What the command line asks for. */
struct gen_args {
	const char *zname;		/* compression */
	long ncpu, nev, seed;
	const char *template_path, *out_path;
};

static void parse_args(int argc, char **argv, struct gen_args *a)
{
	static const struct option lo[] = {
		{ "cpus", required_argument, NULL, 'c' },
		{ "events", required_argument, NULL, 'e' },
		{ "compression", required_argument, NULL, 'z' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*a = (struct gen_args){ .zname = "zstd", .ncpu = 64, .nev = 1000000, .seed = 1 };
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'c':
			a->ncpu = strtol(optarg, NULL, 10);
			break;
		case 'e':
			a->nev = strtol(optarg, NULL, 10);
			break;
		case 'z':
			a->zname = optarg;
			break;
		case 's':
			a->seed = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || a->ncpu < 1 || a->ncpu > 4096 || a->nev < 1)
		usage();
	a->template_path = argv[optind];
	a->out_path = argv[optind + 1];
}

/* Each event's id, fields and size from the template's formats; 0 or -1 (said). */
static int load_formats(struct tep_handle *tep, const char *template_path)
{
	for (int e = 0; e < E__N; e++) {
		struct tep_event *te = tep_find_event_by_name(tep, "sched", names[e]);
		int end = 0;

		if (!te) {
			fprintf(stderr, "tracedat-gen: %s: no %s format\n", template_path, names[e]);
			return -1;
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
	return 0;
}

/* One page writer per CPU, each on its own file in the folder @dir; 0 or -1. */
static int open_cpu_files(const char *dir, long ncpu, int psize, struct cpuw **cwp,
			  char ***filesp)
{
	struct cpuw *cw = calloc((size_t)ncpu, sizeof(*cw));
	char **files = calloc((size_t)ncpu, sizeof(*files));

	*cwp = cw;
	*filesp = files;
	if (!cw || !files)
		return -1;
	for (long c = 0; c < ncpu; c++) {
		if (asprintf(&files[c], "%s/cpu%ld", dir, c) < 0)
			return -1;
		cw[c].f = fopen(files[c], "wb");
		cw[c].page = malloc((size_t)psize);
		cw[c].psize = psize;
		if (!cw[c].f || !cw[c].page) {
			perror("tracedat-gen");
			return -1;
		}
	}
	return 0;
}

/* The load as it goes: per-CPU clocks and running task, the turn, the random state. */
struct load {
	long ncpu;
	uint64_t *now;
	int *cur;		/* the task (0 to 3) running on each CPU */
	uint64_t turn, rs;
};

/* sched_waking or sched_wakeup (@e) at @ts: task @next wakes on CPU @c. */
static void ev_wake(struct cpuw *w, uint64_t ts, int e, int prev, int next, long c,
		    const char *comm)
{
	unsigned char *p = ev(w, ts, e, prev);

	fstr(p, e, 0, comm);
	fnum(p, e, 1, (uint64_t)next);
	fnum(p, e, 2, 120);
	fnum(p, e, 3, (uint64_t)c);
}

/*
 * One turn on CPU @c: the next of its four tasks wakes, the running one
 * has run and switches to it, and on every 64th turn (a different one per
 * CPU) the next task moves to the following CPU.  Returns the events written.
 */
static int gen_turn(struct cpuw *w, struct load *l, long c)
{
	int prev = 1000 + (int)c * 4 + l->cur[c];
	int nk = (l->cur[c] + 1) % 4, next = 1000 + (int)c * 4 + nk;
	uint64_t run = 20000 + rnd(&l->rs) % 2000000, now;
	char comm[16], pcomm[16];
	unsigned char *p;
	int n = 4;

	snprintf(comm, sizeof(comm), "gen-%d", next);
	snprintf(pcomm, sizeof(pcomm), "gen-%d", prev);
	now = l->now[c] += run;
	ev_wake(w, now, E_WAKING, prev, next, c, comm);
	ev_wake(w, now + 500, E_WAKEUP, prev, next, c, comm);
	p = ev(w, now + 1000, E_RUNTIME, prev);
	fstr(p, E_RUNTIME, 0, pcomm);
	fnum(p, E_RUNTIME, 1, (uint64_t)prev);
	fnum(p, E_RUNTIME, 2, run);
	fnum(p, E_RUNTIME, 3, l->turn * 1000);
	p = ev(w, now + 1500, E_SWITCH, prev);
	fstr(p, E_SWITCH, 0, pcomm);
	fnum(p, E_SWITCH, 1, (uint64_t)prev);
	fnum(p, E_SWITCH, 2, 120);
	fnum(p, E_SWITCH, 3, (l->turn + (uint64_t)c) % 3 ? 0 : 1);
	fstr(p, E_SWITCH, 4, comm);
	fnum(p, E_SWITCH, 5, (uint64_t)next);
	fnum(p, E_SWITCH, 6, 120);
	if (l->ncpu > 1 && l->turn % 64 == (uint64_t)c % 64) {
		p = ev(w, now + 2000, E_MIGRATE, next);
		fstr(p, E_MIGRATE, 0, pcomm);
		fnum(p, E_MIGRATE, 1, (uint64_t)prev);
		fnum(p, E_MIGRATE, 2, 120);
		fnum(p, E_MIGRATE, 3, (uint64_t)c);
		fnum(p, E_MIGRATE, 4, (uint64_t)((c + 1) % l->ncpu));
		n++;
	}
	l->now[c] += 2000;
	l->cur[c] = nk;
	return n;
}

/*
 * Round-robin over the CPUs, one turn (4 or 5 events) each, with per-CPU
 * clocks that drift apart so the merge has work to do, until @nev events.
 * Returns the events written, 0 when out of memory.
 */
static uint64_t generate(struct cpuw *cw, long ncpu, long nev, long seed)
{
	struct load l = { .ncpu = ncpu, .rs = (uint64_t)seed };
	uint64_t total = 0, ts0 = 1000000000ULL;

	l.now = calloc((size_t)ncpu, sizeof(*l.now));
	l.cur = calloc((size_t)ncpu, sizeof(*l.cur));
	if (!l.now || !l.cur)
		return 0;
	for (long c = 0; c < ncpu; c++)
		l.now[c] = ts0 + rnd(&l.rs) % 1000;
	while (total < (uint64_t)nev) {
		for (long c = 0; c < ncpu && total < (uint64_t)nev; c++)
			total += (uint64_t)gen_turn(&cw[c], &l, c);
		l.turn++;
	}
	free(l.now);
	free(l.cur);
	return total;
}

/* The template's headers, the options trace-cmd record writes, then the CPUs' pages; 0 or -1. */
static int write_output(struct tracecmd_input *in, const struct gen_args *a, char **files)
{
	/* as trace-cmd record writes them: the CPU count and the clock */
	static const char clock[] = "local global counter uptime [perf] mono";
	struct tracecmd_output *out;
	int n = (int)a->ncpu;

	out = tracecmd_copy(in, a->out_path, STATE_CMD_LINES, 7, a->zname);
	if (!out) {
		fprintf(stderr, "tracedat-gen: %s: cannot write the headers\n", a->out_path);
		return -1;
	}
	tracecmd_set_quiet(out, true);
	tracecmd_add_option(out, OPT_CPUCOUNT, sizeof(n), &n);
	tracecmd_add_option(out, OPT_TRACECLOCK, sizeof(clock), clock);
	/* in a section before the data, where a cut file still has them */
	tracecmd_write_options(out);
	if (tracecmd_write_cpu_data(out, (int)a->ncpu, files, NULL) < 0) {
		fprintf(stderr, "tracedat-gen: %s: cannot write the event data\n", a->out_path);
		return -1;
	}
	tracecmd_output_close(out);
	return 0;
}

int main(int argc, char **argv)
{
	struct gen_args a;
	struct tracecmd_input *in;
	struct cpuw *cw;
	char **files, tmpl[] = "/tmp/tracedat-gen-XXXXXX";
	uint64_t total;
	struct stat st;

	parse_args(argc, argv, &a);
	tracecmd_set_loglevel(TEP_LOG_NONE);
	in = tracecmd_open(a.template_path, TRACECMD_FL_LOAD_NO_PLUGINS |
			   TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!in) {
		fprintf(stderr, "tracedat-gen: %s: cannot open the template\n", a.template_path);
		return 1;
	}
	if (load_formats(tracecmd_get_tep(in), a.template_path))
		return 1;
	if (!mkdtemp(tmpl)) {
		perror("tracedat-gen: mkdtemp");
		return 1;
	}
	if (open_cpu_files(tmpl, a.ncpu, tracecmd_page_size(in), &cw, &files))
		return 1;
	total = generate(cw, a.ncpu, a.nev, a.seed);
	if (!total)
		return 1;
	for (long c = 0; c < a.ncpu; c++) {
		page_flush(&cw[c]);
		if (fclose(cw[c].f)) {
			perror("tracedat-gen: close");
			return 1;
		}
	}
	if (write_output(in, &a, files))
		return 1;
	tracecmd_close(in);
	for (long c = 0; c < a.ncpu; c++) {
		unlink(files[c]);
		free(files[c]);
		free(cw[c].page);
	}
	rmdir(tmpl);
	free(cw);
	free(files);
	if (stat(a.out_path, &st))
		return 1;
	printf("events %llu cpus %ld bytes %lld\n", (unsigned long long)total, a.ncpu,
	       (long long)st.st_size);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tracedat-plain-loop.c - the baseline for `imbalanced analyze` speed: the
 * least a libtracecmd program can do with a trace.dat, namely iterate every
 * record of all CPUs in time order and read the two pids of each
 * sched_switch (event and fields resolved once).  Prints
 * "records N sched_switch M".  analyze aims to stay within 2x of it.
 *
 *   bench/tracedat-plain-loop FILE
 */
#include <stdio.h>
#include <stdint.h>

#include <trace-cmd/trace-cmd.h>

struct loop {
	struct tep_handle *tep;
	int switch_id;
	struct tep_format_field *prev_pid, *next_pid;
	unsigned long long records, switches, pid_sum;
};

static int loop_record(struct tracecmd_input *h, struct tep_record *r, int cpu, void *data)
{
	struct loop *l = data;
	unsigned long long a = 0, b = 0;

	(void)h;
	(void)cpu;
	l->records++;
	if (tep_data_type(l->tep, r) != l->switch_id)
		return 0;
	l->switches++;
	tep_read_number_field(l->prev_pid, r->data, &a);
	tep_read_number_field(l->next_pid, r->data, &b);
	l->pid_sum += a + b;	/* keep the reads from being optimized away */
	return 0;
}

int main(int argc, char **argv)
{
	struct tracecmd_input *h;
	struct tep_event *ev;
	struct loop l = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: tracedat-plain-loop FILE\n");
		return 2;
	}
	tracecmd_set_loglevel(TEP_LOG_NONE);
	h = tracecmd_open(argv[1], TRACECMD_FL_LOAD_NO_PLUGINS |
			  TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
	if (!h) {
		fprintf(stderr, "tracedat-plain-loop: %s: cannot open\n", argv[1]);
		return 1;
	}
	l.tep = tracecmd_get_tep(h);
	ev = tep_find_event_by_name(l.tep, "sched", "sched_switch");
	if (!ev || !(l.prev_pid = tep_find_field(ev, "prev_pid")) ||
	    !(l.next_pid = tep_find_field(ev, "next_pid"))) {
		fprintf(stderr, "tracedat-plain-loop: %s: no sched_switch\n", argv[1]);
		tracecmd_close(h);
		return 1;
	}
	l.switch_id = ev->id;
	tracecmd_iterate_events(h, NULL, 0, loop_record, &l);
	printf("records %llu sched_switch %llu\n", l.records, l.switches);
	tracecmd_close(h);
	return 0;
}

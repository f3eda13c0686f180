// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sched_fields.c - the scheduler's trace events and their fields, and the
 * decoding of their raw records into struct imb_event (sched_fields.h),
 * for the trace.dat and the tracefs sources.
 */
#include <string.h>

#include <traceevent/event-parse.h>

#include "daemon/source/sched_fields.h"

const struct sched_desc sched_desc[SCHED__COUNT] = {
	[SCHED_SWITCH] = { "sched", "sched_switch", NULL,
		{ "prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid",
		  "next_prio" }, { NULL }, 0x7f, IMB_EV_SWITCH },
	[SCHED_WAKEUP] = { "sched", "sched_wakeup", NULL,
		{ "comm", "pid", "prio", "target_cpu" }, { NULL }, 0xf, IMB_EV_WAKEUP },
	[SCHED_WAKEUP_NEW] = { "sched", "sched_wakeup_new", NULL,
		{ "comm", "pid", "prio", "target_cpu" }, { NULL }, 0xf, IMB_EV_WAKEUP_NEW },
	[SCHED_WAKING] = { "sched", "sched_waking", NULL,
		{ "comm", "pid", "prio", "target_cpu" }, { NULL }, 0xf, IMB_EV_WAKING },
	[SCHED_MIGRATE] = { "sched", "sched_migrate_task", NULL,
		{ "comm", "pid", "prio", "orig_cpu", "dest_cpu" }, { NULL }, 0x1f,
		IMB_EV_MIGRATE },
	[SCHED_FORK] = { "sched", "sched_process_fork", NULL,
		{ "parent_comm", "parent_pid", "child_comm", "child_pid" }, { NULL }, 0xf,
		IMB_EV_FORK },
	/* a format without prio: -1 */
	[SCHED_EXIT] = { "sched", "sched_process_exit", NULL,
		{ "comm", "pid", "prio" }, { NULL }, 0x3, IMB_EV_EXIT },
	[SCHED_RUNTIME] = { "sched", "sched_stat_runtime", NULL,
		{ "pid", "runtime" }, { NULL }, 0x3, IMB_EV_RUNTIME },
	[SCHED_NUMA_MOVE] = { "sched", "sched_move_numa", NULL,
		{ "pid", "tgid", "ngid", "src_cpu", "src_nid", "dst_cpu", "dst_nid" }, { NULL },
		0x7f, IMB_EV_NUMA_MOVE },
	[SCHED_NUMA_SWAP] = { "sched", "sched_swap_numa", NULL,
		{ "src_pid", "src_tgid", "src_ngid", "src_cpu", "src_nid", "dst_pid", "dst_tgid",
		  "dst_ngid", "dst_cpu", "dst_nid" }, { NULL }, 0x3ff, IMB_EV_NUMA_SWAP },
	/*
	 * Before 5.10 sched_stick_numa used sched_move_numa's layout (pid,
	 * tgid, ngid, src_cpu, src_nid, dst_cpu, dst_nid): both are accepted,
	 * the dst task's fields being 0 in the old one.
	 */
	[SCHED_NUMA_STICK] = { "sched", "sched_stick_numa", NULL,
		{ "src_pid", "src_tgid", "src_ngid", "src_cpu", "src_nid", "dst_pid", "dst_tgid",
		  "dst_ngid", "dst_cpu", "dst_nid" }, { "pid", "tgid", "ngid" }, 0x31f,
		IMB_EV_NUMA_STICK },
	/*
	 * Out-of-tree PELT events: the kernel's averages at its own update
	 * instants.  LISA's kernel module (system "lisa") names them
	 * lisa__sched_pelt_cfs / lisa__sched_pelt_se; its older sched_tp
	 * module and Android kernels sched_pelt_cfs / sched_pelt_se.  The
	 * runnable average is there only with the module's SCHED_AVG_RBL
	 * feature, named "rbl_load" before 5.7: optional (0 when absent).
	 */
	[SCHED_PELT_CFS] = { NULL, "sched_pelt_cfs", "lisa__sched_pelt_cfs",
		{ "cpu", "path", "load", "runnable", "util", "update_time" },
		{ NULL, NULL, NULL, "rbl_load" }, 0x35, IMB_EV_PELT_CFS },
	[SCHED_PELT_SE] = { NULL, "sched_pelt_se", "lisa__sched_pelt_se",
		{ "cpu", "path", "comm", "pid", "load", "runnable", "util", "update_time" },
		{ NULL, NULL, NULL, NULL, NULL, "rbl_load" }, 0xd9, IMB_EV_PELT_SE },
};

void sched_fields_init(struct sched_fields *sf, struct tep_handle *tep, bool native)
{
	memset(sf, 0, sizeof(*sf));
	sf->tep = tep;
	sf->native = native;
	for (int i = 0; i < SCHED__COUNT; i++) {
		sf->ev[i].id = -1;
		sf->ev[i].name = sched_desc[i].name;
	}
}

struct tep_event *sched_fields_find(struct sched_fields *sf, int i)
{
	const struct sched_desc *d = &sched_desc[i];
	struct tep_event *e = tep_find_event_by_name(sf->tep, d->system, d->name);

	sf->ev[i].name = d->name;
	if (!e && d->alt_name) {
		e = tep_find_event_by_name(sf->tep, d->system, d->alt_name);
		sf->ev[i].name = d->alt_name;
	}
	return e;
}

void sched_fields_resolve(struct sched_fields *sf, int i, struct tep_event *e)
{
	const struct sched_desc *d = &sched_desc[i];
	struct sched_event *ev = &sf->ev[i];

	for (int k = 0; k < SCHED_MAX_FIELDS && d->fields[k]; k++) {
		struct tep_format_field *f = tep_find_field(e, d->fields[k]);

		if (!f && d->alt[k])
			f = tep_find_field(e, d->alt[k]);
		if (!f) {
			if ((d->required & (1u << k)) && !ev->missing)
				ev->missing = d->fields[k];
			continue;
		}
		ev->f[k].present = true;
		ev->f[k].offset = f->offset;
		ev->f[k].size = f->size;
		ev->f[k].dynamic = (f->flags & TEP_FIELD_IS_DYNAMIC) != 0;
		ev->f[k].relative = (f->flags & TEP_FIELD_IS_RELATIVE) != 0;
	}
	ev->id = e->id;
}

/* ---------------------------------------------------------------- fields */

/* One record being decoded: its event's fields and its bytes. */
struct sched_rec {
	const struct sched_fields *sf;
	const struct sched_field *f;
	const uint8_t *d;
	unsigned int size;
};

static bool rec_has(const struct sched_rec *r, int k)
{
	const struct sched_field *f = &r->f[k];

	return f->present && f->offset >= 0 && f->size > 0 &&
	       (unsigned int)f->offset + (unsigned int)f->size <= r->size;
}

/* A number: 4-byte fields are sign-extended (pids, cpus, prios are int). */
static int64_t rec_num(const struct sched_rec *r, int k)
{
	const struct sched_field *f = &r->f[k];
	const char *p;
	uint64_t v;

	if (!rec_has(r, k) || f->size > 8)
		return 0;
	p = (const char *)r->d + f->offset;
	if (r->sf->native) {
		/* the records' byte order is ours: a plain load */
		int8_t b;
		int16_t h;
		int32_t w;
		int64_t q;

		switch (f->size) {
		case 1:
			memcpy(&b, p, 1);
			return b;
		case 2:
			memcpy(&h, p, 2);
			return h;
		case 4:
			memcpy(&w, p, 4);
			return w;
		case 8:
			memcpy(&q, p, 8);
			return q;
		}
	}
	v = tep_read_number(r->sf->tep, p, f->size);
	if (f->size == 4)
		return (int32_t)(uint32_t)v;
	return (int64_t)v;
}

/* A string: fixed char[], __data_loc or __rel_loc char[]; "" when it lies past the end. */
static void rec_str(const struct sched_rec *r, int k, char *dst, size_t dlen)
{
	const struct sched_field *f = &r->f[k];
	const char *p;
	size_t len;

	memset(dst, 0, dlen);
	if (!rec_has(r, k))
		return;
	if (f->dynamic || f->relative) {
		uint32_t loc = (uint32_t)tep_read_number(r->sf->tep,
							 (const char *)r->d + f->offset, 4);
		uint32_t off = loc & 0xffff;

		if (f->relative)
			off += (uint32_t)f->offset + 4;
		len = loc >> 16;
		if (off + len > r->size)
			return;
		p = (const char *)r->d + off;
	} else {
		p = (const char *)r->d + f->offset;
		len = (size_t)f->size;
	}
	if (len >= dlen)
		len = dlen - 1;
	memcpy(dst, p, strnlen(p, len));
}

/* ---------------------------------------------------------------- events */

static void decode_switch(const struct sched_rec *r, struct imb_event *e)
{
	rec_str(r, 0, e->sw.prev_comm, IMB_COMM_LEN);
	e->sw.prev_pid = (int32_t)rec_num(r, 1);
	e->sw.prev_prio = (int32_t)rec_num(r, 2);
	e->sw.prev_state = (uint32_t)rec_num(r, 3);
	rec_str(r, 4, e->sw.next_comm, IMB_COMM_LEN);
	e->sw.next_pid = (int32_t)rec_num(r, 5);
	e->sw.next_prio = (int32_t)rec_num(r, 6);
}

/* sched_wakeup, sched_wakeup_new, sched_waking */
static void decode_wakeup(const struct sched_rec *r, struct imb_event *e)
{
	rec_str(r, 0, e->wakeup.comm, IMB_COMM_LEN);
	e->wakeup.pid = (int32_t)rec_num(r, 1);
	e->wakeup.prio = (int32_t)rec_num(r, 2);
	e->wakeup.target_cpu = (int32_t)rec_num(r, 3);
}

static void decode_migrate(const struct sched_rec *r, struct imb_event *e)
{
	rec_str(r, 0, e->migrate.comm, IMB_COMM_LEN);
	e->migrate.pid = (int32_t)rec_num(r, 1);
	e->migrate.prio = (int32_t)rec_num(r, 2);
	e->migrate.orig_cpu = (int32_t)rec_num(r, 3);
	e->migrate.dest_cpu = (int32_t)rec_num(r, 4);
}

/* sched_process_fork and _exit: parent_comm is not kept */
static void decode_fork_exit(const struct sched_rec *r, int i, struct imb_event *e)
{
	if (i == SCHED_FORK) {
		e->fork.parent_pid = (int32_t)rec_num(r, 1);
		rec_str(r, 2, e->fork.child_comm, IMB_COMM_LEN);
		e->fork.child_pid = (int32_t)rec_num(r, 3);
		return;
	}
	rec_str(r, 0, e->exit.comm, IMB_COMM_LEN);
	e->exit.pid = (int32_t)rec_num(r, 1);
	e->exit.prio = r->f[2].present ? (int32_t)rec_num(r, 2) : -1;
}

/* sched_move_numa has one task; sched_swap_numa and _stick_numa two */
static void decode_numa(const struct sched_rec *r, int i, struct imb_event *e)
{
	e->numa.src_pid = (int32_t)rec_num(r, 0);
	e->numa.src_tgid = (int32_t)rec_num(r, 1);
	e->numa.src_ngid = (int32_t)rec_num(r, 2);
	e->numa.src_cpu = (int32_t)rec_num(r, 3);
	e->numa.src_nid = (int32_t)rec_num(r, 4);
	if (i == SCHED_NUMA_MOVE) {
		e->numa.dst_cpu = (int32_t)rec_num(r, 5);
		e->numa.dst_nid = (int32_t)rec_num(r, 6);
		return;
	}
	e->numa.dst_pid = (int32_t)rec_num(r, 5);
	e->numa.dst_tgid = (int32_t)rec_num(r, 6);
	e->numa.dst_ngid = (int32_t)rec_num(r, 7);
	e->numa.dst_cpu = (int32_t)rec_num(r, 8);
	e->numa.dst_nid = (int32_t)rec_num(r, 9);
}

/* the PELT events name their CPU; a cfs_rq's path says whether it is the root */
static void decode_pelt(const struct sched_rec *r, int i, struct imb_event *e)
{
	e->cpu = (int32_t)rec_num(r, 0);
	if (i == SCHED_PELT_CFS) {
		char path[8];

		rec_str(r, 1, path, sizeof(path));
		e->pelt_cfs.root = !strcmp(path, "/");
		e->pelt_cfs.load_avg = (uint64_t)rec_num(r, 2);
		e->pelt_cfs.runnable_avg = (uint64_t)rec_num(r, 3);
		e->pelt_cfs.util_avg = (uint64_t)rec_num(r, 4);
		e->pelt_cfs.last_update_time = (uint64_t)rec_num(r, 5);
		return;
	}
	e->pelt_se.pid = (int32_t)rec_num(r, 3);
	e->pelt_se.load_avg = (uint64_t)rec_num(r, 4);
	e->pelt_se.runnable_avg = (uint64_t)rec_num(r, 5);
	e->pelt_se.util_avg = (uint64_t)rec_num(r, 6);
	e->pelt_se.last_update_time = (uint64_t)rec_num(r, 7);
}

void sched_fields_decode(const struct sched_fields *sf, int i, const void *data,
			 unsigned int size, struct imb_event *e)
{
	const struct sched_rec r = { .sf = sf, .f = sf->ev[i].f, .d = data, .size = size };

	e->kind = (uint16_t)sched_desc[i].kind;
	switch (i) {
	case SCHED_SWITCH:
		decode_switch(&r, e);
		break;
	case SCHED_WAKEUP:
	case SCHED_WAKEUP_NEW:
	case SCHED_WAKING:
		decode_wakeup(&r, e);
		break;
	case SCHED_MIGRATE:
		decode_migrate(&r, e);
		break;
	case SCHED_FORK:
	case SCHED_EXIT:
		decode_fork_exit(&r, i, e);
		break;
	case SCHED_RUNTIME:
		e->runtime.pid = (int32_t)rec_num(&r, 0);
		e->runtime.runtime_ns = (uint64_t)rec_num(&r, 1);
		break;
	case SCHED_NUMA_MOVE:
	case SCHED_NUMA_SWAP:
	case SCHED_NUMA_STICK:
		decode_numa(&r, i, e);
		break;
	case SCHED_PELT_CFS:
	case SCHED_PELT_SE:
		decode_pelt(&r, i, e);
		break;
	}
}

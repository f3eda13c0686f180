// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * event_text.c - format and parse the text event format (event_text.h).
 *
 * One table lists, per event kind, its keys with their type and place in
 * struct imb_event; the formatter and the parser both walk it, so they
 * cannot disagree.  The parser allocates nothing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "event_text.h"

/* F_PRIO: an int32 priority whose absence means unknown (-1), so 0 (the stop class) is written */
enum ftype { F_I32, F_U32, F_U64, F_I64, F_U8, F_COMM, F_STATE, F_PRIO };

struct field {
	const char *key;
	enum ftype type;
	size_t off;
};

#define EV(m) offsetof(struct imb_event, m)
#define MAX_FIELDS 16

static const struct field f_switch[] = {
	{ "prev_pid", F_I32, EV(sw.prev_pid) },
	{ "prev_tgid", F_I32, EV(sw.prev_tgid) },
	{ "prev_prio", F_PRIO, EV(sw.prev_prio) },
	{ "prev_state", F_STATE, EV(sw.prev_state) },
	{ "prev_comm", F_COMM, EV(sw.prev_comm) },
	{ "next_pid", F_I32, EV(sw.next_pid) },
	{ "next_tgid", F_I32, EV(sw.next_tgid) },
	{ "next_prio", F_PRIO, EV(sw.next_prio) },
	{ "next_comm", F_COMM, EV(sw.next_comm) },
	{ "next_cgroup", F_U64, EV(sw.next_cgroup) },
	{ "next_group", F_U64, EV(sw.next_group) },
	{ "prev_delayed", F_U32, EV(sw.prev_delayed) },
	{ "prev_sum_exec", F_U64, EV(sw.prev_sum_exec_ns) },
	{ "next_sum_exec", F_U64, EV(sw.next_sum_exec_ns) },
	{ NULL, 0, 0 },
};

static const struct field f_wakeup[] = {
	{ "pid", F_I32, EV(wakeup.pid) },
	{ "tgid", F_I32, EV(wakeup.tgid) },
	{ "prio", F_PRIO, EV(wakeup.prio) },
	{ "target_cpu", F_I32, EV(wakeup.target_cpu) },
	{ "comm", F_COMM, EV(wakeup.comm) },
	{ "delayed", F_U32, EV(wakeup.delayed) },
	{ NULL, 0, 0 },
};

static const struct field f_migrate[] = {
	{ "pid", F_I32, EV(migrate.pid) },
	{ "prio", F_PRIO, EV(migrate.prio) },
	{ "orig_cpu", F_I32, EV(migrate.orig_cpu) },
	{ "dest_cpu", F_I32, EV(migrate.dest_cpu) },
	{ "comm", F_COMM, EV(migrate.comm) },
	{ NULL, 0, 0 },
};

static const struct field f_fork[] = {
	{ "parent_pid", F_I32, EV(fork.parent_pid) },
	{ "child_pid", F_I32, EV(fork.child_pid) },
	{ "child_tgid", F_I32, EV(fork.child_tgid) },
	{ "child_comm", F_COMM, EV(fork.child_comm) },
	{ NULL, 0, 0 },
};

static const struct field f_exit[] = {
	{ "pid", F_I32, EV(exit.pid) },
	{ "prio", F_PRIO, EV(exit.prio) },
	{ "comm", F_COMM, EV(exit.comm) },
	{ NULL, 0, 0 },
};

static const struct field f_runtime[] = {
	{ "pid", F_I32, EV(runtime.pid) },
	{ "runtime_ns", F_U64, EV(runtime.runtime_ns) },
	{ "timer", F_I32, EV(runtime.timer) },
	{ "sum_exec", F_U64, EV(runtime.sum_exec_ns) },
	{ NULL, 0, 0 },
};

static const struct field f_pelt_cfs[] = {
	{ "cgroup_id", F_U64, EV(pelt_cfs.cgroup_id) },
	{ "root", F_U8, EV(pelt_cfs.root) },
	{ "nr_queued", F_U32, EV(pelt_cfs.nr_queued) },
	{ "h_nr_queued", F_U32, EV(pelt_cfs.h_nr_queued) },
	{ "h_nr_runnable", F_U32, EV(pelt_cfs.h_nr_runnable) },
	{ "last_update_time", F_U64, EV(pelt_cfs.last_update_time) },
	{ "period_contrib", F_U32, EV(pelt_cfs.period_contrib) },
	{ "load_sum", F_U64, EV(pelt_cfs.load_sum) },
	{ "runnable_sum", F_U64, EV(pelt_cfs.runnable_sum) },
	{ "util_sum", F_U32, EV(pelt_cfs.util_sum) },
	{ "load_avg", F_U64, EV(pelt_cfs.load_avg) },
	{ "runnable_avg", F_U64, EV(pelt_cfs.runnable_avg) },
	{ "util_avg", F_U64, EV(pelt_cfs.util_avg) },
	{ "parent_id", F_U64, EV(pelt_cfs.parent_id) },
	{ NULL, 0, 0 },
};

static const struct field f_pelt_se[] = {
	{ "pid", F_I32, EV(pelt_se.pid) },
	{ "tgid", F_I32, EV(pelt_se.tgid) },
	{ "cgroup_id", F_U64, EV(pelt_se.cgroup_id) },
	{ "last_update_time", F_U64, EV(pelt_se.last_update_time) },
	{ "period_contrib", F_U32, EV(pelt_se.period_contrib) },
	{ "load_sum", F_U64, EV(pelt_se.load_sum) },
	{ "runnable_sum", F_U64, EV(pelt_se.runnable_sum) },
	{ "util_sum", F_U32, EV(pelt_se.util_sum) },
	{ "load_avg", F_U64, EV(pelt_se.load_avg) },
	{ "runnable_avg", F_U64, EV(pelt_se.runnable_avg) },
	{ "util_avg", F_U64, EV(pelt_se.util_avg) },
	{ "parent_id", F_U64, EV(pelt_se.parent_id) },
	{ NULL, 0, 0 },
};

static const struct field f_numa[] = {
	{ "src_pid", F_I32, EV(numa.src_pid) },
	{ "src_tgid", F_I32, EV(numa.src_tgid) },
	{ "src_ngid", F_I32, EV(numa.src_ngid) },
	{ "src_cpu", F_I32, EV(numa.src_cpu) },
	{ "src_nid", F_I32, EV(numa.src_nid) },
	{ "dst_pid", F_I32, EV(numa.dst_pid) },
	{ "dst_tgid", F_I32, EV(numa.dst_tgid) },
	{ "dst_ngid", F_I32, EV(numa.dst_ngid) },
	{ "dst_cpu", F_I32, EV(numa.dst_cpu) },
	{ "dst_nid", F_I32, EV(numa.dst_nid) },
	{ NULL, 0, 0 },
};

static const struct field f_vruntime[] = {
	{ "vruntime_ref", F_U64, EV(vruntime.vruntime_ref) },
	{ "avg_vruntime", F_I64, EV(vruntime.avg_vruntime) },
	{ "is_zero_vruntime", F_U8, EV(vruntime.is_zero_vruntime) },
	{ NULL, 0, 0 },
};

static const struct field f_lost[] = {
	{ "count", F_U64, EV(lost.count) },
	{ "skipped", F_U32, EV(lost.skipped) },
	{ "marked", F_U32, EV(lost.marked) },
	{ NULL, 0, 0 },
};

static const struct field *const kind_fields[IMB_EV__COUNT] = {
	[IMB_EV_SWITCH] = f_switch,
	[IMB_EV_WAKEUP] = f_wakeup,
	[IMB_EV_WAKEUP_NEW] = f_wakeup,
	[IMB_EV_WAKING] = f_wakeup,
	[IMB_EV_MIGRATE] = f_migrate,
	[IMB_EV_FORK] = f_fork,
	[IMB_EV_EXIT] = f_exit,
	[IMB_EV_RUNTIME] = f_runtime,
	[IMB_EV_PELT_CFS] = f_pelt_cfs,
	[IMB_EV_PELT_SE] = f_pelt_se,
	[IMB_EV_NUMA_MOVE] = f_numa,
	[IMB_EV_NUMA_SWAP] = f_numa,
	[IMB_EV_NUMA_STICK] = f_numa,
	[IMB_EV_VRUNTIME] = f_vruntime,
	[IMB_EV_LOST] = f_lost,
};

/* prev_state letters, kernel TASK_REPORT encoding */
static const struct {
	const char *name;
	uint32_t value;
} states[] = {
	{ "R", 0x0 }, { "S", 0x1 }, { "D", 0x2 }, { "T", 0x4 }, { "t", 0x8 },
	{ "X", 0x10 }, { "Z", 0x20 }, { "P", 0x40 }, { "I", 0x80 }, { "R+", 0x100 },
};

const char *event_text_header(void)
{
	return "# imbalanced events v1: TS KIND cpu=N key=value ... (doc/event-format.md)";
}

/* Appending writer that remembers overflow. */
struct out {
	char *buf;
	size_t len, pos;
	bool full;
};

static void out_printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->full)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->pos, o->len - o->pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= o->len - o->pos)
		o->full = true;
	else
		o->pos += (size_t)n;
}

static bool comm_needs_escape(unsigned char c)
{
	return c <= 0x20 || c >= 0x7f || c == '=' || c == '%' || c == '#';
}

static void out_comm(struct out *o, const char *key, const char *comm)
{
	size_t n = strnlen(comm, IMB_COMM_LEN);

	if (!n)
		return;
	out_printf(o, " %s=", key);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)comm[i];

		if (comm_needs_escape(c))
			out_printf(o, "%%%02X", c);
		else
			out_printf(o, "%c", c);
	}
}

int event_text_format(const struct imb_event *ev, char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	const struct field *f;

	if (ev->kind == IMB_EV_NONE || ev->kind >= IMB_EV__COUNT)
		return -EINVAL;
	if (!len)
		return -ENOSPC;
	buf[0] = 0;
	out_printf(&o, "%" PRIu64 " %s cpu=%d", ev->ts_ns, imb_ev_kind_name(ev->kind), ev->cpu);
	if (ev->flags & IMB_EVF_RQ_CLOCKS)
		out_printf(&o, " clock_task=%" PRIu64 " clock_pelt=%" PRIu64, ev->clock_task_ns,
			   ev->clock_pelt_ns);
	if (ev->flags & IMB_EVF_GAP)
		out_printf(&o, " gap=1");
	for (f = kind_fields[ev->kind]; f->key; f++) {
		const void *p = (const char *)ev + f->off;

		switch (f->type) {
		case F_I32: {
			int32_t v;

			memcpy(&v, p, sizeof(v));
			if (v)
				out_printf(&o, " %s=%" PRId32, f->key, v);
			break;
		}
		case F_PRIO: {
			int32_t v;

			memcpy(&v, p, sizeof(v));
			if (v != -1)
				out_printf(&o, " %s=%" PRId32, f->key, v);
			break;
		}
		case F_U32: {
			uint32_t v;

			memcpy(&v, p, sizeof(v));
			if (v)
				out_printf(&o, " %s=%" PRIu32, f->key, v);
			break;
		}
		case F_U64: {
			uint64_t v;

			memcpy(&v, p, sizeof(v));
			if (v)
				out_printf(&o, " %s=%" PRIu64, f->key, v);
			break;
		}
		case F_I64: {
			int64_t v;

			memcpy(&v, p, sizeof(v));
			if (v)
				out_printf(&o, " %s=%" PRId64, f->key, v);
			break;
		}
		case F_U8: {
			uint8_t v = *(const uint8_t *)p;

			if (v)
				out_printf(&o, " %s=%u", f->key, v);
			break;
		}
		case F_COMM:
			out_comm(&o, f->key, (const char *)p);
			break;
		case F_STATE: {
			uint32_t v;
			size_t i;

			memcpy(&v, p, sizeof(v));
			for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
				if (states[i].value == v)
					break;
			/* R is written too: a switch without prev_state reads as R */
			if (i < sizeof(states) / sizeof(states[0]))
				out_printf(&o, " %s=%s", f->key, states[i].name);
			else
				out_printf(&o, " %s=%" PRIu32, f->key, v);
			break;
		}
		}
	}
	return o.full ? -ENOSPC : (int)o.pos;
}

static int perr(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Append " (column N)" to the reason already in @err. */
static int perr_col(char *err, size_t errlen, size_t col)
{
	size_t n;

	if (err && errlen) {
		n = strnlen(err, errlen);
		if (n < errlen)
			snprintf(err + n, errlen - n, " (column %zu)", col);
	}
	return -EINVAL;
}

/* Parse an integer token [s, e) within [min, max] (signed when min < 0). */
static bool parse_int(const char *s, const char *e, int64_t min, uint64_t max, uint64_t *out)
{
	bool neg = false;
	uint64_t v = 0;

	if (s < e && *s == '-') {
		if (min >= 0)
			return false;
		neg = true;
		s++;
	}
	if (s == e || e - s > 20)
		return false;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (neg) {
		if (v > (uint64_t)(-(min + 1)) + 1)
			return false;
		*out = (uint64_t)(-(int64_t)(v - 1) - 1);
		return true;
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool parse_comm(const char *s, const char *e, char *dst)
{
	size_t n = 0;

	memset(dst, 0, IMB_COMM_LEN);
	while (s < e) {
		int c = (unsigned char)*s;

		if (c == '%') {
			int hi, lo;

			if (e - s < 3 || (hi = hexval(s[1])) < 0 || (lo = hexval(s[2])) < 0)
				return false;
			c = hi * 16 + lo;
			s += 3;
		} else {
			s++;
		}
		if (!c || n >= IMB_COMM_LEN - 1)
			return false;
		dst[n++] = (char)c;
	}
	return true;
}

static int set_field(struct imb_event *ev, const struct field *f, const char *v, const char *ve,
		     char *err, size_t errlen)
{
	void *p = (char *)ev + f->off;
	const char *kind = imb_ev_kind_name(ev->kind);
	uint64_t x;

	switch (f->type) {
	case F_I32:
	case F_PRIO: {
		int32_t y;

		if (!parse_int(v, ve, INT32_MIN, INT32_MAX, &x))
			return perr(err, errlen, "%s: field %s: not a 32-bit integer", kind, f->key);
		y = (int32_t)x;
		memcpy(p, &y, sizeof(y));
		return 0;
	}
	case F_U32: {
		uint32_t y;

		if (!parse_int(v, ve, 0, UINT32_MAX, &x))
			return perr(err, errlen, "%s: field %s: not a number from 0 to %u", kind,
				   f->key, UINT32_MAX);
		y = (uint32_t)x;
		memcpy(p, &y, sizeof(y));
		return 0;
	}
	case F_U64:
		if (!parse_int(v, ve, 0, UINT64_MAX, &x))
			return perr(err, errlen, "%s: field %s: not an unsigned 64-bit number", kind,
				   f->key);
		memcpy(p, &x, sizeof(x));
		return 0;
	case F_I64: {
		int64_t y;

		if (!parse_int(v, ve, INT64_MIN, INT64_MAX, &x))
			return perr(err, errlen, "%s: field %s: not a 64-bit integer", kind, f->key);
		y = (int64_t)x;
		memcpy(p, &y, sizeof(y));
		return 0;
	}
	case F_U8:
		if (!parse_int(v, ve, 0, 255, &x))
			return perr(err, errlen, "%s: field %s: not a number from 0 to 255", kind,
				   f->key);
		*(uint8_t *)p = (uint8_t)x;
		return 0;
	case F_COMM:
		if (!parse_comm(v, ve, (char *)p))
			return perr(err, errlen, "%s: field %s: bad task name (at most %d bytes, "
				   "%%XX escapes)", kind, f->key, IMB_COMM_LEN - 1);
		return 0;
	case F_STATE: {
		uint32_t y;

		for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
			if (strlen(states[i].name) == (size_t)(ve - v) &&
			    !memcmp(states[i].name, v, (size_t)(ve - v))) {
				memcpy(p, &states[i].value, sizeof(uint32_t));
				return 0;
			}
		}
		if (!parse_int(v, ve, 0, UINT32_MAX, &x))
			return perr(err, errlen, "%s: field %s: want R, R+, S, D, T, t, X, Z, P, I "
				   "or a number", kind, f->key);
		y = (uint32_t)x;
		memcpy(p, &y, sizeof(y));
		return 0;
	}
	}
	return -EINVAL;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static const char *skip_space(const char *s, const char *e)
{
	while (s < e && is_space(*s))
		s++;
	return s;
}

static const char *skip_word(const char *s, const char *e)
{
	while (s < e && !is_space(*s))
		s++;
	return s;
}

/* One line's event as parsed so far, and what its fields are. */
struct line_parse {
	struct imb_event ev;
	const struct field *fields;	/* the kind's keys */
	const char *kname;
	uint32_t seen;			/* bit i: fields[i]; 29 gap, 30 clock_task, 31 clock_pelt */
	bool have_cpu;
	char *err;
	size_t errlen;
};

/*
 * The timestamp and the kind, the first two words from @s; *@end is where
 * the kind ends.  0 or -EINVAL.
 */
static int parse_head(struct line_parse *p, const char *line, const char *s, const char *e,
		      const char **end)
{
	const char *t = skip_word(s, e);
	unsigned int kind;
	uint64_t x;

	if (!parse_int(s, t, 0, UINT64_MAX, &x))
		return perr(p->err, p->errlen, "column 1: timestamp: not an unsigned number of ns");
	p->ev.ts_ns = x;
	s = skip_space(t, e);
	t = skip_word(s, e);
	if (s == t)
		return perr(p->err, p->errlen, "column %zu: missing event kind",
			    (size_t)(s - line) + 1);
	kind = imb_ev_kind_parse(s, (size_t)(t - s));
	if (kind == IMB_EV_NONE)
		return perr(p->err, p->errlen, "column %zu: unknown event kind '%.*s'",
			    (size_t)(s - line) + 1, (int)(t - s > 32 ? 32 : t - s), s);
	p->ev.kind = (uint16_t)kind;
	p->fields = kind_fields[kind];
	for (const struct field *f = p->fields; f->key; f++)
		if (f->type == F_PRIO) {
			int32_t unknown = -1;

			memcpy((char *)&p->ev + f->off, &unknown, sizeof(unknown));
		}
	p->kname = imb_ev_kind_name(kind);
	*end = t;
	return 0;
}

/* cpu=V, which every kind has, at column @col; 0 or -EINVAL. */
static int parse_cpu(struct line_parse *p, const char *v, const char *ve, size_t col)
{
	uint64_t x;

	if (p->have_cpu) {
		perr(p->err, p->errlen, "%s: field cpu given twice", p->kname);
		return perr_col(p->err, p->errlen, col);
	}
	if (!parse_int(v, ve, 0, IMB_MAX_CPUS - 1, &x)) {
		perr(p->err, p->errlen, "%s: field cpu: not a CPU number (0 to %d)", p->kname,
		     IMB_MAX_CPUS - 1);
		return perr_col(p->err, p->errlen, col);
	}
	p->ev.cpu = (int32_t)x;
	p->have_cpu = true;
	return 0;
}

/* Key @k (@klen bytes), bit @bit of the line's seen keys, at most once a line; 0 or -EINVAL. */
static int seen_once(struct line_parse *p, uint32_t bit, const char *k, size_t klen, size_t col)
{
	if (p->seen & bit) {
		perr(p->err, p->errlen, "%s: field %.*s given twice", p->kname, (int)klen, k);
		return perr_col(p->err, p->errlen, col);
	}
	p->seen |= bit;
	return 0;
}

/* clock_task=V or clock_pelt=V (key @k), which any kind may carry; 0 or -EINVAL. */
static int parse_rq_clock(struct line_parse *p, const char *k, size_t klen, const char *v,
			  const char *ve, size_t col)
{
	uint32_t bit = k[6] == 't' ? 1u << 30 : 1u << 31;
	uint64_t x;

	if (seen_once(p, bit, k, klen, col))
		return -EINVAL;
	if (!parse_int(v, ve, 0, UINT64_MAX, &x)) {
		perr(p->err, p->errlen, "%s: field %.*s: not an unsigned 64-bit number", p->kname,
		     (int)klen, k);
		return perr_col(p->err, p->errlen, col);
	}
	if (bit == 1u << 30)
		p->ev.clock_task_ns = x;
	else
		p->ev.clock_pelt_ns = x;
	p->ev.flags |= IMB_EVF_RQ_CLOCKS;
	return 0;
}

/* gap=1 (any kind): events of this CPU were lost just before; 0 or -EINVAL. */
static int parse_gap(struct line_parse *p, const char *v, const char *ve, size_t col)
{
	uint64_t x;

	if (seen_once(p, 1u << 29, "gap", 3, col))
		return -EINVAL;
	if (!parse_int(v, ve, 0, 1, &x)) {
		perr(p->err, p->errlen, "%s: field gap: not 0 or 1", p->kname);
		return perr_col(p->err, p->errlen, col);
	}
	if (x)
		p->ev.flags |= IMB_EVF_GAP;
	return 0;
}

/* A field of the kind's table (key @k), each at most once; 0 or -EINVAL. */
static int parse_kind_field(struct line_parse *p, const char *k, size_t klen, const char *v,
			    const char *ve, size_t col)
{
	const struct field *fields = p->fields;
	int i;

	for (i = 0; fields[i].key; i++)
		if (strlen(fields[i].key) == klen && !memcmp(fields[i].key, k, klen))
			break;
	if (!fields[i].key) {
		perr(p->err, p->errlen, "%s: unknown field '%.*s'", p->kname,
		     (int)(klen > 32 ? 32 : klen), k);
		return perr_col(p->err, p->errlen, col);
	}
	if (seen_once(p, 1u << i, k, klen, col))
		return -EINVAL;
	if (set_field(&p->ev, &fields[i], v, ve, p->err, p->errlen))
		return perr_col(p->err, p->errlen, col);
	return 0;
}

/* One key=value word [@s, @t) of @line; 0 or -EINVAL. */
static int parse_pair(struct line_parse *p, const char *line, const char *s, const char *t)
{
	size_t col = (size_t)(s - line) + 1, klen;
	const char *eq = memchr(s, '=', (size_t)(t - s));

	if (!eq)
		return perr(p->err, p->errlen, "column %zu: %s: '%.*s' is not key=value", col,
			    p->kname, (int)(t - s > 32 ? 32 : t - s), s);
	klen = (size_t)(eq - s);
	if (klen == 3 && !memcmp(s, "cpu", 3))
		return parse_cpu(p, eq + 1, t, col);
	if (klen == 10 && (!memcmp(s, "clock_task", 10) || !memcmp(s, "clock_pelt", 10)))
		return parse_rq_clock(p, s, klen, eq + 1, t, col);
	if (klen == 3 && !memcmp(s, "gap", 3))
		return parse_gap(p, eq + 1, t, col);
	return parse_kind_field(p, s, klen, eq + 1, t, col);
}

int event_text_parse(const char *line, size_t len, struct imb_event *ev, char *err,
		     size_t errlen)
{
	const char *s, *e = line + len, *t = line;	/* t: set by parse_head() */
	struct line_parse p;
	int rc;

	if (len > EVENT_TEXT_MAX_LINE)
		return perr(err, errlen, "line longer than %d bytes", EVENT_TEXT_MAX_LINE);
	s = skip_space(line, e);
	if (s == e || *s == '#')
		return 1;
	if (memchr(line, 0, len))
		return perr(err, errlen, "NUL byte in the line");

	memset(&p, 0, sizeof(p));
	p.err = err;
	p.errlen = errlen;
	rc = parse_head(&p, line, s, e, &t);
	if (rc)
		return rc;
	for (;;) {
		s = skip_space(t, e);
		if (s == e || *s == '#')
			break;
		t = skip_word(s, e);
		rc = parse_pair(&p, line, s, t);
		if (rc)
			return rc;
	}
	if (!p.have_cpu)
		return perr(err, errlen, "%s: missing field cpu", p.kname);
	*ev = p.ev;
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * group_rows.c - the task-group listing: built from the model, written as
 * JSON (group_rows.h).
 *
 * The model keeps one entry per (CPU, group) in no order; the listing
 * sorts them by (group, CPU) and folds each group's entries under one row,
 * its path looked up once.  Paths go into one arena so that the block is
 * three allocations however many groups there are.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sink/group_rows.h"

static int model_group_cmp(const void *a, const void *b)
{
	const struct model_group *x = *(const struct model_group *const *)a;
	const struct model_group *y = *(const struct model_group *const *)b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static void cpu_row_fill(struct group_row_cpu *c, const struct model_group *g)
{
	memset(c, 0, sizeof(*c));
	c->cpu = g->cpu;
	c->avg[MODEL_SIG_UTIL] = g->cfs.avg.util_avg;
	c->avg[MODEL_SIG_RUNNABLE] = g->cfs.avg.runnable_avg;
	c->avg[MODEL_SIG_LOAD] = g->cfs.avg.load_avg;
	for (int s = 0; s < MODEL_SIG__COUNT; s++) {
		c->kernel_avg[s] = g->k_ns ? g->k_avg[s] : IMB_UNKNOWN;
		c->err[s] = g->k_err[s];
	}
	c->compared = g->k_compared;
	c->nr_tasks = g->nr_tasks;
	c->nr_queued = g->nr_queued;
	c->kernel_h_nr_queued = g->k_h_nr_queued;
	c->last_ns = g->last_ns;
	c->kernel_ns = g->k_ns;
}

/* Append @s to the arena; returns its offset + 1, 0 on ENOMEM. */
static size_t arena_add(char **arena, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s) + 1, off = *len;

	if (*len + n > *cap) {
		size_t c = *cap ? *cap : 1024;
		char *a;

		while (c < *len + n)
			c *= 2;
		a = realloc(*arena, c);
		if (!a)
			return 0;
		*arena = a;
		*cap = c;
	}
	memcpy(*arena + off, s, n);
	*len += n;
	return off + 1;
}

struct group_rows *group_rows_build(const struct model *m, uint64_t t_ns, group_rows_path_fn path,
				    const void *ctx)
{
	struct group_rows *r = calloc(1, sizeof(*r));
	const struct model_group **order = NULL;
	size_t *path_off = NULL, alen = 0, acap = 0, n = m->nr_groups;

	if (!r)
		goto oom;
	r->refs = 1;
	r->t_ns = t_ns;
	r->evicted = m->groups_evicted;
	r->overflow = m->groups_overflow;
	r->cpus = calloc(n ? n : 1, sizeof(*r->cpus));
	r->groups = calloc(n ? n : 1, sizeof(*r->groups));
	order = malloc((n ? n : 1) * sizeof(*order));
	path_off = calloc(n ? n : 1, sizeof(*path_off));
	if (!r->cpus || !r->groups || !order || !path_off)
		goto oom;
	for (size_t i = 0; i < n; i++)
		order[i] = &m->groups[i];
	qsort(order, n, sizeof(*order), model_group_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct model_group *g = order[i];
		struct group_row *row;

		if (!r->nr_groups || r->groups[r->nr_groups - 1].id != g->id) {
			char buf[1536];
			bool trunc = false;

			row = &r->groups[r->nr_groups++];
			row->id = g->id;
			row->parent_id = g->parent_id ? g->parent_id : IMB_TG_ROOT;
			row->first = r->nr_cpu_rows;
			if (path && !path(ctx, g->id, buf, sizeof(buf), &trunc)) {
				path_off[r->nr_groups - 1] = arena_add(&r->arena, &alen, &acap, buf);
				if (!path_off[r->nr_groups - 1])
					goto oom;
				row->path_truncated = trunc;
			}
		}
		row = &r->groups[r->nr_groups - 1];
		cpu_row_fill(&r->cpus[r->nr_cpu_rows++], g);
		row->nr_cpus++;
	}
	/* the arena has stopped moving: point the rows into it */
	for (size_t i = 0; i < r->nr_groups; i++)
		r->groups[i].path = path_off[i] ? r->arena + path_off[i] - 1 : NULL;
	free(order);
	free(path_off);
	return r;
oom:
	free(order);
	free(path_off);
	group_rows_put(r);
	errno = ENOMEM;
	return NULL;
}

const struct group_rows *group_rows_get(const struct group_rows *r)
{
	if (r)
		__atomic_add_fetch(&((struct group_rows *)r)->refs, 1, __ATOMIC_RELAXED);
	return r;
}

void group_rows_put(const struct group_rows *cr)
{
	struct group_rows *r = (struct group_rows *)cr;

	if (!r || __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(r->cpus);
	free(r->groups);
	free(r->arena);
	free(r);
}

/* "root", "cgroup:<id>", "autogroup:<id>" */
static void group_key(char *buf, size_t len, uint64_t id)
{
	if (id == IMB_TG_ROOT)
		snprintf(buf, len, "root");
	else if (id & IMB_TG_AUTOGROUP)
		snprintf(buf, len, "autogroup:%" PRIu64, (uint64_t)(id & ~IMB_TG_AUTOGROUP));
	else
		snprintf(buf, len, "cgroup:%" PRIu64, id);
}

static const char *const sig_key[MODEL_SIG__COUNT][3] = {
	[MODEL_SIG_UTIL] = { "util_avg", "kernel_util_avg", "util_avg_error" },
	[MODEL_SIG_RUNNABLE] = { "runnable_avg", "kernel_runnable_avg", "runnable_avg_error" },
	[MODEL_SIG_LOAD] = { "load_avg", "kernel_load_avg", "load_avg_error" },
};

static void cpu_json(struct json *j, const struct group_row_cpu *c)
{
	bool k = c->kernel_ns != 0;

	json_object_begin(j);
	json_kv_int(j, "cpu", c->cpu);
	for (int s = 0; s < MODEL_SIG__COUNT; s++) {
		json_kv_uint(j, sig_key[s][0], c->avg[s]);
		if (k)
			json_kv_uint(j, sig_key[s][1], c->kernel_avg[s]);
		else
			json_kv_null(j, sig_key[s][1]);
		/* the error once a kernel record was compared (the first seeds the engine) */
		if (c->compared)
			json_kv_int(j, sig_key[s][2], c->err[s]);
		else
			json_kv_null(j, sig_key[s][2]);
	}
	json_kv_uint(j, "kernel_samples", c->compared);
	json_kv_uint(j, "nr_tasks", c->nr_tasks);
	json_kv_uint(j, "nr_queued", c->nr_queued);
	if (k)
		json_kv_uint(j, "kernel_h_nr_queued", c->kernel_h_nr_queued);
	else
		json_kv_null(j, "kernel_h_nr_queued");
	json_kv_uint(j, "last_update_ns", c->last_ns);
	if (k)
		json_kv_uint(j, "kernel_update_ns", c->kernel_ns);
	else
		json_kv_null(j, "kernel_update_ns");
	json_object_end(j);
}

void group_rows_json(struct json *j, const struct group_rows *r)
{
	json_array_begin(j);
	for (size_t i = 0; r && i < r->nr_groups; i++) {
		const struct group_row *g = &r->groups[i];
		char key[48];
		uint64_t last = 0;

		json_object_begin(j);
		group_key(key, sizeof(key), g->id);
		json_kv_str(j, "key", key);
		json_kv_str(j, "kind", (g->id & IMB_TG_AUTOGROUP) ? "autogroup" : "cgroup");
		json_kv_uint(j, "id", (uint64_t)(g->id & ~IMB_TG_AUTOGROUP));
		if (g->path)
			json_kv_str(j, "path", g->path);
		else
			json_kv_null(j, "path");
		json_kv_bool(j, "path_truncated", g->path_truncated);
		group_key(key, sizeof(key), g->parent_id);
		json_kv_str(j, "parent", key);
		json_key(j, "cpus");
		json_array_begin(j);
		for (size_t k = 0; k < g->nr_cpus; k++) {
			const struct group_row_cpu *c = &r->cpus[g->first + k];

			cpu_json(j, c);
			if (c->last_ns > last)
				last = c->last_ns;
			if (c->kernel_ns > last)
				last = c->kernel_ns;
		}
		json_array_end(j);
		json_kv_uint(j, "last_update_ns", last);
		json_object_end(j);
	}
	json_array_end(j);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * window_json.c - the window structs as JSON, with the field names of
 * doc/interfaces.md, shared by the HTTP API and the analyze report so the two
 * cannot drift apart (window_json.h).
 */
#include <string.h>

#include "daemon/sink/json.h"
#include "daemon/sink/window_json.h"


static void json_known(struct json *j, const char *key, uint64_t v)
{
	if (v == IMB_UNKNOWN)
		json_kv_null(j, key);
	else
		json_kv_uint(j, key, v);
}

void window_json_cpu_fields(struct json *j, const struct imb_cpu_sample *c)
{
	json_kv_int(j, "cpu", c->cpu);
	json_kv_uint(j, "util_avg", c->util_avg);
	json_kv_uint(j, "runnable_avg", c->runnable_avg);
	json_kv_uint(j, "load_avg", c->load_avg);
	json_kv_double(j, "overloaded_fraction", c->overloaded_fraction);
	json_kv_str(j, "group_type", imb_group_type_name(c->group_type));
	json_kv_str(j, "group_type_scaled", imb_group_type_name(c->group_type_scaled));
	json_kv_uint(j, "nr_running", c->nr_running);
	json_kv_uint(j, "capacity", c->capacity);
	json_known(j, "kernel_util_avg", c->kernel_util_avg);
	json_known(j, "kernel_runnable_avg", c->kernel_runnable_avg);
	json_known(j, "kernel_load_avg", c->kernel_load_avg);
	json_kv_uint(j, "vruntime", c->vruntime);
	json_kv_double(j, "vruntime_rate", c->vruntime_rate);
	json_kv_uint(j, "busy_ns", c->busy_ns);
	json_kv_uint(j, "idle_with_waiters_ns", c->idle_with_waiters_ns);
}

void window_json_cpu(struct json *j, const struct imb_cpu_sample *c)
{
	json_object_begin(j);
	window_json_cpu_fields(j, c);
	json_object_end(j);
}

void window_json_task(struct json *j, const struct imb_task_sample *t)
{
	json_object_begin(j);
	json_kv_int(j, "pid", t->pid);
	json_kv_int(j, "tgid", t->tgid);
	json_key(j, "comm");
	json_strn(j, t->comm, sizeof(t->comm));
	json_kv_int(j, "cpu", t->cpu);
	json_kv_int(j, "nice", t->nice);
	json_kv_uint(j, "run_ns", t->run_ns);
	json_kv_uint(j, "wait_ns", t->wait_ns);
	json_kv_uint(j, "migrations", t->migrations);
	json_kv_double(j, "share", t->share);
	json_kv_double(j, "fair_share", t->fair_share);
	json_kv_uint(j, "util_avg", t->util_avg);
	json_kv_uint(j, "runnable_avg", t->runnable_avg);
	json_kv_uint(j, "load_avg", t->load_avg);
	json_object_end(j);
}

void window_json_job(struct json *j, const struct imb_job_sample *b)
{
	json_object_begin(j);
	json_key(j, "key");
	json_strn(j, b->key, sizeof(b->key));
	json_key(j, "kind");
	json_strn(j, b->kind, sizeof(b->kind));
	/* a cgroup job's v2 path: live runs only (null: unresolved, or a recording) */
	if (!strncmp(b->kind, "cgroup", sizeof(b->kind))) {
		json_key(j, "path");
		if (b->path[0])
			json_strn(j, b->path, sizeof(b->path));
		else
			json_null(j);
	}
	json_kv_uint(j, "tasks", b->tasks);
	json_kv_double(j, "unfairness", b->unfairness);
	json_kv_double(j, "mean_deviation", b->mean_deviation);
	json_kv_double(j, "max_deviation", b->max_deviation);
	json_kv_double(j, "jain_index", b->jain_index);
	json_object_end(j);
}

void window_json_finding(struct json *j, const struct imb_finding *f)
{
	size_t el = strnlen(f->evidence, sizeof(f->evidence));

	json_object_begin(j);
	json_kv_uint(j, "id", f->id);
	json_key(j, "kind");
	json_strn(j, f->kind, sizeof(f->kind));
	json_kv_str(j, "severity", imb_severity_name(f->severity));
	json_kv_uint(j, "t_start_ns", f->t_start_ns);
	json_kv_uint(j, "t_end_ns", f->t_end_ns);
	json_key(j, "subject");
	json_strn(j, f->subject, sizeof(f->subject));
	json_kv_double(j, "value", f->value);
	json_kv_double(j, "threshold", f->threshold);
	json_key(j, "summary");
	json_strn(j, f->summary, sizeof(f->summary));
	json_key(j, "evidence");
	/* evidence is a JSON object by contract; anything else goes as a string */
	if (el >= 2 && el < sizeof(f->evidence) && f->evidence[0] == '{' &&
	    f->evidence[el - 1] == '}')
		json_raw(j, f->evidence);
	else
		json_strn(j, f->evidence, sizeof(f->evidence));
	json_kv_bool(j, "open", f->open);
	json_object_end(j);
}

void window_json_pelt_expect(struct json *j, const struct pelt_expect *e)
{
	json_key(j, "expected_error");
	json_object_begin(j);
	json_kv_str(j, "load", e->load);
	json_kv_str(j, "basis", e->measured ? "this recording" : "reference measurements");
	json_kv_uint(j, "cpu_util_avg_p95", e->util_p95);
	json_kv_uint(j, "cpu_runnable_avg_p95", e->runnable_p95);
	json_object_end(j);
}

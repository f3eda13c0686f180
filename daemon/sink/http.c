// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * http.c - libmicrohttpd server for the JSON API, /metrics, the event
 * stream and the embedded dashboard (see http.h).
 *
 * Thread per connection (so the event stream can block on the snapshot's
 * condition variable), with limits on connections, per-IP connections,
 * idle time, per-connection memory, URL length and stream clients.  Query
 * values are parsed strictly (digits only, bounded) and names are checked
 * against whitelists before anything touches SQL.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "daemon/sink/group_rows.h"
#include "daemon/sink/http.h"
#include "daemon/sink/window_json.h"
#include "daemon/sink/json.h"
#include "daemon/sink/metrics.h"
#include "daemon/sink/store.h"
#include "web/assets.h"
#include "daemon/util.h"

#define STREAM_BATCH	16	/* windows sent per wake-up at most */
#define STREAM_TASKS	20	/* busiest tasks in a stream window */

struct http_server {
	struct MHD_Daemon *d;
	struct http_backend *be;
	struct http_opts o;
	char token[256];
	size_t token_len;
	pthread_key_t reader_key;
	int stream_clients;		/* atomic */
	int stopping;			/* atomic */
	int port;
	uint64_t started_ns;		/* CLOCK_REALTIME */
	char **asset_etags;
	/* live /metrics: the window-derived text, formatted once per window */
	pthread_mutex_t metrics_lock;
	uint64_t metrics_seq;		/* window seq of metrics_text, 0 none */
	char *metrics_text;
	size_t metrics_len;
};

struct req {
	size_t uri_len;
	bool headers_seen;		/* the handler's first call is over */
};

static uint64_t now_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- responses ---- */

static enum MHD_Result http_send(struct MHD_Connection *c, unsigned int status, char *body,
				 size_t len, const char *type, const char *etag,
				 const char *cache)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (etag)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
	if (cache)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result http_error(struct MHD_Connection *c, unsigned int status, const char *msg)
{
	struct json j;
	size_t len;
	char *body;

	json_init(&j);
	json_object_begin(&j);
	json_kv_str(&j, "error", msg);
	json_kv_uint(&j, "status", status);
	json_object_end(&j);
	if (!(body = json_steal(&j, &len)))
		return MHD_NO;
	return http_send(c, status, body, len, "application/json", NULL, "no-store");
}

static enum MHD_Result http_json(struct MHD_Connection *c, struct json *j, const char *etag)
{
	size_t len;
	char *body;

	if (json_error(j)) {
		json_free(j);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "response too large or malformed");
	}
	body = json_steal(j, &len);
	if (!body)
		return MHD_NO;
	return http_send(c, MHD_HTTP_OK, body, len, "application/json", etag, "no-cache");
}

/* 304 when If-None-Match names @etag */
static bool http_not_modified(struct MHD_Connection *c, const char *etag)
{
	const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      MHD_HTTP_HEADER_IF_NONE_MATCH);

	return inm && etag && (strstr(inm, etag) || !strcmp(inm, "*"));
}

static enum MHD_Result http_304(struct MHD_Connection *c, const char *etag, const char *cache)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
	ret = MHD_queue_response(c, MHD_HTTP_NOT_MODIFIED, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- query parsing ---- */

static int parse_u64(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!s || !*s || strlen(s) > 20)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

static const char *arg(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* ---- data views ---- */

static struct store_reader *http_reader(struct http_server *h)
{
	struct store_reader *r;

	if (!h->be->db_path)
		return NULL;
	r = pthread_getspecific(h->reader_key);
	if (r)
		return r;
	r = store_reader_open(h->be->db_path, NULL);
	if (r)
		pthread_setspecific(h->reader_key, r);
	return r;
}

static void reader_destroy(void *p)
{
	store_reader_close(p);
}

struct view {
	const struct snapshot_window *sw;	/* live */
	struct imb_window *owned;		/* serve */
	const struct imb_window *w;
	char etag[48];
};

static int view_get(struct http_server *h, struct view *v)
{
	memset(v, 0, sizeof(*v));
	if (h->be->snap) {
		v->sw = snapshot_acquire(h->be->snap);
		if (!v->sw)
			return -ENOENT;
		v->w = v->sw->w;
		snprintf(v->etag, sizeof(v->etag), "\"w%" PRIu64 "-%" PRIx64 "\"", v->sw->seq,
			 h->started_ns);
		return 0;
	} else {
		struct store_reader *r = http_reader(h);
		int rc;

		if (!r)
			return -EIO;
		rc = store_reader_latest_window(r, &v->owned);
		if (rc)
			return rc;
		v->w = v->owned;
		snprintf(v->etag, sizeof(v->etag), "\"s%" PRIu64 "\"", v->w->t_end_ns);
		return 0;
	}
}

static void view_put(struct view *v)
{
	snapshot_release(v->sw);
	imb_window_free(v->owned);
}

static enum MHD_Result view_error(struct MHD_Connection *c, int rc)
{
	if (rc == -ENOENT)
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no window yet");
	return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "database unavailable");
}


/* ---- routes ---- */

static void db_size(const char *path, uint64_t *size)
{
	char wal[4200];
	struct stat sb;

	*size = 0;
	if (!path)
		return;
	if (!stat(path, &sb))
		*size += (uint64_t)sb.st_size;
	snprintf(wal, sizeof(wal), "%s-wal", path);
	if (!stat(wal, &sb))
		*size += (uint64_t)sb.st_size;
}

/* the engine's error against the kernel, as in analyze --json's "pelt" */
static void json_pelt_sigs(struct json *j, const char *key, const struct metrics_pelt_sig *g)
{
	json_key(j, key);
	json_object_begin(j);
	for (int s = 0; s < METRICS_PELT_SIGNALS; s++) {
		json_key(j, metrics_pelt_signal_names[s]);
		json_object_begin(j);
		json_kv_uint(j, "median_abs_err", g[s].median);
		json_kv_uint(j, "p95_abs_err", g[s].p95);
		json_kv_uint(j, "max_abs_err", g[s].max);
		json_kv_uint(j, "samples", g[s].samples);
		json_object_end(j);
	}
	json_object_end(j);
}

static void json_status_pelt(struct json *j, const struct metrics_pelt *p)
{
	json_key(j, "pelt");
	json_object_begin(j);
	json_kv_bool(j, "kernel_reference", p->kernel_reference);
	json_pelt_sigs(j, "signals", p->cpu);
	json_pelt_sigs(j, "task_signals", p->task);
	json_pelt_sigs(j, "group_signals", p->group);
	json_pelt_sigs(j, "group_entity_signals", p->group_se);
	if (p->expected.load)
		window_json_pelt_expect(j, &p->expected);
	json_object_end(j);
}

static enum MHD_Result http_route_status(struct http_server *h, struct MHD_Connection *c)
{
	uint64_t now = now_realtime_ns(), size;
	struct json j;

	json_init(&j);
	json_object_begin(&j);
	json_kv_str(&j, "version", h->be->version ? h->be->version : "unknown");
	json_kv_str(&j, "mode", h->be->snap ? "live" : "serve");
	if (h->be->snap) {
		struct snapshot_status st;
		const struct snapshot_window *sw = snapshot_acquire(h->be->snap);

		snapshot_status_get(h->be->snap, &st);
		json_kv_str(&j, "kernel", st.info.kernel);
		json_kv_str(&j, "source", st.info.source);
		json_kv_str(&j, "host", st.info.host);
		json_kv_uint(&j, "nr_cpus", st.info.nr_cpus);
		json_kv_uint(&j, "started_ns", st.info.started_ns ? st.info.started_ns : h->started_ns);
		json_kv_uint(&j, "uptime_ns", now - (st.info.started_ns ? st.info.started_ns :
						     h->started_ns));
		json_kv_uint(&j, "window_ns", st.info.window_ns);
		json_kv_uint(&j, "windows", st.windows);
		json_kv_uint(&j, "events", st.events_total);
		json_kv_uint(&j, "lost_events", st.lost_events_total);
		json_kv_uint(&j, "lost_events_last_window", st.lost_events_last);
		json_kv_uint(&j, "windows_with_lost_events", st.windows_with_lost);
		json_kv_uint(&j, "findings", st.findings_total);
		json_status_pelt(&j, &st.pelt);
		if (sw) {
			json_kv_uint(&j, "t_start_ns", sw->w->t_start_ns);
			json_kv_uint(&j, "t_end_ns", sw->w->t_end_ns);
		} else {
			json_kv_null(&j, "t_end_ns");
		}
		snapshot_release(sw);
	} else {
		struct store_reader *r = http_reader(h);
		struct store_status st;
		int rc = r ? store_reader_status(r, &st) : -EIO;

		if (rc) {
			json_free(&j);
			return rc == -ENOENT ? http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no run in the database")
					     : http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "database unavailable");
		}
		json_kv_str(&j, "kernel", st.kernel);
		json_kv_str(&j, "source", st.source);
		json_kv_str(&j, "host", st.host);
		json_kv_uint(&j, "nr_cpus", st.nr_cpus);
		json_kv_uint(&j, "started_ns", st.started_ns);
		json_kv_uint(&j, "uptime_ns", now - h->started_ns);
		json_kv_uint(&j, "window_ns", st.window_ns);
		json_kv_uint(&j, "windows", st.windows);
		json_kv_uint(&j, "events", st.events);
		json_kv_uint(&j, "lost_events", st.lost_events);
		json_kv_uint(&j, "findings", st.findings);
		json_kv_int(&j, "run_id", st.run_id);
		json_kv_uint(&j, "t_start_ns", st.first_t_ns);
		json_kv_uint(&j, "t_end_ns", st.last_t_ns);
		json_kv_int(&j, "schema_version", st.schema_version);
	}
	db_size(h->be->db_path, &size);
	if (h->be->db_path)
		json_kv_uint(&j, "db_size_bytes", size);
	json_object_end(&j);
	return http_json(c, &j, NULL);
}

static enum MHD_Result http_route_cpus(struct http_server *h, struct MHD_Connection *c)
{
	struct view v;
	struct json j;
	int rc = view_get(h, &v);

	if (rc)
		return view_error(c, rc);
	if (http_not_modified(c, v.etag)) {
		enum MHD_Result ret = http_304(c, v.etag, "no-cache");

		view_put(&v);
		return ret;
	}
	json_init(&j);
	json_object_begin(&j);
	json_kv_uint(&j, "t_start_ns", v.w->t_start_ns);
	json_kv_uint(&j, "t_end_ns", v.w->t_end_ns);
	json_key(&j, "cpus");
	json_array_begin(&j);
	for (size_t i = 0; i < v.w->nr_cpus; i++)
		window_json_cpu(&j, &v.w->cpus[i]);
	json_array_end(&j);
	json_object_end(&j);
	{
		char etag[48];
		enum MHD_Result ret;

		memcpy(etag, v.etag, sizeof(etag));
		view_put(&v);
		ret = http_json(c, &j, etag);
		return ret;
	}
}

static const char *const task_sorts[] = {
	"run_ns", "wait_ns", "migrations", "share", "fair_share", "util_avg",
	"runnable_avg", "load_avg", "pid", "deviation",
};


static double task_key(const struct imb_task_sample *t, int f)
{
	switch (f) {
	case 0: return (double)t->run_ns;
	case 1: return (double)t->wait_ns;
	case 2: return t->migrations;
	case 3: return t->share;
	case 4: return t->fair_share;
	case 5: return (double)t->util_avg;
	case 6: return (double)t->runnable_avg;
	case 7: return (double)t->load_avg;
	case 8: return -(double)t->pid;	/* ascending pid */
	default: return t->fair_share > 0 ? (t->fair_share - t->share) / t->fair_share : 0;
	}
}

struct task_ref {
	double key;
	const struct imb_task_sample *t;
};

static int task_ref_cmp(const void *a, const void *b)
{
	const struct task_ref *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? 1 : -1;
	return x->t->pid - y->t->pid;
}

static enum MHD_Result http_route_tasks(struct http_server *h, struct MHD_Connection *c)
{
	const char *top_s = arg(c, "top"), *sort_s = arg(c, "sort");
	uint64_t top = 50;
	struct task_ref *refs;
	int field = 0;
	struct view v;
	struct json j;
	char etag[64];
	size_t n;
	int rc;

	if (top_s && (parse_u64(top_s, &top) || top < 1 || top > HTTP_MAX_TOP))
		return http_error(c, MHD_HTTP_BAD_REQUEST, "top must be an integer from 1 to 10000");
	if (sort_s) {
		field = -1;
		for (size_t i = 0; i < ARRAY_SIZE(task_sorts); i++)
			if (!strcmp(sort_s, task_sorts[i]))
				field = (int)i;
		if (field < 0)
			return http_error(c, MHD_HTTP_BAD_REQUEST,
					  "unknown sort field (run_ns, wait_ns, migrations, share, fair_share, util_avg, runnable_avg, load_avg, pid, deviation)");
	}
	rc = view_get(h, &v);
	if (rc)
		return view_error(c, rc);
	snprintf(etag, sizeof(etag), "%.*s-%d-%" PRIu64 "\"", (int)strlen(v.etag) - 1, v.etag,
		 field, top);
	if (http_not_modified(c, etag)) {
		view_put(&v);
		return http_304(c, etag, "no-cache");
	}
	n = v.w->nr_tasks;
	refs = malloc((n ? n : 1) * sizeof(*refs));
	if (!refs) {
		view_put(&v);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		refs[i].t = &v.w->tasks[i];
		refs[i].key = task_key(refs[i].t, field);
	}
	qsort(refs, n, sizeof(*refs), task_ref_cmp);
	json_init(&j);
	json_object_begin(&j);
	json_kv_uint(&j, "t_start_ns", v.w->t_start_ns);
	json_kv_uint(&j, "t_end_ns", v.w->t_end_ns);
	json_kv_str(&j, "sort", task_sorts[field]);
	json_kv_uint(&j, "total", n);
	json_key(&j, "tasks");
	json_array_begin(&j);
	for (size_t i = 0; i < n && i < top; i++)
		window_json_task(&j, refs[i].t);
	json_array_end(&j);
	json_object_end(&j);
	free(refs);
	view_put(&v);
	return http_json(c, &j, etag);
}

static enum MHD_Result http_route_jobs(struct http_server *h, struct MHD_Connection *c)
{
	struct view v;
	struct json j;
	char etag[48];
	int rc = view_get(h, &v);

	if (rc)
		return view_error(c, rc);
	memcpy(etag, v.etag, sizeof(etag));
	if (http_not_modified(c, etag)) {
		view_put(&v);
		return http_304(c, etag, "no-cache");
	}
	json_init(&j);
	json_object_begin(&j);
	json_kv_uint(&j, "t_start_ns", v.w->t_start_ns);
	json_kv_uint(&j, "t_end_ns", v.w->t_end_ns);
	json_key(&j, "jobs");
	json_array_begin(&j);
	for (size_t i = 0; i < v.w->nr_jobs; i++)
		window_json_job(&j, &v.w->jobs[i]);
	json_array_end(&j);
	json_object_end(&j);
	view_put(&v);
	return http_json(c, &j, etag);
}

/*
 * The task groups (cgroups and autogroups) with their per-CPU run queues,
 * from the listing the pipeline published at the last window's end.  The
 * store keeps no groups: `serve` has none to list.
 */
static enum MHD_Result http_route_groups(struct http_server *h, struct MHD_Connection *c)
{
	const struct group_rows *r;
	uint64_t seq = 0;
	struct json j;
	char etag[48];

	if (!h->be->snap)
		return http_error(c, MHD_HTTP_NOT_FOUND,
				  "task groups are listed by the live daemon only (the store keeps none)");
	r = snapshot_groups_acquire(h->be->snap, &seq);
	if (!r)
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no window yet");
	snprintf(etag, sizeof(etag), "\"g%" PRIu64 "-%" PRIx64 "\"", seq, h->started_ns);
	if (http_not_modified(c, etag)) {
		group_rows_put(r);
		return http_304(c, etag, "no-cache");
	}
	json_init(&j);
	json_object_begin(&j);
	json_kv_uint(&j, "t_ns", r->t_ns);
	json_kv_uint(&j, "total", r->nr_groups);
	json_kv_uint(&j, "evicted", r->evicted);
	json_kv_uint(&j, "overflow", r->overflow);
	json_key(&j, "groups");
	group_rows_json(&j, r);
	json_object_end(&j);
	group_rows_put(r);
	return http_json(c, &j, etag);
}

static const char *const finding_kinds[] = {
	"overload", "unfairness", "vruntime_drift", "same_task_migrated",
	"migration_pingpong", "numa_conflict", "lost_events",
};

static enum MHD_Result http_route_findings(struct http_server *h, struct MHD_Connection *c)
{
	const char *since_s = arg(c, "since"), *kind = arg(c, "kind"), *sev_s = arg(c, "severity");
	struct imb_finding *fs = NULL;
	uint64_t since = 0;
	size_t n = 0, out = 0;
	int sev = -1, rc;
	struct json j;
	bool known = false;

	if (since_s && parse_u64(since_s, &since))
		return http_error(c, MHD_HTTP_BAD_REQUEST, "since must be a non-negative integer (ns)");
	if (kind) {
		for (size_t i = 0; i < ARRAY_SIZE(finding_kinds); i++)
			known |= !strcmp(kind, finding_kinds[i]);
		if (!known)
			return http_error(c, MHD_HTTP_BAD_REQUEST, "unknown finding kind");
	}
	if (sev_s && (sev = imb_severity_parse(sev_s)) < 0)
		return http_error(c, MHD_HTTP_BAD_REQUEST, "severity must be info, warning or critical");
	if (h->be->db_path && http_reader(h)) {
		struct store_finding_query q = { .since_ns = since, .kind = kind, .severity = sev,
						 .limit = 1000 };

		rc = store_reader_findings(http_reader(h), &q, &fs, &n);
		out = n;
	} else if (h->be->snap) {
		rc = snapshot_findings(h->be->snap, since, &fs, &n);
		/* filter in place */
		for (size_t i = 0; !rc && i < n; i++)
			if ((!kind || !strcmp(fs[i].kind, kind)) && fs[i].severity >= sev)
				fs[out++] = fs[i];
	} else {
		rc = -EIO;
	}
	if (rc)
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "findings unavailable");
	json_init(&j);
	json_object_begin(&j);
	json_key(&j, "findings");
	json_array_begin(&j);
	for (size_t i = 0; i < out; i++)
		window_json_finding(&j, &fs[i]);
	json_array_end(&j);
	json_object_end(&j);
	free(fs);
	return http_json(c, &j, NULL);
}

/* per-CPU / per-job values of a live window for the timeseries route */
static bool cpu_metric(const struct imb_cpu_sample *s, const char *m, double *v)
{
	uint64_t k;

	if (!strcmp(m, "util_avg")) *v = (double)s->util_avg;
	else if (!strcmp(m, "runnable_avg")) *v = (double)s->runnable_avg;
	else if (!strcmp(m, "load_avg")) *v = (double)s->load_avg;
	else if (!strcmp(m, "nr_running")) *v = s->nr_running;
	else if (!strcmp(m, "capacity")) *v = s->capacity;
	else if (!strcmp(m, "group_type")) *v = s->group_type;
	else if (!strcmp(m, "overloaded_fraction")) *v = s->overloaded_fraction;
	else if (!strcmp(m, "vruntime_rate")) *v = s->vruntime_rate;
	else {
		k = !strcmp(m, "kernel_util_avg") ? s->kernel_util_avg :
		    !strcmp(m, "kernel_runnable_avg") ? s->kernel_runnable_avg : s->kernel_load_avg;
		if (k == IMB_UNKNOWN)
			return false;
		*v = (double)k;
	}
	return true;
}

static double job_metric(const struct imb_job_sample *b, const char *m)
{
	if (!strcmp(m, "unfairness")) return b->unfairness;
	if (!strcmp(m, "mean_deviation")) return b->mean_deviation;
	if (!strcmp(m, "max_deviation")) return b->max_deviation;
	return b->jain_index;
}

/* series are emitted grouped: collect points then write per series */
struct series_pt {
	uint64_t t;
	double v;
	int s;
};

static int pt_cmp(const void *a, const void *b)
{
	const struct series_pt *x = a, *y = b;

	if (x->s != y->s)
		return x->s - y->s;
	return x->t < y->t ? -1 : x->t > y->t;
}

static void json_series(struct json *j, int kind, struct series_pt *p, size_t n,
			char **keys, size_t nkeys)
{
	qsort(p, n, sizeof(*p), pt_cmp);
	json_key(j, "series");
	json_array_begin(j);
	for (size_t i = 0; i < n;) {
		size_t e = i;

		json_object_begin(j);
		if (kind == 1)
			json_kv_int(j, "cpu", p[i].s);
		else if (kind == 2)
			json_kv_str(j, "job", (size_t)p[i].s < nkeys ? keys[p[i].s] : "");
		else
			json_kv_str(j, "name", "total");
		json_key(j, "points");
		json_array_begin(j);
		while (e < n && p[e].s == p[i].s) {
			json_array_begin(j);
			json_uint(j, p[e].t);
			json_double(j, p[e].v);
			json_array_end(j);
			e++;
		}
		json_array_end(j);
		json_object_end(j);
		i = e;
	}
	json_array_end(j);
}

/* What a timeseries request asks for. */
struct ts_query {
	const char *metric, *job;	/* job: NULL for every job */
	uint64_t since, until, cpu;	/* until 0: no end; cpu UINT64_MAX: every CPU */
	int kind;			/* store_metric_valid(): 1 per CPU, 2 per job, else total */
};

/* The points a timeseries request collects, the job keys they name, and its ETag. */
struct ts_result {
	struct series_pt *pts;
	size_t n, cap;
	char **keys;
	size_t nkeys;
	int minute;			/* the store answered from its per-minute table */
	char etag[64];			/* "" none */
};

/* The request's arguments into @q; NULL, or what is wrong with them. */
static const char *ts_parse(struct MHD_Connection *c, struct ts_query *q)
{
	const char *cpu_s = arg(c, "cpu"), *since_s = arg(c, "since"), *until_s = arg(c, "until");

	*q = (struct ts_query){ .metric = arg(c, "metric"), .job = arg(c, "job"),
				.cpu = UINT64_MAX };
	if (!q->metric)
		return "metric is required";
	q->kind = store_metric_valid(q->metric);
	if (!q->kind)
		return "unknown metric";
	if (cpu_s && (parse_u64(cpu_s, &q->cpu) || q->cpu > 4095))
		return "cpu must be an integer from 0 to 4095";
	if (since_s && parse_u64(since_s, &q->since))
		return "since must be a non-negative integer (ns)";
	if (until_s && parse_u64(until_s, &q->until))
		return "until must be a non-negative integer (ns)";
	if (q->until && q->until < q->since)
		return "until is before since";
	if (q->job && strlen(q->job) > 63)
		return "job key too long";
	return NULL;
}

static void ts_result_free(struct ts_result *r)
{
	for (size_t i = 0; i < r->nkeys; i++)
		free(r->keys[i]);
	free(r->keys);
	free(r->pts);
}

/* The points from the store, with the store's last window as the ETag; 0 or -errno. */
static int ts_from_store(struct http_server *h, const struct ts_query *tq, struct ts_result *r)
{
	struct store_series_query q = { .metric = tq->metric, .job = tq->job,
					.cpu = tq->cpu == UINT64_MAX ? -1 : (int)tq->cpu,
					.since_ns = tq->since, .until_ns = tq->until };
	struct store_point *sp = NULL;
	size_t np = 0;
	struct store_status st;
	int rc;

	rc = store_reader_timeseries(http_reader(h), &q, &sp, &np, &r->keys, &r->nkeys,
				     &r->minute);
	if (!rc && np) {
		r->pts = malloc(np * sizeof(*r->pts));
		if (!r->pts)
			rc = -ENOMEM;
		for (size_t i = 0; !rc && i < np; i++)
			r->pts[i] = (struct series_pt){ sp[i].t_ns, sp[i].value, sp[i].series };
		r->n = np;
	}
	free(sp);
	if (!rc && !store_reader_status(http_reader(h), &st))
		snprintf(r->etag, sizeof(r->etag), "\"s%" PRIu64 "\"", st.last_t_ns);
	return rc;
}

/* The index of job @key in r->keys, added when new; -ENOMEM. */
static int ts_job_index(struct ts_result *r, const char *key, size_t key_size)
{
	char **nk;

	for (size_t q = 0; q < r->nkeys; q++)
		if (!strcmp(r->keys[q], key))
			return (int)q;
	nk = realloc(r->keys, (r->nkeys + 1) * sizeof(*nk));
	if (!nk || !(nk[r->nkeys] = strndup(key, key_size))) {
		if (nk)
			r->keys = nk;
		return -ENOMEM;
	}
	r->keys = nk;
	return (int)r->nkeys++;
}

static int ts_push(struct ts_result *r, struct series_pt p)
{
	if (r->n == r->cap) {
		struct series_pt *np2;

		r->cap = r->cap ? r->cap * 2 : 256;
		np2 = realloc(r->pts, r->cap * sizeof(*r->pts));
		if (!np2)
			return -ENOMEM;
		r->pts = np2;
	}
	r->pts[r->n++] = p;
	return 0;
}

/* One live window's points that @q selects; 0 or -ENOMEM. */
static int ts_window_points(const struct imb_window *w, const struct ts_query *q,
			    struct ts_result *r)
{
	size_t cnt = q->kind == 1 ? w->nr_cpus : q->kind == 2 ? w->nr_jobs : 1;

	for (size_t i = 0; i < cnt; i++) {
		struct series_pt p = { .t = w->t_end_ns };

		if (q->kind == 1) {
			if (q->cpu != UINT64_MAX && (uint64_t)w->cpus[i].cpu != q->cpu)
				continue;
			if (!cpu_metric(&w->cpus[i], q->metric, &p.v))
				continue;
			p.s = w->cpus[i].cpu;
		} else if (q->kind == 2) {
			if (q->job && strcmp(q->job, w->jobs[i].key))
				continue;
			p.s = ts_job_index(r, w->jobs[i].key, sizeof(w->jobs[i].key));
			if (p.s < 0)
				return p.s;
			p.v = job_metric(&w->jobs[i], q->metric);
		} else {
			p.v = !strcmp(q->metric, "events") ? (double)w->events :
			      (double)w->lost_events;
		}
		if (ts_push(r, p))
			return -ENOMEM;
	}
	return 0;
}

/* The points from the live history, with its newest window as the ETag; 0 or -errno. */
static int ts_from_history(struct http_server *h, const struct ts_query *q, struct ts_result *r)
{
	const struct snapshot_window *hist[SNAPSHOT_DEFAULT_HISTORY];
	size_t nh = snapshot_history(h->be->snap, hist, SNAPSHOT_DEFAULT_HISTORY);
	int rc = 0;

	if (nh)
		snprintf(r->etag, sizeof(r->etag), "\"w%" PRIu64 "-%" PRIx64 "\"",
			 hist[nh - 1]->seq, h->started_ns);
	for (size_t k = 0; k < nh && !rc; k++) {
		const struct imb_window *w = hist[k]->w;

		if (w->t_end_ns < q->since || (q->until && w->t_end_ns > q->until))
			continue;
		rc = ts_window_points(w, q, r);
	}
	for (size_t k = 0; k < nh; k++)
		snapshot_release(hist[k]);
	return rc;
}

static enum MHD_Result http_route_timeseries(struct http_server *h, struct MHD_Connection *c)
{
	struct ts_result r = { 0 };
	struct ts_query q;
	const char *bad = ts_parse(c, &q);
	struct json j;
	int rc;

	if (bad)
		return http_error(c, MHD_HTTP_BAD_REQUEST, bad);
	if (h->be->db_path && http_reader(h))
		rc = ts_from_store(h, &q, &r);
	else if (h->be->snap)
		rc = ts_from_history(h, &q, &r);
	else
		rc = -EIO;
	if (!rc && r.etag[0] && http_not_modified(c, r.etag)) {
		ts_result_free(&r);
		return http_304(c, r.etag, "no-cache");
	}
	if (!rc) {
		json_init(&j);
		json_object_begin(&j);
		json_kv_str(&j, "metric", q.metric);
		json_kv_str(&j, "resolution", r.minute ? "1m" : "window");
		json_series(&j, q.kind, r.pts, r.n, r.keys, r.nkeys);
		json_object_end(&j);
	}
	ts_result_free(&r);
	if (rc)
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "timeseries unavailable");
	return http_json(c, &j, r.etag[0] ? r.etag : NULL);
}

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * Live, everything but the process figures and the store size changes only
 * when a window is published: the text of window @seq (0: none yet) is
 * formatted once per window (floats and a hundred job labels cost 5x the
 * /api/v1/cpus work).  Called with metrics_lock held; 0 or -ENOMEM.
 */
static int metrics_cache_refresh(struct http_server *h, const struct imb_window *w,
				 uint64_t seq)
{
	struct metrics_input in = { .version = h->be->version };
	struct snapshot_status st;
	char *text;
	size_t len;
	int rc;

	if (h->metrics_text && seq && h->metrics_seq == seq)
		return 0;
	snapshot_status_get(h->be->snap, &st);	/* at or after the window */
	in.w = w;
	in.pelt = &st.pelt;
	in.events_total = st.events_total;
	in.lost_events_total = st.lost_events_total;
	in.windows_total = st.windows;
	in.findings = st.counts;
	in.nr_findings = st.nr_counts;
	rc = metrics_format(&in, &text, &len);
	if (!rc) {
		free(h->metrics_text);
		h->metrics_text = text;
		h->metrics_len = len;
		h->metrics_seq = seq;
	}
	return rc;
}

/* /metrics of the live daemon: the window's cached text, then @proc and the store size @db. */
static enum MHD_Result metrics_live(struct http_server *h, struct MHD_Connection *c,
				    const struct metrics_process *proc, uint64_t db)
{
	struct view v;
	uint64_t seq;
	size_t len;
	char *body;
	int rc;

	view_get(h, &v);	/* -ENOENT before the first window */
	seq = v.sw ? v.sw->seq : 0;
	pthread_mutex_lock(&h->metrics_lock);
	rc = metrics_cache_refresh(h, v.w, seq);
	if (!rc)
		rc = metrics_format_dynamic(h->metrics_text, h->metrics_len, proc, db, &body,
					    &len);
	pthread_mutex_unlock(&h->metrics_lock);
	view_put(&v);
	if (rc)
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return http_send(c, MHD_HTTP_OK, body, len, METRICS_CONTENT_TYPE, NULL, "no-store");
}

/* The findings @fs counted by kind and severity, *@nc rows; NULL when out of memory. */
static struct metrics_finding_count *finding_counts(const struct imb_finding *fs, size_t nf,
						    size_t *nc)
{
	struct metrics_finding_count *counts = calloc(nf, sizeof(*counts));

	*nc = 0;
	for (size_t i = 0; counts && i < nf; i++) {
		size_t k;

		for (k = 0; k < *nc; k++)
			if (!strcmp(counts[k].kind, fs[i].kind) &&
			    counts[k].severity == fs[i].severity)
				break;
		if (k == *nc) {
			memcpy(counts[k].kind, fs[i].kind, sizeof(counts[k].kind));
			counts[k].severity = fs[i].severity;
			(*nc)++;
		}
		counts[k].count++;
	}
	return counts;
}

/* /metrics of `serve`: the store's latest window, totals and findings, @in's process figures. */
static enum MHD_Result metrics_from_store(struct http_server *h, struct MHD_Connection *c,
					  struct metrics_input *in, uint64_t db)
{
	struct store_reader *r = http_reader(h);
	struct store_finding_query q = { .severity = -1, .limit = 100000 };
	struct metrics_finding_count *counts = NULL;
	struct imb_finding *fs = NULL;
	struct store_status ss;
	struct view v = { 0 };
	size_t nf = 0, nc = 0, len;
	char *body;
	int rc;

	if (!r || view_get(h, &v))
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no window yet");
	in->w = v.w;
	if (!store_reader_status(r, &ss)) {
		in->events_total = ss.events;
		in->lost_events_total = ss.lost_events;
		in->windows_total = ss.windows;
	}
	if (!store_reader_findings(r, &q, &fs, &nf) && nf)
		counts = finding_counts(fs, nf, &nc);
	free(fs);
	in->findings = counts;
	in->nr_findings = counts ? nc : 0;
	in->db_size_bytes = db;
	rc = metrics_format(in, &body, &len);
	view_put(&v);
	free(counts);
	if (rc)
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	return http_send(c, MHD_HTTP_OK, body, len, METRICS_CONTENT_TYPE, NULL, "no-store");
}

static enum MHD_Result http_route_metrics(struct http_server *h, struct MHD_Connection *c)
{
	struct metrics_input in = { .version = h->be->version };
	struct metrics_process proc;
	uint64_t db;

	if (!metrics_process_read(&proc))
		in.proc = &proc;
	db_size(h->be->db_path, &db);
	if (h->be->snap)
		return metrics_live(h, c, in.proc, db);
	return metrics_from_store(h, c, &in, db);
}

/* ---- server-sent events ---- */

struct stream {
	struct http_server *h;
	int fd;				/* client socket, to notice hang-ups */
	uint64_t seq;
	struct json buf;
	size_t off;
	bool hello;
};

static void stream_window(struct json *out, const struct snapshot_window *sw)
{
	const struct imb_window *w = sw->w;
	struct task_ref *refs;
	size_t n = w->nr_tasks;
	struct json j;

	json_init(&j);
	json_object_begin(&j);
	json_kv_uint(&j, "seq", sw->seq);
	json_kv_uint(&j, "t_start_ns", w->t_start_ns);
	json_kv_uint(&j, "t_end_ns", w->t_end_ns);
	json_kv_uint(&j, "events", w->events);
	json_kv_uint(&j, "lost_events", w->lost_events);
	json_key(&j, "cpus");
	json_array_begin(&j);
	for (size_t i = 0; i < w->nr_cpus; i++)
		window_json_cpu(&j, &w->cpus[i]);
	json_array_end(&j);
	json_key(&j, "jobs");
	json_array_begin(&j);
	for (size_t i = 0; i < w->nr_jobs; i++)
		window_json_job(&j, &w->jobs[i]);
	json_array_end(&j);
	json_key(&j, "tasks");
	json_array_begin(&j);
	refs = malloc((n ? n : 1) * sizeof(*refs));
	if (refs) {
		for (size_t i = 0; i < n; i++)
			refs[i] = (struct task_ref){ (double)w->tasks[i].run_ns, &w->tasks[i] };
		qsort(refs, n, sizeof(*refs), task_ref_cmp);
		for (size_t i = 0; i < n && i < STREAM_TASKS; i++)
			window_json_task(&j, refs[i].t);
		free(refs);
	}
	json_array_end(&j);
	json_object_end(&j);
	if (!json_error(&j)) {
		char head[64];
		int hl = snprintf(head, sizeof(head), "id: %" PRIu64 "\nevent: window\ndata: ", sw->seq);

		json_append_text(out, head, (size_t)hl);
		json_append_text(out, j.buf, j.len);
		json_append_text(out, "\n\n", 2);
	}
	json_free(&j);
}

static void stream_finding(struct json *out, const struct imb_finding *f)
{
	struct json j;

	json_init(&j);
	window_json_finding(&j, f);
	if (!json_error(&j)) {
		json_append_text(out, "event: finding\ndata: ", 21);
		json_append_text(out, j.buf, j.len);
		json_append_text(out, "\n\n", 2);
	}
	json_free(&j);
}

static void stream_alert(struct json *out, const struct imb_alert *a)
{
	struct json j;

	json_init(&j);
	json_object_begin(&j);
	json_kv_str(&j, "state", a->state);
	json_kv_uint(&j, "t_ns", a->t_ns);
	json_kv_str(&j, "evidence_file", a->evidence_file);
	json_key(&j, "finding");
	window_json_finding(&j, &a->finding);
	json_object_end(&j);
	if (!json_error(&j)) {
		json_append_text(out, "event: alert\ndata: ", 19);
		json_append_text(out, j.buf, j.len);
		json_append_text(out, "\n\n", 2);
	}
	json_free(&j);
}

/* queue every window newer than st->seq (at most STREAM_BATCH) */
static void stream_fill(struct stream *st)
{
	const struct snapshot_window *hist[STREAM_BATCH];
	size_t nh = snapshot_history(st->h->be->snap, hist, STREAM_BATCH);

	for (size_t i = 0; i < nh; i++) {
		if (hist[i]->seq > st->seq) {
			stream_window(&st->buf, hist[i]);
			for (size_t k = 0; k < hist[i]->w->nr_findings; k++)
				stream_finding(&st->buf, &hist[i]->w->findings[k]);
			for (size_t k = 0; k < hist[i]->w->nr_alerts; k++)
				stream_alert(&st->buf, &hist[i]->w->alerts[k]);
			st->seq = hist[i]->seq;
		}
		snapshot_release(hist[i]);
	}
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	struct http_server *h = st->h;
	size_t n;

	(void)pos;
	while (st->off >= st->buf.len) {
		if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE))
			return MHD_CONTENT_READER_END_OF_STREAM;
		json_reset(&st->buf);
		st->off = 0;
		if (!st->hello) {
			/* reconnect delay, then the current window at once */
			json_append_text(&st->buf, "retry: 2000\n\n", 13);
			st->hello = true;
			{
				const struct snapshot_window *sw = snapshot_acquire(h->be->snap);

				if (sw) {
					stream_window(&st->buf, sw);
					st->seq = sw->seq;
					snapshot_release(sw);
				}
			}
			break;
		}
		/* wait in short slices so a client that hung up frees its
		 * thread and stream slot within a second */
		for (int waited = 0; waited < h->o.keepalive_ms; waited += 1000) {
			int slice = h->o.keepalive_ms - waited < 1000 ? h->o.keepalive_ms - waited : 1000;
			struct pollfd pfd = { .fd = st->fd, .events = POLLRDHUP };

			if (snapshot_wait(h->be->snap, st->seq, slice) > st->seq) {
				stream_fill(st);
				break;
			}
			if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE))
				return MHD_CONTENT_READER_END_OF_STREAM;
			if (st->fd >= 0 && poll(&pfd, 1, 0) > 0 &&
			    (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR)))
				return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (__atomic_load_n(&h->stopping, __ATOMIC_ACQUIRE))
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!st->buf.len)
			json_append_text(&st->buf, ": keepalive\n\n", 13);
		if (json_error(&st->buf))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = st->buf.len - st->off;
	if (n > max)
		n = max;
	memcpy(buf, st->buf.buf + st->off, n);
	st->off += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct stream *st = cls;

	__atomic_sub_fetch(&st->h->stream_clients, 1, __ATOMIC_ACQ_REL);
	json_free(&st->buf);
	free(st);
}

static enum MHD_Result http_route_stream(struct http_server *h, struct MHD_Connection *c)
{
	struct MHD_Response *r;
	struct stream *st;
	enum MHD_Result ret;

	if (!h->be->snap)
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "no live source: serve mode has no event stream");
	if (__atomic_add_fetch(&h->stream_clients, 1, __ATOMIC_ACQ_REL) >
	    (int)h->o.max_stream_clients) {
		__atomic_sub_fetch(&h->stream_clients, 1, __ATOMIC_ACQ_REL);
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "too many stream clients");
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		__atomic_sub_fetch(&h->stream_clients, 1, __ATOMIC_ACQ_REL);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
	}
	st->h = h;
	{
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		st->fd = ci ? ci->connect_fd : -1;
	}
	json_init(&st->buf);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, st,
					      stream_free);
	if (!r) {
		stream_free(st);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* ---- static assets ---- */

static enum MHD_Result http_route_asset(struct http_server *h, struct MHD_Connection *c,
					const char *url)
{
	for (size_t i = 0; i < web_nr_assets; i++) {
		const struct web_asset *a = &web_assets[i];
		struct MHD_Response *r;
		enum MHD_Result ret;
		const char *cache = "public, max-age=300";

		if (strcmp(url, a->path) && !(a->path[1] == '\0' && !strcmp(url, "/index.html")))
			continue;
		if (http_not_modified(c, h->asset_etags[i]))
			return http_304(c, h->asset_etags[i], cache);
		r = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
		MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, h->asset_etags[i]);
		MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
		MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
		MHD_add_response_header(r, "Content-Security-Policy",
					"default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
		ret = MHD_queue_response(c, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
	return http_error(c, MHD_HTTP_NOT_FOUND, "no such path");
}

/* ---- dispatch ---- */

static bool token_ok(struct http_server *h, struct MHD_Connection *c)
{
	const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						    MHD_HTTP_HEADER_AUTHORIZATION);
	unsigned char diff = 0;
	size_t alen;

	if (!h->token_len)
		return true;
	if (!a || strncmp(a, "Bearer ", 7))
		return false;
	a += 7;
	alen = strlen(a);
	/* constant time in the secret's length, whatever the guess */
	diff = alen != h->token_len;
	for (size_t i = 0; i < h->token_len; i++)
		diff |= (unsigned char)h->token[i] ^ (unsigned char)(alen ? a[i % alen] : 0);
	return diff == 0;
}

static enum MHD_Result http_handle(void *cls, struct MHD_Connection *c, const char *url,
				   const char *method, const char *version,
				   const char *upload_data, size_t *upload_data_size,
				   void **con_cls)
{
	struct http_server *h = cls;
	struct req *rq = *con_cls;
	const char *clen;

	(void)version;
	(void)upload_data;
	if (rq && rq->uri_len > HTTP_MAX_URL)
		return http_error(c, MHD_HTTP_URI_TOO_LONG, "URL longer than 4096 bytes");
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return http_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD are allowed");
	clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (*upload_data_size || (clen && strcmp(clen, "0")) ||
	    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "requests must not have a body");
	/*
	 * A response queued in the first call (headers only) makes
	 * libmicrohttpd discard the rest of the request and close the
	 * connection: right for the refusals above, but a good request is
	 * answered in the second call, so the connection stays open for the
	 * next one (a new connection is a new thread here: 5x the cost).
	 */
	if (rq && !rq->headers_seen) {
		rq->headers_seen = true;
		return MHD_YES;
	}
	if (!token_ok(h, c))
		return http_error(c, MHD_HTTP_UNAUTHORIZED, "missing or wrong bearer token");

	if (!strncmp(url, "/api/v1/", 8)) {
		const char *p = url + 8;

		if (!strcmp(p, "status"))
			return http_route_status(h, c);
		if (!strcmp(p, "cpus"))
			return http_route_cpus(h, c);
		if (!strcmp(p, "tasks"))
			return http_route_tasks(h, c);
		if (!strcmp(p, "jobs"))
			return http_route_jobs(h, c);
		if (!strcmp(p, "groups"))
			return http_route_groups(h, c);
		if (!strcmp(p, "findings"))
			return http_route_findings(h, c);
		if (!strcmp(p, "timeseries"))
			return http_route_timeseries(h, c);
		if (!strcmp(p, "stream"))
			return http_route_stream(h, c);
		return http_error(c, MHD_HTTP_NOT_FOUND, "no such endpoint");
	}
	if (!strcmp(url, "/metrics"))
		return http_route_metrics(h, c);
	return http_route_asset(h, c, url);
}

/* Called first with the full request URI: remember its length. */
static void *http_uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *rq = calloc(1, sizeof(*rq));

	(void)cls;
	(void)c;
	if (rq)
		rq->uri_len = strlen(uri);
	return rq;
}

static void http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			   enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

/* ---- lifecycle ---- */

static int http_parse_listen(const char *listen, struct sockaddr_storage *ss, bool *loopback)
{
	char host[256], *port;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM }, *ai;
	const char *p;

	if (strlen(listen) >= sizeof(host))
		return -EINVAL;
	if (listen[0] == '[') {
		p = strchr(listen, ']');
		if (!p || p[1] != ':')
			return -EINVAL;
		snprintf(host, sizeof(host), "%.*s", (int)(p - listen - 1), listen + 1);
		port = (char *)p + 2;
	} else if ((p = strrchr(listen, ':'))) {
		snprintf(host, sizeof(host), "%.*s", (int)(p - listen), listen);
		if (!host[0])
			strcpy(host, "127.0.0.1");
		port = (char *)p + 1;
	} else {
		strcpy(host, "127.0.0.1");
		port = (char *)listen;
	}
	if (!*port || strspn(port, "0123456789") != strlen(port) || atoi(port) > 65535)
		return -EINVAL;
	if (getaddrinfo(host, port, &hints, &ai))
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		*loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		*loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return 0;
}

static int http_read_token(struct http_server *h, const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, h->token, sizeof(h->token) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	h->token[n] = '\0';
	while (n > 0 && (h->token[n - 1] == '\n' || h->token[n - 1] == '\r' ||
			 h->token[n - 1] == ' ' || h->token[n - 1] == '\t'))
		h->token[--n] = '\0';
	if (n == 0)
		return -ENOENT;
	h->token_len = (size_t)n;
	return 0;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t x = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		x = (x ^ p[i]) * 1099511628211ULL;
	return x;
}

/* Something to serve: a live snapshot, or a database that opens now; 0, or -1 with errno, *@err. */
static int http_check_backend(const struct http_backend *backend, const char **err)
{
	if (!backend || (!backend->snap && !backend->db_path)) {
		*err = "no data source (live snapshot or database)";
		errno = EINVAL;
		return -1;
	}
	if (!backend->snap) {
		/* serve: fail now, with the reason, rather than 503 forever */
		struct store_reader *r = store_reader_open(backend->db_path, err);

		if (!r)
			return -1;	/* errno and *err set by the store */
		store_reader_close(r);
	}
	return 0;
}

static void http_opts_defaults(struct http_opts *o)
{
	if (!o->listen)
		o->listen = HTTP_DEFAULT_LISTEN;
	if (!o->max_connections)
		o->max_connections = HTTP_DEFAULT_MAX_CONNECTIONS;
	if (!o->max_per_ip)
		o->max_per_ip = HTTP_DEFAULT_MAX_PER_IP;
	if (!o->timeout_s)
		o->timeout_s = HTTP_DEFAULT_TIMEOUT_S;
	if (!o->memory_limit)
		o->memory_limit = HTTP_DEFAULT_MEMORY_LIMIT;
	if (!o->max_stream_clients)
		o->max_stream_clients = HTTP_DEFAULT_STREAM_CLIENTS;
	if (o->keepalive_ms <= 0)
		o->keepalive_ms = 10000;
}

/* The listen address into @ss (loopback unless allowed) and the token; 0 or -errno. */
static int http_check_access(struct http_server *h, struct sockaddr_storage *ss,
			     const char **err)
{
	bool loopback = false;
	int rc;

	rc = http_parse_listen(h->o.listen, ss, &loopback);
	if (rc) {
		*err = "bad listen address (want ADDR:PORT, [V6]:PORT or PORT)";
		return rc;
	}
	if (!loopback && !h->o.allow_remote) {
		*err = "refusing a non-loopback address without allow_remote";
		return -EPERM;
	}
	if (h->o.token_file && (rc = http_read_token(h, h->o.token_file))) {
		*err = rc == -ENOENT ? "token file is empty or missing" : "cannot read token file";
		return rc;
	}
	return 0;
}

/* Each embedded asset's ETag, a hash of its bytes; 0 or -ENOMEM. */
static int http_asset_etags(struct http_server *h)
{
	h->asset_etags = calloc(web_nr_assets ? web_nr_assets : 1, sizeof(char *));
	if (!h->asset_etags)
		return -ENOMEM;
	for (size_t i = 0; i < web_nr_assets; i++) {
		char tag[40];

		snprintf(tag, sizeof(tag), "\"a%016" PRIx64 "\"",
			 fnv1a(web_assets[i].data, web_assets[i].len));
		h->asset_etags[i] = strdup(tag);
		if (!h->asset_etags[i])
			return -ENOMEM;
	}
	return 0;
}

/* Why MHD could not start on @ss, which it does not say: bind()'s errno, as -errno. */
static int http_bind_error(const struct sockaddr_storage *ss)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int rc = -EADDRINUSE;

	if (fd >= 0) {
		int one = 1;

		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (const struct sockaddr *)ss, ss->ss_family == AF_INET6 ?
			 sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)))
			rc = -errno;
		else
			rc = -EIO;
		close(fd);
	}
	return rc;
}

/* The MHD daemon on @ss, and the port it is bound to; 0 or -errno. */
static int http_start_daemon(struct http_server *h, struct sockaddr_storage *ss,
			     const char **err)
{
	unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
			     MHD_USE_POLL;
	const union MHD_DaemonInfo *di;
	int rc;

	if (ss->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, http_handle, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)ss,
				MHD_OPTION_CONNECTION_LIMIT, h->o.max_connections,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, h->o.max_per_ip,
				MHD_OPTION_CONNECTION_TIMEOUT, h->o.timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, h->o.memory_limit,
				MHD_OPTION_URI_LOG_CALLBACK, http_uri_log, h,
				MHD_OPTION_NOTIFY_COMPLETED, http_completed, h,
				MHD_OPTION_END);
	if (!h->d) {
		rc = http_bind_error(ss);
		*err = rc == -EADDRINUSE ? "address already in use" : "cannot start the HTTP server";
		return rc;
	}
	di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
	h->port = di ? di->port : 0;
	return 0;
}

/* What http_start() made before it failed with @rc: freed, errno set. */
static void http_start_undo(struct http_server *h, int rc)
{
	if (h->asset_etags)
		for (size_t i = 0; i < web_nr_assets; i++)
			free(h->asset_etags[i]);
	free(h->asset_etags);
	pthread_mutex_destroy(&h->metrics_lock);
	free(h);
	errno = -rc;
}

struct http_server *http_start(const struct http_opts *opts, struct http_backend *backend,
			       const char **err)
{
	struct sockaddr_storage ss = { 0 };
	struct http_server *h;
	const char *dummy;
	int rc;

	if (!err)
		err = &dummy;
	if (http_check_backend(backend, err))
		return NULL;
	h = calloc(1, sizeof(*h));
	if (!h) {
		*err = "out of memory";
		errno = ENOMEM;
		return NULL;
	}
	if (opts)
		h->o = *opts;
	http_opts_defaults(&h->o);
	h->be = backend;
	h->started_ns = now_realtime_ns();
	pthread_mutex_init(&h->metrics_lock, NULL);

	if ((rc = http_check_access(h, &ss, err)))
		goto fail;
	if ((rc = http_asset_etags(h))) {
		*err = "out of memory";
		goto fail;
	}
	if (pthread_key_create(&h->reader_key, reader_destroy)) {
		rc = -EAGAIN;
		*err = "cannot create thread key";
		goto fail;
	}
	if ((rc = http_start_daemon(h, &ss, err))) {
		pthread_key_delete(h->reader_key);
		goto fail;
	}
	return h;
fail:
	http_start_undo(h, rc);
	return NULL;
}

void http_stop(struct http_server *h)
{
	if (!h)
		return;
	__atomic_store_n(&h->stopping, 1, __ATOMIC_RELEASE);
	if (h->be->snap)
		snapshot_kick(h->be->snap);
	MHD_stop_daemon(h->d);
	pthread_key_delete(h->reader_key);
	for (size_t i = 0; i < web_nr_assets; i++)
		free(h->asset_etags[i]);
	free(h->asset_etags);
	free(h->metrics_text);
	pthread_mutex_destroy(&h->metrics_lock);
	free(h);
}

int http_port(const struct http_server *h)
{
	return h->port;
}

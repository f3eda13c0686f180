// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fairness.c - `unfairness` findings from the pipeline's job rows.
 *
 * The pipeline already computes, per window and over the whole run, each
 * task's CPU time against its weight- and demand-aware fair share and each
 * job's unfairness (1 - min/max CPU time among the tasks runnable the
 * whole span), deviations and Jain index.  This analyzer turns them into
 * findings: a job whose unfairness stays above unfairness_threshold for
 * unfairness_min_ns of consecutive windows is one finding (opened, updated
 * each window, closed when it falls back), and at the end of the run a job
 * whose whole-run unfairness is above the threshold gets one more, with the
 * per-task numbers and whether the job could be balanced at all (k tasks
 * on n CPUs share the CPUs evenly only by rotating when k > n and k is not
 * a multiple of n: a static placement leaves them 1 - floor/ceil unfair).
 *
 * The fair shares those numbers compare against come from fairness_fill()
 * below (fairness.h), which the pipeline runs on every window.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "fairness.h"
#include "finding_util.h"

struct fair_item {
	double ratio;		/* demand / weight */
	size_t idx;
};

static int fair_item_cmp(const void *a, const void *b)
{
	const struct fair_item *x = a, *y = b;

	return x->ratio < y->ratio ? -1 : x->ratio > y->ratio;
}

void fairness_fill(const uint64_t *demand, const uint64_t *weight, uint64_t *fair, size_t n,
		   uint64_t capacity)
{
	/*
	 * Serve tasks in order of demand/weight: each whose demand is under
	 * its weighted part of what is left gets all it asked for; once one
	 * does not, every later one gets its weighted part (the water level).
	 */
	struct fair_item *it = malloc((n ? n : 1) * sizeof(*it));
	double cap = (double)capacity, wsum = 0;

	if (!it) {
		for (size_t i = 0; i < n; i++)
			fair[i] = demand[i];	/* no memory: demand-only shares */
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double w = (double)(weight[i] ? weight[i] : 1);

		it[i].ratio = (double)demand[i] / w;
		it[i].idx = i;
		wsum += w;
	}
	qsort(it, n, sizeof(*it), fair_item_cmp);
	for (size_t k = 0; k < n; k++) {
		size_t i = it[k].idx;
		double w = (double)(weight[i] ? weight[i] : 1);
		double part = wsum > 0 ? cap * w / wsum : 0;

		fair[i] = (double)demand[i] <= part ? demand[i] : (uint64_t)part;
		cap -= (double)fair[i];
		if (cap < 0)
			cap = 0;
		wsum -= w;
	}
	free(it);
}

struct fair_job {
	char key[64];
	struct finding_episode ep;
	double area;			/* unfairness x window length */
	double max;
	bool seen;
};

struct fair_state {
	struct analyzer_config cfg;
	struct fair_job *jobs;
	size_t nr, cap;
	uint64_t next_id;
};

static void *fair_create(const struct analyzer_config *cfg)
{
	struct fair_state *s = calloc(1, sizeof(*s));

	if (s)
		s->cfg = *cfg;
	return s;
}

static void fair_configure(void *state, const struct analyzer_config *cfg)
{
	((struct fair_state *)state)->cfg = *cfg;
}

static void fair_destroy(void *state)
{
	struct fair_state *s = state;

	if (!s)
		return;
	free(s->jobs);
	free(s);
}

/* The job a task row belongs to, keyed as the pipeline keys its jobs. */
static void fair_task_key(const struct fair_state *s, const struct model *m,
			  const struct imb_task_sample *ts, char *key, size_t len)
{
	const struct model_task *t = model_task_find(m, ts->pid);
	char kind[12];

	if (t)
		analyzer_job_key(&s->cfg, m, t, key, len, kind, sizeof(kind));
	else if (s->cfg.group_by == ANALYZER_GROUP_COMM)
		snprintf(key, len, "comm:%s", ts->comm);
	else
		snprintf(key, len, "process:%d", ts->tgid ? ts->tgid : ts->pid);
}

static struct fair_job *fair_job_get(struct fair_state *s, const char *key)
{
	for (size_t i = 0; i < s->nr; i++)
		if (!strcmp(s->jobs[i].key, key))
			return &s->jobs[i];
	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct fair_job *n = realloc(s->jobs, cap * sizeof(*n));

		if (!n)
			return NULL;
		s->jobs = n;
		s->cap = cap;
	}
	memset(&s->jobs[s->nr], 0, sizeof(s->jobs[0]));
	snprintf(s->jobs[s->nr].key, sizeof(s->jobs[0].key), "%s", key);
	return &s->jobs[s->nr++];
}

/*
 * The job's name for people into @buf (at most @len - 1 bytes): its cgroup
 * path when the pipeline has one, else its key.  A path that does not fit
 * keeps its tail ("...b/c.scope"), the part that tells one unit from another.
 */
static void fair_job_name(const struct imb_job_sample *jb, char *buf, size_t len)
{
	const char *name = jb->path[0] ? jb->path : jb->key;
	size_t nl = strnlen(name, jb->path[0] ? sizeof(jb->path) : sizeof(jb->key));

	if (nl < len) {
		memcpy(buf, name, nl);
		buf[nl] = '\0';
	} else {
		memcpy(buf, "...", 3);
		memcpy(buf + 3, name + nl - (len - 4), len - 4);
		buf[len - 1] = '\0';
	}
}

/* @src as the inside of a JSON string (quotes, backslashes, controls escaped). */
static void fair_json_esc(const char *src, size_t n, char *dst, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && src[i] && o + 7 < len; i++) {
		unsigned char c = (unsigned char)src[i];

		if (c == '"' || c == '\\')
			o += (size_t)snprintf(dst + o, len - o, "\\%c", c);
		else if (c < 0x20)
			o += (size_t)snprintf(dst + o, len - o, "\\u%04x", c);
		else
			dst[o++] = (char)c;
	}
	dst[o] = '\0';
}

/*
 * Per-task evidence of a job and the balanceability sentence.  A task
 * counts as competing when it was runnable at least competing_min (90 %)
 * as long as the job's most runnable task.
 */
static void fair_job_evidence(const struct fair_state *s, const struct model *m,
			      const struct imb_window *w, const struct imb_job_sample *jb,
			      struct evb *e, char *balance, size_t blen)
{
	uint64_t span = w->t_end_ns - w->t_start_ns, maxrun = 0;
	char tasks[640], key[64];
	size_t o = 0;
	unsigned int k = 0, shown = 0;
	int n = m->nr_cpus;

	for (size_t i = 0; i < w->nr_tasks; i++) {
		const struct imb_task_sample *ts = &w->tasks[i];

		fair_task_key(s, m, ts, key, sizeof(key));
		if (!strcmp(key, jb->key) && ts->run_ns + ts->wait_ns > maxrun)
			maxrun = ts->run_ns + ts->wait_ns;
	}
	tasks[0] = '\0';
	for (size_t i = 0; i < w->nr_tasks; i++) {
		const struct imb_task_sample *ts = &w->tasks[i];

		fair_task_key(s, m, ts, key, sizeof(key));
		if (strcmp(key, jb->key))
			continue;
		if ((double)(ts->run_ns + ts->wait_ns) >= (double)maxrun * s->cfg.competing_min)
			k++;
		if (shown < 12 && o + 120 < sizeof(tasks)) {
			o += (size_t)snprintf(tasks + o, sizeof(tasks) - o,
					      "%s{\"pid\":%d,\"comm\":\"%.15s\",\"run_ns\":%llu,"
					      "\"fair_ns\":%llu}", shown ? "," : "", ts->pid,
					      ts->comm, (unsigned long long)ts->run_ns,
					      (unsigned long long)(ts->fair_share * (double)span));
			shown++;
		}
	}
	if (n > 0 && (int)k > n && k % (unsigned int)n) {
		unsigned int lo = k / (unsigned int)n, hi = lo + 1;

		snprintf(balance, blen,
			 "cannot be balanced: %u tasks on %d CPUs (a fixed placement is %.0f%% "
			 "unfair; only rotation evens it out)", k, n, 100.0 * (1.0 - (double)lo / hi));
	} else if (n > 0) {
		snprintf(balance, blen, "can be balanced: %u tasks on %d CPUs", k, n);
	} else {
		balance[0] = '\0';
	}
	evb_add(e, "\"job\":\"%s\"", jb->key);
	if (jb->path[0]) {
		char path[2 * sizeof(jb->path)];

		fair_json_esc(jb->path, sizeof(jb->path), path, sizeof(path));
		evb_add(e, "\"path\":\"%s\"", path);
	}
	evb_add(e, "\"unfairness\":%.4f", jb->unfairness);
	evb_add(e, "\"jain_index\":%.4f", jb->jain_index);
	evb_add(e, "\"mean_deviation\":%.4f", jb->mean_deviation);
	evb_add(e, "\"max_deviation\":%.4f", jb->max_deviation);
	evb_add(e, "\"competing_tasks\":%u", k);
	evb_add(e, "\"cpus\":%d", n);
	evb_add(e, "\"balanceable\":%s", n > 0 && (int)k > n && k % (unsigned int)n ?
		"false" : "true");
	evb_add(e, "\"threshold\":%.3f", s->cfg.unfairness_threshold);
	evb_add(e, "\"min_ns\":%llu", (unsigned long long)s->cfg.unfairness_min_ns);
	evb_add(e, "\"competing_min\":%.3f", s->cfg.competing_min);
	evb_add(e, "\"span_runnable_min\":%.3f", s->cfg.span_runnable_min);
	evb_add(e, "\"span_life_min\":%.3f", s->cfg.span_life_min);
	evb_add(e, "\"span_ns\":%llu", (unsigned long long)span);
	evb_add(e, "\"tasks\":[%s]", tasks);
}

static void fair_finding(struct fair_state *s, const struct model *m, const struct imb_window *w,
			 const struct imb_job_sample *jb, struct imb_finding *f, const char *what,
			 double value)
{
	struct evb e;
	char balance[160], name[96];

	f->value = value;
	f->threshold = s->cfg.unfairness_threshold;
	evb_init(&e, f->evidence, sizeof(f->evidence));
	fair_job_evidence(s, m, w, jb, &e, balance, sizeof(balance));
	evb_close(&e);
	fair_job_name(jb, name, sizeof(name));
	snprintf(f->summary, sizeof(f->summary), "job %s %s %.1f%% unfair (threshold %.0f%%); %s",
		 name, what, 100 * value, 100 * s->cfg.unfairness_threshold, balance);
}

static void fair_window(void *state, const struct model *m, struct imb_window *w,
			struct finding_list *out)
{
	struct fair_state *s = state;
	uint64_t len = w->t_end_ns - w->t_start_ns;

	for (size_t i = 0; i < s->nr; i++)
		s->jobs[i].seen = false;
	if (len * 2 < s->cfg.window_ns) {
		/* a short last window decides nothing */
		for (size_t i = 0; i < s->nr; i++)
			s->jobs[i].seen = true;
		return;
	}
	for (size_t i = 0; i < w->nr_jobs; i++) {
		const struct imb_job_sample *jb = &w->jobs[i];
		struct fair_job *j;

		if (jb->tasks < 2 || jb->unfairness <= s->cfg.unfairness_threshold)
			continue;
		j = fair_job_get(s, jb->key);
		if (!j)
			return;
		j->seen = true;
		if (finding_episode_extend(&j->ep, FINDING_SRC_FAIRNESS, &s->next_id,
					   w->t_start_ns, w->t_end_ns))
			j->area = j->max = 0;
		j->area += jb->unfairness * (double)len;
		if (jb->unfairness > j->max)
			j->max = jb->unfairness;
		if (j->ep.end_ns - j->ep.start_ns >= s->cfg.unfairness_min_ns) {
			struct imb_finding *f = &j->ep.last;
			double mean = j->area / (double)(j->ep.end_ns - j->ep.start_ns);
			char name[60];

			finding_init(f, j->ep.id, "unfairness", mean >= 2 * s->cfg.unfairness_threshold ?
				     IMB_SEV_CRITICAL : IMB_SEV_WARNING, j->ep.start_ns, j->ep.end_ns);
			fair_job_name(jb, name, sizeof(name));
			snprintf(f->subject, sizeof(f->subject), "job %s", name);
			fair_finding(s, m, w, jb, f, "has been on average", mean);
			finding_episode_publish(&j->ep, out);
		}
	}
	for (size_t i = 0; i < s->nr; i++)
		if (!s->jobs[i].seen)
			finding_episode_end(&s->jobs[i].ep, out);
	/* jobs without an episode need no memory (a daemon runs for months) */
	{
		size_t n = 0;

		for (size_t i = 0; i < s->nr; i++)
			if (s->jobs[i].ep.id)
				s->jobs[n++] = s->jobs[i];
		s->nr = n;
	}
}

static void fair_finish(void *state, const struct model *m, struct imb_window *summary,
			struct finding_list *out)
{
	struct fair_state *s = state;

	for (size_t i = 0; i < s->nr; i++)
		finding_episode_end(&s->jobs[i].ep, out);
	for (size_t i = 0; i < summary->nr_jobs; i++) {
		const struct imb_job_sample *jb = &summary->jobs[i];
		struct imb_finding f;
		char name[48];

		if (jb->tasks < 2 || jb->unfairness <= s->cfg.unfairness_threshold)
			continue;
		finding_init(&f, finding_id_make(FINDING_SRC_FAIRNESS, ++s->next_id), "unfairness",
			     jb->unfairness >= 2 * s->cfg.unfairness_threshold ? IMB_SEV_CRITICAL :
			     IMB_SEV_WARNING, summary->t_start_ns, summary->t_end_ns);
		fair_job_name(jb, name, sizeof(name));
		snprintf(f.subject, sizeof(f.subject), "job %s (whole run)", name);
		fair_finding(s, m, summary, jb, &f, "was over the whole run", jb->unfairness);
		finding_list_add(out, &f);
	}
}

const struct analyzer_ops fairness_analyzer = {
	.name = "fairness",
	.create = fair_create,
	.destroy = fair_destroy,
	.configure = fair_configure,
	.event = NULL,
	.window = fair_window,
	.finish = fair_finish,
};

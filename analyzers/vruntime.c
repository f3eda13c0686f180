// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * vruntime.c - do the run queues' virtual clocks advance at the same rate?
 *
 * A CPU's vruntime reference (from IMB_EV_VRUNTIME when the source has
 * it: the weighted average V = avg_vruntime where given, the better signal
 * on 6.6+ (doc/pelt.md §6), else min_vruntime, or zero_vruntime where the
 * kernel has no min_vruntime; otherwise the model's virtual clock, wall
 * time x NICE_0 weight / the run queue's weight) advances at 1 ns per ns for one nice-0 task and at 1/k
 * for k of them: it is how fast the tasks of that CPU progress.  Per window
 * the rate is the reference's progress over the window length (the CPU
 * rows' vruntime_rate).  Among the CPUs busy at least half the window,
 * drift = (fastest - slowest) / fastest; when it stays above
 * drift_threshold for drift_min_windows windows (2) or more, a `vruntime_drift` finding
 * names the CPUs whose tasks fall behind (rate below fastest x (1 -
 * threshold) over the episode).  Note (doc/pelt.md §6): zero_vruntime is
 * not monotonic, so with a 6.19+ source the rate is a mean over a window,
 * not a lower envelope.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer.h"
#include "finding_util.h"


/* What a CPU's reference is, best first (doc/pelt.md §6). */
enum vr_kind { VR_MODEL = 0, VR_MIN, VR_ZERO, VR_AVG };

static const char *const vr_kind_name[] = {
	"model virtual clock (ns x 1024 / rq weight)", "kernel min_vruntime",
	"kernel zero_vruntime", "kernel avg_vruntime (V)",
};
#define VR_MAX_CPUS 1024

struct vr_cpu {
	int64_t kref;			/* the kernel's V, or min/zero_vruntime, last seen */
	uint8_t kind;			/* enum vr_kind of kref */
	uint64_t prev;			/* reference at the last window end */
	uint8_t prev_kind;		/* enum vr_kind of prev */
	bool valid;
	int64_t ep_progress;		/* over the episode */
	uint64_t ep_ns;
	double rate;			/* last window */
};

struct vr_state {
	struct analyzer_config cfg;
	struct vr_cpu *cpus;
	int nr_cpus;
	uint64_t next_id;
	struct finding_episode ep;
	unsigned int windows;
	double drift_area;
	double max_drift;
};

static void *vr_create(const struct analyzer_config *cfg)
{
	struct vr_state *s = calloc(1, sizeof(*s));

	if (s)
		s->cfg = *cfg;
	return s;
}

static void vr_configure(void *state, const struct analyzer_config *cfg)
{
	((struct vr_state *)state)->cfg = *cfg;
}

static void vr_destroy(void *state)
{
	struct vr_state *s = state;

	if (!s)
		return;
	free(s->cpus);
	free(s);
}

static int vr_grow(struct vr_state *s, int n)
{
	struct vr_cpu *c;

	if (n <= s->nr_cpus)
		return 0;
	c = realloc(s->cpus, (size_t)n * sizeof(*c));
	if (!c)
		return -1;
	memset(c + s->nr_cpus, 0, (size_t)(n - s->nr_cpus) * sizeof(*c));
	s->cpus = c;
	s->nr_cpus = n;
	return 0;
}

/* Keep each CPU's best kernel reference: V when the source has it. */
static void vr_event(void *state, const struct model *m, const struct imb_event *ev)
{
	struct vr_state *s = state;
	struct vr_cpu *c;

	(void)m;
	if (ev->kind != IMB_EV_VRUNTIME || ev->cpu < 0 || ev->cpu >= VR_MAX_CPUS ||
	    vr_grow(s, ev->cpu + 1))
		return;
	c = &s->cpus[ev->cpu];
	if (ev->vruntime.avg_vruntime) {
		c->kref = ev->vruntime.avg_vruntime;
		c->kind = VR_AVG;
	} else {
		c->kref = (int64_t)ev->vruntime.vruntime_ref;
		c->kind = ev->vruntime.is_zero_vruntime ? VR_ZERO : VR_MIN;
	}
}

/* What an episode sums, back to zero. */
static void vr_episode_reset(struct vr_state *s)
{
	s->windows = 0;
	s->drift_area = s->max_drift = 0;
	for (int i = 0; i < s->nr_cpus; i++) {
		s->cpus[i].ep_progress = 0;
		s->cpus[i].ep_ns = 0;
	}
}

static void vr_emit(struct vr_state *s, const struct model *m, struct finding_list *out)
{
	struct imb_finding *f = &s->ep.last;
	double maxr = 0, rates[VR_MAX_CPUS];
	char behind[64], list[512];
	size_t ob = 0, ol = 0;
	struct evb e;
	uint8_t kind = VR_MODEL;
	int n = s->nr_cpus < VR_MAX_CPUS ? s->nr_cpus : VR_MAX_CPUS;

	for (int i = 0; i < n; i++) {
		const struct vr_cpu *c = &s->cpus[i];

		rates[i] = c->ep_ns ? (double)c->ep_progress / (double)c->ep_ns : -1;
		if (rates[i] > maxr)
			maxr = rates[i];
		if (c->kind > kind)
			kind = c->kind;
	}
	behind[0] = list[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (rates[i] < 0)
			continue;
		if (rates[i] < maxr * (1 - s->cfg.drift_threshold) && ob + 8 < sizeof(behind))
			ob += (size_t)snprintf(behind + ob, sizeof(behind) - ob, "%s%d",
					       ob ? "," : "", i);
		if (ol + 32 < sizeof(list))
			ol += (size_t)snprintf(list + ol, sizeof(list) - ol, "%s\"%d\":%.4f",
					       ol ? "," : "", i, rates[i]);
	}
	finding_init(f, s->ep.id, "vruntime_drift", IMB_SEV_WARNING, s->ep.start_ns, s->ep.end_ns);
	snprintf(f->subject, sizeof(f->subject), "cpus %s", behind[0] ? behind : "?");
	f->value = s->windows ? s->drift_area / (double)(s->ep.end_ns - s->ep.start_ns) : 0;
	f->threshold = s->cfg.drift_threshold;
	snprintf(f->summary, sizeof(f->summary),
		 "the tasks of CPU(s) %s fall behind: their %s advances %.0f%% slower than on the "
		 "fastest CPU (mean drift %.0f%%, threshold %.0f%%)", behind[0] ? behind : "?",
		 kind != VR_MODEL ? "vruntime" : "virtual clock",
		 100 * f->value, 100 * f->value, 100 * s->cfg.drift_threshold);
	evb_init(&e, f->evidence, sizeof(f->evidence));
	evb_add(&e, "\"source\":\"%s\"", vr_kind_name[kind]);
	evb_add(&e, "\"windows\":%u", s->windows);
	evb_add(&e, "\"mean_drift\":%.4f", f->value);
	evb_add(&e, "\"max_drift\":%.4f", s->max_drift);
	evb_add(&e, "\"threshold\":%.3f", s->cfg.drift_threshold);
	evb_add(&e, "\"min_windows\":%u", s->cfg.drift_min_windows);
	evb_add(&e, "\"behind\":[%s]", behind);
	evb_add(&e, "\"rate\":{%s}", list);
	evb_close(&e);
	finding_episode_publish(&s->ep, out);
}

static void vr_window(void *state, const struct model *m, struct imb_window *w,
		      struct finding_list *out)
{
	struct vr_state *s = state;
	uint64_t len = w->t_end_ns - w->t_start_ns;
	double maxr = -1, minr = -1, drift = 0;

	if (vr_grow(s, m->nr_cpus) || !len)
		return;
	for (int i = 0; i < m->nr_cpus; i++) {
		struct vr_cpu *c = &s->cpus[i];
		const struct model_cpu *mc = &m->cpus[i];
		uint64_t cur = c->kind != VR_MODEL ? (uint64_t)c->kref : mc->vclock;

		c->rate = -1;
		if (c->valid && c->prev_kind == c->kind) {
			int64_t d = (int64_t)(cur - c->prev);

			c->rate = (double)d / (double)len;
			if ((size_t)i < w->nr_cpus)
				w->cpus[i].vruntime_rate = c->rate;
			if (mc->win_busy_ns * 2 >= len) {
				if (maxr < 0 || c->rate > maxr)
					maxr = c->rate;
				if (minr < 0 || c->rate < minr)
					minr = c->rate;
			} else {
				c->rate = -1;	/* mostly idle: not compared */
			}
		}
		c->prev = cur;
		c->prev_kind = c->kind;
		c->valid = true;
	}
	if (maxr > 0 && minr >= 0)
		drift = (maxr - minr) / maxr;
	if (len * 2 < s->cfg.window_ns)
		return;		/* a short last window decides nothing */
	if (drift > s->cfg.drift_threshold) {
		if (finding_episode_extend(&s->ep, FINDING_SRC_VRUNTIME, &s->next_id,
					   w->t_start_ns, w->t_end_ns))
			vr_episode_reset(s);
		s->windows++;
		s->drift_area += drift * (double)len;
		if (drift > s->max_drift)
			s->max_drift = drift;
		for (int i = 0; i < m->nr_cpus; i++) {
			struct vr_cpu *c = &s->cpus[i];

			if (c->rate < 0)
				continue;
			c->ep_progress += (int64_t)(c->rate * (double)len);
			c->ep_ns += len;
		}
		if (s->windows >= (s->cfg.drift_min_windows ? s->cfg.drift_min_windows : 1))
			vr_emit(s, m, out);
	} else if (s->ep.id) {
		finding_episode_end(&s->ep, out);
		vr_episode_reset(s);
	}
}

static void vr_finish(void *state, const struct model *m, struct imb_window *summary,
		      struct finding_list *out)
{
	struct vr_state *s = state;

	(void)m;
	(void)summary;
	finding_episode_end(&s->ep, out);
	vr_episode_reset(s);
}

const struct analyzer_ops vruntime_analyzer = {
	.name = "vruntime",
	.create = vr_create,
	.destroy = vr_destroy,
	.configure = vr_configure,
	.event = vr_event,
	.window = vr_window,
	.finish = vr_finish,
};

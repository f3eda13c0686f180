// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lost.c - say when the source lost events.
 *
 * A window whose source reported lost events (ring buffer overruns,
 * IMB_EV_LOST) has every other number of that window built on a partial
 * stream.  Consecutive such windows make one `lost_events` finding, so a
 * reader sees when and how much, and which other findings to distrust.
 */
#include <stdlib.h>

#include "analyzer.h"
#include "finding_util.h"

struct lost_state {
	uint64_t next_id;
	uint64_t lost, events;
	unsigned int windows;
	struct imb_finding f;
	bool open;
};

static void *lost_create(const struct analyzer_config *cfg)
{
	(void)cfg;
	return calloc(1, sizeof(struct lost_state));
}

static void lost_destroy(void *state)
{
	free(state);
}

static void lost_close(struct lost_state *s, struct finding_list *out)
{
	if (!s->open)
		return;
	s->open = s->f.open = false;
	finding_list_add(out, &s->f);
}

static void lost_window(void *state, const struct model *m, struct imb_window *w,
			struct finding_list *out)
{
	struct lost_state *s = state;
	struct imb_finding *f = &s->f;
	struct evb e;
	uint64_t start;

	(void)m;
	if (!w->lost_events) {
		lost_close(s, out);
		return;
	}
	if (!s->open) {
		s->lost = s->events = 0;
		s->windows = 0;
		f->id = finding_id_make(FINDING_SRC_LOST, ++s->next_id);
		f->t_start_ns = w->t_start_ns;
	}
	start = f->t_start_ns;
	s->lost += w->lost_events;
	s->events += w->events;
	s->windows++;
	finding_init(f, f->id, "lost_events", IMB_SEV_WARNING, start, w->t_end_ns);
	snprintf(f->subject, sizeof(f->subject), "source");
	f->value = (double)s->lost;
	f->threshold = 0;
	f->open = s->open = true;
	snprintf(f->summary, sizeof(f->summary),
		 "the source lost %llu events in %u window(s) (%llu received): numbers and "
		 "findings of this span rest on a partial stream", (unsigned long long)s->lost,
		 s->windows, (unsigned long long)s->events);
	evb_init(&e, f->evidence, sizeof(f->evidence));
	evb_add(&e, "\"lost_events\":%llu", (unsigned long long)s->lost);
	evb_add(&e, "\"events\":%llu", (unsigned long long)s->events);
	evb_add(&e, "\"windows\":%u", s->windows);
	evb_add(&e, "\"lost_fraction\":%.6f",
		(double)s->lost / (double)(s->lost + s->events ? s->lost + s->events : 1));
	evb_close(&e);
	finding_list_add(out, f);
}

static void lost_finish(void *state, const struct model *m, struct imb_window *summary,
			struct finding_list *out)
{
	(void)m;
	(void)summary;
	lost_close(state, out);
}

const struct analyzer_ops lost_analyzer = {
	.name = "lost",
	.create = lost_create,
	.destroy = lost_destroy,
	.event = NULL,
	.window = lost_window,
	.finish = lost_finish,
};

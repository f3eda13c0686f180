/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * event_text.h - the text event format: one struct imb_event per line.
 *
 *     TS KIND cpu=N key=value ...
 *
 * TS is u64 nanoseconds, KIND an imb_ev_kind_name(); the keys are the
 * field names of the kind's union member in event.h (plus clock_task= and
 * clock_pelt=, which set IMB_EVF_RQ_CLOCKS).  Keys left out are 0 (comm
 * ""), so hand-written scenarios stay short.  prev_state takes the
 * kernel's letters (R R+ S D T t X Z P I) or a number; comm values are
 * percent-encoded for space, '=', '%', '#' and non-printable bytes.
 * format(parse(line)) is canonical and parse(format(ev)) == ev.
 * doc/event-format.md is the user's description.  Pure: no I/O.
 */
#ifndef IMB_EVENT_TEXT_H
#define IMB_EVENT_TEXT_H

#include <stddef.h>

#include "event.h"

#define EVENT_TEXT_MAX_LINE 4096

/** event_text_header - the format's header comment line (no newline) */
const char *event_text_header(void);

/**
 * event_text_format - write @ev as one line (no newline) into @buf
 *
 * Returns the length written, or -ENOSPC when @len is too small, -EINVAL
 * for an unknown kind.
 */
int event_text_format(const struct imb_event *ev, char *buf, size_t len);

/**
 * event_text_parse - parse one line (without or with its newline)
 * @err: receives "field prev_state: not a number" style reasons
 *
 * Returns 0 with @ev filled, 1 for a blank or comment line (@ev untouched),
 * -EINVAL with @err filled for a line that does not parse.
 */
int event_text_parse(const char *line, size_t len, struct imb_event *ev, char *err,
		     size_t errlen);

#endif /* IMB_EVENT_TEXT_H */

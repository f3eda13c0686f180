/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * window_json.h - write the rows of a struct imb_window as JSON objects.
 */
#ifndef IMB_WINDOW_JSON_H
#define IMB_WINDOW_JSON_H

#include "analyzers/pelt_expect.h"
#include "analyzers/window.h"
#include "daemon/sink/json.h"

/** window_json_cpu_fields - a CPU row's members, inside an open object */
void window_json_cpu_fields(struct json *j, const struct imb_cpu_sample *c);
/** window_json_cpu - a CPU row as one object */
void window_json_cpu(struct json *j, const struct imb_cpu_sample *c);
/** window_json_task - a task row as one object */
void window_json_task(struct json *j, const struct imb_task_sample *t);
/** window_json_job - a job row as one object */
void window_json_job(struct json *j, const struct imb_job_sample *b);
/** window_json_pelt_expect - "expected_error": the expected PELT error (pelt_expect.h) */
void window_json_pelt_expect(struct json *j, const struct pelt_expect *e);
/** window_json_finding - a finding as one object (evidence inline) */
void window_json_finding(struct json *j, const struct imb_finding *f);

#endif /* IMB_WINDOW_JSON_H */

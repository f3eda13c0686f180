/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report_pelt.h - the text report's per-CPU and per-group PELT section
 * (engine against the kernel's own values, where the run carries them).
 */
#ifndef IMB_REPORT_PELT_H
#define IMB_REPORT_PELT_H

#include <stdio.h>

struct report_run;

/**
 * report_pelt_text - per CPU and per task group, the engine's averages
 * beside the kernel's; nothing when the run has no kernel PELT records
 *
 * Returns 0, or -1 when out of memory (the groups are left out).
 */
int report_pelt_text(FILE *f, const struct report_run *r);

#endif /* IMB_REPORT_PELT_H */

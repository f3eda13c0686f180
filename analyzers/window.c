// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * window.c - names and lifetime of the per-window snapshot (window.h).
 */
#include <stdlib.h>
#include <string.h>

#include "window.h"

static const char *const group_type_names[] = {
	"has_spare", "fully_busy", "misfit_task", "smt_balance",
	"asym_packing", "imbalanced", "overloaded",
};

const char *imb_group_type_name(int type)
{
	if (type < 0 || type > IMB_GROUP_OVERLOADED)
		return "unknown";
	return group_type_names[type];
}

static const char *const severity_names[] = { "info", "warning", "critical" };

const char *imb_severity_name(int sev)
{
	if (sev < 0 || sev > IMB_SEV_CRITICAL)
		return "unknown";
	return severity_names[sev];
}

int imb_severity_parse(const char *name)
{
	for (int i = 0; i <= IMB_SEV_CRITICAL; i++)
		if (!strcmp(name, severity_names[i]))
			return i;
	return -1;
}

void imb_window_free(struct imb_window *w)
{
	if (!w)
		return;
	free(w->cpus);
	free(w->tasks);
	free(w->jobs);
	free(w->findings);
	free(w->alerts);
	free(w);
}

// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report_pelt.c - the text report's PELT section per CPU and per task group.
 *
 * `analyze` on a recording that carries the kernel's PELT records prints,
 * beside the error distributions, each CPU's averages (the engine's at the
 * end, the kernel's from its last record and how long before the end that
 * record came) and each task group's run queue per CPU: the kernel's values
 * at its last record compared, the engine's at that same instant and the
 * difference, with the number of records compared.  The figures are those
 * of the JSON report's `cpus` and `groups` (group_rows.c builds both).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "daemon/sink/group_rows.h"
#include "daemon/report/report.h"
#include "daemon/report/report_pelt.h"

/* "/a/b", else "autogroup:N" / "cgroup:N" as in the JSON keys. */
static void group_label(char *buf, size_t len, const struct group_row *g)
{
	if (g->path)
		snprintf(buf, len, "%s%s", g->path_truncated ? "..." : "", g->path);
	else if (g->id & IMB_TG_AUTOGROUP)
		snprintf(buf, len, "autogroup:%" PRIu64, (uint64_t)(g->id & ~IMB_TG_AUTOGROUP));
	else
		snprintf(buf, len, "cgroup:%" PRIu64, g->id);
}

static void cpus_text(FILE *f, const struct imb_window *w)
{
	fprintf(f, "\nPELT per CPU at the end: engine / kernel (its last record); the error is\n"
		"measured at the kernel's records (above), not here:\n");
	fprintf(f, "  %-4s %15s %15s %15s\n", "CPU", "util_avg", "runnable_avg", "load_avg");
	for (size_t i = 0; i < w->nr_cpus; i++) {
		const struct imb_cpu_sample *c = &w->cpus[i];
		char u[32], r[32], l[32];

		if (c->kernel_util_avg == IMB_UNKNOWN) {
			fprintf(f, "  %-4d %9" PRIu64 " / -  %9" PRIu64 " / -  %9" PRIu64 " / -\n",
				c->cpu, c->util_avg, c->runnable_avg, c->load_avg);
			continue;
		}
		snprintf(u, sizeof(u), "%" PRIu64 " / %" PRIu64, c->util_avg, c->kernel_util_avg);
		snprintf(r, sizeof(r), "%" PRIu64 " / %" PRIu64, c->runnable_avg,
			 c->kernel_runnable_avg);
		snprintf(l, sizeof(l), "%" PRIu64 " / %" PRIu64, c->load_avg, c->kernel_load_avg);
		fprintf(f, "  %-4d %15s %15s %15s\n", c->cpu, u, r, l);
	}
}

static void groups_text(FILE *f, const struct group_rows *gr)
{
	static const char *const sig[MODEL_SIG__COUNT] = { "util", "runnable", "load" };

	if (!gr->nr_groups)
		return;
	fprintf(f, "\nPELT per task group and CPU, at the kernel's last record compared:\n"
		"kernel / engine (error), and the records compared:\n");
	fprintf(f, "  %-24s %-4s %-22s %-22s %-22s %8s\n", "GROUP", "CPU", sig[0], sig[1], sig[2],
		"records");
	for (size_t i = 0; i < gr->nr_groups; i++) {
		const struct group_row *g = &gr->groups[i];
		char label[64];

		group_label(label, sizeof(label), g);
		for (size_t k = 0; k < g->nr_cpus; k++) {
			const struct group_row_cpu *c = &gr->cpus[g->first + k];
			char col[MODEL_SIG__COUNT][32];

			for (int s = 0; s < MODEL_SIG__COUNT; s++) {
				if (!c->kernel_ns)
					snprintf(col[s], sizeof(col[s]), "- / %" PRIu64, c->avg[s]);
				else if (!c->compared)
					snprintf(col[s], sizeof(col[s]), "%" PRIu64 " / (seed)",
						 c->kernel_avg[s]);
				else
					snprintf(col[s], sizeof(col[s]), "%" PRIu64 " / %" PRId64
						 " (%+" PRId64 ")", c->kernel_avg[s],
						 (int64_t)c->kernel_avg[s] + c->err[s], c->err[s]);
			}
			fprintf(f, "  %-24.24s %-4d %-22s %-22s %-22s %8" PRIu64 "\n",
				k ? "" : label, c->cpu, col[0], col[1], col[2], c->compared);
		}
	}
}

int report_pelt_text(FILE *f, const struct report_run *r)
{
	struct group_rows *gr;

	if (!r->model->has_kernel_pelt)
		return 0;
	cpus_text(f, r->summary);
	gr = group_rows_build(r->model, r->summary->t_end_ns, group_names_path_cb,
			      r->group_names);
	if (!gr)
		return -1;
	groups_text(f, gr);
	group_rows_put(gr);
	return 0;
}

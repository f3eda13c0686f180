// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * topology.c - read CPU topology from a file or from sysfs (topology.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/source/source.h"
#include "daemon/host/topology.h"
#include "daemon/util.h"

#define TOPO_MAX_CPUS 1024

int topology_load(const char *path, struct analyzer_config *cfg, char *err)
{
	FILE *f = fopen(path, "re");
	char line[256];
	int lineno = 0, max_node = -1, rc = 0;

	if (!f) {
		err_set(err, "%s", strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		int cpu, node, llc = -1, core = -1, n, off = 0;
		char *p = line, key[8];
		bool bad;

		lineno++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || !*p)
			continue;
		n = sscanf(p, "cpu %d node %d%n", &cpu, &node, &off);
		bad = n < 2 || cpu < 0 || cpu >= TOPO_MAX_CPUS || node < 0 || node >= TOPO_MAX_CPUS;
		/* then optional 'llc L' and 'core C', in any order */
		for (p += off; !bad && sscanf(p, " %7s%n", key, &off) == 1; ) {
			int v, o2 = 0;

			if (key[0] == '#')
				break;
			p += off;
			if (sscanf(p, " %d%n", &v, &o2) != 1 || v < 0) {
				bad = true;
				break;
			}
			p += o2;
			if (!strcmp(key, "llc") && llc < 0)
				llc = v;
			else if (!strcmp(key, "core") && core < 0)
				core = v;
			else
				bad = true;
		}
		if (bad) {
			err_set(err,
				"line %d: want 'cpu N node M [llc L] [core C]' with N, M < %d",
				lineno, TOPO_MAX_CPUS);
			rc = -EINVAL;
			break;
		}
		cfg->cpu_node[cpu] = node;
		cfg->llc_of[cpu] = llc >= 0 ? llc : node;
		/* no core column: every CPU its own core (no SMT level) */
		cfg->core_of[cpu] = core >= 0 ? core : cpu;
		if (node > max_node)
			max_node = node;
	}
	if (!rc && ferror(f)) {
		err_set(err, "read error");
		rc = -EIO;
	}
	fclose(f);
	if (!rc && max_node < 0) {
		err_set(err, "no 'cpu N node M' line");
		rc = -EINVAL;
	}
	if (!rc)
		cfg->nr_nodes = max_node + 1;
	return rc;
}

static int read_cpulist(const char *path, int node, struct analyzer_config *cfg)
{
	FILE *f = fopen(path, "re");
	char buf[4096], *p;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	p = buf;
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b;

		if (end == p)
			return -EINVAL;
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && c < TOPO_MAX_CPUS; c++)
			cfg->cpu_node[c] = node;
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int topology_probe_sysfs(struct analyzer_config *cfg)
{
	char path[128];
	int nodes = 0;

	for (int n = 0; n < TOPO_MAX_CPUS; n++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		if (read_cpulist(path, n, cfg))
			continue;
		nodes = n + 1;
	}
	cfg->nr_nodes = nodes ? nodes : 1;
	for (int c = 0; c < TOPO_MAX_CPUS; c++) {
		FILE *f;
		int id;

		/* SMT siblings: a core is named by its first thread */
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
			 c);
		f = fopen(path, "re");
		cfg->core_of[c] = f && fscanf(f, "%d", &id) == 1 ? id : c;
		if (f)
			fclose(f);

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index3/id", c);
		f = fopen(path, "re");
		if (!f) {
			cfg->llc_of[c] = cfg->cpu_node[c];
			continue;
		}
		cfg->llc_of[c] = fscanf(f, "%d", &id) == 1 ? id : cfg->cpu_node[c];
		fclose(f);
	}
	return 0;
}

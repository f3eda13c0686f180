/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology.h - CPU topology for the analyzers: from a file (offline,
 * --topology) or from sysfs (live).
 *
 * File format: one line per CPU, '#' comments:
 *     cpu N node M [llc L] [core C]
 * LLC defaults to the node, core to the CPU itself (no SMT siblings).
 */
#ifndef IMB_TOPOLOGY_H
#define IMB_TOPOLOGY_H

#include "analyzers/analyzer.h"

/** topology_load - read a topology file into @cfg; 0 or -errno with @err */
int topology_load(const char *path, struct analyzer_config *cfg, char *err);

/** topology_probe_sysfs - this host's nodes and LLCs into @cfg; 0 or -errno */
int topology_probe_sysfs(struct analyzer_config *cfg);

#endif /* IMB_TOPOLOGY_H */

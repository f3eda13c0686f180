/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * conf.h - the daemon's configuration: every key, its default, and the
 * file parser (/etc/imbalanced/imbalanced.conf, `key = value` lines).
 *
 * All defaults and resource bounds live in config_defaults(); command-line
 * flags override the file; SIGHUP re-reads the file.
 */
#ifndef IMB_CONF_H
#define IMB_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzers/analyzer.h"

#define CONFIG_DEFAULT_PATH SYSCONFDIR "/imbalanced/imbalanced.conf"
#define CONFIG_PATH_MAX 4096
/*
 * The event reader's nice level: enough to keep up with a load of hundreds
 * of runnable tasks in its own autogroup or cgroup (bench/live-overhead.sh:
 * events lost at 0, none at -10), and a weight (9548) that a reader using a
 * few per cent of one CPU never turns into a share it takes from the load.
 */
#define CONFIG_NICE_DEFAULT (-10)
/* systemd's StateDirectory=imbalanced */
#define CONFIG_DEFAULT_STATE_DIR "/var/lib/imbalanced"
#define CONFIG_DEFAULT_DB CONFIG_DEFAULT_STATE_DIR "/imbalanced.db"

/* Bit of config.events for an enum imb_ev_kind (as SOURCE_BPF_EV()). */
#define CONFIG_EV(kind)	(1u << (kind))

enum config_source { CONFIG_SOURCE_AUTO = 0, CONFIG_SOURCE_BPF, CONFIG_SOURCE_TRACEFS };

/*
 * How often the BPF source sends a task group's cgroup path again: a path
 * lost with a full ring or evicted from the table comes back within this,
 * at one record per group per interval.
 */
#define CONFIG_GROUP_PATH_INTERVAL_DEFAULT	10000000000ull	/* ns */

struct config {
	/* pipeline */
	struct analyzer_config analyzer;	/* window and thresholds */
	uint32_t max_tasks;			/* task table bound */
	uint32_t max_groups;			/* (CPU, task group) table bound */
	/* sources */
	int source;				/* enum config_source */
	uint32_t ring_buffer_kb;		/* BPF ring buffer */
	int nice;				/* the event reader's nice level */
	uint32_t tracefs_buffer_kb;		/* tracefs per-CPU buffer */
	uint64_t pelt_se_rate_ns;		/* per-task pelt_se_tp rate limit */
	bool numa_events;			/* attach the NUMA tracepoints */
	bool runtime_all;			/* BPF: every sched_stat_runtime, not only the tick's */
	uint32_t events;			/* CONFIG_EV() bits of the events to attach */
	/* store */
	char db[CONFIG_PATH_MAX];		/* "" = no store */
	uint32_t retention_days;		/* per-window rows */
	uint32_t downsample_days;		/* 1-minute rows */
	uint64_t db_max_bytes;			/* soft bound on the file */
	/* http */
	char listen[128];			/* ADDR:PORT, "" = no HTTP */
	bool allow_remote;			/* non-loopback bind allowed */
	char token_file[CONFIG_PATH_MAX];	/* bearer token, "" = none */
	uint32_t http_max_connections;
	uint32_t http_max_per_ip;
	uint32_t http_timeout_s;
	/* alerts */
	char alert_hook[CONFIG_PATH_MAX];	/* command, "" = none */
	uint32_t alert_hook_timeout_s;
	uint64_t alert_min_ns;			/* condition must hold this long */
	double alert_hysteresis;		/* clear below threshold x (1 - h) */
	uint64_t alert_overload_ns;		/* overload alert after this long */
	uint64_t alert_lost_events;		/* lost events per window to alert */
	uint32_t flight_recorder_s;		/* seconds of raw events kept */
	uint32_t flight_recorder_max_events;	/* bound on the recorder */
	uint32_t flight_recorder_keep;		/* dump files kept in state_dir */
	char state_dir[CONFIG_PATH_MAX];	/* flight-recorder files, default db */
	uint64_t group_path_interval_ns;	/* BPF: resend a group's cgroup path after this */
};

/** config_defaults - fill @c with every default */
void config_defaults(struct config *c);

/**
 * config_load - read @path into @c (keys not in the file keep their value)
 * @missing_ok: a missing file is not an error (the default path)
 * @err: receives "line N: reason" on failure (256 bytes)
 *
 * Returns 0 or -errno.
 */
int config_load(struct config *c, const char *path, bool missing_ok, char *err);

/**
 * config_set - set one key from its text value; 0 or -EINVAL/-ENOENT
 * (the file parser and the command line share it)
 */
int config_set(struct config *c, const char *key, const char *value, char *err);

/** config_write - every key with its current value, as a config file */
void config_write(const struct config *c, FILE *f);

/**
 * config_analyzer_key - the @i-th key that lives in struct analyzer_config
 * (its thresholds: `analyze` offers each as a flag), NULL past the last;
 * its help text into @help and its value in @c into @value (either may be
 * NULL).  The strings are static.
 */
const char *config_analyzer_key(size_t i, const struct config *c, const char **help,
				char *value, size_t len);

#endif /* IMB_CONF_H */

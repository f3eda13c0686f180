/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * http.h - the HTTP API, /metrics, the event stream and the dashboard.
 *
 * One libmicrohttpd daemon (thread per connection, bounded).  Data come
 * from a backend with two implementations: the live daemon (a snapshot
 * holder, plus the store for longer history when it has one) and `serve
 * --db FILE` (the store only).  Every HTTP thread reads the store through
 * its own read-only connection.  Only http.c includes <microhttpd.h>.
 *
 * Endpoints (doc/interfaces.md): /api/v1/status, /cpus, /tasks?top=&sort=,
 * /jobs, /groups (live only), /findings?since=&kind=&severity=, /timeseries?metric=&cpu=&job=
 * &since=&until=, /api/v1/stream (server-sent events), /metrics, / and
 * the dashboard assets.  Errors are JSON {"error": "...", "status": N}.
 */
#ifndef IMB_HTTP_H
#define IMB_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/sink/snapshot.h"

/* Defaults, in one place. */
#define HTTP_DEFAULT_LISTEN		"127.0.0.1:9464"
#define HTTP_DEFAULT_MAX_CONNECTIONS	64
#define HTTP_DEFAULT_MAX_PER_IP		32
#define HTTP_DEFAULT_TIMEOUT_S		30
#define HTTP_DEFAULT_MEMORY_LIMIT	(64 * 1024)	/* per connection */
#define HTTP_DEFAULT_STREAM_CLIENTS	16
#define HTTP_MAX_URL			4096
#define HTTP_MAX_TOP			10000

struct http_opts {
	const char *listen;		/* "ADDR:PORT", "[V6]:PORT", "PORT"; NULL = default */
	bool allow_remote;		/* required to bind a non-loopback address */
	const char *token_file;		/* bearer token required when set */
	unsigned int max_connections;	/* 0 = default, likewise below */
	unsigned int max_per_ip;
	unsigned int timeout_s;
	size_t memory_limit;
	unsigned int max_stream_clients;
	int keepalive_ms;		/* stream keep-alive comment; 0 = 10000 */
};

/* Where the data come from.  Live: snap set (db_path optional); serve:
 * snap NULL and db_path set. */
struct http_backend {
	struct snapshot *snap;
	const char *db_path;
	const char *version;		/* reported in /status and /metrics */
};

struct http_server;

/**
 * http_start - bind and start serving
 * @err: receives a static reason on failure (may be NULL)
 *
 * Returns the server (stop with http_stop()) or NULL with errno set:
 * EPERM for a non-loopback address without allow_remote, EINVAL for a bad
 * listen address, EACCES/ENOENT for an unreadable or empty token file,
 * EADDRINUSE and friends from bind.  @backend must outlive the server.
 */
struct http_server *http_start(const struct http_opts *opts, struct http_backend *backend,
			       const char **err);
/** http_stop - close the stream clients, stop and free; accepts NULL */
void http_stop(struct http_server *h);
/** http_port - the bound TCP port (useful with port 0) */
int http_port(const struct http_server *h);

#endif /* IMB_HTTP_H */

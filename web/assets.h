/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * assets.h - the dashboard files embedded into the binary at build time.
 *
 * web/embed.sh writes web/assets.c (in the build tree) from web/index.html,
 * web/app.js, web/style.css and Debian's dygraphs (libjs-dygraphs), so the
 * daemon serves the dashboard with no files, package or CDN at run time.
 */
#ifndef IMB_WEB_ASSETS_H
#define IMB_WEB_ASSETS_H

#include <stddef.h>

struct web_asset {
	const char *path;		/* URL path, e.g. "/app.js" */
	const char *type;		/* Content-Type */
	const unsigned char *data;
	size_t len;
};

extern const struct web_asset web_assets[];
extern const size_t web_nr_assets;

#endif /* IMB_WEB_ASSETS_H */

# SPDX-License-Identifier: GPL-2.0-or-later
# web/ rules.

# --- dashboard, embedded at build time ---
# web/assets.c holds index.html, app.js, style.css and Debian's dygraphs
# (libjs-dygraphs) as byte arrays; override DYGRAPHS_DIR on the make
# command line for another copy of dygraphs.
DYGRAPHS_DIR = /usr/share/javascript/dygraphs
WEB_FILES = $(top_srcdir)/web/index.html $(top_srcdir)/web/app.js $(top_srcdir)/web/style.css
web/assets.c: $(top_srcdir)/web/embed.sh $(WEB_FILES) $(DYGRAPHS_DIR)/dygraph.min.js $(DYGRAPHS_DIR)/dygraph.min.css
	$(AM_V_GEN)mkdir -p web && $(SHELL) $(top_srcdir)/web/embed.sh $@ \
		'/|text/html; charset=utf-8|$(top_srcdir)/web/index.html' \
		'/app.js|text/javascript; charset=utf-8|$(top_srcdir)/web/app.js' \
		'/style.css|text/css; charset=utf-8|$(top_srcdir)/web/style.css' \
		'/dygraph.min.js|text/javascript; charset=utf-8|$(DYGRAPHS_DIR)/dygraph.min.js' \
		'/dygraph.min.css|text/css; charset=utf-8|$(DYGRAPHS_DIR)/dygraph.min.css'
CLEANFILES += web/assets.c
EXTRA_DIST += web/embed.sh web/index.html web/app.js web/style.css
# --- end dashboard ---

# SPDX-License-Identifier: GPL-2.0-or-later
# daemon/ rules.

# --- sinks: json, store, http, metrics, snapshot (owner: store/http) ---
# One static library so the binary (and test programs) link the sinks in
# one go: add daemon/libimbsink.a $(IMB_SINK_LIBS) to a program's LDADD.
noinst_LIBRARIES += daemon/libimbsink.a
daemon_libimbsink_a_SOURCES = \
	daemon/json.h daemon/json.c
daemon_libimbsink_a_CFLAGS = $(AM_CFLAGS)
IMB_SINK_LIBS = daemon/libimbsink.a analyzers/libimbcore.a -lm
# --- end sinks ---

# SPDX-License-Identifier: GPL-2.0-or-later
# daemon/ rules.

# --- sinks: json, store, http, metrics, snapshot (owner: store/http) ---
# One static library so the binary (and test programs) link the sinks in
# one go: add daemon/libimbsink.a $(IMB_SINK_LIBS) to a program's LDADD.
noinst_LIBRARIES += daemon/libimbsink.a
daemon_libimbsink_a_SOURCES = \
	daemon/json.h daemon/json.c \
	daemon/store.h daemon/store.c \
	daemon/metrics.h daemon/metrics.c \
	daemon/snapshot.h daemon/snapshot.c \
	daemon/http.h daemon/http.c \
	daemon/window_json.h daemon/window_json.c \
	daemon/group_rows.h daemon/group_rows.c \
	web/assets.h
nodist_daemon_libimbsink_a_SOURCES = web/assets.c
daemon_libimbsink_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(MHD_CFLAGS)
IMB_SINK_LIBS = daemon/libimbsink.a analyzers/libimbcore.a $(SQLITE_LIBS) $(MHD_LIBS) -lpthread -lm
# --- end sinks ---

# --- live BPF source and host probe (owner: bpf) ---
# daemon/libimbbpf.a: the BPF loader (the only user of <bpf/libbpf.h> and the
# skeleton), the table of group paths it fills, and hostinfo (`imbalanced check`).  Link with $(IMB_BPF_LIBS).
noinst_LIBRARIES += daemon/libimbbpf.a
daemon_libimbbpf_a_SOURCES = \
	daemon/source_bpf.h daemon/source_bpf.c \
	daemon/group_names.h daemon/group_names.c \
	daemon/hostinfo.h daemon/hostinfo.c
nodist_daemon_libimbbpf_a_SOURCES = bpf/imbalance.skel.h
daemon_libimbbpf_a_CPPFLAGS = $(AM_CPPFLAGS) $(LIBBPF_CFLAGS)
daemon_libimbbpf_a_CFLAGS = $(AM_CFLAGS)
# The skeleton is generated: make it before the loader compiles.
daemon/libimbbpf_a-source_bpf.$(OBJEXT): bpf/imbalance.skel.h
IMB_BPF_LIBS = daemon/libimbbpf.a analyzers/libimbcore.a $(LIBBPF_LIBS)
# --- end live BPF source ---

# --- offline sources: trace.dat and text (owners: tracedat, text) ---
# daemon/libimbsrc.a: file readers behind daemon/source.h.  Each owner
# appends its file to the _SOURCES variable.
noinst_LIBRARIES += daemon/libimbsrc.a
daemon_libimbsrc_a_SOURCES = daemon/source.h daemon/source_text.c
daemon_libimbsrc_a_CPPFLAGS = $(AM_CPPFLAGS) $(TRACECMD_CFLAGS) $(TRACEEVENT_CFLAGS)
# --- end offline sources ---

# --- offline sources: trace.dat and text (integrator) ---
daemon_libimbsrc_a_SOURCES += \
	daemon/source_tracedat.c daemon/source_tracedat.h \
	daemon/tracedat_repair.h daemon/tracedat_repair.c \
	daemon/tracedat_par.h daemon/tracedat_par.c \
	daemon/evring.h daemon/evring.c \
	daemon/evmerge.h daemon/evmerge.c
IMB_SRC_LIBS = daemon/libimbsrc.a analyzers/libimbcore.a $(TRACECMD_LIBS) $(TRACEEVENT_LIBS) -lz
# --- end offline sources ---

# --- the imbalanced binary (integrator) ---
bin_PROGRAMS += imbalanced
imbalanced_SOURCES = \
	daemon/main.c daemon/cli.h daemon/cli.c \
	daemon/cmd_analyze.c daemon/cmd_check.c daemon/cmd_run.c daemon/cmd_serve.c daemon/cmd_config.c \
	daemon/conf.h daemon/conf.c \
	daemon/report.h daemon/report.c \
	daemon/progress.h daemon/progress.c \
	daemon/runtime.h daemon/runtime.c \
	daemon/alerts.h daemon/alerts.c \
	daemon/flightrec.h daemon/flightrec.c \
	daemon/priority.h daemon/priority.c \
	daemon/topology.h daemon/topology.c \
	daemon/cgroup_paths.h daemon/cgroup_paths.c
imbalanced_CPPFLAGS = $(AM_CPPFLAGS) $(TRACEFS_CFLAGS) $(SYSTEMD_CFLAGS)
imbalanced_LDADD = daemon/libimbsrc.a daemon/libimbsink.a daemon/libimbbpf.a \
	daemon/libimbtracefs.a analyzers/libimbcore.a \
	$(TRACECMD_LIBS) $(TRACEFS_LIBS) $(TRACEEVENT_LIBS) $(LIBBPF_LIBS) \
	$(SQLITE_LIBS) $(MHD_LIBS) $(SYSTEMD_LIBS) -lz -lpthread -lm
# --- end the imbalanced binary ---

# --- live tracefs source (owner: tracefs source) ---
# The fallback when BPF cannot load: add $(IMB_TRACEFS_LIBS) to LDADD.
noinst_LIBRARIES += daemon/libimbtracefs.a
daemon_libimbtracefs_a_SOURCES = \
	daemon/source_tracefs.h daemon/source_tracefs.c
daemon_libimbtracefs_a_CFLAGS = $(AM_CFLAGS) $(TRACEFS_CFLAGS) $(TRACEEVENT_CFLAGS)
IMB_TRACEFS_LIBS = daemon/libimbtracefs.a analyzers/libimbcore.a \
	$(TRACEFS_LIBS) $(TRACEEVENT_LIBS)
# --- end live tracefs source ---

# --- systemd unit and the documented configuration file (integrator) ---
systemdsystemunit_DATA = daemon/imbalanced.service
CLEANFILES += daemon/imbalanced.service
EXTRA_DIST += daemon/imbalanced.service.in
daemon/imbalanced.service: $(srcdir)/daemon/imbalanced.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) daemon && \
	$(SED) -e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
		$(srcdir)/daemon/imbalanced.service.in > $@.tmp && mv $@.tmp $@

imbalancedconfdir = $(sysconfdir)/imbalanced
imbalancedconf_DATA = doc/imbalanced.conf
CLEANFILES += doc/imbalanced.conf
doc/imbalanced.conf: imbalanced$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) doc && ./imbalanced$(EXEEXT) config --defaults > $@.tmp && mv $@.tmp $@
# --- end systemd unit ---

# SPDX-License-Identifier: GPL-2.0-or-later
# daemon/ rules.

# --- sinks: json, store, http, metrics, snapshot ---
# One static library so the binary (and test programs) link the sinks in
# one go: add daemon/libimbsink.a $(IMB_SINK_LIBS) to a program's LDADD.
noinst_LIBRARIES += daemon/libimbsink.a
daemon_libimbsink_a_SOURCES = \
	daemon/sink/json.h daemon/sink/json.c \
	daemon/sink/store.h daemon/sink/store.c \
	daemon/sink/metrics.h daemon/sink/metrics.c \
	daemon/sink/snapshot.h daemon/sink/snapshot.c \
	daemon/sink/http.h daemon/sink/http.c \
	daemon/sink/window_json.h daemon/sink/window_json.c \
	daemon/sink/group_rows.h daemon/sink/group_rows.c \
	web/assets.h
nodist_daemon_libimbsink_a_SOURCES = web/assets.c
daemon_libimbsink_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(MHD_CFLAGS)
IMB_SINK_LIBS = daemon/libimbsink.a analyzers/libimbcore.a $(SQLITE_LIBS) $(MHD_LIBS) -lpthread -lm
# --- end sinks ---

# --- live BPF source and host probe ---
# daemon/libimbbpf.a: the BPF loader and the PELT hook probe (the only users of
# <bpf/libbpf.h> and the skeleton), the table of group paths it fills, and hostinfo (`imbalanced check`).  Link with $(IMB_BPF_LIBS).
noinst_LIBRARIES += daemon/libimbbpf.a
daemon_libimbbpf_a_SOURCES = \
	daemon/source/bpf.h daemon/source/bpf.c \
	daemon/source/group_names.h daemon/source/group_names.c \
	daemon/host/hostinfo.h daemon/host/hostinfo.c \
	daemon/source/pelt_hook.h daemon/source/pelt_hook.c
nodist_daemon_libimbbpf_a_SOURCES = bpf/imbalance.skel.h
daemon_libimbbpf_a_CPPFLAGS = $(AM_CPPFLAGS) $(LIBBPF_CFLAGS)
daemon_libimbbpf_a_CFLAGS = $(AM_CFLAGS)
# The skeleton is generated: make it before the loader compiles.
daemon/source/libimbbpf_a-bpf.$(OBJEXT): bpf/imbalance.skel.h
daemon/source/libimbbpf_a-pelt_hook.$(OBJEXT): bpf/imbalance.skel.h
IMB_BPF_LIBS = daemon/libimbbpf.a analyzers/libimbcore.a $(LIBBPF_LIBS)
# --- end live BPF source ---

# --- the sched events' fields, for trace.dat and tracefs ---
# daemon/libimbsched.a: one table and decoder of the scheduler's trace event
# records (sched_fields.h), linked by both sources' libraries below.
noinst_LIBRARIES += daemon/libimbsched.a
daemon_libimbsched_a_SOURCES = \
	daemon/source/sched_fields.h daemon/source/sched_fields.c
daemon_libimbsched_a_CPPFLAGS = $(AM_CPPFLAGS) $(TRACEEVENT_CFLAGS)
# --- end sched fields ---

# --- offline sources: trace.dat and text ---
# daemon/libimbsrc.a: the file readers behind daemon/source/source.h, and
# the calls through struct source_ops every source shares.
noinst_LIBRARIES += daemon/libimbsrc.a
daemon_libimbsrc_a_SOURCES = daemon/source/source.h daemon/source/source.c \
	daemon/source/file.c daemon/source/text.c \
	daemon/source/tracedat.c daemon/source/tracedat.h \
	daemon/source/tracedat_repair.h daemon/source/tracedat_repair.c
daemon_libimbsrc_a_CPPFLAGS = $(AM_CPPFLAGS) $(TRACECMD_CFLAGS) $(TRACEEVENT_CFLAGS) $(ZSTD_CFLAGS)
daemon_libimbsrc_a_SOURCES += \
	daemon/source/tracedat_par.h daemon/source/tracedat_par.c \
	daemon/source/evring.h daemon/source/evring.c \
	daemon/source/evmerge.h daemon/source/evmerge.c \
	daemon/source/tracedat_layout.h daemon/source/tracedat_layout.c \
	daemon/source/tracedat_cpu.h daemon/source/tracedat_cpu.c
IMB_SRC_LIBS = daemon/libimbsrc.a daemon/libimbsched.a analyzers/libimbcore.a $(TRACECMD_LIBS) $(TRACEEVENT_LIBS) $(ZSTD_LIBS) -lz
# --- end offline sources ---

# --- the imbalanced binary ---
bin_PROGRAMS += imbalanced
imbalanced_SOURCES = \
	daemon/main.c daemon/cli/cli.h daemon/cli/cli.c \
	daemon/cli/cmd_analyze.c daemon/cli/cmd_check.c daemon/cli/cmd_run.c daemon/cli/cmd_serve.c daemon/cli/cmd_config.c \
	daemon/cli/conf.h daemon/cli/conf.c \
	daemon/report/report.h daemon/report/report.c \
	daemon/cli/progress.h daemon/cli/progress.c \
	daemon/report/report_pelt.h daemon/report/report_pelt.c \
	daemon/live/runtime.h daemon/live/runtime.c \
	daemon/source/live.h daemon/source/live.c \
	daemon/sink/event_writer.h daemon/sink/event_writer.c \
	daemon/cli/cmd_record.c \
	daemon/sink/alerts.h daemon/sink/alerts.c \
	daemon/sink/flightrec.h daemon/sink/flightrec.c \
	daemon/live/priority.h daemon/live/priority.c \
	daemon/host/topology.h daemon/host/topology.c \
	daemon/host/cgroup_paths.h daemon/host/cgroup_paths.c
imbalanced_CPPFLAGS = $(AM_CPPFLAGS) $(TRACEFS_CFLAGS) $(SYSTEMD_CFLAGS)
imbalanced_LDADD = daemon/libimbsrc.a daemon/libimbsink.a daemon/libimbbpf.a \
	daemon/libimbtracefs.a daemon/libimbsched.a analyzers/libimbcore.a \
	$(TRACECMD_LIBS) $(TRACEFS_LIBS) $(TRACEEVENT_LIBS) $(LIBBPF_LIBS) \
	$(SQLITE_LIBS) $(MHD_LIBS) $(SYSTEMD_LIBS) $(ZSTD_LIBS) -lz -lpthread -lm
# --- end the imbalanced binary ---

# --- live tracefs source ---
# The fallback when BPF cannot load: add $(IMB_TRACEFS_LIBS) to LDADD.
noinst_LIBRARIES += daemon/libimbtracefs.a
daemon_libimbtracefs_a_SOURCES = \
	daemon/source/tracefs.h daemon/source/tracefs.c
daemon_libimbtracefs_a_CFLAGS = $(AM_CFLAGS) $(TRACEFS_CFLAGS) $(TRACEEVENT_CFLAGS)
IMB_TRACEFS_LIBS = daemon/libimbtracefs.a daemon/libimbsched.a analyzers/libimbcore.a \
	$(TRACEFS_LIBS) $(TRACEEVENT_LIBS)
# --- end live tracefs source ---

# --- systemd unit and the documented configuration file ---
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

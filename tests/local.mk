# SPDX-License-Identifier: GPL-2.0-or-later
# tests/ - unit tests (C, TAP) and behaviour tests (shell .t, TAP).

IMB_TEST_LIBS = analyzers/libimbcore.a -lm

# --- workload and recorded fixtures (hogs, record-fixture.sh, fixtures/) ---
# tests/helpers/hogs: threads with known CPU times, the ground truth of the fixtures.
check_PROGRAMS += tests/helpers/hogs
tests_helpers_hogs_SOURCES = tests/helpers/hogs.c
tests_helpers_hogs_LDADD = -lpthread
EXTRA_DIST += tests/helpers/record-fixture.sh \
	tests/fixtures/README.md \
	tests/fixtures/rtapp-periodic.json tests/fixtures/rtapp-truth.sh \
	tests/fixtures/hogs-periodic.dat tests/fixtures/hogs-periodic.truth.json \
	tests/fixtures/hogs3on2.dat tests/fixtures/hogs3on2.truth.json \
	tests/fixtures/hogs2on2.dat tests/fixtures/hogs2on2.truth.json \
	tests/fixtures/groups-periodic.txt.gz \
	tests/fixtures/groups-loaded.txt.gz tests/fixtures/rtapp-group.txt.gz \
	tests/fixtures/groups-exits.txt.gz tests/fixtures/messaging-wrap.txt.gz \
	tests/fixtures/rtapp-periodic.dat tests/fixtures/rtapp-periodic.truth.json
# --- end workload and fixtures ---

# --- sinks tests: json, store, http, metrics, dashboard ---
check_PROGRAMS += tests/unit/test_json
tests_unit_test_json_SOURCES = tests/unit/test_json.c
tests_unit_test_json_LDADD = $(IMB_SINK_LIBS)
TESTS += tests/unit/test_json
check_PROGRAMS += tests/unit/test_store
tests_unit_test_store_SOURCES = tests/unit/test_store.c
tests_unit_test_store_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_store_LDADD = $(IMB_SINK_LIBS)
TESTS += tests/unit/test_store
TESTS += tests/t/store-analyze.t
dist_check_SCRIPTS += tests/t/store-analyze.t
check_PROGRAMS += tests/unit/test_flightrec
tests_unit_test_flightrec_SOURCES = tests/unit/test_flightrec.c daemon/sink/flightrec.c daemon/live/priority.c
tests_unit_test_flightrec_LDADD = analyzers/libimbcore.a -lz -lpthread
TESTS += tests/unit/test_flightrec
# tests/helpers/http-feeder: the real HTTP server fed synthetic windows.
check_PROGRAMS += tests/helpers/http-feeder
tests_helpers_http_feeder_SOURCES = tests/helpers/http-feeder.c
tests_helpers_http_feeder_LDADD = $(IMB_SINK_LIBS)
TESTS += tests/t/http.t tests/t/http-real.t
dist_check_SCRIPTS += tests/t/http.t tests/t/http-real.t
EXTRA_DIST += tests/helpers/http-lib.sh tests/helpers/live-lib.sh tests/helpers/tap-lib.sh tests/helpers/metrics-check.awk tests/helpers/prometheus-alerts-test.yml
TESTS += tests/t/dashboard.t
dist_check_SCRIPTS += tests/t/dashboard.t
EXTRA_DIST += tests/helpers/cdp-dashboard.py
TESTS += tests/t/bench-http.t
dist_check_SCRIPTS += tests/t/bench-http.t
CLEANFILES += tests/dashboard-live-laptop.png tests/dashboard-live-phone.png \
	tests/dashboard-serve-laptop.png tests/dashboard-serve-phone.png \
	tests/dashboard-live-chromium.log tests/dashboard-serve-chromium.log
# --- end sinks tests ---

# --- PELT engine tests ---
check_PROGRAMS += tests/unit/test_pelt
tests_unit_test_pelt_SOURCES = tests/unit/test_pelt.c tests/unit/tap.h
tests_unit_test_pelt_LDADD = $(IMB_TEST_LIBS)
TESTS += tests/unit/test_pelt tests/t/bench-pelt-engine.t
dist_check_SCRIPTS += tests/t/bench-pelt-engine.t
EXTRA_DIST += tests/helpers/pelt-reference.py
# --- end PELT engine tests ---

# --- model and pipeline tests ---
check_PROGRAMS += tests/unit/test_model
tests_unit_test_model_SOURCES = tests/unit/test_model.c tests/unit/tap.h
tests_unit_test_model_LDADD = $(IMB_TEST_LIBS)
TESTS += tests/unit/test_model
# --- end model and pipeline tests ---

# --- live BPF source and host probe ---
check_PROGRAMS += tests/unit/test_source_bpf tests/unit/test_hostinfo
TESTS += tests/unit/test_source_bpf tests/unit/test_hostinfo
tests_unit_test_source_bpf_SOURCES = tests/unit/test_source_bpf.c
tests_unit_test_source_bpf_LDADD = $(IMB_BPF_LIBS) -lpthread
tests_unit_test_hostinfo_SOURCES = tests/unit/test_hostinfo.c
tests_unit_test_hostinfo_LDADD = $(IMB_BPF_LIBS)
# the task groups' path table, and the groups listed live
check_PROGRAMS += tests/unit/test_group_names
TESTS += tests/unit/test_group_names
tests_unit_test_group_names_SOURCES = tests/unit/test_group_names.c tests/unit/tap.h daemon/source/group_names.c
tests_unit_test_group_names_LDADD = analyzers/libimbcore.a
TESTS += tests/t/groups-live.t
dist_check_SCRIPTS += tests/t/groups-live.t
# record.t: the record verb live, and the PELT hook mode check reports
TESTS += tests/t/record.t
dist_check_SCRIPTS += tests/t/record.t
# --- end live BPF source ---

# --- cgroup v2 paths of fairness jobs (daemon/host/cgroup_paths.c) ---
# The resolver over a tree made by the test and the host's v2 hierarchy;
# cgroup-paths-live.t: the daemon with group_by=cgroup names a v2 cgroup's
# job by its path (needs root).
check_PROGRAMS += tests/unit/test_cgroup_paths
TESTS += tests/unit/test_cgroup_paths
tests_unit_test_cgroup_paths_SOURCES = tests/unit/test_cgroup_paths.c tests/unit/tap.h daemon/host/cgroup_paths.c
TESTS += tests/t/cgroup-paths-live.t
dist_check_SCRIPTS += tests/t/cgroup-paths-live.t
# --- end cgroup v2 paths ---

# --- analyzers: scenario generator, replay harness, scenario checks ---
check_PROGRAMS += tests/helpers/scn-replay
tests_helpers_scn_replay_SOURCES = tests/helpers/scn-replay.c
tests_helpers_scn_replay_LDADD = $(IMB_TEST_LIBS)
check_PROGRAMS += tests/unit/test_analyzers
tests_unit_test_analyzers_SOURCES = tests/unit/test_analyzers.c tests/unit/tap.h
tests_unit_test_analyzers_LDADD = $(IMB_TEST_LIBS)
TESTS += tests/unit/test_analyzers tests/t/scenarios.t tests/t/bench-detection.t
dist_check_SCRIPTS += tests/t/scenarios.t tests/t/bench-detection.t
EXTRA_DIST += tests/helpers/scenario-gen.py tests/helpers/scenario-check.py \
	tests/scenarios/8on8.scn tests/scenarios/9on8-sync.scn \
	tests/scenarios/9on8-stagger.scn tests/scenarios/drift.scn \
	tests/scenarios/numa.scn tests/scenarios/pingpong.scn tests/scenarios/lost.scn \
	tests/scenarios/pinned.scn tests/scenarios/groups.scn tests/scenarios/nice.scn \
	tests/scenarios/numa-swap.scn tests/scenarios/smt.scn tests/scenarios/wakeups.scn.in
# --- end analyzers ---

# --- text event format tests ---
check_PROGRAMS += tests/unit/test_event_text
tests_unit_test_event_text_SOURCES = tests/unit/test_event_text.c tests/unit/tap.h
tests_unit_test_event_text_LDADD = daemon/libimbsrc.a $(IMB_TEST_LIBS)
TESTS += tests/unit/test_event_text
EXTRA_DIST += tests/fuzz/fuzz_text.c
TESTS += tests/t/fuzz-text.t
dist_check_SCRIPTS += tests/t/fuzz-text.t
clean-local: clean-local-fuzz-text
clean-local-fuzz-text:
	rm -rf tests/fuzz/fuzz-text.dir
.PHONY: clean-local-fuzz-text
# --- end text event format tests ---

# --- text format, offline sources and analyze ---
TESTS += tests/t/switch-accounting.t tests/t/pelt-avg-only.t tests/t/pelt-groups.t \
	tests/t/pelt-loaded.t tests/t/pelt-plain.t
dist_check_SCRIPTS += tests/t/switch-accounting.t tests/t/pelt-avg-only.t tests/t/pelt-groups.t \
	tests/t/pelt-loaded.t tests/t/pelt-plain.t
TESTS += tests/t/analyze.t tests/t/live.t tests/t/bench-analyze-speed.t \
	tests/t/bench-pelt-accuracy.t tests/t/bench-live-overhead.t tests/t/systemd.t tests/t/alerts.t
dist_check_SCRIPTS += tests/t/analyze.t tests/t/live.t tests/t/bench-analyze-speed.t \
	tests/t/bench-pelt-accuracy.t tests/t/bench-live-overhead.t tests/t/systemd.t tests/t/alerts.t
# the parallel trace.dat reader against the serial one (generated traces
# need bench/tracedat-gen, built with the bench programs)
TESTS += tests/t/tracedat-parallel.t tests/t/analyze-progress.t
dist_check_SCRIPTS += tests/t/tracedat-parallel.t tests/t/analyze-progress.t
# churn.t takes CPU 1 offline for 2 s: it runs after every other test, alone
TESTS += tests/t/churn.t
dist_check_SCRIPTS += tests/t/churn.t
tests/t/churn.log: $(filter-out tests/t/churn.log,$(TEST_LOGS))
EXTRA_DIST += tests/lsan.supp tests/fixtures/no-switch.dat \
	tests/fixtures/pelt-lost.dat tests/fixtures/pelt-uprobe.c tests/fixtures/pelt-uprobe.sh \
	tests/fixtures/hogs3on2.tgids tests/fixtures/hogs2on2.tgids \
	tests/fixtures/hogs-periodic.tgids tests/fixtures/rtapp-periodic.tgids
# --- end text format, offline sources and analyze ---

# --- live tracefs source ---
# Needs root and tracefs: 3 busy threads' CPU time vs sched_stat_runtime,
# time order, instance removed and top-level settings untouched on close.
# `tests/unit/test_source_tracefs --measure SECONDS` measures events/s beside a load.
check_PROGRAMS += tests/unit/test_source_tracefs
TESTS += tests/unit/test_source_tracefs
tests_unit_test_source_tracefs_SOURCES = tests/unit/test_source_tracefs.c
tests_unit_test_source_tracefs_LDADD = $(IMB_TRACEFS_LIBS) -lpthread -lm
# --- end live tracefs source ---

# --- trace.dat source tests ---
check_PROGRAMS += tests/unit/test_source_tracedat
tests_unit_test_source_tracedat_SOURCES = tests/unit/test_source_tracedat.c tests/unit/tap.h
tests_unit_test_source_tracedat_LDADD = $(IMB_SRC_LIBS) -lm
TESTS += tests/unit/test_source_tracedat tests/t/fuzz-tracedat.t
check_PROGRAMS += tests/unit/test_wake_ring
tests_unit_test_wake_ring_SOURCES = tests/unit/test_wake_ring.c tests/unit/tap.h
TESTS += tests/unit/test_wake_ring
check_PROGRAMS += tests/unit/test_tracedat_cpu
tests_unit_test_tracedat_cpu_SOURCES = tests/unit/test_tracedat_cpu.c tests/unit/tap.h
tests_unit_test_tracedat_cpu_CPPFLAGS = $(AM_CPPFLAGS) $(ZSTD_CFLAGS)
tests_unit_test_tracedat_cpu_LDADD = $(IMB_SRC_LIBS)
TESTS += tests/unit/test_tracedat_cpu tests/t/fuzz-tracedat-cpu.t
dist_check_SCRIPTS += tests/t/fuzz-tracedat-cpu.t
EXTRA_DIST += tests/fuzz/fuzz_tracedat_cpu.c tests/helpers/ringpages.py
clean-local: clean-local-fuzz-tracedat-cpu
clean-local-fuzz-tracedat-cpu:
	rm -rf tests/fuzz/fuzz-tracedat_cpu.dir
.PHONY: clean-local-fuzz-tracedat-cpu
dist_check_SCRIPTS += tests/t/fuzz-tracedat.t tests/fuzz/fuzz.sh
EXTRA_DIST += tests/fuzz/fuzz_tracedat.c
clean-local: clean-local-fuzz-tracedat
clean-local-fuzz-tracedat:
	rm -rf tests/fuzz/fuzz-tracedat.dir
.PHONY: clean-local-fuzz-tracedat
# --- end trace.dat source tests ---

# --- left by the fuzz run ---
CLEANFILES += tests/t/fuzz-tracedat.err
# --- end fuzz run ---

# --- golden outputs of analyze (tests/golden/, tests/helpers/golden.sh) ---
# golden.t: analyze on every fixture and scenario, byte for byte against
# tests/golden/.  `make golden-update` rewrites them after a deliberate
# change of the output; review `git diff tests/golden/` and commit them.
TESTS += tests/t/golden.t
dist_check_SCRIPTS += tests/t/golden.t
EXTRA_DIST += tests/helpers/golden.sh tests/golden
golden-update: imbalanced$(EXEEXT)
	IMBALANCED='$(abs_top_builddir)/imbalanced$(EXEEXT)' top_srcdir='$(abs_top_srcdir)' \
		$(SHELL) $(top_srcdir)/tests/helpers/golden.sh update
.PHONY: golden-update
# --- end golden outputs ---

# --- layering rules of ARCHITECTURE.md (tests/helpers/layering.sh) ---
# layering.t: analyzers/ stays pure (its own files and C library headers
# without I/O); no file names a document outside the tree, an issue or an
# owner.  It first shows the checker failing on deliberately bad files.
TESTS += tests/t/layering.t
dist_check_SCRIPTS += tests/t/layering.t
EXTRA_DIST += tests/helpers/layering.sh
# --- end layering rules ---

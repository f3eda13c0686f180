# SPDX-License-Identifier: GPL-2.0-or-later
# tests/ - unit tests (C, TAP) and behaviour tests (shell .t, TAP).

IMB_TEST_LIBS = analyzers/libimbcore.a -lm

# --- workload and recorded fixtures (hogs, record-fixture.sh, fixtures/) ---
# tests/hogs: threads with known CPU times, the ground truth of the fixtures.
check_PROGRAMS += tests/hogs
tests_hogs_SOURCES = tests/hogs.c
tests_hogs_LDADD = -lpthread
EXTRA_DIST += tests/record-fixture.sh \
	tests/fixtures/README.md \
	tests/fixtures/rtapp-periodic.json tests/fixtures/rtapp-truth.sh \
	tests/fixtures/hogs-periodic.dat tests/fixtures/hogs-periodic.truth.json \
	tests/fixtures/hogs3on2.dat tests/fixtures/hogs3on2.truth.json \
	tests/fixtures/hogs2on2.dat tests/fixtures/hogs2on2.truth.json \
	tests/fixtures/rtapp-periodic.dat tests/fixtures/rtapp-periodic.truth.json
# --- end workload and fixtures ---

# --- sinks tests: json, store, http, metrics, dashboard ---
check_PROGRAMS += tests/test_json
tests_test_json_SOURCES = tests/test_json.c
tests_test_json_LDADD = $(IMB_SINK_LIBS)
TESTS += tests/test_json
check_PROGRAMS += tests/test_store
tests_test_store_SOURCES = tests/test_store.c
tests_test_store_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
tests_test_store_LDADD = $(IMB_SINK_LIBS)
TESTS += tests/test_store
TESTS += tests/store-analyze.t
dist_check_SCRIPTS += tests/store-analyze.t
check_PROGRAMS += tests/test_flightrec
tests_test_flightrec_SOURCES = tests/test_flightrec.c daemon/flightrec.c daemon/priority.c
tests_test_flightrec_LDADD = analyzers/libimbcore.a -lz -lpthread
TESTS += tests/test_flightrec
# tests/http-feeder: the real HTTP server fed synthetic windows.
check_PROGRAMS += tests/http-feeder
tests_http_feeder_SOURCES = tests/http-feeder.c
tests_http_feeder_LDADD = $(IMB_SINK_LIBS)
TESTS += tests/http.t tests/http-real.t
dist_check_SCRIPTS += tests/http.t tests/http-real.t
EXTRA_DIST += tests/http-lib.sh tests/live-lib.sh tests/metrics-check.awk tests/prometheus-alerts-test.yml
TESTS += tests/dashboard.t
dist_check_SCRIPTS += tests/dashboard.t
EXTRA_DIST += tests/cdp-dashboard.py
TESTS += tests/bench-http.t
dist_check_SCRIPTS += tests/bench-http.t
CLEANFILES += tests/dashboard-live-laptop.png tests/dashboard-live-phone.png \
	tests/dashboard-serve-laptop.png tests/dashboard-serve-phone.png \
	tests/dashboard-live-chromium.log tests/dashboard-serve-chromium.log
# --- end sinks tests ---

# --- PELT engine tests ---
check_PROGRAMS += tests/test_pelt
tests_test_pelt_SOURCES = tests/test_pelt.c tests/tap.h
tests_test_pelt_LDADD = $(IMB_TEST_LIBS)
TESTS += tests/test_pelt tests/bench-pelt-engine.t
dist_check_SCRIPTS += tests/bench-pelt-engine.t
EXTRA_DIST += tests/pelt-reference.py
# --- end PELT engine tests ---

# --- model and pipeline tests (integrator) ---
check_PROGRAMS += tests/test_model
tests_test_model_SOURCES = tests/test_model.c tests/tap.h
tests_test_model_LDADD = $(IMB_TEST_LIBS)
TESTS += tests/test_model
# --- end model and pipeline tests ---

# --- live BPF source and host probe (owner: bpf) ---
check_PROGRAMS += tests/test_source_bpf tests/test_hostinfo
TESTS += tests/test_source_bpf tests/test_hostinfo
tests_test_source_bpf_SOURCES = tests/test_source_bpf.c
tests_test_source_bpf_LDADD = $(IMB_BPF_LIBS) -lpthread
tests_test_hostinfo_SOURCES = tests/test_hostinfo.c
tests_test_hostinfo_LDADD = $(IMB_BPF_LIBS)
# the task groups' path table, and the groups listed live
check_PROGRAMS += tests/test_group_names
TESTS += tests/test_group_names
tests_test_group_names_SOURCES = tests/test_group_names.c tests/tap.h daemon/group_names.c
tests_test_group_names_LDADD = analyzers/libimbcore.a
TESTS += tests/groups-live.t
dist_check_SCRIPTS += tests/groups-live.t
# --- end live BPF source ---

# --- cgroup v2 paths of fairness jobs (daemon/cgroup_paths.c) ---
# The resolver over a tree made by the test and the host's v2 hierarchy;
# cgroup-paths-live.t: the daemon with group_by=cgroup names a v2 cgroup's
# job by its path (needs root).
check_PROGRAMS += tests/test_cgroup_paths
TESTS += tests/test_cgroup_paths
tests_test_cgroup_paths_SOURCES = tests/test_cgroup_paths.c tests/tap.h daemon/cgroup_paths.c
TESTS += tests/cgroup-paths-live.t
dist_check_SCRIPTS += tests/cgroup-paths-live.t
# --- end cgroup v2 paths ---

# --- analyzers: scenario generator, replay harness, scenario checks ---
check_PROGRAMS += tests/scn-replay
tests_scn_replay_SOURCES = tests/scn-replay.c
tests_scn_replay_LDADD = $(IMB_TEST_LIBS)
check_PROGRAMS += tests/test_analyzers
tests_test_analyzers_SOURCES = tests/test_analyzers.c tests/tap.h
tests_test_analyzers_LDADD = $(IMB_TEST_LIBS)
TESTS += tests/test_analyzers tests/scenarios.t tests/bench-detection.t
dist_check_SCRIPTS += tests/scenarios.t tests/bench-detection.t
EXTRA_DIST += tests/scenario-gen.py tests/scenario-check.py \
	tests/scenarios/8on8.scn tests/scenarios/9on8-sync.scn \
	tests/scenarios/9on8-stagger.scn tests/scenarios/drift.scn \
	tests/scenarios/numa.scn tests/scenarios/pingpong.scn tests/scenarios/lost.scn \
	tests/scenarios/pinned.scn tests/scenarios/groups.scn tests/scenarios/nice.scn \
	tests/scenarios/numa-swap.scn tests/scenarios/smt.scn tests/scenarios/wakeups.scn.in
# --- end analyzers ---

# --- text event format tests (owner: text) ---
check_PROGRAMS += tests/test_event_text
tests_test_event_text_SOURCES = tests/test_event_text.c tests/tap.h
tests_test_event_text_LDADD = daemon/libimbsrc.a $(IMB_TEST_LIBS)
TESTS += tests/test_event_text
EXTRA_DIST += tests/fuzz_text.c
TESTS += tests/fuzz-text.t
dist_check_SCRIPTS += tests/fuzz-text.t
clean-local: clean-local-fuzz-text
clean-local-fuzz-text:
	rm -rf tests/fuzz-text.dir
.PHONY: clean-local-fuzz-text
# --- end text event format tests ---

# --- text format, offline sources and analyze (integrator) ---
TESTS += tests/switch-accounting.t tests/pelt-avg-only.t
dist_check_SCRIPTS += tests/switch-accounting.t tests/pelt-avg-only.t
TESTS += tests/analyze.t tests/live.t tests/bench-analyze-speed.t \
	tests/bench-pelt-accuracy.t tests/bench-live-overhead.t tests/systemd.t tests/alerts.t
dist_check_SCRIPTS += tests/analyze.t tests/live.t tests/bench-analyze-speed.t \
	tests/bench-pelt-accuracy.t tests/bench-live-overhead.t tests/systemd.t tests/alerts.t
# the parallel trace.dat reader against the serial one (generated traces
# need bench/tracedat-gen, built with the bench programs)
TESTS += tests/tracedat-parallel.t tests/analyze-progress.t
dist_check_SCRIPTS += tests/tracedat-parallel.t tests/analyze-progress.t
# churn.t takes CPU 1 offline for 2 s: it runs after every other test, alone
TESTS += tests/churn.t
dist_check_SCRIPTS += tests/churn.t
tests/churn.log: $(filter-out tests/churn.log,$(TEST_LOGS))
EXTRA_DIST += tests/lsan.supp tests/fixtures/no-switch.dat \
	tests/fixtures/pelt-lost.dat tests/fixtures/pelt-uprobe.c tests/fixtures/pelt-uprobe.sh \
	tests/fixtures/hogs3on2.tgids tests/fixtures/hogs2on2.tgids \
	tests/fixtures/hogs-periodic.tgids tests/fixtures/rtapp-periodic.tgids
# --- end text format, offline sources and analyze ---

# --- live tracefs source (owner: tracefs source) ---
# Needs root and tracefs: 3 busy threads' CPU time vs sched_stat_runtime,
# time order, instance removed and top-level settings untouched on close.
# `tests/test_source_tracefs --measure SECONDS` measures events/s beside a load.
check_PROGRAMS += tests/test_source_tracefs
TESTS += tests/test_source_tracefs
tests_test_source_tracefs_SOURCES = tests/test_source_tracefs.c
tests_test_source_tracefs_LDADD = $(IMB_TRACEFS_LIBS) -lpthread -lm
# --- end live tracefs source ---

# --- trace.dat source tests ---
check_PROGRAMS += tests/test_source_tracedat
tests_test_source_tracedat_SOURCES = tests/test_source_tracedat.c tests/tap.h
tests_test_source_tracedat_LDADD = $(IMB_SRC_LIBS) -lm
TESTS += tests/test_source_tracedat tests/fuzz-tracedat.t
dist_check_SCRIPTS += tests/fuzz-tracedat.t tests/fuzz.sh
EXTRA_DIST += tests/fuzz_tracedat.c
clean-local: clean-local-fuzz-tracedat
clean-local-fuzz-tracedat:
	rm -rf tests/fuzz-tracedat.dir
.PHONY: clean-local-fuzz-tracedat
# --- end trace.dat source tests ---

# --- left by the fuzz run (integrator) ---
CLEANFILES += tests/fuzz-tracedat.err
# --- end fuzz run ---

# SPDX-License-Identifier: GPL-2.0-or-later
# bench/ rules.

# --- big-trace recorder (not run by make; writes where it is told) ---
EXTRA_DIST += bench/record-big-trace.sh
# --- end big-trace recorder ---

# --- PELT engine throughput (entity updates per second) ---
check_PROGRAMS += bench/pelt-engine
bench_pelt_engine_SOURCES = bench/pelt-engine.c
bench_pelt_engine_LDADD = analyzers/libimbcore.a
# --- end PELT engine throughput ---

# --- HTTP and store numbers ---
# bench/http.sh: wrk against /api/v1/cpus and /metrics, store growth/day.
EXTRA_DIST += bench/http.sh
# --- end HTTP and store numbers ---

# --- analyzers: detection quality and cost (bench/detection.sh) ---
EXTRA_DIST += bench/detection.sh
# --- end analyzers ---

# --- trace.dat baseline: plain libtracecmd loop ---
noinst_PROGRAMS += bench/tracedat-plain-loop
bench_tracedat_plain_loop_SOURCES = bench/tracedat-plain-loop.c
bench_tracedat_plain_loop_CPPFLAGS = $(AM_CPPFLAGS) $(TRACECMD_CFLAGS) $(TRACEEVENT_CFLAGS)
bench_tracedat_plain_loop_LDADD = $(TRACECMD_LIBS) $(TRACEEVENT_LIBS)
# --- end trace.dat baseline ---

# --- analyze speed ---
EXTRA_DIST += bench/analyze-speed.sh bench/pelt-accuracy.sh bench/live-overhead.sh
# --- end analyze speed ---

# --- synthetic trace.dat writer (any size, any CPU count) ---
noinst_PROGRAMS += bench/tracedat-gen
bench_tracedat_gen_SOURCES = bench/tracedat-gen.c
bench_tracedat_gen_CPPFLAGS = $(AM_CPPFLAGS) $(TRACECMD_CFLAGS) $(TRACEEVENT_CFLAGS)
bench_tracedat_gen_LDADD = $(TRACECMD_LIBS) $(TRACEEVENT_LIBS)
# --- end synthetic trace.dat writer ---

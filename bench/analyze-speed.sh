#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# analyze-speed.sh - how fast `imbalanced analyze` reads a big trace.dat,
# against what a user would otherwise run, measured in the same run.
#
# Usage: bench/analyze-speed.sh [--quick] [TRACE.dat]
#
# Without TRACE it records one of at least 2 million sched events with
# bench/record-big-trace.sh (needs root; cached as $BENCH_DIR/big.dat).
# It times, with hyperfine:
#   imbalanced analyze --json TRACE       (the whole pipeline)
#   trace-cmd report -i TRACE             (what people run to read a trace)
#   bench/tracedat-plain-loop TRACE       (a plain libtracecmd loop reading
#                                          every sched_switch's pids)
# and prints events/s and the ratios; then peak RSS of analyze on the whole
# event stream and on its first half (same tasks), to show memory does not
# grow with trace length.  Targets: >= 5x faster than trace-cmd
# report, <= 2x the plain loop, peak RSS < 100 MiB and flat.
#
# --quick: the small bundled fixture, one run each; for the test suite, so
# the benchmark never rots.
#
# Environment: IMBALANCED (binary), PLAIN_LOOP (plain loop binary),
# BENCH_DIR (scratch, default /tmp/imbalanced-bench), RUNS (default 5).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
quick=0
if [ "${1:-}" = "--quick" ]; then
	quick=1
	shift
fi
IMB=${IMBALANCED:-$top/build/imbalanced}
PLAIN=${PLAIN_LOOP:-$(dirname "$IMB")/bench/tracedat-plain-loop}
BENCH_DIR=${BENCH_DIR:-/tmp/imbalanced-bench}
RUNS=${RUNS:-5}
mkdir -p "$BENCH_DIR"

for tool in "$IMB" "$PLAIN"; do
	[ -x "$tool" ] || { echo "analyze-speed: $tool: not built" >&2; exit 2; }
done
command -v hyperfine >/dev/null || { echo "analyze-speed: hyperfine: not installed" >&2; exit 2; }
command -v trace-cmd >/dev/null || { echo "analyze-speed: trace-cmd: not installed" >&2; exit 2; }

if [ $quick = 1 ]; then
	trace=${1:-$top/tests/fixtures/hogs3on2.dat}
	RUNS=1
	warm=0
else
	trace=${1:-$BENCH_DIR/big.dat}
	warm=1
	if [ ! -s "$trace" ]; then
		echo "analyze-speed: recording $trace (2M events)..." >&2
		"$top/bench/record-big-trace.sh" "$trace" 2000000 >&2
	fi
fi

json=$BENCH_DIR/analyze-speed.json
hyperfine --style none --warmup $warm --runs "$RUNS" --export-json "$json" \
	-n analyze "$IMB analyze --json -q $trace" \
	-n trace-cmd-report "trace-cmd report -i $trace" \
	-n plain-loop "$PLAIN $trace" >/dev/null

events=$("$IMB" analyze --json -q "$trace" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')

# Peak RSS on the whole stream and on its first half (text format, same tasks).
txt=$BENCH_DIR/events.txt
"$IMB" analyze --dump-events -q "$trace" >"$txt"
lines=$(wc -l <"$txt")
head -n $((lines / 2)) "$txt" >"$txt.half"
rss() { /usr/bin/time -f %M "$IMB" analyze --json -q "$1" 2>&1 >/dev/null | tail -n1; }
rss_dat=$(rss "$trace")
# the trace.dat cut in the middle of its event data (read up to the cut):
# half the events, same tasks
data_at=$(trace-cmd dump -i "$trace" --sections 2>/dev/null |
	awk '/flyrecord/ { sub(/^.*@ */, ""); print $1 + 0; exit }')
size=$(stat -c %s "$trace")
head -c $((data_at + (size - data_at) / 2)) "$trace" >"$BENCH_DIR/half.dat"
rss_dat_half=$(rss "$BENCH_DIR/half.dat")
rm -f "$BENCH_DIR/half.dat"
rss_full=$(rss "$txt")
rss_half=$(rss "$txt.half")
rm -f "$txt" "$txt.half"

python3 - "$json" "$events" "$rss_dat" "$rss_full" "$rss_half" "$rss_dat_half" "$trace" <<'EOF'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
events = int(sys.argv[2])
rss_dat, rss_full, rss_half, rss_dat_half = (int(x) / 1024 for x in sys.argv[3:7])
a = res["analyze"]["mean"]
t = res["trace-cmd-report"]["mean"]
p = res["plain-loop"]["mean"]
print(f"trace: {sys.argv[7]} ({events} events)")
print(f"imbalanced analyze --json : {a:8.3f} s  {events / a / 1e6:7.2f} M events/s")
print(f"trace-cmd report          : {t:8.3f} s  analyze is {t / a:5.2f}x faster (target >= 5x)")
print(f"plain libtracecmd loop    : {p:8.3f} s  analyze takes {a / p:5.2f}x its time (target <= 2x)")
print(f"peak RSS analyze trace.dat: {rss_dat:7.1f} MiB (target < 100 MiB); "
      f"its first half: {rss_dat_half:.1f} MiB")
print(f"peak RSS whole / half text: {rss_full:7.1f} / {rss_half:7.1f} MiB "
      f"(growth {100 * (rss_full - rss_half) / rss_half:+.1f} % for twice the events)")
EOF

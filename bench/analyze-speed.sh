#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# analyze-speed.sh - how fast `imbalanced analyze` reads big trace.dat
# files, against what a user would otherwise run, measured in the same run.
#
# Usage: bench/analyze-speed.sh [--quick] [TRACE.dat]
#
# Cases:
#   2M      a recording of at least 2 million sched events (TRACE, or made
#           with bench/record-big-trace.sh: needs root; cached as
#           $BENCH_DIR/big.dat)
#   20M     20 million generated events on 2 CPUs (bench/tracedat-gen,
#           zstd like a trace-cmd recording, headers from a bundled fixture)
#   20Mraw  the same events uncompressed: Debian 12's libtracecmd (3.1.6)
#           keeps every decompressed chunk and searches that list for each
#           page, so on a big compressed file `trace-cmd report` and the
#           bare loop slow down quadratically (and grow to gigabytes); here
#           they run at their best
#   64cpu   2 million generated events on 64 CPU buffers
# For each case it runs, in rotating order, RUNS rounds of
#   imbalanced analyze --json -q TRACE    (the whole pipeline)
#   trace-cmd report -i TRACE >/dev/null  (what people run to read a trace)
#   bench/tracedat-plain-loop TRACE       (a bare libtracecmd time-ordered
#                                          loop reading each sched_switch's pids)
# under /usr/bin/time, and prints per tool the median wall time, events/s,
# CPU time (user + system) and peak RSS, and the ratios.  Targets: analyze
# >= 10x faster than trace-cmd report and no slower than the bare loop on
# 2M and 20M; peak RSS on 20M within 1.5x of 2M.
#
# --quick: the small bundled fixture and a small 64-CPU trace, one round;
# for the test suite, so the benchmark never rots.
#
# Environment: IMBALANCED (binary), PLAIN_LOOP, TRACEDAT_GEN (bench
# programs), BENCH_DIR (scratch, default /tmp/imbalanced-bench), RUNS
# (rounds, default 5), CASES (default "2M 20M 20Mraw 64cpu"), TIMEOUT (a
# run stopped after this many seconds counts as that long and is marked
# ">"; default 300).
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
GEN=${TRACEDAT_GEN:-$(dirname "$PLAIN")/tracedat-gen}
BENCH_DIR=${BENCH_DIR:-/tmp/imbalanced-bench}
RUNS=${RUNS:-5}
CASES=${CASES:-2M 20M 20Mraw 64cpu}
TIMEOUT=${TIMEOUT:-300}
template=$top/tests/fixtures/hogs2on2.dat
mkdir -p "$BENCH_DIR"

for tool in "$IMB" "$PLAIN" "$GEN"; do
	[ -x "$tool" ] || { echo "analyze-speed: $tool: not built" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "analyze-speed: /usr/bin/time: not installed" >&2; exit 2; }
command -v trace-cmd >/dev/null || { echo "analyze-speed: trace-cmd: not installed" >&2; exit 2; }

gen() {	# OUT CPUS EVENTS [COMPRESSION]
	[ -s "$1" ] && return 0
	echo "analyze-speed: generating $1 ($3 events on $2 CPUs)..." >&2
	"$GEN" --cpus "$2" --events "$3" --compression "${4:-zstd}" "$template" "$1" >/dev/null
}

if [ $quick = 1 ]; then
	RUNS=1
	set -- "fixture=${1:-$top/tests/fixtures/hogs3on2.dat}"
	gen "$BENCH_DIR/quick64.dat" 64 50000
	set -- "$@" "64cpu-quick=$BENCH_DIR/quick64.dat"
else
	big=${1:-$BENCH_DIR/big.dat}
	set --
	for c in $CASES; do
		case $c in
		2M)
			if [ ! -s "$big" ]; then
				echo "analyze-speed: recording $big (2M events)..." >&2
				"$top/bench/record-big-trace.sh" "$big" 2000000 >&2
			fi
			set -- "$@" "2M=$big" ;;
		20M)
			gen "$BENCH_DIR/gen20m.dat" 2 20000000
			set -- "$@" "20M=$BENCH_DIR/gen20m.dat" ;;
		20Mraw)
			gen "$BENCH_DIR/gen20m-raw.dat" 2 20000000 none
			set -- "$@" "20Mraw=$BENCH_DIR/gen20m-raw.dat" ;;
		64cpu)
			gen "$BENCH_DIR/gen64cpu.dat" 64 2000000
			set -- "$@" "64cpu=$BENCH_DIR/gen64cpu.dat" ;;
		*) echo "analyze-speed: unknown case $c" >&2; exit 2 ;;
		esac
	done
fi

res=$BENCH_DIR/analyze-speed.tsv
: >"$res"
# one timed run: CASE TOOL COMMAND... -> "case tool wall user sys rss_kb [>]"
timed() {
	c=$1
	t=$2
	shift 2
	rc=0
	/usr/bin/time -f "%e %U %S %M" -o "$BENCH_DIR/time.out" \
		timeout -s KILL "$TIMEOUT" "$@" >/dev/null 2>"$BENCH_DIR/err.out" || rc=$?
	if [ $rc != 0 ] && ! grep -q 'Command terminated by signal 9' "$BENCH_DIR/time.out"; then
		echo "analyze-speed: $t failed on $c:" >&2
		cat "$BENCH_DIR/err.out" >&2
		exit 1
	fi
	echo "$c $t $(tail -n 1 "$BENCH_DIR/time.out")$([ $rc != 0 ] && echo ' >')" >>"$res"
}
ev_file=$BENCH_DIR/events.tsv
: >"$ev_file"
for spec in "$@"; do
	c=${spec%%=*}
	trace=${spec#*=}
	"$IMB" analyze --json -q "$trace" | python3 -c 'import json,sys
d = json.load(sys.stdin)
print(d["events"], d["source"]["nr_cpus"])' >"$BENCH_DIR/count.out"
	echo "$c $(cat "$BENCH_DIR/count.out") $trace" >>"$ev_file"
	round=0
	while [ $round -lt "$RUNS" ]; do
		# rotate the order so that no tool always runs first
		case $((round % 3)) in
		0) order="a r p" ;;
		1) order="r p a" ;;
		*) order="p a r" ;;
		esac
		for o in $order; do
			case $o in
			a) timed "$c" analyze "$IMB" analyze --json -q "$trace" ;;
			r) timed "$c" trace-cmd-report trace-cmd report -i "$trace" ;;
			p) timed "$c" plain-loop "$PLAIN" "$trace" ;;
			esac
		done
		round=$((round + 1))
	done
done

python3 - "$res" "$ev_file" "$RUNS" "$(nproc)" "$TIMEOUT" <<'PYEOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
cases = [l.strip().split(None, 3) for l in open(sys.argv[2]) if l.strip()]
runs, ncpu = sys.argv[3], sys.argv[4]
med = {}
cut = set()
for r in rows:
    c, t, wall, user, sys_, rss = r[:6]
    if len(r) > 6:
        cut.add((c, t))	# stopped at TIMEOUT: a lower bound
    med.setdefault((c, t), []).append((float(wall), float(user) + float(sys_), int(rss)))
print(f"analyze-speed: {ncpu} CPUs online, median of {runs} round(s) per tool, same run")
rss_of = {}
for c, events, cpus, path in cases:
    events = int(events)
    print(f"\ncase {c}: {path} ({events} events, {cpus} CPU buffers)")
    print(f"  {'tool':<18} {'wall s':>8} {'M events/s':>11} {'CPU s':>8} {'peak RSS MiB':>13}")
    m = {}
    for t in ("analyze", "trace-cmd-report", "plain-loop"):
        v = med[(c, t)]
        w = statistics.median(x[0] for x in v)
        cpu = statistics.median(x[1] for x in v)
        rss = statistics.median(x[2] for x in v) / 1024
        m[t] = (w, cpu, rss)
        gt = ">" if (c, t) in cut else " "
        print(f"  {t:<18}{gt}{w:8.3f} {events / max(w, 1e-3) / 1e6:11.2f} {cpu:8.3f} {rss:13.1f}")
    a, r, p = m["analyze"][0], m["trace-cmd-report"][0], m["plain-loop"][0]
    rss_of[c] = m["analyze"][2]
    gr = ">=" if (c, "trace-cmd-report") in cut else ""
    gp = "<=" if (c, "plain-loop") in cut else ""
    print(f"  trace-cmd report is {gr}{r / max(a, 1e-3):.2f}x analyze's time (target >= 10x)")
    print(f"  analyze takes {gp}{a / max(p, 1e-3):.2f}x the plain loop's time (target <= 1x)")
    if gr or gp:
        print(f"  (> : stopped after the {sys.argv[5]} s timeout, still running)")
if "2M" in rss_of and "20M" in rss_of:
    print(f"\npeak RSS of analyze, 20M / 2M: {rss_of['20M'] / rss_of['2M']:.2f}x (target <= 1.5x)")
PYEOF

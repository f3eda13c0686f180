#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# pelt-accuracy.sh - the PELT engine against the kernel's own values, live.
#
# Usage: bench/pelt-accuracy.sh [--quick]     (root: BPF)
#
# Runs the daemon on the BPF source (pelt_cfs_tp / pelt_se_tp give the
# kernel's values at its own update instants) while a workload runs, and
# prints the engine's absolute error per signal for CPUs (root run queues)
# and tasks: median, p95, max, samples.  Two workloads, 10 s each: 3 busy
# threads on the 2 CPUs, then 3 periodic threads at 25 % (16 ms period).
# Then the engine's own cost (bench/pelt-engine).  Targets: CPU
# and task util_avg and runnable_avg median <= 4 and p95 <= 16 (of 1024);
# >= 20 M entity updates/s.  --quick: 2 s each, for the test suite.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
IMB=${IMBALANCED:-$here/../build/imbalanced}
bdir=$(dirname "$IMB")
HOGS=${HOGS:-$bdir/tests/helpers/hogs}
ENGINE=${PELT_ENGINE:-$bdir/bench/pelt-engine}
secs=10
[ "${1:-}" = "--quick" ] && secs=2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pelt-accuracy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

[ "$(id -u)" = 0 ] || { echo "pelt-accuracy: needs root (BPF)" >&2; exit 2; }

run_case() {	# run_case NAME HOGS-ARGS...
	name=$1
	shift
	"$IMB" run --source bpf --listen '' --db '' --duration $((secs + 2)) \
		--report "$tmp/$name.json" -q &
	pid=$!
	sleep 1
	"$HOGS" "$@" --seconds "$secs" >/dev/null
	# the rest of the machine: every other runnable task adds update
	# instants the engine must match (one missed removal is one task's util)
	cut -d' ' -f1 /proc/loadavg >"$tmp/$name.load"
	wait "$pid"
}

run_case busy --threads 3
run_case periodic --threads 3 --period-ms 16 --duty 25

python3 - "$tmp/busy.json" "$tmp/periodic.json" <<'EOF'
import json, sys
print(f"{'workload':10} {'entity':5} {'signal':13} {'median':>6} {'p95':>6} {'max':>7} {'samples':>8}  target")
for path, name in zip(sys.argv[1:], ["3 busy", "periodic"]):
    load = open(path.replace(".json", ".load")).read().strip()
    print(f"{name}: 1-min load average at the end {load} (3 = the workload alone)")
    p = json.load(open(path))["pelt"]
    if not p["kernel_reference"]:
        print(f"{name}: no kernel reference in the stream"); continue
    for ent, key in (("cpu", "signals"), ("task", "task_signals")):
        for sig in ("util_avg", "runnable_avg", "load_avg"):
            s = p[key][sig]
            tgt = "median<=4 p95<=16" if sig != "load_avg" else "(not a target)"
            met = "" if sig == "load_avg" else (" met" if s["median_abs_err"] <= 4 and s["p95_abs_err"] <= 16 else " MISSED")
            print(f"{name:10} {ent:5} {sig:13} {s['median_abs_err']:6d} {s['p95_abs_err']:6d} "
                  f"{s['max_abs_err']:7d} {s['samples']:8d}  {tgt}{met}")
EOF
"$ENGINE" ${1:+--quick} | sed 's/^/engine: /'

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# live-overhead.sh - what the live daemon costs the host it watches.
#
# Usage: bench/live-overhead.sh [--quick]     (root)
#
# A fixed-work context-switch load (`perf bench sched messaging`) is timed
# several ways, interleaved over ROUNDS rounds (9 by default; each round's
# order rotated by one) so that machine noise hits all alike, compared by
# the median run: alone; with `imbalanced run` (default settings, BPF);
# and with plain tracefs recording of the same sched events the daemon
# attaches to (an instance with those events on, its per-CPU buffers read
# to /dev/null) - what a user would otherwise run.  pelt_cfs_tp and
# pelt_se_tp are bare tracepoints with no tracefs event: the daemon records
# them too, tracefs cannot.  Printed per variant: the load's wall-time
# slowdown, and its CPU cost: the load's own CPU time (which includes the
# BPF programs run in its context) plus the observer's (the daemon, the
# tracefs readers) - on a VM the host's steal time moves wall time by
# +-20 % from run to run, CPU time much less.  Then the daemon's CPU use
# and peak RSS, events per second of the daemon's run (its events over its
# own span) and lost events, also for the pelt_se_rate=20ms variant and
# for the event reader at nice 0 instead of the default -10; then the
# daemon's CPU use while 3 busy threads run on the CPUs.  Targets:
# slowdown <= 3 % and below tracefs recording; daemon CPU <= 2 % of one
# CPU for the 3 hogs; zero lost events.  Last, the direct cost of two more
# runs under a new daemon: the BPF programs' run time
# (kernel.bpf_stats_enabled, on for those runs only) plus the daemon's CPU
# over the load's CPU time, which a noisy VM does not blur; the second run
# is the steady cost (target < 3 %), the first also has the daemon's first
# touches of its memory.  --quick: a small load, one round.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
IMB=${IMBALANCED:-$here/../build/imbalanced}
HOGS=${HOGS:-$(dirname "$IMB")/tests/helpers/hogs}
PERF=${PERF:-$(command -v perf || true)}
T=/sys/kernel/tracing
rounds=${ROUNDS:-9}
load="-g 10 -l 1000"
hog_secs=10
if [ "${1:-}" = "--quick" ]; then
	rounds=1
	load="-g 2 -l 100"
	hog_secs=2
fi
[ "$(id -u)" = 0 ] || { echo "live-overhead: needs root" >&2; exit 2; }
[ -n "$PERF" ] || { echo "live-overhead: perf not installed (linux-perf)" >&2; exit 2; }
# tests/helpers/hogs is a check program: build it in IMB's build tree if missing,
# before the rounds rather than after them
[ -x "$HOGS" ] || make -C "$(dirname "$HOGS")/.." -s tests/helpers/hogs >/dev/null 2>&1 ||
	{ echo "live-overhead: $HOGS: not built and cannot be (set HOGS)" >&2; exit 2; }
mountpoint -q $T || mount -t tracefs nodev $T
tmp=$(mktemp -d "${TMPDIR:-/tmp}/live-overhead.XXXXXX")
inst=$T/instances/live-overhead-$$
cleanup() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null
	[ -n "${readers:-}" ] && kill $readers 2>/dev/null
	[ -d "$inst" ] && { echo 0 >"$inst/tracing_on"; rmdir "$inst"; }
	[ -n "${stats_was:-}" ] && echo "$stats_was" >$stats
	rm -rf "$tmp"
}
trap cleanup EXIT

now_ns() { date +%s%N; }
# load_once: "WALL_NS CPU_NS" of one load run; CPU is the load's own user +
# system time (its rusage), which includes what the BPF programs cost in
# the load's context and, unlike wall time, not the host's steal time
load_once() {
	python3 -c '
import resource, subprocess, sys, time
t0 = time.monotonic_ns()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
wall = time.monotonic_ns() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, int((ru.ru_utime + ru.ru_stime) * 1e9))' "$PERF" bench sched messaging $load
}
wait_ready() {
	i=0
	while [ $i -lt 600 ] && ! grep -q 'running:' "$1" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# thread_ns: CPU time of a process's live threads in ns (schedstat), finer
# than the stat file's clock ticks
thread_ns() { cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {printf "%d\n", s}'; }
# prog_ns PID: the summed run time of the BPF programs PID holds (their
# fdinfo; counted while kernel.bpf_stats_enabled is 1)
prog_ns() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '/^run_time_ns:/ {s += $2} END {printf "%d\n", s}'; }
stats=/proc/sys/kernel/bpf_stats_enabled

daemon_start() {	# daemon_start [--set KEY=VALUE]...
	"$IMB" run --listen '' --db '' --report "$tmp/report.json" "$@" 2>"$tmp/daemon.err" &
	dpid=$!
	wait_ready "$tmp/daemon.err"
}
daemon_stop() {
	kill -TERM "$dpid"
	wait "$dpid" || true
	dpid=
}
tracefs_start() {
	mkdir "$inst"
	# the BPF source's tracepoints that have a tracefs event (daemon/source/bpf.c)
	for e in sched_switch sched_wakeup sched_wakeup_new sched_migrate_task \
		sched_process_fork sched_process_exit sched_stat_runtime \
		sched_move_numa sched_swap_numa sched_stick_numa; do
		[ -d "$inst/events/sched/$e" ] && echo 1 >"$inst/events/sched/$e/enable"
	done
	echo 8192 >"$inst/buffer_size_kb"
	readers=
	for c in "$inst"/per_cpu/cpu*; do
		cat "$c/trace_pipe_raw" >/dev/null &
		readers="$readers $!"
	done
	echo 1 >"$inst/tracing_on"
}
tracefs_stop() {
	echo 0 >"$inst/tracing_on"
	rcpu=0	# the readers' CPU ticks: what the recording itself costs
	for p in $readers; do
		rcpu=$((rcpu + $(cpu_ticks "$p" 2>/dev/null || echo 0)))
	done
	kill $readers 2>/dev/null || true
	wait $readers 2>/dev/null || true
	readers=
	rmdir "$inst"
}

# run_variant NAME: one timed load under NAME (alone, daemon: default
# settings, lean: pelt_se_rate=20ms, nice0: the reader at nice 0 in the
# load's autogroup, tracefs: plain tracefs recording), appended to
# $tmp/runs as "NAME load_ns load_cpu_ns events lost span_ns cpu_ticks
# wall_ns hwm_kib" (cpu_ticks: the daemon's, or the tracefs readers')
run_variant() {
	case $1 in
	alone)
		echo "alone $(load_once) 0 0 0 0 0 0" >>"$tmp/runs"
		;;
	tracefs)
		tracefs_start
		ns=$(load_once)
		tracefs_stop
		echo "tracefs $ns 0 0 0 $rcpu 0 0" >>"$tmp/runs"
		;;
	*)
		case $1 in
		daemon) daemon_start ;;
		lean) daemon_start --set pelt_se_rate=20ms ;;
		nice0) daemon_start --set nice=0 ;;
		esac
		c0=$(cpu_ticks "$dpid")
		t0=$(now_ns)
		ns=$(load_once)
		wall=$(( $(now_ns) - t0 ))
		cpu=$(( $(cpu_ticks "$dpid") - c0 ))
		h=$(sed -n 's/^VmHWM:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$dpid/status")
		daemon_stop
		echo "$1 $ns $(report_counts) $cpu $wall $h" >>"$tmp/runs"
		;;
	esac
}
# report_counts: "events lost span_ns" of the daemon's run
report_counts() {
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["events"], r["lost_events"], r["span_ns"])' "$tmp/report.json"
}
# Each round runs every variant once, in an order rotated by one each
# round, so that a drift of the machine or a first-run effect does not
# land on one variant.
: >"$tmp/runs"
variants="alone daemon lean nice0 tracefs"
r=0
while [ $r -lt "$rounds" ]; do
	set -- $variants
	k=0
	while [ $k -lt $((r % $#)) ]; do
		first=$1
		shift
		set -- "$@" "$first"
		k=$((k + 1))
	done
	for v in "$@"; do
		run_variant "$v"
	done
	r=$((r + 1))
done

# the 3-hogs case: the daemon's own CPU while 3 busy threads run
daemon_start
c0=$(cpu_ticks "$dpid")
t0=$(now_ns)
"$HOGS" --threads 3 --seconds "$hog_secs" >/dev/null
hog_wall=$(( $(now_ns) - t0 ))
hog_cpu=$(( $(cpu_ticks "$dpid") - c0 ))
daemon_stop

# The direct cost, free of the wall time's noise: two more load runs under
# a new daemon with the kernel's BPF run-time statistics on (restored
# after): the BPF programs' own run time plus the daemon's CPU (its threads'
# schedstat, in ns), against the load's CPU time.  The first run after the
# start also pays the daemon's first touches of its memory (the flight
# recorder's ring fills 34 MiB of fresh pages), once per start; the second
# is the steady cost, the one held to the target.  A lower bound: the
# tracepoints' trampolines, the ring buffer's wake-ups and cache effects
# are not in it.
stats_was=$(cat $stats)
echo 1 >$stats
daemon_start
p0=$(prog_ns "$dpid")
c0=$(thread_ns "$dpid")
first_load=$(load_once)
sleep 1		# the daemon drains what the run left in the ring
p1=$(prog_ns "$dpid")
c1=$(thread_ns "$dpid")
direct_load=$(load_once)
sleep 1
direct_prog=$(( $(prog_ns "$dpid") - p1 ))
direct_cpu=$(( $(thread_ns "$dpid") - c1 ))
first_prog=$(( p1 - p0 ))
first_cpu=$(( c1 - c0 ))
daemon_stop
echo "$stats_was" >$stats
stats_was=

hz=$(getconf CLK_TCK)
python3 - "$tmp/runs" "$hz" "$hog_cpu" "$hog_wall" "$rounds" $direct_load "$direct_prog" "$direct_cpu" \
	$first_load "$first_prog" "$first_cpu" <<'EOF'
import statistics, sys
runs, hz, hcpu, hwall, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
dload_cpu, dprog, dcpu_t = int(sys.argv[7]) / 1e9, int(sys.argv[8]) / 1e9, int(sys.argv[9]) / 1e9
fload_cpu, fprog, fcpu_t = int(sys.argv[11]) / 1e9, int(sys.argv[12]) / 1e9, int(sys.argv[13]) / 1e9
rows = {}
for line in open(runs):
    f = line.split()
    rows.setdefault(f[0], []).append(list(map(int, f[1:])))
# per run: wall s; CPU s of the load plus of its observer (daemon or readers)
def t(v): return [r[0] / 1e9 for r in rows[v]]
def c(v): return [r[1] / 1e9 + r[5] / hz for r in rows[v]]
def tot(v, i): return sum(r[i] for r in rows[v])
med = statistics.median
def pct(a, b): return 100.0 * (a - b) / b
def runs_of(xs): return " ".join(f"{x:.2f}" for x in xs)
bw, bc = med(t("alone")), med(c("alone"))
print(f"load (perf bench sched messaging), {rounds} round(s), variants in rotated order, medians of the runs;")
print("  wall: the load's run time; CPU: the load's own CPU time plus its observer's (daemon or tracefs")
print("  readers), which leaves out the host's steal time that makes wall time noisy on a VM")
print(f"  alone                    wall {bw:7.3f} s            CPU {bc:7.3f} s            "
      f"wall runs {runs_of(t('alone'))}")
def line(v, label, extra=""):
    w, cc = med(t(v)), med(c(v))
    print(f"  {label:<24} wall {w:7.3f} s {pct(w, bw):+6.2f} %  CPU {cc:7.3f} s {pct(cc, bc):+6.2f} %{extra}")
    return pct(w, bw), pct(cc, bc)
dw, dc = line("daemon", "with imbalanced run", f"  (slowdown target <= 3 %)  wall runs {runs_of(t('daemon'))}")
line("lean", "with pelt_se_rate=20ms", f"  ({tot('lean', 2):,} events, {tot('lean', 3)} lost)")
line("nice0", "with nice=0 (not -10)", f"  ({tot('nice0', 2):,} events, {tot('nice0', 3)} lost)")
tw, tc = line("tracefs", "with tracefs recording", f"  wall runs {runs_of(t('tracefs'))}")
print(f"  daemon vs tracefs recording: slowdown {dw:+.2f} % vs {tw:+.2f} % (wall), CPU cost {dc:+.2f} % vs {tc:+.2f} %; "
      f"CPU ratio {med(c('daemon')) / med(c('tracefs')):.3f} (below 1: the daemon costs less)")
events, lost, span = tot("daemon", 2), tot("daemon", 3), tot("daemon", 4)
dcpu, dwall = tot("daemon", 5), tot("daemon", 6)
hwm = max(r[7] for r in rows["daemon"])
print(f"daemon during the load: {100.0 * dcpu / hz / (dwall / 1e9):.1f} % of one CPU, "
      f"peak RSS {hwm / 1024:.1f} MiB, {events:,} events handled ({events / (span / 1e9):,.0f} per second "
      f"of the daemon's run), {lost} lost events (target 0)")
print(f"direct cost (second run of a new daemon, BPF statistics on): BPF programs {dprog:.3f} s + daemon "
      f"{dcpu_t:.3f} s = {100.0 * (dprog + dcpu_t) / dload_cpu:.2f} % of the load's {dload_cpu:.2f} s CPU "
      f"(target < 3 %; a lower bound: trampolines, wake-ups and cache effects are not in it)")
print(f"  its first run: BPF programs {fprog:.3f} s + daemon {fcpu_t:.3f} s "
      f"= {100.0 * (fprog + fcpu_t) / fload_cpu:.2f} % of {fload_cpu:.2f} s (with the daemon's first "
      f"touches of its memory, once per start)")
print(f"daemon with 3 busy threads: {100.0 * hcpu / hz / (hwall / 1e9):.2f} % of one CPU (target <= 2 %)")
EOF

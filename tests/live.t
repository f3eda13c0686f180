#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# live.t - the live daemon on this machine (issue 4): check, a run with
# 3 busy threads on the CPUs through BPF and through tracefs, SIGTERM
# cleanliness, and a burst of short-lived processes.  Needs root; mounts
# tracefs itself.  TAP output.
set -u

IMB=${IMBALANCED:-./imbalanced}
HOGS=${top_builddir:-.}/tests/hogs
T=$(mktemp -d "${TMPDIR:-/tmp}/live-t.XXXXXX")
n=0
fail=0
daemon=

cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fail=1
	fi
}
# wait_ready ERRFILE: until the daemon logs that it runs (start-up parses
# event formats and loads BPF: seconds under the sanitizers)
wait_ready() {
	i=0
	while [ $i -lt 600 ]; do
		grep -q 'imbalanced: running:' "$1" 2>/dev/null && return 0
		kill -0 "$daemon" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

[ "$(id -u)" = 0 ] || skip_all "needs root (BPF, tracefs)"
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
[ -d /sys/kernel/tracing/events/sched ] || skip_all "kernel has no tracefs sched events"
command -v jq >/dev/null || skip_all "jq not installed"

# --- check ---------------------------------------------------------------
"$IMB" check --json >"$T/check.json" 2>"$T/check.err"
rc=$?
ok "$rc" "check: exits 0 on this machine (live mode can run)"
ncpu=$(nproc --all)
jq -e --argjson n "$ncpu" '.nr_cpus == $n' "$T/check.json" >/dev/null
ok $? "check: reports the $ncpu CPUs of this machine"
uname_r=$(uname -r)
jq -e --arg k "$uname_r" '.kernel == $k' "$T/check.json" >/dev/null
ok $? "check: reports the running kernel $uname_r"

# run_hogs SOURCE: the daemon with 3 busy threads for 8 s in the middle
run_hogs() {
	src=$1
	"$IMB" run --source "$src" --listen '' --db '' --window 1000 \
		--report "$T/$src.json" 2>"$T/$src.err" &
	daemon=$!
	wait_ready "$T/$src.err" || { echo "# daemon did not start: $(cat "$T/$src.err")"; return 1; }
	sleep 1
	"$HOGS" --threads 3 --seconds 8 --json >"$T/$src.truth.json"
	sleep 1
	kill -TERM "$daemon"
	wait "$daemon"
	rc=$?
	daemon=
	return $rc
}

# compare SOURCE: every hog thread's run_ns within 2 % of its own CPU time
compare() {
	python3 - "$T/$1.json" "$T/$1.truth.json" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
tasks = {t["pid"]: t for t in rep["tasks"]}
worst = 0.0
for th in truth["threads"]:
    t = tasks.get(th["tid"])
    if t is None:
        print(f"# thread {th['tid']} not seen")
        sys.exit(1)
    err = abs(t["run_ns"] - th["cpu_ns"]) / th["cpu_ns"]
    print(f"# {th['comm']} tid {th['tid']}: own {th['cpu_ns']} ns, daemon {t['run_ns']} ns ({100*err:.3f} %)")
    worst = max(worst, err)
sys.exit(0 if worst <= 0.02 else 1)
EOF
}

for src in bpf tracefs; do
	run_hogs "$src"
	ok $? "run --source $src: clean exit on SIGTERM, report written"
	compare "$src"
	ok $? "run --source $src: every hog thread's CPU time within 2 % of its own clock"
done

# The BPF run carries the kernel's PELT values: the engine's error.
jq -e '.pelt.kernel_reference == true' "$T/bpf.json" >/dev/null
ok $? "run --source bpf: the kernel's own PELT values are in the stream"
med=$(jq '.pelt.signals.util_avg.median_abs_err' "$T/bpf.json")
samples=$(jq '.pelt.signals.util_avg.samples' "$T/bpf.json")
echo "# CPU util_avg engine vs kernel: median abs error $med of 1024 over $samples samples"
[ "$samples" -gt 100 ] && [ "$med" -le 51 ]
ok $? "run --source bpf: CPU util_avg median error <= 51 (LISA's 5 %) ($med)"

"$IMB" run --listen '' --db '' --duration 2 -q 2>"$T/dur.err"
ok $? "run --duration 2 stops by itself with status 0"

# --- SIGTERM mid-run: clean exit within 1 s, nothing left behind ---------
before_clock=$(cat /sys/kernel/tracing/trace_clock)
before_events=$(cat /sys/kernel/tracing/set_event | sort | tr '\n' ' ')
# ids of the BPF programs a process holds (its fds' fdinfo says prog_id)
progs_of() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u; }
for src in bpf tracefs; do
	"$IMB" run --source "$src" --listen '' --db '' 2>"$T/term-$src.err" &
	daemon=$!
	wait_ready "$T/term-$src.err"
	sleep 2
	ours=$(progs_of "$daemon")
	t0=$(date +%s%N)
	kill -TERM "$daemon"
	wait "$daemon"
	rc=$?
	t1=$(date +%s%N)
	daemon=
	ms=$(( (t1 - t0) / 1000000 ))
	[ "$rc" = 0 ] && [ "$ms" -lt 1000 ]
	ok $? "run --source $src: SIGTERM exits 0 within 1 s (${ms} ms, status $rc)"
	# the kernel frees programs after an RCU grace period: give it 2 s
	i=0
	while :; do
		left=0
		for id in $ours; do
			bpftool prog show id "$id" >/dev/null 2>&1 && left=$((left + 1))
		done
		[ "$left" = 0 ] || [ $i -ge 20 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	[ "$left" = 0 ]
	ok $? "run --source $src: none of its $(echo $ours | wc -w) BPF programs is left ($left)"
	ls /sys/kernel/tracing/instances | grep -q '^imbalanced-'
	[ $? != 0 ]
	ok $? "run --source $src: no tracefs instance of ours left"
done
[ "$(cat /sys/kernel/tracing/trace_clock)" = "$before_clock" ] &&
	[ "$(cat /sys/kernel/tracing/set_event | sort | tr '\n' ' ')" = "$before_events" ]
ok $? "the top-level tracefs settings are as they were"

# --- a burst of 5,000 short-lived processes -------------------------------
# the flight recorder keeps the last 30 s of events by design: off here
"$IMB" run --source bpf --listen '' --db '' --window 500 --set flight_recorder_s=0 \
	2>"$T/burst.err" &
daemon=$!
wait_ready "$T/burst.err"
sleep 2
# RssAnon: the process's own heap; the BPF ring buffer is a shared mapping
# of fixed size whose pages count in VmRSS once the load has touched them
rss() { sed -n 's/^RssAnon:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$daemon/status"; }
base=$(rss)
(
	i=0
	while [ $i -lt 50 ]; do
		j=0
		while [ $j -lt 100 ]; do
			/bin/true &
			j=$((j + 1))
		done
		wait		# this subshell's children only
		i=$((i + 1))
	done
)
peak=$(rss)
sleep 3
after=$(rss)
kill -0 "$daemon" 2>/dev/null
ok $? "5,000 short-lived processes: the daemon is still running"
echo "# RssAnon baseline $base KiB, right after the burst $peak KiB, 3 s later $after KiB"
[ -n "$after" ] && [ "$after" -le $((base + base / 4 + 2048)) ]
ok $? "5,000 short-lived processes: memory back to its baseline ($base -> $after KiB)"
kill -TERM "$daemon"
wait "$daemon"
ok $? "after the burst: clean exit"
daemon=

echo "1..$n"
exit $fail

# SPDX-License-Identifier: GPL-2.0-or-later
# live-lib.sh - TAP helpers for the tests that run the real daemon live:
# tests/t/live.t, tests/t/churn.t, tests/t/groups-live.t, tests/t/cgroup-paths-live.t.
# The sourcing test sets $daemon to the daemon's pid and prints the plan.

. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"	# n, fail, ok, skip_all
daemon=

# need_live WHAT: skip unless root (WHAT names what root is needed for),
# tracefs (mounted here when it is not) with the sched events, and jq
need_live() {
	[ "$(id -u)" = 0 ] || skip_all "needs root ($1)"
	mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	[ -d /sys/kernel/tracing/events/sched ] || skip_all "kernel has no tracefs sched events"
	command -v jq >/dev/null || skip_all "jq not installed"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_ready ERRFILE: until the daemon ($daemon) logs that it runs (start-up
# parses event formats and loads BPF: seconds under the sanitizers); 1 when
# it exits first or takes over 60 s
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

# threads_within REPORT TRUTH: every thread of tests/helpers/hogs' --json TRUTH has
# a run_ns in the daemon's REPORT within 2 % of the CPU time it measured
# itself (CLOCK_THREAD_CPUTIME_ID); prints each as a TAP comment
threads_within() {
	python3 - "$1" "$2" <<'PY'
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
PY
}

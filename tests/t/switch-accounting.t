#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# switch-accounting.t - CPU time from sched_switch alone, for recordings
# made without sched_stat_runtime: the recorded hog fixtures with their
# runtime events taken out must still agree with each thread's own CPU
# clock, although this kernel's tracefs drops the switch out of idle on
# CPU 1 (a task's unseen start is bounded by the CPU's last switch and by
# its enqueue, and its queued time is never charged as running).  And a
# sched_stat_runtime that a balancer emits for another CPU's current task
# does not move that task.  TAP output.
set -u
IMB=${IMBALANCED:-./imbalanced}
FIX=${top_srcdir:-.}/tests/fixtures
T=$(mktemp -d "${TMPDIR:-/tmp}/switch-acct-t.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"

# cmp JSON TRUTH LIMIT_PCT: worst per-thread |run_ns - cpu_ns| / cpu_ns
cmp() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2]))
lim = float(sys.argv[3])
tasks = {t["pid"]: t for t in r["tasks"]}
worst = 0.0
for th in truth["threads"]:
    t = tasks.get(th["tid"])
    if t is None:
        print("# thread %d missing" % th["tid"]); sys.exit(1)
    e = (t["run_ns"] - th["cpu_ns"]) / th["cpu_ns"]
    print("# %s: own clock %d ns, from switches %d ns (%+.3f %%)" % (th["comm"], th["cpu_ns"], t["run_ns"], 100 * e))
    worst = max(worst, abs(e))
job = {j["key"]: j for j in r["jobs"]}.get("process:%d" % truth["pid"])
print("# worst %.3f %%; unfairness %s, ground truth %s" % (100 * worst, job and job["unfairness"], truth["unfairness"]))
ok = worst * 100 <= lim and job is not None and abs(job["unfairness"] - truth["unfairness"]) <= 0.01
sys.exit(0 if ok else 1)
PY
}

for f in hogs3on2 hogs2on2; do
	"$IMB" analyze --dump-events "$FIX/$f.dat" 2>"$T/err" | grep -v '^[0-9]* runtime ' >"$T/$f.events"
	cp "$FIX/$f.tgids" "$T/$f.tgids"
	c=$(grep -c ' runtime ' "$T/$f.events")
	s=$(grep -c ' switch ' "$T/$f.events")
	[ "$c" = 0 ] && [ "$s" -gt 100 ]
	ok $? "$f: the stream without sched_stat_runtime keeps its $s switches"
	"$IMB" analyze --json --tgids "$T/$f.tgids" "$T/$f.events" >"$T/$f.json" 2>"$T/err" &&
		cmp "$T/$f.json" "$FIX/$f.truth.json" 1
	ok $? "$f from switches alone: every thread within 1 % of its own CPU clock, unfairness within 1 point"
done

# pid 20 runs on CPU 1 for 100 ms; at 50 ms the balancer on idle CPU 0
# updates it remotely (a runtime record in CPU 0's buffer).  CPU 0 stays idle.
cat >"$T/remote.events" <<'EOF2'
# imbalanced events v1
1000000 wakeup_new cpu=1 pid=20 tgid=20 prio=120 target_cpu=1 comm=busy
1000100 switch cpu=1 prev_pid=0 prev_prio=120 prev_state=R next_pid=20 next_prio=120
51000000 runtime cpu=0 pid=20 runtime_ns=50000000
101000000 runtime cpu=1 pid=20 runtime_ns=50000000
101000100 switch cpu=1 prev_pid=20 prev_prio=120 prev_state=S next_pid=0 next_prio=120
EOF2
"$IMB" analyze --json --window 1000 "$T/remote.events" >"$T/remote.json" 2>"$T/err"
python3 - "$T/remote.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cpus = {c["cpu"]: c for c in r["cpus"]}
t = [t for t in r["tasks"] if t["pid"] == 20][0]
print("# cpu0 busy %d ns util %d; cpu1 busy %d ns util %d runnable %d; pid 20 run_ns %d util %d" % (
    cpus[0]["busy_ns"], cpus[0]["util_avg"], cpus[1]["busy_ns"], cpus[1]["util_avg"],
    cpus[1]["runnable_avg"], t["run_ns"], t["util_avg"]))
ok = (cpus[0]["busy_ns"] == 0 and cpus[0]["util_avg"] == 0 and cpus[0]["runnable_avg"] == 0 and
      cpus[1]["busy_ns"] >= 99000000 and abs(cpus[1]["util_avg"] - t["util_avg"]) <= 2 and
      abs(cpus[1]["runnable_avg"] - t["util_avg"]) <= 2 and t["run_ns"] == 100000000)
sys.exit(0 if ok else 1)
PY
ok $? "a remote sched_stat_runtime leaves the task running on its CPU (busy, util = its util) and the other CPU idle"

echo "1..$n"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# churn.t - the live daemon while task groups and CPUs come and go: it
# must survive tasks and cgroups appearing and vanishing at a high rate,
# and CPU hotplug events it cannot see.  With a small group table (max_groups=16,
# so eviction runs): 300 cpu-controller cgroups, each made, given a short
# busy process and removed, four at a time, and 300 new sessions (each its
# own autogroup); then 3 busy threads while CPU 1 goes offline for 2 s and
# comes back.  The daemon keeps running and exits 0, its windows go on
# without a gap, it counts the threads' CPU time within 2 % of their own
# clocks across the hotplug, and it sees CPU 1 busy again afterwards.
# tests/local.mk runs this test after every other one: taking a CPU away
# would disturb tests that measure on two.  Needs root; mounts tracefs
# itself; skips the hotplug part where CPU 1 cannot go offline.  TAP output.
set -u

IMB=${IMBALANCED:-./imbalanced}
HOGS=${top_builddir:-.}/tests/helpers/hogs
T=$(mktemp -d "${TMPDIR:-/tmp}/churn-t.XXXXXX")
CPU1=/sys/devices/system/cpu/cpu1/online
. "${top_srcdir:-.}/tests/helpers/live-lib.sh"
cgdir=
offlined=

cleanup() {
	[ -n "$offlined" ] && echo 1 >"$CPU1"
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	[ -n "$cgdir" ] && for d in "$cgdir"/imb-churn-$$-*; do [ -d "$d" ] && rmdir "$d"; done 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT


need_live "BPF, cgroups, CPU hotplug"

# the cpu controller: a v1 hierarchy of its own, or v2 with cpu enabled
if [ -f /sys/fs/cgroup/cpu/cpu.shares ]; then
	cgdir=/sys/fs/cgroup/cpu procs=tasks
elif grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	cgdir=/sys/fs/cgroup procs=cgroup.procs
fi

"$IMB" run --listen '' --db "$T/churn.db" --window 500 --set max_groups=16 \
	--report "$T/churn.json" 2>"$T/churn.err" &
daemon=$!
wait_ready "$T/churn.err"
grep -q 'imbalanced: running: source bpf' "$T/churn.err"
ok $? "the daemon runs on the BPF source"

# --- cgroups and autogroups coming and going -----------------------------
# one_group K: a cgroup, a 20 ms busy process in it, then the cgroup gone
one_group() {
	d="$cgdir/imb-churn-$$-$1"
	mkdir "$d" || return 1
	sh -c "echo \$\$ >'$d/$procs' && exec '$HOGS' --threads 1 --seconds 0.02" >/dev/null || return 1
	rmdir "$d"
}
if [ -n "$cgdir" ]; then
	k=0 bad=0
	while [ $k -lt 300 ]; do
		pids=
		for j in 0 1 2 3; do
			one_group $((k + j)) &
			pids="$pids $!"
		done
		for p in $pids; do wait "$p" || bad=$((bad + 1)); done
		k=$((k + 4))
	done
	[ "$bad" = 0 ] && kill -0 "$daemon" 2>/dev/null
	ok $? "300 cgroups made, run in and removed, four at a time: the daemon runs on ($bad failed)"
else
	ok 0 "# SKIP no cpu controller to make cgroups in"
fi
k=0 pids=
while [ $k -lt 300 ]; do
	setsid "$HOGS" --threads 1 --seconds 0.005 >/dev/null &
	pids="$pids $!"
	k=$((k + 1))
	if [ $((k % 20)) = 0 ]; then
		for p in $pids; do wait "$p"; done
		pids=
	fi
done
kill -0 "$daemon" 2>/dev/null
ok $? "300 new sessions (autogroups) come and go: the daemon runs on"

# --- CPU 1 offline and back while 3 threads run ----------------------------
hotplug=
if [ -w "$CPU1" ] && [ "$(cat "$CPU1")" = 1 ]; then
	"$HOGS" --threads 3 --seconds 7 --json >"$T/hogs.json" &
	hogs=$!
	sleep 2
	if echo 0 >"$CPU1" 2>/dev/null; then
		offlined=1
		sleep 2
		echo 1 >"$CPU1" && offlined=
		hotplug=1
	fi
	wait "$hogs"
	sleep 1
fi
kill -TERM "$daemon"
wait "$daemon"
rc=$?
daemon=
sed 's/^/# /' "$T/churn.err" | grep -v 'alert' | head -40
[ "$rc" = 0 ] && ! grep -q -i 'error\|internal' "$T/churn.err"
ok $? "SIGTERM after the churn: clean exit 0, no error logged (status $rc)"

# the windows go on without a gap: one store row per window for the run
# (the CPU rows of each window; its end time)
python3 - "$T/churn.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
win = db.execute("select window_ns from runs").fetchone()[0]
ts = sorted(t for (t,) in db.execute("select distinct t_ns from cpu_samples"))
# (the last window is the part from the last boundary to SIGTERM)
gaps = [(a, b - a) for a, b in zip(ts, ts[1:]) if b - a != win and not (b == ts[-1] and b - a < win)]
print(f"# {len(ts)} windows of {win / 1e6:.0f} ms, {len(gaps)} gaps", [(a - ts[0], d) for a, d in gaps])
sys.exit(0 if len(ts) > 10 and not gaps else 1)
EOF
ok $? "every window of the run is in the store, none missing"

# 600 groups came and went through a table of 16 (CPU, group) entries: the
# report lists at most that many, each with its path
jq -e '(.groups | length) <= 16 and all(.groups[]; (.path | startswith("/")))' \
	"$T/churn.json" >/dev/null
rc=$?
# (on failure: the groups listed without a path, as the report has them)
[ $rc = 0 ] || jq -c '.groups[] | select((.path // "") | startswith("/") | not)' \
	"$T/churn.json" | head -8 | sed 's/^/# no path: /'
ok $rc "the group table stays within max_groups=16 ($(jq '.groups | length' "$T/churn.json") listed, each with a path)"

if [ -n "$hotplug" ]; then
	threads_within "$T/churn.json" "$T/hogs.json"
	ok $? "across CPU 1 going offline and back: every thread's CPU time within 2 % of its own clock"
	# after the CPU is back the hogs use both CPUs: CPU 1 has windows
	# with util above half its capacity
	python3 - "$T/churn.db" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = list(db.execute("select t_ns, util_avg from cpu_samples where cpu = 1 order by t_ns"))
busy = [u for t, u in rows[-8:] if u > 512]
print(f"# CPU 1 util_avg, last windows: {[u for t, u in rows[-8:]]}")
sys.exit(0 if busy else 1)
EOF
	ok $? "CPU 1 is seen busy again after it came back"
else
	ok 0 "# SKIP CPU 1 cannot go offline here"
	ok 0 "# SKIP CPU 1 cannot go offline here"
fi

echo "1..$n"
exit $fail

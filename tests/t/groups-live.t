#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# groups-live.t - task groups listed live: the real daemon on
# BPF, a cpu cgroup (v1, /sys/fs/cgroup/cpu) created here with a busy
# thread in it, and a busy thread in this test's own autogroup.
# GET /api/v1/groups must list the cgroup with its path "/imb-test-<pid>"
# (sent by the BPF program on pelt_cfs_tp), its parent the root, the
# engine's and the kernel's PELT values close to each other and to a busy
# thread, and the autogroup as "/autogroup-<N>" of /proc/self/autogroup;
# `run --report` lists the same groups; serve answers 404.  Needs root;
# mounts tracefs itself; removes its cgroup.  TAP output.
set -u

IMB=${IMBALANCED:-./imbalanced}
HOGS=${top_builddir:-.}/tests/helpers/hogs
T=$(mktemp -d "${TMPDIR:-/tmp}/groups-live-t.XXXXXX")
CG=/sys/fs/cgroup/cpu/imb-test-$$
. "${top_srcdir:-.}/tests/helpers/live-lib.sh"
hog_cg=
hog_ag=

cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	[ -n "$hog_cg" ] && kill "$hog_cg" 2>/dev/null && wait "$hog_cg" 2>/dev/null
	[ -n "$hog_ag" ] && kill "$hog_ag" 2>/dev/null && wait "$hog_ag" 2>/dev/null
	# the cgroup can go once its task has exited
	i=0
	while [ -d "$CG" ] && ! rmdir "$CG" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM


need_live "BPF, cgroups"
command -v curl >/dev/null || skip_all "curl not installed"
[ -x "$HOGS" ] || skip_all "tests/helpers/hogs not built (make check builds it)"
[ -f /sys/fs/cgroup/cpu/tasks ] || skip_all "no cgroup v1 cpu hierarchy at /sys/fs/cgroup/cpu"
[ -r /proc/self/autogroup ] || skip_all "kernel without autogroups (CONFIG_SCHED_AUTOGROUP)"
"$IMB" check >/dev/null 2>&1 || skip_all "live mode cannot run here: $("$IMB" check 2>&1 | tail -1)"

# Autogroups hold only tasks of the root cpu cgroup: this shell's must be it.
ag=$(sed -n 's|^/autogroup-\([0-9][0-9]*\) .*|\1|p' /proc/self/autogroup)
cpu_cg=$(sed -n 's|^[0-9]*:\([^:]*,\)\{0,1\}cpu\(,[^:]*\)\{0,1\}:||p' /proc/self/cgroup | head -1)

mkdir "$CG" || skip_all "cannot create $CG"
# one busy thread in the cgroup, one in this session's autogroup
sh -c "echo \$\$ > '$CG/tasks' && exec '$HOGS' --threads 1 --seconds 60" >/dev/null &
hog_cg=$!
"$HOGS" --threads 1 --seconds 60 >/dev/null &
hog_ag=$!
sleep 0.2
grep -qx "$hog_cg" "$CG/tasks"
ok $? "the busy process is in $CG"

port=$(free_port)
"$IMB" run --source bpf --listen "127.0.0.1:$port" --db '' --window 500 \
	--report "$T/report.json" 2>"$T/run.err" &
daemon=$!
B="http://127.0.0.1:$port"

# wait (up to 30 s: the sanitizers make start-up slow) for a listing that
# has the cgroup with its path and a kernel record compared on some CPU
name=imb-test-$$
i=0
found=1
while [ $i -lt 300 ]; do
	kill -0 "$daemon" 2>/dev/null || break
	if curl -sf -o "$T/groups.json" "$B/api/v1/groups" 2>/dev/null &&
	   jq -e --arg p "/$name" \
		'[.groups[] | select(.path == $p and ([.cpus[].kernel_samples] | add) > 0)] | length == 1' \
		"$T/groups.json" >/dev/null 2>&1; then
		found=0
		break
	fi
	sleep 0.1
	i=$((i + 1))
done
ok $found "GET /api/v1/groups lists the cgroup with its path /$name"
[ $found = 0 ] || { sed 's/^/# /' "$T/run.err" | tail -20; head -c 2000 "$T/groups.json" 2>/dev/null | sed 's/^/# /'; }

# the busy processes' CPU share as PELT weighs it: their run time
# (schedstat, ns) sampled every 2 ms for 1.5 s, the listing fetched, and
# each interval weighted by y^age (y^32 = 1/2, age in 1024 us periods)
# back from the instant of the listing's last kernel record of the
# cgroup (kernel_update_ns; bpf_ktime_get_ns is CLOCK_MONOTONIC), so the
# share and util_avg describe the same recent past (other work shares
# the CPUs, and a share over seconds is not what a ~100 ms average shows)
set -- $(python3 - "$hog_cg" "$hog_ag" "$B/api/v1/groups" "$T/groups.json" "/$name" <<'EOF'
import glob, json, subprocess, sys, time
def run_ns(pid):
    total = 0
    for f in glob.glob("/proc/%s/task/*/schedstat" % pid):
        try:
            total += int(open(f).read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total
pids = sys.argv[1:3]
samples = []
def sample():
    samples.append((time.monotonic_ns(), [run_ns(p) for p in pids]))
end = time.monotonic_ns() + 1500000000
while time.monotonic_ns() < end:
    sample()
    time.sleep(0.002)
ok = subprocess.run(["curl", "-sf", "-o", sys.argv[4], sys.argv[3]]).returncode == 0
sample()
at = samples[-1][0]
try:
    rows = [g for g in json.load(open(sys.argv[4]))["groups"] if g.get("path") == sys.argv[5]]
    k = [c.get("kernel_update_ns") or 0 for c in rows[0]["cpus"]]
    if samples[0][0] + 500000000 <= max(k) <= at:
        at = max(k)
except (OSError, ValueError, KeyError, IndexError):
    pass
y = 0.5 ** (1 / 32.0)
share = []
for i in range(len(pids)):
    num = den = 0.0
    for (t0, r0), (t1, r1) in zip(samples, samples[1:]):
        if t1 > at or t1 <= t0:
            continue
        w = y ** ((at - (t0 + t1) / 2) / 1024000.0) * (t1 - t0)
        num += w * (r1[i] - r0[i]) / (t1 - t0)
        den += w
    share.append(num / den if den else 0)
print("%.3f %.3f %d" % (share[0], share[1], 0 if ok else 1))
EOF
)
share_cg=${1:-0} share_ag=${2:-0}
echo "# CPU share as PELT weighs it, at the listing's last kernel record: cgroup's busy thread $share_cg, autogroup's $share_ag"
[ "${3:-1}" = 0 ]
ok $? "GET /api/v1/groups answers again"
jq --arg p "/$name" '.groups[] | select(.path == $p)' "$T/groups.json" >"$T/cg.json" 2>/dev/null

cg_id=$(stat -c %i "$CG" 2>/dev/null)
jq -e --arg id "$cg_id" '.kind == "cgroup" and (.key | startswith("cgroup:")) and
	.parent == "root" and .path_truncated == false and (.cpus | length) >= 1' "$T/cg.json" >/dev/null
ok $? "the cgroup: kind cgroup, parent the root, path complete, per-CPU entries"
# kernfs ids: the inode number is the id's low 32 bits
jq -e --argjson ino "${cg_id:-0}" '(.id % 4294967296) == $ino' "$T/cg.json" >/dev/null
ok $? "its id is the cgroup directory's kernfs id (inode $cg_id)"

# sums over CPUs: util_avg is the share of time its task ran (1024 = all
# of one CPU), as weighted above: within 0.35 of it (a CPU the thread
# left keeps its last record until its next update), and never nothing
jq -e --argjson s "$share_cg" '([.cpus[].kernel_util_avg // 0] | add) as $k |
	([.cpus[].util_avg] | add) as $e | $k > 0 and $e > 0 and
	($k / 1024 - $s | fabs) <= 0.35 and ($e / 1024 - $s | fabs) <= 0.35 and
	all(.cpus[]; (.kernel_util_avg // 0) <= 1024 and .util_avg <= 1024)' "$T/cg.json" >/dev/null
ok $? "its util_avg, the engine's and the kernel's, is its busy thread's CPU share $share_cg ($(jq -c '[.cpus[] | {cpu, util_avg, kernel_util_avg}]' "$T/cg.json"))"
jq -e '[.cpus[] | select(.kernel_samples > 0) | .util_avg_error, .runnable_avg_error,
	.load_avg_error | (if . < 0 then -. else . end)] | length > 0 and max <= 200' "$T/cg.json" >/dev/null
ok $? "the engine's error against the kernel is within 200 of 1024 ($(jq -c '[.cpus[] | {cpu, kernel_samples, util_avg_error, runnable_avg_error, load_avg_error}]' "$T/cg.json"))"
jq -e '([.cpus[].kernel_h_nr_queued // 0] | add) >= 1 and ([.cpus[].nr_tasks] | add) >= 1 and
	([.cpus[] | .last_update_ns] | min) > 0 and .last_update_ns > 0' "$T/cg.json" >/dev/null
ok $? "its task counts (the kernel's h_nr_queued, the model's nr_tasks) and update times"

if [ -n "$ag" ] && [ "$cpu_cg" = / ]; then
	jq -e --arg k "autogroup:$ag" --arg p "/autogroup-$ag" \
		--argjson s "$share_ag" \
		'[.groups[] | select(.key == $k and .kind == "autogroup" and .path == $p and
		  .parent == "root" and ([.cpus[].kernel_util_avg // 0] | add) / 1024 >= $s - 0.35 and
		  ([.cpus[].kernel_util_avg // 0] | add) > 0)] | length == 1' \
		"$T/groups.json" >/dev/null
	# the session's other tasks (this test, the daemon, make) only add to it
	ok $? "this session's autogroup is listed as /autogroup-$ag, at least its busy thread's share $share_ag ($(jq -c --arg k "autogroup:$ag" '[.groups[] | select(.key == $k) | {path, parent, u: [.cpus[] | {cpu, util_avg, kernel_util_avg}]}]' "$T/groups.json"))"
else
	ok 0 "# SKIP this shell is not in the root cpu cgroup ($cpu_cg): no autogroup"
fi
jq -e '.groups | map(.key) | (length == (unique | length))' "$T/groups.json" >/dev/null
ok $? "each group is listed once"

# 304 with the listing's ETag
etag=$(curl -s -D - -o /dev/null "$B/api/v1/groups" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
code=$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$B/api/v1/groups")
# a new window may have replaced the listing in between: then 200 is right
[ -n "$etag" ] && { [ "$code" = 304 ] || [ "$code" = 200 ]; }
ok $? "an ETag, and If-None-Match answers 304 while the listing stands (got $code)"

kill -TERM "$daemon"
wait "$daemon"
st=$?
daemon=
[ $st = 0 ] && ! grep -qE 'Sanitizer|runtime error' "$T/run.err"
ok $? "the daemon stops cleanly on SIGTERM (status $st)"
jq -e --arg p "/$name" '[.groups[] | select(.path == $p)] | length == 1' "$T/report.json" >/dev/null
ok $? "run --report lists the cgroup with its path in groups"

kill "$hog_cg" "$hog_ag" 2>/dev/null
wait "$hog_cg" "$hog_ag" 2>/dev/null
hog_cg= hog_ag=
i=0
while [ -d "$CG" ] && ! rmdir "$CG" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ ! -d "$CG" ]
ok $? "the test's cgroup is removed"

# serve: the store keeps no groups, a clear 404
"$IMB" run --source bpf --listen '' --db "$T/a.db" --window 500 --duration 2 2>"$T/db.err"
port=$(free_port)
"$IMB" serve --db "$T/a.db" --listen "127.0.0.1:$port" 2>"$T/serve.err" &
daemon=$!
i=0
while ! curl -sf -o /dev/null "http://127.0.0.1:$port/api/v1/status" 2>/dev/null && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
code=$(curl -s -o "$T/serve.json" -w '%{http_code}' "http://127.0.0.1:$port/api/v1/groups")
[ "$code" = 404 ] && jq -e '.status == 404 and (.error | test("live daemon"))' "$T/serve.json" >/dev/null
ok $? "serve: GET /api/v1/groups is a 404 that says why (got $code)"
kill -TERM "$daemon"
wait "$daemon"
daemon=

echo "1..$n"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# cgroup-paths-live.t - fairness jobs grouped by cgroup carry the cgroup's
# v2 path, live: a v2 cgroup made here under the host's v2 mount (found in
# /proc/self/mountinfo), two busy threads of tests/helpers/hogs in it, and the real
# daemon on BPF with --set group_by=cgroup.  /api/v1/jobs must list the job
# keyed cgroup:<id> by the id BPF sent (its low 32 bits the directory's
# inode number) with path "/imb-lbl-<pid>" and both threads; `run --report`
# too.  The path is found only when the resolver's id for the directory
# equals the one BPF reports.  analyze of the recording of that run gives
# the same key and no path (a recording is another host's).  Needs root;
# mounts tracefs itself; removes its cgroup.  TAP output.
set -u

IMB=${IMBALANCED:-./imbalanced}
HOGS=${top_builddir:-.}/tests/helpers/hogs
T=$(mktemp -d "${TMPDIR:-/tmp}/cgroup-paths-live-t.XXXXXX")
. "${top_srcdir:-.}/tests/helpers/live-lib.sh"
hog=
CG=

cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	[ -n "$hog" ] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
	# the cgroup can go once its tasks have exited
	i=0
	while [ -n "$CG" ] && [ -d "$CG" ] && ! rmdir "$CG" 2>/dev/null && [ $i -lt 50 ]; do
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
# the v2 mount: /sys/fs/cgroup/unified on a hybrid host, /sys/fs/cgroup on a pure one
V2=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } break } }' \
	/proc/self/mountinfo)
[ -n "$V2" ] && [ -f "$V2/cgroup.procs" ] || skip_all "no cgroup v2 hierarchy mounted"
"$IMB" check >/dev/null 2>&1 || skip_all "live mode cannot run here: $("$IMB" check 2>&1 | tail -1)"

name=imb-lbl-$$
CG=$V2/$name
mkdir "$CG" || skip_all "cannot create $CG"
cg_ino=$(stat -c %i "$CG")

port=$(free_port)
B="http://127.0.0.1:$port"
"$IMB" run --source bpf --listen "127.0.0.1:$port" --db '' --window 500 --set group_by=cgroup \
	--report "$T/report.json" --record "$T/rec.txt" 2>"$T/run.err" &
daemon=$!
wait_ready "$T/run.err"
ok $? "the daemon runs with group_by=cgroup"

# two busy threads for 3 s in the cgroup
sh -c "echo \$\$ > '$CG/cgroup.procs' && exec '$HOGS' --threads 2 --seconds 3" >/dev/null &
hog=$!
sleep 0.2
grep -qx "$hog" "$CG/cgroup.procs"
ok $? "the busy process is in $CG"

# a window's jobs with the cgroup's job (up to 30 s: the sanitizers are slow)
i=0
found=1
while [ $i -lt 300 ]; do
	kill -0 "$daemon" 2>/dev/null || break
	if curl -sf -o "$T/jobs.json" "$B/api/v1/jobs" 2>/dev/null &&
	   jq -e --arg p "/$name" '[.jobs[] | select(.path == $p)] | length == 1' \
		"$T/jobs.json" >/dev/null 2>&1; then
		found=0
		break
	fi
	sleep 0.1
	i=$((i + 1))
done
ok $found "GET /api/v1/jobs lists a job with path /$name"
[ $found = 0 ] || { sed 's/^/# /' "$T/run.err" | tail -20; head -c 2000 "$T/jobs.json" 2>/dev/null | sed 's/^/# /'; }
jq -e --arg p "/$name" --argjson ino "${cg_ino:-0}" '.jobs[] | select(.path == $p) |
	.kind == "cgroup" and (.key | test("^cgroup:[0-9]+$")) and
	((.key | ltrimstr("cgroup:") | tonumber) % 4294967296) == $ino and .tasks >= 2' \
	"$T/jobs.json" >/dev/null
ok $? "it is keyed cgroup:<the id BPF sent>, the directory's kernfs id (inode $cg_ino), with both threads ($(jq -c --arg p "/$name" '[.jobs[] | select(.path == $p)]' "$T/jobs.json" 2>/dev/null))"
jq -e '[.jobs[] | select(.kind == "cgroup") | has("path")] | all and length >= 1' "$T/jobs.json" >/dev/null
ok $? "every cgroup job has a path member"
# the daemon's own cgroup, resolved the same way; one path per cgroup
own=$(sed -n 's|^0::||p' /proc/"$daemon"/cgroup)
jq -e --arg p "$own" '([.jobs[] | select(.path != null) | .path] | length == (unique | length)) and
	([.jobs[] | select(.path == $p)] | length == 1)' "$T/jobs.json" >/dev/null
ok $? "the daemon's own cgroup's job has its path $own, and no path is listed twice ($(jq -c '[.jobs[] | {key, path}]' "$T/jobs.json" 2>/dev/null | head -c 400))"

wait "$hog"
hog=
kill -TERM "$daemon"
wait "$daemon"
st=$?
daemon=
[ $st = 0 ] && ! grep -qE 'Sanitizer|runtime error' "$T/run.err"
ok $? "the daemon stops cleanly on SIGTERM (status $st)"
key=$(jq -r --arg p "/$name" '[.jobs[] | select(.path == $p)][0].key // empty' "$T/report.json" 2>/dev/null)
[ -n "$key" ] && [ "$key" = "$(jq -r --arg p "/$name" '[.jobs[] | select(.path == $p)][0].key' "$T/jobs.json")" ]
ok $? "run --report lists the job with its path and the same key ($key)"

# offline: the recording's ids are not resolved against this host
"$IMB" analyze --json --group-by cgroup "$T/rec.txt" >"$T/analyze.json" 2>"$T/analyze.err"
jq -e --arg k "$key" '[.jobs[] | select(.key == $k)] | length == 1 and (.[0].path == null)' \
	"$T/analyze.json" >/dev/null && ! grep -q "/$name" "$T/analyze.json"
ok $? "analyze of the recording: the job keyed $key, path null, the cgroup's name nowhere"

i=0
while [ -d "$CG" ] && ! rmdir "$CG" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ ! -d "$CG" ]
ok $? "the test's cgroup is removed"
CG=

echo "1..$n"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# store-analyze.t - `imbalanced analyze --db` keeps every window it writes.
# An offline run starts now in wall-clock terms (runs.started_ns), its rows
# keep trace time; the store's retention must not take a recording's rows
# for decades old and purge them as they are written.  Checked with sqlite3
# against `analyze --json` of the same file: the recorded fixture
# hogs3on2.dat, and a generated 150 s stream whose first two minutes are
# downsampled while it is written (where an old start time purged the raw
# rows).  TAP output.
set -u
IMB=${IMBALANCED:-./imbalanced}
FIX=${top_srcdir:-.}/tests/fixtures
T=$(mktemp -d "${TMPDIR:-/tmp}/store-analyze-t.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"

if ! command -v sqlite3 >/dev/null; then
	echo "1..0 # SKIP sqlite3 not installed"
	exit 0
fi

python3 - >"$T/long.events" <<'EOF'
# 150 s: three threads of process 100 on 2 CPUs, 101 alone on CPU 0, 102
# and 103 sharing CPU 1 in 4 ms slices.
MS = 1000000
ev = []
ev.append((1 * MS, "wakeup_new cpu=0 pid=101 tgid=100 prio=120 target_cpu=0 comm=w0"))
ev.append((1 * MS + 10, "wakeup_new cpu=1 pid=102 tgid=100 prio=120 target_cpu=1 comm=w1"))
ev.append((1 * MS + 20, "wakeup_new cpu=1 pid=103 tgid=100 prio=120 target_cpu=1 comm=w2"))
end = 150000 * MS
t = 1 * MS
while t + 4 * MS <= end:
    t += 4 * MS
    ev.append((t, "runtime cpu=0 pid=101 runtime_ns=%d" % (4 * MS)))
t, cur, other = 1 * MS, 102, 103
while t + 4 * MS <= end:
    t += 4 * MS
    ev.append((t, "runtime cpu=1 pid=%d runtime_ns=%d" % (cur, 4 * MS)))
    ev.append((t + 1, "switch cpu=1 prev_pid=%d prev_tgid=100 prev_prio=120 prev_state=R+ next_pid=%d next_tgid=100 next_prio=120" % (cur, other)))
    cur, other = other, cur
print("# imbalanced events v1")
for t, line in sorted(ev, key=lambda x: x[0]):
    print(t, line)
EOF
ok $? "the 150 s event stream is generated"

cat >"$T/check.py" <<'EOF'
import json, math, sys
r = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[2])]
d = {x[0]: x[1:] for x in rows if x[0] != "finding"}
before, after = int(sys.argv[3]), int(sys.argv[4])
window = int(d["runs"][2])
nwin = math.ceil((r["t_end_ns"] - r["t_start_ns"]) / window)
ncpu = len(r["cpus"])
checks = [
    ("one run whose start is wall-clock time during this analyze (%s)" % d["runs"][1],
     d["runs"][0] == "1" and before <= int(d["runs"][1]) <= after),
    ("every window is there (%s of %d)" % (d["windows"][0], nwin), int(d["windows"][0]) == nwin),
    ("the windows span the recording", int(d["windows"][3]) == r["t_start_ns"] and
     int(d["windows"][4]) == r["t_end_ns"]),
    ("their events add up to the summary's (%s of %d)" % (d["windows"][1], r["events"]),
     int(d["windows"][1]) == r["events"] and int(d["windows"][2]) == r["lost_events"]),
    ("every window has a row per CPU (%s..%s of %d)" % (d["cpu_per_window"][0],
     d["cpu_per_window"][1], ncpu),
     int(d["cpu_per_window"][0]) == ncpu and int(d["cpu_per_window"][1]) == ncpu and
     int(d["cpu_rows"][0]) == ncpu * nwin),
    ("every window has its task rows", int(d["tasks_per_window"][0]) >= 1),
    ("every window has its job rows", int(d["jobs_per_window"][0]) >= 1),
]
want = sorted((f["kind"], f["subject"], f["t_start_ns"], f["t_end_ns"], int(f["open"]))
              for f in r["findings"])
got = sorted((x[1], x[2], int(x[3]), int(x[4]), int(x[5])) for x in rows if x[0] == "finding")
checks.append(("the findings are all there, in their final state (%d of %d)" %
               (len(got), len(want)), got == want and len(want) > 0))
for name, good in checks:
    print("%s %s" % ("ok" if good else "FAIL", name))
EOF

# check NAME FILE: analyze --db and --json of FILE agree
check() {
	name=$1 file=$2
	db="$T/$name.db"
	before=$(date +%s%N)
	"$IMB" analyze -q --db "$db" "$file" >/dev/null 2>"$T/$name.err"
	rc=$?
	after=$(date +%s%N)
	sed 's/^/# /' "$T/$name.err"
	ok $rc "$name: analyze --db exits 0"
	"$IMB" analyze -q --json "$file" >"$T/$name.json" 2>/dev/null
	ok $? "$name: analyze --json exits 0"
	sqlite3 -batch "$db" "
		select 'runs', count(*), min(started_ns), max(window_ns) from runs;
		select 'windows', count(*), coalesce(sum(events), 0), coalesce(sum(lost_events), 0),
		       min(t_start_ns), max(t_ns) from windows;
		select 'cpu_rows', count(*) from cpu_samples;
		select 'cpu_per_window', min(c), max(c) from (select count(c.cpu) c from windows w
			left join cpu_samples c on c.run_id = w.run_id and c.t_ns = w.t_ns group by w.t_ns);
		select 'tasks_per_window', min(c) from (select count(k.pid) c from windows w
			left join task_samples k on k.run_id = w.run_id and k.t_ns = w.t_ns group by w.t_ns);
		select 'jobs_per_window', min(c) from (select count(j.key) c from windows w
			left join job_samples j on j.run_id = w.run_id and j.t_ns = w.t_ns group by w.t_ns);
		select 'minutes', count(*), coalesce(sum(n), 0) from windows_1m;
		select 'finding', kind, subject, t_start_ns, t_end_ns, open from findings order by id;
	" >"$T/$name.sql" 2>&1
	sed 's/^/# db: /' "$T/$name.sql"
	python3 "$T/check.py" "$T/$name.json" "$T/$name.sql" "$before" "$after" >"$T/$name.verdicts"
	ok $? "$name: the database and the JSON can be compared"
	while read -r verdict what; do
		[ "$verdict" = ok ]
		ok $? "$name: $what"
	done <"$T/$name.verdicts"
}

check hogs3on2 "$FIX/hogs3on2.dat"
check long150s "$T/long.events"
# the long run wrote its first two minutes' rows after they were downsampled
m=$(sqlite3 "$T/long150s.db" "select count(*) from windows_1m")
[ "$m" -ge 2 ]
ok $? "long150s: its finished minutes are downsampled too ($m)"

# the daemon's store (run --replay) ends with the same findings, closed
"$IMB" run --replay "$FIX/hogs3on2.dat" --db "$T/replay.db" --listen '' 2>"$T/replay.err"
ok $? "run --replay of hogs3on2 into a store exits 0"
q="select kind || ' ' || subject || ' ' || open from findings order by kind, subject"
sqlite3 "$T/replay.db" "$q" >"$T/replay.findings"
sqlite3 "$T/hogs3on2.db" "$q" >"$T/analyze.findings"
[ -s "$T/replay.findings" ] && cmp -s "$T/replay.findings" "$T/analyze.findings" &&
	! grep -q ' 1$' "$T/replay.findings"
ok $? "the daemon stores the findings' final state at exit, as analyze does ($(wc -l <"$T/replay.findings") findings, none left open)"

echo "1..$n"
exit $fail

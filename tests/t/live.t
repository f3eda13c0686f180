#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# live.t - the live daemon on this machine: check (as root and
# as an unprivileged user), a 10 s run with 3 busy threads on the CPUs
# through BPF and through tracefs (CPU times, the overload classification
# per window and per CPU, the kernel-reference PELT error), the automatic
# BPF -> tracefs fallback without CAP_BPF/CAP_SYS_ADMIN, the BPF source
# with exactly the unit's capabilities, SIGHUP, a full ring buffer, SIGTERM
# cleanliness, and a burst of short-lived processes.  Needs root; mounts
# tracefs itself.  TAP output.
set -u

IMB=${IMBALANCED:-./imbalanced}
HOGS=${top_builddir:-.}/tests/helpers/hogs
T=$(mktemp -d "${TMPDIR:-/tmp}/live-t.XXXXXX")
. "${top_srcdir:-.}/tests/helpers/live-lib.sh"

notifier=
cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	[ -n "$notifier" ] && kill "$notifier" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT


need_live "BPF, tracefs"

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

# an unprivileged user: no BPF, no tracefs instance -> exit 3 and the reason
# (the binary and its directories must be readable by nobody)
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --inh-caps=-all \
		"$IMB" check >"$T/check-nobody.out" 2>"$T/check-nobody.err"
	rc=$?
	sed 's/^/# /' "$T/check-nobody.err"
	[ "$rc" = 3 ] && grep -q 'live mode cannot run: .*BPF not permitted' "$T/check-nobody.err" &&
		grep -q 'tracefs' "$T/check-nobody.err"
	ok $? "check as nobody: exit 3 (status $rc) with the reason (BPF and tracefs)"
	setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --inh-caps=-all \
		"$IMB" check --json >"$T/check-nobody.json" 2>/dev/null
	rc=$?
	[ "$rc" = 3 ] && jq -e '.live_ok == false and (.reason | length > 0) and .bpf_ok == false' \
		"$T/check-nobody.json" >/dev/null
	ok $? "check --json as nobody: exit 3, live_ok false and a reason"
else
	ok 0 "# SKIP no nobody user or no setpriv"
	ok 0 "# SKIP no nobody user or no setpriv"
fi

# run_hogs NAME SECONDS [PREFIX...] -- RUN-OPTIONS...: the daemon (its
# command prefixed, e.g. by setpriv) with 3 busy threads for SECONDS in
# the middle; report in $T/NAME.json, store in $T/NAME.db, log $T/NAME.err
run_hogs() {
	name=$1 secs=$2
	shift 2
	pre=
	while [ "$1" != -- ]; do pre="$pre $1"; shift; done
	shift
	rm -f "$T/$name.db"
	$pre "$IMB" run --listen '' --db "$T/$name.db" --window 1000 \
		--report "$T/$name.json" "$@" 2>"$T/$name.err" &
	daemon=$!
	wait_ready "$T/$name.err" || { echo "# daemon did not start: $(cat "$T/$name.err")"; return 1; }
	sleep 1
	"$HOGS" --threads 3 --seconds "$secs" --json >"$T/$name.truth.json"
	sleep 1
	kill -TERM "$daemon"
	wait "$daemon"
	rc=$?
	daemon=
	return $rc
}

# compare SOURCE: every hog thread's run_ns within 2 % of its own CPU time
compare() {
	threads_within "$T/$1.json" "$T/$1.truth.json"
}

# overload SOURCE: the load balancer's view, window by window (the store's
# per-window rows).  In the windows where the 3 threads were runnable
# throughout, whatever else runs: the machine-level group (both CPUs) is
# overloaded in most of them (its overload findings cover them), and at
# each window end a CPU is classified overloaded exactly when it holds two
# or more runnable tasks.  Hog windows are those in which the 3 threads ran
# for at least 1.6 of the 2 CPUs, i.e. had them to themselves; in those,
# moment by moment, one CPU holds two threads and is the overloaded one:
# the per-CPU overloaded fractions add up to about 1 (never both, never
# neither), and at the window end the CPU with 2 runnable tasks is the one
# classified overloaded and the CPU with 1 is not.  Under make check -j2
# other tests share the CPUs and hog windows are rare: that part is judged
# only over 8 or more.
overload() {
	python3 - "$T/$1.db" "$T/$1.json" "$T/$1.truth.json" "$2" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rep = json.load(open(sys.argv[2]))
truth = json.load(open(sys.argv[3]))
secs = float(sys.argv[4])
tids = [th["tid"] for th in truth["threads"]]
own = sum(th["cpu_ns"] for th in truth["threads"]) / 1e9
win = db.execute("select window_ns from runs").fetchone()[0]
q = ("select t_ns, sum(run_ns), sum(run_ns + wait_ns) from task_samples where pid in (%s)"
     " group by t_ns" % ",".join("?" * len(tids)))
rows_all = list(db.execute(q, tids))
# the machine group: three threads runnable all window long on two CPUs is
# overloaded whatever else runs (other work only adds to it)
busy = sorted(t for t, run, rq in rows_all if rq >= 2.7 * win)
# moment by moment per CPU: only where the hogs had the CPUs to themselves
hog = sorted(t for t, run, rq in rows_all if run >= 1.6 * win)
print("# the hogs got %.2f of the 2 CPUs; %d windows with all three runnable, %d with them running on both CPUs" %
      (own / secs, len(busy), len(hog)))
machine = [(f["t_start_ns"], f["t_end_ns"]) for f in rep["findings"]
           if f["kind"] == "overload" and f["subject"] == "machine"]
covered = sum(1 for t in busy if any(a <= t - win and t <= b for a, b in machine))
# per CPU at each window end, whatever else runs: the busy CPUs' util is
# near 1024, so a CPU with two or more runnable tasks is overloaded (the
# kernel's nr_running > 1 and util over capacity / imbalance_pct) and one
# with a single task is not
end_rule = end_cpus = 0
for t in busy:
    for cpu, nr, gt in db.execute("select cpu, nr_running, group_type from cpu_samples where t_ns = ?", (t,)):
        end_cpus += 1
        end_rule += (gt == 6) == (nr >= 2)
print("# at the ends of the windows with the three runnable, %d of %d CPUs classified overloaded exactly when "
      "they held two or more runnable tasks" % (end_rule, end_cpus))
one_at_a_time = end_right = end_windows = 0
for t in hog:
    rows = db.execute("select cpu, nr_running, group_type, overloaded_fraction from cpu_samples"
                      " where t_ns = ? order by cpu", (t,)).fetchall()
    fr = sum(r[3] for r in rows)
    two = [r for r in rows if r[1] == 2]
    one = [r for r in rows if r[1] == 1]
    right = None
    if len(rows) == 2 and len(two) == 1 and len(one) == 1:
        end_windows += 1
        right = two[0][2] == 6 and one[0][2] != 6    # IMB_GROUP_OVERLOADED
        end_right += right
    one_at_a_time += 0.75 <= fr <= 1.25
    print("# window %d: per CPU (nr_running, group_type, overloaded fraction) %s; sum %.2f%s" %
          (t, [(r[1], r[2], round(r[3], 2)) for r in rows], fr,
           "" if right is None else ", 2-task CPU overloaded at the end: %s" % right))
n = len(hog)
print("# machine overloaded in %d of %d windows with the three runnable; of %d hog windows, exactly one CPU "
      "overloaded at a time in %d; at the window end the 2-task CPU overloaded and the 1-task CPU not in %d of %d" %
      (covered, len(busy), n, one_at_a_time, end_right, end_windows))
bad = []
if len(busy) < 8:
    bad.append("fewer than 8 windows with the three threads runnable")
if covered < 0.8 * len(busy):
    bad.append("machine group overloaded in fewer than 80 % of the windows with the three runnable")
if end_rule < 0.8 * end_cpus:
    bad.append("per CPU at the window ends: overloaded is not 'two or more runnable tasks' in 80 % of the cases")
if n >= 8:
    if one_at_a_time < 0.7 * n:
        bad.append("per-CPU overloaded fractions do not add up to ~1 in 70 % of the hog windows")
    if end_windows < 0.5 * n or end_right < 0.8 * end_windows:
        bad.append("the CPU holding two threads is not the overloaded one at 80 % of the window ends")
else:
    print("# per CPU not judged: other work left the hogs both CPUs in only %d windows (8 needed)" % n)
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
EOF
}

for src in bpf tracefs; do
	run_hogs "$src" 10 -- --source "$src"
	ok $? "run --source $src: clean exit on SIGTERM, report written"
	compare "$src"
	ok $? "run --source $src: every hog thread's CPU time within 2 % of its own clock"
	overload "$src" 10
	ok $? "run --source $src: the 2-CPU group overloaded in most windows, and moment by moment the CPU holding two threads"
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

# the events key: only the events asked for are attached, on either source
# (a busy loop meanwhile: the BPF source sends sched_stat_runtime at ticks only)
for src in bpf tracefs; do
	timeout 3 sh -c 'while :; do :; done' &
	busy=$!
	"$IMB" run --source "$src" --listen '' --db '' --set events=switch,runtime --duration 2 -q \
		--report "$T/ev-$src.json" 2>"$T/ev-$src.err"
	rc=$?
	kill "$busy" 2>/dev/null
	wait "$busy" 2>/dev/null
	kinds=$(jq -c '.event_counts | keys' "$T/ev-$src.json" 2>/dev/null)
	[ "$rc" = 0 ] && jq -e '.event_counts | (keys - ["lost"]) == ["runtime", "switch"]' \
		"$T/ev-$src.json" >/dev/null
	ok $? "run --source $src --set events=switch,runtime: only those events come ($kinds)"
done
"$IMB" run --listen '' --db '' --set events=wakeup,fork --duration 1 2>"$T/ev-bad.err"
rc=$?
sed 's/^/# /' "$T/ev-bad.err"
[ "$rc" = 2 ] && grep -q "events: 'wakeup,fork' lacks switch" "$T/ev-bad.err"
ok $? "run --set events without switch: exit 2 naming the key ($rc)"

# --- capabilities ----------------------------------------------------------
# capability bits as in /proc/PID/status
CAP_PERFMON=38 CAP_BPF=39
capeff() { sed -n 's/^CapEff:[^0-9a-f]*//p' "/proc/$1/status"; }
# Root without CAP_BPF and CAP_SYS_ADMIN (dropped from the bounding set, so
# the daemon's exec cannot regain them): BPF cannot load, the daemon falls
# back to tracefs by itself, says so once, and counts the threads.
run_hogs fallback 4 setpriv --bounding-set=-bpf,-sys_admin --inh-caps=-bpf,-sys_admin -- 2>/dev/null
rc=$?
sed 's/^/# /' "$T/fallback.err"
[ "$rc" = 0 ] && grep -q 'running: source tracefs' "$T/fallback.err" &&
	[ "$(grep -c 'falling back to tracefs' "$T/fallback.err")" = 1 ] &&
	jq -e '.source.format == "tracefs"' "$T/fallback.json" >/dev/null
ok $? "without CAP_BPF and CAP_SYS_ADMIN: falls back to tracefs by itself, saying so once"
compare fallback
ok $? "without CAP_BPF and CAP_SYS_ADMIN: the hogs' CPU time within 2 % through tracefs"

# Exactly the unit's CapabilityBoundingSet=CAP_BPF CAP_PERFMON CAP_SYS_NICE
# (tracefs already mounted): the BPF source loads and counts, and so does
# tracefs, with the event reader at the default nice -10.
CAP_SYS_NICE=23
for src in bpf tracefs; do
	rm -f "$T/caps-$src.db"
	setpriv --bounding-set=-all,+bpf,+perfmon,+sys_nice --inh-caps=-all,+bpf,+perfmon,+sys_nice \
		"$IMB" run --source "$src" --listen '' --db "$T/caps-$src.db" --window 1000 \
		--report "$T/caps-$src.json" 2>"$T/caps-$src.err" &
	daemon=$!
	wait_ready "$T/caps-$src.err"
	eff=$(capeff "$daemon")
	"$HOGS" --threads 3 --seconds 3 --json >"$T/caps-$src.truth.json"
	kill -TERM "$daemon"
	wait "$daemon"
	rc=$?
	daemon=
	want=$(printf '%016x' $(( (1 << CAP_BPF) | (1 << CAP_PERFMON) | (1 << CAP_SYS_NICE) )))
	[ "$rc" = 0 ] && [ "$eff" = "$want" ] &&
		grep -q "running: source $src, .*, nice -10" "$T/caps-$src.err" &&
		! grep -q 'cannot set nice' "$T/caps-$src.err"
	ok $? "only the unit's CAP_BPF CAP_PERFMON CAP_SYS_NICE (CapEff $eff): --source $src runs at nice -10 and exits 0"
	compare "caps-$src"
	ok $? "only CAP_BPF CAP_PERFMON CAP_SYS_NICE: --source $src counts the hogs' CPU time within 2 %"
done
# Without CAP_SYS_NICE the reader cannot raise its priority: one warning
# naming the capability and the key, and the daemon runs at its start level.
setpriv --bounding-set=-all,+bpf,+perfmon --inh-caps=-all,+bpf,+perfmon \
	"$IMB" run --listen '' --db '' --duration 1 2>"$T/nonice.err"
rc=$?
sed 's/^/# /' "$T/nonice.err"
[ "$rc" = 0 ] && [ "$(grep -c 'cannot set nice -10 (now 0).*CAP_SYS_NICE.*the nice key' "$T/nonice.err")" = 1 ] &&
	grep -q 'running: source bpf, .*, nice 0' "$T/nonice.err"
ok $? "without CAP_SYS_NICE: says once that the reader stays at nice 0, and runs ($rc)"
setpriv --bounding-set=-all,+bpf,+perfmon --inh-caps=-all,+bpf,+perfmon \
	"$IMB" check --json >"$T/nonice-check.json" 2>/dev/null
jq -e '.capabilities.cap_sys_nice == true' "$T/check.json" >/dev/null &&
	jq -e '.capabilities.cap_sys_nice == false and .live_ok == true' "$T/nonice-check.json" >/dev/null
ok $? "check --json: cap_sys_nice true as root, false without it (live mode still ok)"

# --- SIGHUP: thresholds apply in place, restart-only keys are named -------
printf 'overload_min_fraction = 25\nwindow = 1s\n' >"$T/hup.conf"
"$IMB" run --config "$T/hup.conf" --listen '' --db '' --report "$T/hup.json" 2>"$T/hup.err" &
daemon=$!
wait_ready "$T/hup.err"
"$HOGS" --threads 3 --seconds 4 >/dev/null
sleep 2.5		# the episodes end
nice0=$(awk '{print $19}' "/proc/$daemon/stat")
printf 'overload_min_fraction = 50\nwindow = 2s\nnice = -4\n' >"$T/hup.conf"
kill -HUP "$daemon"
i=0
while [ $i -lt 100 ] && ! grep -q 'configuration reloaded' "$T/hup.err"; do sleep 0.1; i=$((i + 1)); done
nice1=$(awk '{print $19}' "/proc/$daemon/stat")
"$HOGS" --threads 3 --seconds 4 >/dev/null
sleep 1
kill -TERM "$daemon"
wait "$daemon"
rc=$?
daemon=
sed 's/^/# /' "$T/hup.err"
[ "$rc" = 0 ] && grep 'configuration reloaded from .*: applied ' "$T/hup.err" |
	grep -q -E 'applied (overload_min_fraction, nice|nice, overload_min_fraction)$' &&
	grep -q 'reload: window changed; it takes effect at the next start' "$T/hup.err"
ok $? "SIGHUP: overload_min_fraction and nice applied, window named as needing a restart"
[ "$nice0" = -10 ] && [ "$nice1" = -4 ]
ok $? "SIGHUP: the event reader's nice level goes from the default -10 to the new -4 ($nice0, $nice1)"
# the findings of the run's end carry the new threshold, any that closed
# before the reload the old one (a busy host may keep the machine
# overloaded across the reload: then one episode carries on, updated)
python3 - "$T/hup.json" <<'EOF'
import json, sys
f = [x for x in json.load(open(sys.argv[1]))["findings"] if x["kind"] == "overload"]
old = [x["t_start_ns"] for x in f if abs(x["threshold"] - 0.25) < 1e-9]
new = [x["t_start_ns"] for x in f if abs(x["threshold"] - 0.50) < 1e-9]
print("# overload findings: %d with threshold 0.25, %d with 0.50" % (len(old), len(new)))
sys.exit(0 if new and len(old) + len(new) == len(f) and (not old or max(old) < min(new)) else 1)
EOF
ok $? "SIGHUP: the overload findings after the reload use the new threshold (0.50), none after it the old (0.25)"

# --- a full BPF ring buffer ----------------------------------------------
# A 64 KiB ring under a heavy context-switch load: reservations fail in the
# kernel; the daemon keeps running, counts the lost events and reports them
# in its report, its log and its sd_notify STATUS line (a datagram socket
# of ours stands in for systemd's).
# notifier_start - a datagram socket of ours standing in for systemd's
# NOTIFY_SOCKET: every message the daemon sends goes to $T/notify.log
notifier_start() {
	rm -f "$T/notify.sock" "$T/notify.log"
	python3 -c '
import signal, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
with open(sys.argv[2], "a") as f:
    while True:
        f.write(s.recv(4096).decode() + "\n")
        f.flush()
' "$T/notify.sock" "$T/notify.log" &
	notifier=$!
	i=0
	while [ $i -lt 50 ] && [ ! -S "$T/notify.sock" ]; do sleep 0.1; i=$((i + 1)); done
}
notifier_start
NOTIFY_SOCKET=$T/notify.sock "$IMB" run --source bpf --listen '' --db '' \
	--set ring_buffer_kb=64 --set state_dir="$T/state" --report "$T/ring.json" 2>"$T/ring.err" &
daemon=$!
wait_ready "$T/ring.err"
if command -v perf >/dev/null; then
	perf bench sched messaging -g 20 -l 500 >/dev/null 2>&1
else
	"$HOGS" --threads 64 --seconds 5 --period-ms 1 --duty 10 >/dev/null
fi
kill -0 "$daemon" 2>/dev/null
alive=$?
sleep 1
kill -TERM "$daemon"
wait "$daemon"
rc=$?
daemon=
sleep 0.2
kill "$notifier" 2>/dev/null
wait "$notifier" 2>/dev/null
notifier=
lost=$(jq '.lost_events' "$T/ring.json" 2>/dev/null)
echo "# $(grep -c 'events lost' "$T/ring.err") windows logged lost events; report: ${lost:-?} lost of $(jq '.events' "$T/ring.json" 2>/dev/null) events"
grep '^STATUS=' "$T/notify.log" | tail -2 | sed 's/^/# /'
[ "$alive" = 0 ] && [ "$rc" = 0 ]
ok $? "ring_buffer_kb=64 under a heavy switch load: the daemon survives and exits 0"
[ -n "$lost" ] && [ "$lost" -gt 0 ] && grep -q 'events lost' "$T/ring.err"
ok $? "ring_buffer_kb=64: lost events counted (${lost:-?}) and logged"
st=$(grep '^STATUS=stopped: ' "$T/notify.log" | tail -1)
stlost=$(echo "$st" | sed -n 's/.* \([0-9]*\) lost,.*/\1/p')
[ -n "$stlost" ] && [ "$stlost" = "$lost" ] &&
	echo "$st" | grep -q 'PELT util_avg error vs kernel median [0-9]* p95 [0-9]* of 1024'
ok $? "ring_buffer_kb=64: the sd_notify STATUS line reports the lost events (${stlost:-?}) and the PELT error"

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
	nours=$(echo $ours | wc -w)
	attached=0
	if [ "$src" = bpf ]; then
		# every program the daemon holds is loaded, and it holds some
		for id in $ours; do
			bpftool prog show id "$id" >/dev/null 2>&1 && attached=$((attached + 1))
		done
		[ "$nours" -ge 3 ] && [ "$attached" = "$nours" ]
	else
		[ "$nours" = 0 ] && [ -d "/sys/kernel/tracing/instances/imbalanced-$daemon" ] &&
			[ "$(cat "/sys/kernel/tracing/instances/imbalanced-$daemon/tracing_on")" = 1 ]
	fi
	ok $? "run --source $src: before SIGTERM, ours is attached ($attached of $nours BPF programs loaded; tracefs instance: $(ls /sys/kernel/tracing/instances | grep -c '^imbalanced-'))"
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
	ok $? "run --source $src: none of its $nours BPF programs is left ($left)"
	ls /sys/kernel/tracing/instances | grep -q '^imbalanced-'
	[ $? != 0 ]
	ok $? "run --source $src: no tracefs instance of ours left"
done
[ "$(cat /sys/kernel/tracing/trace_clock)" = "$before_clock" ] &&
	[ "$(cat /sys/kernel/tracing/set_event | sort | tr '\n' ' ')" = "$before_events" ]
ok $? "the top-level tracefs settings are as they were"

# --- a burst of 5,000 short-lived processes -------------------------------
# Memory the burst takes: the model's tasks (evicted a window after they
# exit), the analyzers' per-task state, the BPF reorder heap if the reader
# falls behind (kept while other tests keep the host busy: the heap check
# leaves it out, the STATUS line gives it apart), and the windows the HTTP
# readers keep (the last 300: with
# 100 ms windows, 30 s of them).  So the baseline is taken once those 300
# windows are ordinary ones, and the memory is read again once the burst's
# windows have left them.  The flight recorder keeps the last 30 s of events
# by design: off here.  Under ASan, freed memory goes to a quarantine and
# stays mapped: turned off for this daemon, so that RSS means what it does
# without the sanitizers.
history_s=31
notifier_start
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:allocator_release_to_os_interval_ms=0" \
NOTIFY_SOCKET=$T/notify.sock \
	"$IMB" run --source bpf --listen '' --db '' --window 100 --set flight_recorder_s=0 \
	2>"$T/burst.err" &
daemon=$!
wait_ready "$T/burst.err"
sleep $history_s
# the model's tasks, from the last sd_notify STATUS line
tasks_now() { grep '^STATUS=' "$T/notify.log" | tail -1 | sed -n 's/.* \([0-9]*\) tasks.*/\1/p'; }
# the heap the daemon holds (the allocator's count, ASan's under the
# sanitizers), from the same line
# less the BPF source's reorder buffer, which it keeps for as long as a
# backlog lasts (other tests loading the host): bounded, not a leak
heap_now() {
	l=$(grep '^STATUS=' "$T/notify.log" | tail -1)
	h=$(echo "$l" | sed -n 's/.*, heap \([0-9]*\) KiB.*/\1/p')
	r=$(echo "$l" | sed -n 's/.*(reorder \([0-9]*\) KiB).*/\1/p')
	[ -n "$h" ] && echo $((h - ${r:-0}))
}
tasks_base=$(tasks_now)
heap_base=$(heap_now)
# RssAnon: the process's own heap; the BPF ring buffer is a shared mapping
# of fixed size whose pages count in VmRSS once the load has touched them
rss() { sed -n 's/^RssAnon:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$daemon/status"; }
base=$(rss)
t0=$(date +%s)
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
soon=$(rss)
sleep $((history_s - 3))
after=$(rss)
# the heap from the next periodic STATUS line (every 10 s): one written
# once the burst's windows have left the history
nst=$(grep -c '^STATUS=' "$T/notify.log")
i=0
while [ $i -lt 120 ] && [ "$(grep -c '^STATUS=' "$T/notify.log")" = "$nst" ]; do sleep 0.1; i=$((i + 1)); done
heap_after=$(heap_now)
kill -0 "$daemon" 2>/dev/null
ok $? "5,000 short-lived processes: the daemon is still running"
echo "# RssAnon baseline $base KiB; the burst took $(( $(date +%s) - t0 - history_s )) s; right after it $peak KiB, 3 s later $soon KiB, ${history_s} s later $after KiB"
kill -TERM "$daemon"
wait "$daemon"
ok $? "after the burst: clean exit"
daemon=
sleep 0.2
kill "$notifier" 2>/dev/null
wait "$notifier" 2>/dev/null
notifier=
tasks_after=$(tasks_now)
echo "# model tasks before the burst ${tasks_base:-?}, at the end ${tasks_after:-?}; heap ${heap_base:-?} -> ${heap_after:-?} KiB"
[ -n "$tasks_base" ] && [ -n "$tasks_after" ] && [ "$tasks_after" -le $((tasks_base + 500)) ]
ok $? "5,000 short-lived processes: the task table back to its size (${tasks_base:-?} -> ${tasks_after:-?} tasks)"
# The heap the daemon holds, by its allocator's count (ASan's under the
# sanitizers, which sees every allocation): back to its size.
[ -n "$heap_base" ] && [ -n "$heap_after" ] && [ "$heap_after" -le $((heap_base + heap_base / 10 + 1024)) ]
ok $? "5,000 short-lived processes: the daemon's heap back to its baseline (${heap_base:-?} -> ${heap_after:-?} KiB, bound +10 % + 1 MiB)"
# RSS too, without the sanitizers, where RssAnon comes back exactly (644
# -> 644 KiB measured).  Under ASan its size-class allocator keeps the
# pages it once used (+3 to +5 MiB seen): RSS there is not the daemon's
# memory, and the heap check above is the one that counts.
if ldd "$IMB" 2>/dev/null | grep -q 'libasan'; then
	echo "# RssAnon $base -> $after KiB, not judged: ASan's allocator keeps freed pages"
else
	[ -n "$after" ] && [ "$after" -le $((base + base / 10 + 1024)) ]
	ok $? "5,000 short-lived processes: memory back to its baseline once their windows aged out ($base -> $after KiB, bound +10 % + 1 MiB)"
fi

echo "1..$n"
exit $fail

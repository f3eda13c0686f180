#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# record.t - `imbalanced record` on this machine through the real BPF
# source, and where the kernel's PELT values come from: 3 s of busy
# threads recorded around tests/helpers/hogs (in an autogroup of their own) and
# analysed offline, which must show the kernel's values, the engine's and
# the error per signal, CPU and group; losses counted in the summary, the
# file and analyze alike (a 64 KiB ring under a switch storm); the
# command's exit status; SIGINT; plain and gzip files and standard
# output; refusing to replace a file; bad usage.  check says which PELT
# mode the kernel allows (the update_load_avg() hook or the tracepoints)
# and why, and the daemon logs the same and runs with it.  Needs root.
set -u

IMB=${IMBALANCED:-./imbalanced}
HOGS=${top_builddir:-.}/tests/helpers/hogs
T=$(mktemp -d "${TMPDIR:-/tmp}/record-t.XXXXXX")
. "${top_srcdir:-.}/tests/helpers/live-lib.sh"

rec=
cleanup() {
	[ -n "$rec" ] && kill "$rec" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

need_live "BPF"

# --- bad usage: one line, exit 2, no file left ---------------------------
bad() {	# bad NAME ARGS...: exit 2 with one line on stderr naming what is wrong
	name=$1
	shift
	"$IMB" record "$@" >"$T/bad.out" 2>"$T/bad.err"
	rc=$?
	sed 's/^/# /' "$T/bad.err"
	[ "$rc" = 2 ] && [ "$(wc -l <"$T/bad.err")" = 1 ] && [ ! -s "$T/bad.out" ]
}
bad duration -o "$T/x.gz" --duration soon
ok $? "record --duration soon: exit 2, one line"
grep -q -- "--duration 'soon'" "$T/bad.err"
ok $? "record --duration soon: the message names the option and the value"
bad source -o "$T/x.gz" --source ebpf --duration 1
ok $? "record --source ebpf: exit 2, one line"
bad dir -o "$T/no/such/dir/x.gz" --duration 1
ok $? "record -o into a missing directory: exit 2, one line"
grep -q "$T/no/such/dir/x.gz: No such file or directory" "$T/bad.err"
ok $? "record -o into a missing directory: the message names the file and the reason"
bad cmd -o "$T/nocmd.gz" --duration 5 -- /nonexistent/command
ok $? "record -- a missing command: exit 2, one line"
grep -q '/nonexistent/command: cannot start: No such file or directory' "$T/bad.err" && [ ! -e "$T/nocmd.gz" ]
ok $? "record -- a missing command: named, and no file made"
# searchable but refused by exec (a directory): the exec's own error, the file removed
mkdir "$T/noexec"
"$IMB" record -o "$T/noexec.gz" -q -- "$T/noexec" 2>"$T/noexec.err"
rc=$?
sed 's/^/# /' "$T/noexec.err"
[ "$rc" = 2 ] && grep -q "noexec: cannot start: Permission denied" "$T/noexec.err" && [ ! -e "$T/noexec.gz" ]
ok $? "record -- a file exec refuses: exit 2 with the exec's error, and the file it had begun is removed"
bad key -o "$T/key.gz" --set no_such_key=1
ok $? "record --set with an unknown key: exit 2, one line"
"$IMB" record --bogus >/dev/null 2>&1
[ $? = 2 ]
ok $? "record with an unknown option: exit 2"
"$IMB" record --help >"$T/help" 2>&1
[ $? = 0 ] && grep -q -- '--force' "$T/help" && grep -q -- '-- COMMAND' "$T/help" &&
	grep -q 'lost' "$T/help"
ok $? "record --help: exit 0, describes --force, the command and lost events"

# --- check: which PELT mode, and why ----------------------------------------
"$IMB" check --json >"$T/check.json" 2>/dev/null
"$IMB" check >"$T/check.txt" 2>/dev/null
mode=$(jq -r '.pelt_hooks.mode' "$T/check.json")
reason=$(jq -r '.pelt_hooks.reason' "$T/check.json")
echo "# check: pelt hooks mode $mode, reason '$reason'; $(grep '^pelt hooks:' "$T/check.txt")"
# is update_load_avg a function in the kernel's BTF?  bpftool's view
if command -v bpftool >/dev/null; then
	if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null | grep -q "FUNC 'update_load_avg' "; then
		in_btf=true
	else
		in_btf=false
	fi
	jq -e --argjson b "$in_btf" '.pelt_hooks.in_btf == $b' "$T/check.json" >/dev/null
	ok $? "check --json: pelt_hooks.in_btf is $in_btf, as bpftool finds update_load_avg in the BTF"
else
	ok 0 "# SKIP no bpftool"
fi
case $mode in
fexit)
	[ -z "$reason" ] && grep -q '^pelt hooks: *fexit update_load_avg' "$T/check.txt" ;;
tracepoints)
	# the reason: not in BTF, or the errno and the step the kernel refused
	echo "$reason" | grep -E -q '^(not in BTF|E[A-Z0-9]+ at (load|attach))$' &&
		grep -q "^pelt hooks: *tracepoints (fexit update_load_avg: $reason)" "$T/check.txt" ;;
*)
	false ;;
esac
ok $? "check: the PELT mode ($mode) and its reason, in text and JSON alike"
if [ "$mode" = tracepoints ] && jq -e '.pelt_hooks.in_btf' "$T/check.json" >/dev/null; then
	echo "$reason" | grep -q ' at '
	ok $? "check: the function is in the BTF, so the reason is what the kernel refused ($reason)"
fi

# --- 3 s of busy threads, recorded and analysed -----------------------------
# the hogs in an autogroup of their own (setsid), which they write down
"$IMB" record -o "$T/hogs.events.gz" --source bpf --report "$T/hogs.live.json" -- \
	setsid sh -c 'cat /proc/self/autogroup >"$1"; exec "$2" --threads 3 --seconds 3 --json >"$3"' \
	sh "$T/autogroup" "$HOGS" "$T/hogs.truth.json" 2>"$T/hogs.err"
rc=$?
sed 's/^/# /' "$T/hogs.err"
[ "$rc" = 0 ] && [ -s "$T/hogs.events.gz" ] && gzip -t "$T/hogs.events.gz"
ok $? "record -- hogs: exit 0, a gzip file"
# the log says where the PELT values come from, as check does
log_mode=$(sed -n 's/^imbalanced: pelt hooks: \([a-z]*\).*/\1/p' "$T/hogs.err")
[ "$(grep -c '^imbalanced: pelt hooks: ' "$T/hogs.err")" = 1 ] && [ "$log_mode" = "$mode" ]
ok $? "record: logs the PELT mode once, the one check reports ($log_mode)"
grep -q 'imbalanced: record: .* exited with status 0$' "$T/hogs.err"
ok $? "record: reports the command's exit status"
written=$(sed -n 's/^imbalanced: record: .*: \([0-9]*\) events written, \([0-9]*\) lost$/\1/p' "$T/hogs.err")
lost=$(sed -n 's/^imbalanced: record: .*: \([0-9]*\) events written, \([0-9]*\) lost$/\2/p' "$T/hogs.err")
lines=$(zcat "$T/hogs.events.gz" | grep -vc '^#')
echo "# summary: $written events written, $lost lost; the file has $lines event lines"
[ -n "$written" ] && [ "$written" = "$lines" ]
ok $? "record: the summary's event count is the file's"

"$IMB" analyze --json "$T/hogs.events.gz" >"$T/hogs.json" 2>"$T/hogs.an.err"
ok $? "analyze reads the recording"
jq -e '.pelt.kernel_reference == true and .pelt.signals.util_avg.samples > 100 and
	.pelt.signals.runnable_avg.samples > 100 and .pelt.task_signals.util_avg.samples > 100' \
	"$T/hogs.json" >/dev/null
ok $? "analyze: pelt has the kernel reference and samples for CPUs and tasks ($(jq -c '[.pelt.signals.util_avg.samples, .pelt.task_signals.util_avg.samples]' "$T/hogs.json"))"
jq -e '.event_counts.pelt_cfs > 0 and .event_counts.pelt_se > 0 and .event_counts.switch > 0' \
	"$T/hogs.json" >/dev/null
ok $? "analyze: the file carries the kernel's pelt_cfs and pelt_se records and the switches"
jq -e --argjson l "${lost:-null}" '.lost_events == $l' "$T/hogs.json" >/dev/null
ok $? "analyze: lost events as the recorder counted them (${lost:-?})"
# the live analysis of the same run saw the same stream and compared at the
# same kernel records; the figures may differ by a unit or so (the live
# windows start at attach, analyze's at the first event, and a window's end
# advances the engine)
jq -r --slurpfile live "$T/hogs.live.json" '"# CPU util_avg median/p95 live \($live[0].pelt.signals.util_avg.median_abs_err)/\($live[0].pelt.signals.util_avg.p95_abs_err), offline \(.pelt.signals.util_avg.median_abs_err)/\(.pelt.signals.util_avg.p95_abs_err)"' \
	"$T/hogs.json"
jq -e --slurpfile live "$T/hogs.live.json" '.events == $live[0].events and
	([.pelt.signals[], .pelt.task_signals[] | .samples] ==
	 [$live[0].pelt.signals[], $live[0].pelt.task_signals[] | .samples])' "$T/hogs.json" >/dev/null
ok $? "record --report: the live analysis had the same events and compared the same kernel records as analyze"
threads_within "$T/hogs.json" "$T/hogs.truth.json"
ok $? "analyze: every hog thread's CPU time within 2 % of its own clock"
# the hogs' autogroup, with the kernel's values, the engine's and the error per CPU
ag=$(sed -n 's|^\(/autogroup-[0-9]*\).*|\1|p' "$T/autogroup")
if [ -n "$ag" ]; then
	jq -e --arg p "$ag" '[.groups[] | select(.path == $p) | .cpus[] |
		select(.kernel_samples > 0 and .kernel_util_avg != null and .util_avg_error != null and
		       .runnable_avg_error != null)] | length > 0' "$T/hogs.json" >/dev/null
	ok $? "analyze: groups has the hogs' $ag with kernel values, engine values and errors"
	"$IMB" analyze "$T/hogs.events.gz" >"$T/hogs.txt" 2>/dev/null
	# the group's label stands on its first CPU's row only: any of its CPU
	# rows (the first may hold only the seed) has kernel / engine (error)
	grep -q '^PELT per CPU at the end' "$T/hogs.txt" &&
		awk -v ag="$ag" '
			$1 == ag { in_g = 1; $1 = "" }
			in_g && $0 !~ /^   +[0-9]/ && $1 != "" && $1 != ag { in_g = 0 }
			in_g && $0 ~ /[0-9]+ \/ [0-9]+ \([+-][0-9]+\)/ { found = 1 }
			END { exit !found }' "$T/hogs.txt"
	ok $? "analyze (text): per CPU, and the $ag group's kernel / engine (error) per CPU"
else
	ok 0 "# SKIP autogroups are off (no /proc/self/autogroup)"
	ok 0 "# SKIP autogroups are off"
fi

# --- refusing to replace, --force -------------------------------------------
sum=$(md5sum <"$T/hogs.events.gz")
"$IMB" record -o "$T/hogs.events.gz" --duration 1 >/dev/null 2>"$T/clobber.err"
rc=$?
[ "$rc" = 2 ] && grep -q "hogs.events.gz: exists (--force replaces it)" "$T/clobber.err" &&
	[ "$(md5sum <"$T/hogs.events.gz")" = "$sum" ]
ok $? "record onto an existing file: exit 2, the file untouched ($rc)"
"$IMB" record -o "$T/hogs.events.gz" --force --duration 1 -q 2>/dev/null
[ $? = 0 ] && [ "$(md5sum <"$T/hogs.events.gz")" != "$sum" ] && gzip -t "$T/hogs.events.gz"
ok $? "record --force: replaces it"

# --- plain text, standard output, the command's status, SIGINT --------------
"$IMB" record -o "$T/plain.events" -q -- sh -c 'sleep 0.5; exit 7' 2>"$T/st.err"
rc=$?
sed 's/^/# /' "$T/st.err"
[ "$rc" = 0 ] && grep -q 'sh exited with status 7' "$T/st.err" &&
	head -1 "$T/plain.events" | grep -q '^# imbalanced events v1' && ! gzip -t "$T/plain.events" 2>/dev/null
ok $? "record -- a command that exits 7: status reported, a plain text file"
"$IMB" record -o - --duration 1 -q 2>/dev/null | "$IMB" analyze --json - >"$T/stdout.json" 2>/dev/null
jq -e '.events > 0' "$T/stdout.json" >/dev/null
ok $? "record -o -: standard output, which analyze - reads"
: >"$T/int.err"
"$IMB" record -o "$T/int.events.gz" -- sleep 60 2>"$T/int.err" &
rec=$!
i=0
while [ $i -lt 600 ] && ! grep -q 'imbalanced: running:' "$T/int.err"; do sleep 0.1; i=$((i + 1)); done
sleep 1
t0=$(date +%s)
kill -INT "$rec"
wait "$rec"
rc=$?
rec=
t1=$(date +%s)
sed 's/^/# /' "$T/int.err"
[ "$rc" = 0 ] && [ $((t1 - t0)) -le 5 ] && grep -q 'sleep killed by signal 15' "$T/int.err" &&
	"$IMB" analyze --json "$T/int.events.gz" 2>/dev/null | jq -e '.events > 0' >/dev/null
ok $? "SIGINT: record stops at once, the command gets SIGTERM, the file is whole"

# --- lost events: a 64 KiB ring under a switch storm ------------------------
if command -v perf >/dev/null; then
	set -- perf bench sched messaging -g 20 -l 300
else
	set -- "$HOGS" --threads 64 --seconds 4 --period-ms 1 --duty 10
fi
"$IMB" record -o "$T/lost.events.gz" --set ring_buffer_kb=64 -- "$@" >/dev/null 2>"$T/lost.err"
rc=$?
lost=$(sed -n 's/^imbalanced: record: .*: [0-9]* events written, \([0-9]*\) lost.*/\1/p' "$T/lost.err")
flost=$(zcat "$T/lost.events.gz" | awk '$2 == "lost" { for (i = 3; i <= NF; i++) if ($i ~ /^count=/) n += substr($i, 7) } END { print n + 0 }')
"$IMB" analyze --json "$T/lost.events.gz" >"$T/lost.json" 2>/dev/null
alost=$(jq '.lost_events' "$T/lost.json")
echo "# 64 KiB ring: summary ${lost:-?} lost, the file's lost events count $flost, analyze $alost"
[ "$rc" = 0 ] && [ -n "$lost" ] && [ "$lost" -gt 0 ] && [ "$flost" = "$lost" ] && [ "$alost" = "$lost" ]
ok $? "lost events: counted at the end, kept in the file as lost events, and analyze agrees"
# where: the first record each CPU commits after a failed reservation is
# marked gap=1, and the engine takes the kernel's values again from there,
# once per marked instant (a root record and its vruntime event share one
# mark); the lost events that count those losses say marked=1 and do not
# start it again (only an unmarked one, skipped runs, does)
gaps=$(zcat "$T/lost.events.gz" | awk '/ gap=1/ { n[$1] = 1 } END { print length(n) }')
lmarked=$(zcat "$T/lost.events.gz" | awk '$2 == "lost" && / marked=1/' | wc -l)
lplain=$(zcat "$T/lost.events.gz" | awk '$2 == "lost" && !/ marked=1/' | wc -l)
resyncs=$(jq '.pelt.resyncs' "$T/lost.json")
echo "# $gaps marked instants, $lmarked marked and $lplain unmarked lost events, $resyncs resyncs"
[ "$gaps" -gt 0 ] && [ "$lmarked" -gt 0 ] && [ "${resyncs:-0}" -gt 0 ] &&
	[ "$resyncs" -le $((gaps + lplain)) ]
ok $? "lost events: records marked gap=1 where they went missing ($gaps instants), one resync of the engine at each at most ($resyncs)"

echo "1..$n"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# http-real.t - the HTTP API of the real binary, not the test feeder:
#  (a) `imbalanced run --source bpf --listen` on this machine with three
#      busy threads (tests/helpers/hogs) as load (needs root and BPF; a replay
#      stops serving when its recording ends, so it cannot be used here);
#  (b) `imbalanced serve --db` over a database that `imbalanced analyze
#      --db` wrote from a recorded fixture, cross-checked against
#      `analyze --json` of the same file.
# Every endpoint of doc/interfaces.md with curl, bad queries, /metrics through
# promtool (the awk parser where promtool is absent), SIGTERM cleanliness.
. "${top_srcdir:-.}/tests/helpers/http-lib.sh"

IMB=${IMBALANCED:-$top_builddir/imbalanced}
HOGS=$top_builddir/tests/helpers/hogs
FIXTURE=$top_srcdir/tests/fixtures/hogs3on2.dat

for tool in curl jq python3; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool not installed"; exit 0; }
done

skip() {	# skip N REASON: N skipped TAP lines
	k=0
	while [ $k -lt "$1" ]; do
		T=$((T + 1))
		echo "ok $T # SKIP $2"
		k=$((k + 1))
	done
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# metrics_valid FILE: promtool when installed, else the awk parser
metrics_valid() {
	if command -v promtool >/dev/null; then
		promtool check metrics <"$1" >"$1.lint" 2>&1 && [ ! -s "$1.lint" ]
	else
		awk -f "$top_srcdir/tests/helpers/metrics-check.awk" "$1" >"$1.lint" 2>&1
	fi
}
if command -v promtool >/dev/null; then LINTER="promtool check metrics"; else LINTER="the exposition parser (no promtool)"; fi

bad() {	# bad WANT-CODE NAME URL [curl args]
	want=$1; name=$2; url=$3; shift 3
	got=$(code "$url" "$@")
	if [ "$got" = "$want" ] && jq -e ".status == $want and (.error | type) == \"string\"" "$TMPD/body" >/dev/null 2>&1; then
		ok 0 "$name: $want JSON"
	else
		ok 1 "$name: $want JSON (got $got: $(head -c 200 "$TMPD/body"))"
	fi
}

# stop_daemon PID ERRFILE NAME: SIGTERM; exit 0 and no sanitizer report
stop_daemon() {
	kill -TERM "$1" 2>/dev/null
	wait "$1"
	st=$?
	PIDS=$(echo " $PIDS " | sed "s/ $1 / /")
	if [ $st -eq 0 ] && ! grep -qE 'Sanitizer|runtime error' "$2"; then
		ok 0 "$3 stops cleanly on SIGTERM"
	else
		ok 1 "$3 stops cleanly on SIGTERM (status $st)"
		sed 's/^/# /' "$2" | tail -30
	fi
}

# malformed BASE: 1,000 bad requests in a row, all 4xx
malformed() {
	: >"$TMPD/urls"
	i=0
	while [ $i -lt 100 ]; do
		cat >>"$TMPD/urls" <<URLS
url = "$1/api/v1/tasks?top=-$i"
url = "$1/api/v1/tasks?top=1$i$i$i$i$i"
url = "$1/api/v1/timeseries?metric=x$i"
url = "$1/api/v1/findings?since=a$i"
url = "$1/api/v1/findings?severity=%00$i"
url = "$1/api/v1/tasks?sort=%27$i"
url = "$1/nope/$i"
url = "$1/api/v1/timeseries?metric=util_avg&cpu=99999$i"
url = "$1/api/v1/%2e%2e/%2e%2e/etc/passwd$i"
url = "$1/api/v1/findings?kind=%ff%fe$i"
URLS
		i=$((i + 1))
	done
	sed -i 's/^url.*/&\noutput = "\/dev\/null"/' "$TMPD/urls"
	curl -s -K "$TMPD/urls" -w '%{http_code}\n' >"$TMPD/codes" 2>/dev/null
	grep -c '^4' "$TMPD/codes"
}

# ============ (a) the live daemon: run --source bpf --listen ============
NLIVE=40
live_ok=1
if [ "$(id -u)" != 0 ]; then
	skip $NLIVE "live daemon needs root (BPF)"
	live_ok=0
elif ! "$IMB" check >/dev/null 2>&1; then
	skip $NLIVE "imbalanced check: live mode cannot run here"
	live_ok=0
fi

if [ $live_ok = 1 ]; then
	ncpu=$(nproc --all)
	mkdir -p "$TMPD/state"
	tries=0
	while :; do
		port=$(free_port)
		"$IMB" run --source bpf --listen "127.0.0.1:$port" --db "$TMPD/live.db" --window 500 \
			--set state_dir="$TMPD/state" 2>"$TMPD/run.err" &
		dpid=$!
		PIDS="$PIDS $dpid"
		i=0
		while [ $i -lt 600 ] && kill -0 $dpid 2>/dev/null && ! grep -q 'imbalanced: running:' "$TMPD/run.err"; do
			sleep 0.1
			i=$((i + 1))
		done
		grep -q 'imbalanced: running:' "$TMPD/run.err" && break
		wait $dpid 2>/dev/null
		tries=$((tries + 1))
		grep -q 'address already in use' "$TMPD/run.err" && [ $tries -lt 3 ] && continue
		break
	done
	grep -q 'imbalanced: running:' "$TMPD/run.err"
	ok $? "run --source bpf --listen 127.0.0.1:$port starts (BPF attached, store open)"
	B="http://127.0.0.1:$port"

	"$HOGS" --threads 3 --seconds 14 --json >"$TMPD/hogs.json" &
	hpid=$!
	PIDS="$PIDS $hpid"
	sleep 3	# six 500 ms windows with the load

	# --- status ---
	check "status: 200" test "$(code $B/api/v1/status)" = 200
	cp "$TMPD/body" "$TMPD/status"
	check "status: live, bpf, this kernel, $ncpu CPUs, 500 ms windows, events counted" \
		jq -e --arg k "$(uname -r)" --argjson n "$ncpu" '.mode == "live" and .source == "bpf" and .kernel == $k and .nr_cpus == $n and .window_ns == 500000000 and .windows >= 2 and .events > 0 and .uptime_ns > 0 and .db_size_bytes > 0' "$TMPD/status"
	check "status: lost events in total, in the latest window, windows with losses" \
		jq -e '(.lost_events | type) == "number" and (.lost_events_last_window | type) == "number" and (.windows_with_lost_events | type) == "number" and .lost_events >= .lost_events_last_window and .windows_with_lost_events <= .windows' "$TMPD/status"
	check "status: engine-vs-kernel PELT error per signal for CPUs and tasks (BPF carries the kernel's values)" \
		jq -e '.pelt.kernel_reference == true and ([.pelt.signals, .pelt.task_signals][] | .util_avg.samples > 0 and .runnable_avg.samples > 0 and .load_avg.samples > 0) and all(.pelt.signals[], .pelt.task_signals[]; .median_abs_err <= .p95_abs_err and .p95_abs_err <= .max_abs_err)' "$TMPD/status"

	# --- cpus, tasks, jobs ---
	check "cpus: 200" test "$(code $B/api/v1/cpus)" = 200
	check "cpus: one row per CPU (0..$((ncpu - 1))) with the analyze --json fields and the kernel's values" \
		jq -e --argjson n "$ncpu" '[.cpus[].cpu] == [range($n)] and all(.cpus[]; has("util_avg") and has("runnable_avg") and has("load_avg") and has("overloaded_fraction") and has("group_type") and has("nr_running") and (.kernel_util_avg | type) == "number") and .t_end_ns > .t_start_ns' "$TMPD/body"
	curl -s "$B/api/v1/tasks?top=10000" >"$TMPD/tasks"
	jq -e --argjson p "$hpid" '[.tasks[] | select(.tgid == $p and .run_ns > 0) | .comm] | unique == ["hog0", "hog1", "hog2"]' "$TMPD/tasks" >/dev/null
	rc=$?
	ok $rc "tasks: the three busy threads of the load (pid $hpid) are in the latest window, with CPU time"
	[ $rc -eq 0 ] || jq -c --argjson p "$hpid" '[.total, [.tasks[] | select(.tgid == $p)]]' "$TMPD/tasks" | sed 's/^/# /'
	check "tasks: fields of analyze --json" \
		jq -e '.total >= 3 and all(.tasks[]; has("pid") and has("tgid") and has("comm") and has("run_ns") and has("wait_ns") and has("migrations") and has("share") and has("fair_share") and has("util_avg") and has("runnable_avg") and has("load_avg"))' "$TMPD/tasks"
	curl -s "$B/api/v1/tasks?top=5&sort=wait_ns" >"$TMPD/tw"
	check "tasks?top=5&sort=wait_ns: at most 5, descending wait_ns" \
		jq -e '.sort == "wait_ns" and (.tasks | length) <= 5 and ([.tasks[].wait_ns] as $w | $w == ($w | sort | reverse))' "$TMPD/tw"
	curl -s "$B/api/v1/jobs" >"$TMPD/jobs"
	check "jobs: the hogs' process (pid $hpid) is a job of 3 or more tasks" \
		jq -e --arg k "process:$hpid" 'any(.jobs[]; .key == $k and .kind == "process" and .tasks >= 3 and (.unfairness | type) == "number")' "$TMPD/jobs"

	# --- findings ---
	check "findings: 200, a list" sh -c "test \"\$(curl -s -o $TMPD/f -w '%{http_code}' $B/api/v1/findings)\" = 200 && jq -e '.findings | type == \"array\"' $TMPD/f"
	check "findings?kind=overload&severity=warning: only overload, warning or worse" \
		sh -c "curl -s '$B/api/v1/findings?kind=overload&severity=warning' | jq -e 'all(.findings[]; .kind == \"overload\" and (.severity == \"warning\" or .severity == \"critical\"))'"
	check "findings?since=far future: empty" sh -c "curl -s '$B/api/v1/findings?since=18446744073709551615' | jq -e '.findings == []'"

	# --- timeseries (from the store: the daemon has --db) ---
	curl -s "$B/api/v1/timeseries?metric=util_avg&cpu=0" >"$TMPD/ts"
	check "timeseries metric=util_avg&cpu=0: one series, >= 4 time-ordered points from the store" \
		jq -e '(.series | length) == 1 and .series[0].cpu == 0 and (.series[0].points | length) >= 4 and ([.series[0].points[][0]] as $t | $t == ($t | sort))' "$TMPD/ts"
	t1=$(jq '.series[0].points[1][0]' "$TMPD/ts")
	t2=$(jq '.series[0].points[2][0]' "$TMPD/ts")
	check "timeseries since/until select exactly the windows between" \
		sh -c "curl -s '$B/api/v1/timeseries?metric=runnable_avg&cpu=0&since=$t1&until=$t2' | jq -e '[.series[0].points[][0]] == [$t1, $t2]'"
	check "timeseries metric=events: one total series" \
		sh -c "curl -s '$B/api/v1/timeseries?metric=events' | jq -e '(.series | length) == 1 and .series[0].name == \"total\" and ([.series[0].points[][1]] | add > 0 and min >= 0)'"
	check "timeseries metric=unfairness&job=process:$hpid: the hogs' job" \
		sh -c "curl -s '$B/api/v1/timeseries?metric=unfairness&job=process:$hpid' | jq -e '(.series | length) == 1 and .series[0].job == \"process:$hpid\" and (.series[0].points | length) >= 2'"

	# --- /metrics ---
	check "metrics: 200 text/plain version=0.0.4" sh -c "curl -s -D - -o $TMPD/m1 $B/metrics | grep -qi '^content-type: text/plain; version=0.0.4'"
	metrics_valid "$TMPD/m1"
	rc=$?
	ok $rc "metrics of the live daemon pass $LINTER"
	[ $rc -eq 0 ] || sed 's/^/# /' "$TMPD/m1.lint" | head -20
	ev_status=$(jq .events "$TMPD/status")
	check "metrics: events_total at least what status said before" \
		awk -v s="$ev_status" '$1 == "imbalanced_events_total" && $2 >= s { f = 1 } END { exit !f }' "$TMPD/m1"
	check "metrics: per-CPU gauges for all $ncpu CPUs" \
		test "$(grep -c '^imbalanced_cpu_runnable_avg{cpu="[0-9]*"} ' "$TMPD/m1")" = "$ncpu"
	check "metrics: the hogs' job unfairness, labelled job_key (not job, which Prometheus owns)" \
		grep -q "^imbalanced_job_unfairness_ratio{job_key=\"process:$hpid\",kind=\"process\"} " "$TMPD/m1"
	check "metrics: PELT error summary per entity and signal" \
		sh -c "grep -q '^imbalanced_pelt_abs_error{entity=\"task\",signal=\"util_avg\",quantile=\"0.95\"} ' $TMPD/m1 && grep -q '^imbalanced_pelt_abs_error_count{entity=\"cpu\",signal=\"runnable_avg\"} ' $TMPD/m1"
	# the next scrape after at least two more windows (5 s at most)
	w1=$(awk '$1 == "imbalanced_windows_total" { print $2 }' "$TMPD/m1")
	i=0
	while [ $i -lt 50 ]; do
		sleep 0.1
		curl -s "$B/metrics" >"$TMPD/m2"
		[ "$(awk '$1 == "imbalanced_windows_total" { print $2 }' "$TMPD/m2")" -ge $((w1 + 2)) ] && break
		i=$((i + 1))
	done
	# _sum and _count of a summary are counters: they never go back
	awk 'FNR == NR && /^imbalanced_pelt_abs_error_(sum|count)|^imbalanced_(events|windows)_total/ { a[$1] = $2; next }
	     /^imbalanced_pelt_abs_error_(sum|count)|^imbalanced_(events|windows)_total/ { n++; if (!($1 in a) || $2 < a[$1]) bad = bad " " $1; if ($2 > a[$1]) grew++ }
	     END { if (bad != "" || n < 14 || grew < 3) { print "decreased:" bad, "series " n, "grew " grew + 0; exit 1 } }' \
		"$TMPD/m1" "$TMPD/m2" >"$TMPD/mono" 2>&1
	rc=$?
	ok $rc "metrics: PELT error _sum/_count and event/window counters only grow between scrapes"
	[ $rc -eq 0 ] || sed 's/^/# /' "$TMPD/mono"

	# --- caching, stream, dashboard ---
	check "cpus: If-None-Match with the current ETag gets 304" etag_304 "$B" /api/v1/cpus
	curl -s -N --max-time 2.2 "$B/api/v1/stream" >"$TMPD/sse" 2>/dev/null
	check "stream: at least 3 window events in 2.2 s (500 ms windows)" test "$(grep -c '^event: window' "$TMPD/sse")" -ge 3
	check "stream: window data is JSON with $ncpu CPUs" \
		sh -c "grep '^data: {\"seq\"' $TMPD/sse | head -1 | cut -c7- | jq -e --argjson n $ncpu '(.cpus | length) == \$n and (.events | type) == \"number\" and .seq > 0'"
	check "/ serves the dashboard; its script and dygraphs load" \
		sh -c "curl -s $B/ | grep -q '<title>imbalanced</title>' && test \"\$(curl -s -o /dev/null -w '%{http_code}' $B/app.js)\" = 200 && test \"\$(curl -s -o /dev/null -w '%{http_code}' $B/dygraph.min.js)\" = 200"

	# --- bad requests against the real server ---
	bad 400 "live: unknown metric" "$B/api/v1/timeseries?metric=nope"
	bad 400 "live: negative top" "$B/api/v1/tasks?top=-1"
	bad 400 "live: huge top" "$B/api/v1/tasks?top=10001"
	bad 400 "live: non-numeric since" "$B/api/v1/findings?since=yesterday"
	long=$(head -c 10240 /dev/zero | tr '\0' a)
	bad 414 "live: 10 kB URL" "$B/api/v1/cpus?x=$long"
	bad 404 "live: unknown path" "$B/api/v1/nope"
	bad 405 "live: POST" "$B/api/v1/cpus" -X POST
	n4=$(malformed "$B")
	ok $([ "$n4" -eq 1000 ]; echo $?) "live: 1,000 malformed requests in a row all get 4xx ($n4)"
	check "live: the daemon still answers and still closes windows" \
		sh -c "curl -s $B/api/v1/status | jq -e --argjson w $(jq .windows "$TMPD/status") '.windows > \$w'"

	wait $hpid 2>/dev/null
	PIDS=$(echo " $PIDS " | sed "s/ $hpid / /")
	stop_daemon $dpid "$TMPD/run.err" "run --listen"
	check "run logged its stop with the totals" grep -q 'imbalanced: stopped: [0-9]* windows' "$TMPD/run.err"
fi

# ===== (b) serve --db over a database written by analyze --db =====
"$IMB" analyze --db "$TMPD/a.db" --json "$FIXTURE" >"$TMPD/a.json" 2>"$TMPD/a.err"
ok $? "analyze --db writes a database from the recorded fixture"
port=$(free_port)
"$IMB" serve --db "$TMPD/a.db" --listen "127.0.0.1:$port" 2>"$TMPD/serve.err" &
spid=$!
PIDS="$PIDS $spid"
S="http://127.0.0.1:$port"
i=0
while [ $i -lt 100 ] && ! curl -s -o /dev/null "$S/api/v1/status" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
check "serve --db starts on 127.0.0.1:$port" curl -sf -o /dev/null "$S/api/v1/status"
curl -s "$S/api/v1/status" >"$TMPD/sstatus"
check "serve: status of the offline run (mode serve, trace.dat, 2 CPUs, schema version)" \
	jq -e '.mode == "serve" and .source == "trace.dat" and .nr_cpus == 2 and .window_ns == 1000000000 and .windows >= 3 and .schema_version >= 1 and .db_size_bytes > 0' "$TMPD/sstatus"
check "serve: every event and lost event of analyze --json is in the stored windows" \
	sh -c "jq -e --slurpfile a $TMPD/a.json '.events == \$a[0].events and .lost_events == \$a[0].lost_events' $TMPD/sstatus"
curl -s "$S/api/v1/cpus" >"$TMPD/scpus"
check "serve: cpus of the last stored window" \
	sh -c "jq -e --slurpfile s $TMPD/sstatus '[.cpus[].cpu] == [0, 1] and .t_end_ns == \$s[0].t_end_ns and all(.cpus[]; .util_avg >= 0 and has(\"group_type\"))' $TMPD/scpus"
curl -s "$S/api/v1/tasks?top=10000" >"$TMPD/stasks"
check "serve: the last stored window's tasks are tasks of analyze --json (same pid, tgid, comm)" \
	sh -c "jq -e --slurpfile a $TMPD/a.json '(.tasks | length) >= 3 and all(.tasks[]; . as \$t | any(\$a[0].tasks[]; .pid == \$t.pid and .tgid == \$t.tgid and .comm == \$t.comm))' $TMPD/stasks"
hjob=process:$(jq '.tasks[] | select(.comm == "hog0") | .tgid' "$TMPD/a.json")
check "serve: jobs, the hogs' process ($hjob) with its threads" \
	sh -c "curl -s $S/api/v1/jobs | jq -e --arg k $hjob 'any(.jobs[]; .key == \$k and .tasks >= 3)'"
curl -s "$S/api/v1/findings" >"$TMPD/sf"
check "serve: the findings of analyze --json, same kinds" \
	sh -c "jq -e --slurpfile a $TMPD/a.json '([.findings[].kind] | sort) == ([\$a[0].findings[].kind] | sort)' $TMPD/sf"
check "serve: a util_avg point per stored window" \
	sh -c "curl -s '$S/api/v1/timeseries?metric=util_avg&cpu=1' | jq -e --slurpfile s $TMPD/sstatus '(.series[0].points | length) == \$s[0].windows'"
curl -s "$S/metrics" >"$TMPD/sm"
metrics_valid "$TMPD/sm"
rc=$?
ok $rc "serve: /metrics passes $LINTER"
[ $rc -eq 0 ] || sed 's/^/# /' "$TMPD/sm.lint" | head -20
check "serve: findings_total by kind add up to the findings of analyze --json" \
	sh -c "test \"\$(awk '/^imbalanced_findings_total\{/ { s += \$2 } END { print s + 0 }' $TMPD/sm)\" = \"\$(jq '.findings | length' $TMPD/a.json)\""
check "serve: the dashboard is served" test "$(code "$S/")" = 200
bad 503 "serve: no event stream" "$S/api/v1/stream"
bad 400 "serve: unknown metric" "$S/api/v1/timeseries?metric=password"
bad 400 "serve: cpu out of range" "$S/api/v1/timeseries?metric=util_avg&cpu=4096"
bad 400 "serve: unknown severity" "$S/api/v1/findings?severity=panic"
bad 405 "serve: PUT" "$S/api/v1/status" -X PUT
n4=$(malformed "$S")
ok $([ "$n4" -eq 1000 ]; echo $?) "serve: 1,000 malformed requests in a row all get 4xx ($n4)"
check "serve: still answering" sh -c "curl -s $S/api/v1/cpus | jq -e '.cpus | length == 2'"
stop_daemon $spid "$TMPD/serve.err" "serve"

"$IMB" serve --db "$TMPD/nope.db" --listen "127.0.0.1:$port" 2>"$TMPD/nope.err"
ok $([ $? = 2 ] && grep -q 'nope.db' "$TMPD/nope.err"; echo $?) "serve: a missing database exits 2 naming it"

echo "1..$T"
[ $FAILED -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# http.t - every HTTP endpoint with curl against the real server, live
# (tests/helpers/http-feeder publishing synthetic windows) and serve (a fixture
# database written through the store); bad queries get the right 4xx JSON;
# 1,000 malformed requests leave the server answering; loopback-only
# binding and the bearer token.
. "${top_srcdir:-.}/tests/helpers/http-lib.sh"

for tool in curl jq; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool not installed"; exit 0; }
done

start_feeder live --interval-ms 200 --cpus 2 --tasks 8
ok $? "live feeder starts on an ephemeral loopback port ($PORT_live)"
B="http://127.0.0.1:$PORT_live"
sleep 0.5

# --- endpoints ---
check "status: 200" test "$(code $B/api/v1/status)" = 200
check "status: live mode, kernel, source, events, window" \
	jq -e '.mode == "live" and .kernel == "6.18.0-test" and .source == "synthetic" and .events > 0 and .window_ns == 200000000 and (.uptime_ns | type) == "number"' "$TMPD/body"
check "status: lost events (total, latest window, windows with losses)" \
	jq -e '.lost_events == 0 and .lost_events_last_window == 0 and .windows_with_lost_events == 0' "$TMPD/body"
check "status: engine-vs-kernel PELT error per signal, CPUs and tasks (the feeder's: task util off by 3, no load reference)" \
	jq -e '.pelt.kernel_reference and .pelt.signals.util_avg.samples > 0 and .pelt.signals.util_avg.max_abs_err == 2 and .pelt.signals.load_avg.samples == 0 and .pelt.task_signals.util_avg.median_abs_err == 3 and .pelt.task_signals.util_avg.p95_abs_err == 3' "$TMPD/body"
check "status: the expected PELT error (the run's own p95 once it has 100 samples, else the reference of its kind of load), no task groups compared" \
	jq -e '(.pelt.expected_error.load | type) == "string" and (if .pelt.signals.util_avg.samples >= 100 then .pelt.expected_error.basis == "this recording" and .pelt.expected_error.cpu_util_avg_p95 == .pelt.signals.util_avg.p95_abs_err and .pelt.expected_error.cpu_runnable_avg_p95 == .pelt.signals.runnable_avg.p95_abs_err else .pelt.expected_error.basis == "reference measurements" and .pelt.expected_error.cpu_util_avg_p95 > 0 end) and .pelt.group_signals.util_avg.samples == 0 and .pelt.group_entity_signals.util_avg.samples == 0' "$TMPD/body"
check "cpus: 200" test "$(code $B/api/v1/cpus)" = 200
check "cpus: one entry per CPU with the analyze --json fields" \
	jq -e '(.cpus | length) == 2 and all(.cpus[]; has("util_avg") and has("runnable_avg") and has("load_avg") and has("overloaded_fraction") and has("group_type") and has("nr_running"))' "$TMPD/body"
check "cpus: unknown kernel value is null" jq -e '.cpus[0].kernel_load_avg == null and (.cpus[0].kernel_util_avg | type) == "number"' "$TMPD/body"
check "tasks?top=3&sort=wait_ns: three tasks" sh -c "test \$(curl -s '$B/api/v1/tasks?top=3&sort=wait_ns' | jq '.tasks | length') = 3"
curl -s "$B/api/v1/tasks?top=8&sort=run_ns" >"$TMPD/tasks"
check "tasks sort=run_ns: descending run_ns" jq -e '[.tasks[].run_ns] as $r | $r == ($r | sort | reverse) and ($r | length) == 8' "$TMPD/tasks"
check "tasks: fields of analyze --json" jq -e 'all(.tasks[]; has("pid") and has("tgid") and has("comm") and has("run_ns") and has("wait_ns") and has("migrations") and has("share") and has("fair_share") and has("util_avg") and has("runnable_avg"))' "$TMPD/tasks"
curl -s $B/api/v1/jobs >"$TMPD/jobs"
check "jobs: two jobs" jq -e '(.jobs | length) == 2' "$TMPD/jobs"
check "jobs: odd key (quotes, backslash) escaped and parsed back" test "$(jq -r '.jobs[1].key' $TMPD/jobs)" = 'comm:"quoted"\job'
sleep 1
curl -s "$B/api/v1/findings" >"$TMPD/f"
check "findings: at least one, with evidence as an object" jq -e '(.findings | length) >= 1 and (.findings[0].evidence | type) == "object" and has("findings")' "$TMPD/f"
check "findings?kind=overload: only overload" sh -c "curl -s '$B/api/v1/findings?kind=overload' | jq -e 'all(.findings[]; .kind == \"overload\")'"
check "findings?severity=critical: only critical" sh -c "curl -s '$B/api/v1/findings?severity=critical' | jq -e 'all(.findings[]; .severity == \"critical\")'"
check "findings?since=far future: empty" sh -c "curl -s '$B/api/v1/findings?since=99999999999999999' | jq -e '.findings == []'"
curl -s "$B/api/v1/timeseries?metric=runnable_avg&cpu=1" >"$TMPD/ts"
check "timeseries metric=runnable_avg&cpu=1: one series, time-ordered points" \
	jq -e '(.series | length) == 1 and .series[0].cpu == 1 and ([.series[0].points[][0]] as $t | $t == ($t | sort)) and (.series[0].points | length) >= 3' "$TMPD/ts"
check "timeseries metric=util_avg: a series per CPU" sh -c "curl -s '$B/api/v1/timeseries?metric=util_avg' | jq -e '[.series[].cpu] == [0,1]'"
check "timeseries metric=unfairness: a series per job" sh -c "curl -s '$B/api/v1/timeseries?metric=unfairness' | jq -e '(.series | length) == 2 and .series[0].job == \"pid:1000\"'"
check "timeseries since/until bound the points" sh -c "curl -s '$B/api/v1/timeseries?metric=events&since=1002000000000&until=1003000000000' | jq -e '[.series[0].points[][0]] == [1002000000000, 1003000000000]'"

# --- /metrics ---
check "metrics: 200 text/plain version=0.0.4" sh -c "curl -s -D - -o $TMPD/metrics $B/metrics | grep -qi '^content-type: text/plain; version=0.0.4'"
awk -f "$top_srcdir/tests/helpers/metrics-check.awk" "$TMPD/metrics" >"$TMPD/metrics.err" 2>&1
rc=$?
ok $rc "metrics: exposition format valid (HELP/TYPE, names, labels, values)"
[ $rc -eq 0 ] || sed 's/^/# /' "$TMPD/metrics.err"
for m in imbalanced_cpu_util_avg imbalanced_cpu_runnable_avg imbalanced_cpu_load_avg \
	 imbalanced_cpu_nr_running imbalanced_cpu_group_type imbalanced_job_unfairness_ratio \
	 imbalanced_findings_total imbalanced_events_total imbalanced_lost_events_total \
	 imbalanced_pelt_abs_error process_resident_memory_bytes process_cpu_seconds_total \
	 process_start_time_seconds; do
	check "metrics: $m present" grep -q "^$m[{ ]" "$TMPD/metrics"
done
check "metrics: one group type set per CPU" test "$(grep -c '^imbalanced_cpu_group_type{.*} 1$' $TMPD/metrics)" = 2
check "metrics: label values escaped" grep -q 'job_key="comm:\\"quoted\\"\\\\job"' "$TMPD/metrics"
check "metrics: PELT error summary per entity, _count of all comparisons since start" \
	sh -c "grep -q '^imbalanced_pelt_abs_error{entity=\"task\",signal=\"util_avg\",quantile=\"0.5\"} 3$' $TMPD/metrics && awk -F'} ' '/^imbalanced_pelt_abs_error_count\{entity=\"cpu\",signal=\"util_avg\"/ && \$2 >= 6 { f = 1 } END { exit !f }' $TMPD/metrics"
check "metrics: no PELT series for a signal without kernel reference" sh -c "! grep -q 'signal=\"load_avg\"' $TMPD/metrics"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMPD/metrics" >"$TMPD/lint" 2>&1
	ok $([ $? -eq 0 ] && [ ! -s "$TMPD/lint" ]; echo $?) "promtool check metrics: no errors, no lint"
	sed 's/^/# /' "$TMPD/lint" | head -10
	promtool check rules "$top_srcdir/doc/prometheus-alerts.yml" >"$TMPD/rules" 2>&1
	ok $? "promtool check rules doc/prometheus-alerts.yml"
	sed 's/^/# /' "$TMPD/rules" | head -10
	promtool test rules "$top_srcdir/tests/helpers/prometheus-alerts-test.yml" >"$TMPD/rtest" 2>&1
	ok $? "promtool test rules: each alert rule fires on its case and not on the near misses"
	sed 's/^/# /' "$TMPD/rtest" | head -30
else
	skip_promtool="# SKIP promtool not installed (Debian's prometheus package)"
	ok 0 "promtool check metrics $skip_promtool"
	ok 0 "promtool check rules doc/prometheus-alerts.yml $skip_promtool"
	ok 0 "promtool test rules $skip_promtool"
fi

# --- caching ---
etag=$(curl -s -D - -o /dev/null "$B/api/v1/cpus" | awk -F': ' 'tolower($1)=="etag"{print $2}' | tr -d '\r')
check "cpus has an ETag" test -n "$etag"
# The feeder publishes a window every 200 ms, so a window may close between
# reading the ETag and sending it back. A 200 then must carry a new ETag
# (that is the next case); try again with it. A 200 with the same ETag, or
# no 304 in ten tries, fails.
check "If-None-Match with the current ETag: 304" etag_304 "$B" /api/v1/cpus
sleep 0.5
check "after a new window the ETag no longer matches: 200" test "$(code $B/api/v1/cpus -H "If-None-Match: $etag")" = 200
check "API responses say Cache-Control: no-cache" sh -c "curl -s -D - -o /dev/null $B/api/v1/jobs | grep -qi '^cache-control: no-cache'"

# --- dashboard assets ---
check "/ serves the dashboard HTML" sh -c "curl -s $B/ | grep -q '<title>imbalanced</title>'"
check "/app.js served" test "$(code $B/app.js)" = 200
check "/style.css served" test "$(code $B/style.css)" = 200
curl -s "$B/dygraph.min.js" >"$TMPD/dy.js"
check "/dygraph.min.js is Debian's dygraphs, embedded byte for byte" cmp -s "$TMPD/dy.js" /usr/share/javascript/dygraphs/dygraph.min.js
aetag=$(curl -s -D - -o /dev/null "$B/app.js" | awk -F': ' 'tolower($1)=="etag"{print $2}' | tr -d '\r')
check "static asset revalidates to 304" test "$(code $B/app.js -H "If-None-Match: $aetag")" = 304

# --- event stream ---
curl -s -N --max-time 1.5 "$B/api/v1/stream" >"$TMPD/sse" 2>/dev/null
check "stream: at least 3 window events in 1.5 s" test "$(grep -c '^event: window' $TMPD/sse)" -ge 3
check "stream: window data is JSON with the CPUs" sh -c "grep '^data: {\"seq\"' $TMPD/sse | head -1 | cut -c7- | jq -e '(.cpus | length) == 2'"
check "stream: content type text/event-stream" sh -c "curl -s -N --max-time 0.5 -D - -o /dev/null $B/api/v1/stream | grep -qi '^content-type: text/event-stream'"
curl -s -N --max-time 3 "$B/api/v1/stream" >"$TMPD/sse2" 2>/dev/null
check "stream: findings arrive as finding events" sh -c "grep -A1 '^event: finding' $TMPD/sse2 | grep '^data:' | head -1 | cut -c7- | jq -e '.kind and .severity and .evidence'"
sleep 1.2	# streams closed above free their slots within a second
spids=""
for i in $(seq 16); do
	curl -s -N --max-time 5 "$B/api/v1/stream" >/dev/null 2>&1 &
	spids="$spids $!"
done
sleep 1.5
c17=$(code $B/api/v1/stream --max-time 1); ok $([ "$c17" = 503 ]; echo $?) "stream clients are capped (17th gets 503, got $c17)"
kill $spids 2>/dev/null
wait $spids 2>/dev/null
sleep 0.3

# --- bad requests ---
bad() {	# bad WANT-CODE NAME URL [curl args]
	want=$1; name=$2; url=$3; shift 3
	got=$(code "$url" "$@")
	if [ "$got" = "$want" ] && jq -e ".status == $want and (.error | type) == \"string\"" "$TMPD/body" >/dev/null 2>&1; then
		ok 0 "$name: $want JSON"
	else
		ok 1 "$name: $want JSON (got $got: $(head -c 200 $TMPD/body))"
	fi
}
bad 400 "unknown metric" "$B/api/v1/timeseries?metric=nope"
bad 400 "missing metric" "$B/api/v1/timeseries"
bad 400 "negative top" "$B/api/v1/tasks?top=-1"
bad 400 "huge top" "$B/api/v1/tasks?top=10001"
bad 400 "overflowing top" "$B/api/v1/tasks?top=99999999999999999999999"
bad 400 "top=0" "$B/api/v1/tasks?top=0"
bad 400 "unknown sort field" "$B/api/v1/tasks?sort=password"
bad 400 "non-numeric since" "$B/api/v1/findings?since=yesterday"
bad 400 "non-numeric since in timeseries" "$B/api/v1/timeseries?metric=util_avg&since=1e9"
bad 400 "cpu not a number" "$B/api/v1/timeseries?metric=util_avg&cpu=x"
bad 400 "unknown finding kind" "$B/api/v1/findings?kind=evil"
bad 400 "unknown severity" "$B/api/v1/findings?severity=meh"
bad 400 "until before since" "$B/api/v1/timeseries?metric=util_avg&since=10&until=5"
long=$(head -c 10240 /dev/zero | tr '\0' a)
bad 414 "10 kB URL" "$B/api/v1/cpus?x=$long"
bad 404 "unknown path" "$B/nope"
bad 404 "unknown API endpoint" "$B/api/v1/nope"
bad 405 "POST" "$B/api/v1/cpus" -X POST
bad 405 "DELETE" "$B/api/v1/status" -X DELETE
bad 405 "POST with a body" "$B/api/v1/cpus" -d 'x=1'
bad 413 "GET with a body" "$B/api/v1/cpus" -X GET -d 'hello'

# --- 1,000 malformed requests in a row ---
: >"$TMPD/urls"
i=0
while [ $i -lt 100 ]; do
	cat >>"$TMPD/urls" <<URLS
url = "$B/api/v1/tasks?top=-$i"
output = "/dev/null"
url = "$B/api/v1/tasks?top=1$i$i$i$i$i"
output = "/dev/null"
url = "$B/api/v1/timeseries?metric=x$i"
output = "/dev/null"
url = "$B/api/v1/findings?since=a$i"
output = "/dev/null"
url = "$B/api/v1/findings?severity=%00$i"
output = "/dev/null"
url = "$B/api/v1/tasks?sort=%27$i"
output = "/dev/null"
url = "$B/nope/$i"
output = "/dev/null"
url = "$B/api/v1/timeseries?metric=util_avg&cpu=99999$i"
output = "/dev/null"
url = "$B/api/v1/%2e%2e/%2e%2e/etc/passwd$i"
output = "/dev/null"
url = "$B/api/v1/findings?kind=%ff%fe$i"
output = "/dev/null"
URLS
	i=$((i + 1))
done
curl -s -K "$TMPD/urls" -w '%{http_code}\n' >"$TMPD/codes" 2>/dev/null
n4=$(grep -c '^4' "$TMPD/codes")
ok $([ "$n4" -eq 1000 ]; echo $?) "1,000 malformed requests all get 4xx ($n4)"
# and some that are not even HTTP
for i in $(seq 20); do
	printf 'GARBAGE %s\r\n\r\n' "$i" | curl -s --max-time 0.3 -o /dev/null "telnet://127.0.0.1:$PORT_live" 2>/dev/null
	printf 'GET /api/v1/cpus HTTP/9.%s\r\nHost: x\r\n\r\n' "$i" | curl -s --max-time 0.3 -o /dev/null "telnet://127.0.0.1:$PORT_live" 2>/dev/null
done
check "after the malformed requests the server still answers" sh -c "curl -s $B/api/v1/cpus | jq -e '.cpus | length == 2'"
check "the feeder process is still alive" kill -0 $PID_live

# --- live with a store: history from the database ---
start_feeder livedb --interval-ms 100 --db "$TMPD/live.db"
ok $? "live feeder with --db starts"
sleep 1
check "live+db: timeseries comes from the store" sh -c "curl -s 'http://127.0.0.1:$PORT_livedb/api/v1/timeseries?metric=util_avg&cpu=0' | jq -e '(.series[0].points | length) >= 5'"
curl -s "http://127.0.0.1:$PORT_livedb/metrics" >"$TMPD/dbmetrics"
missing=""
for m in $(cat "$top_srcdir/doc/grafana-dashboard.json" "$top_srcdir/doc/prometheus-alerts.yml" | grep -o 'imbalanced_[a-z_]*' | sort -u); do
	grep -q "^# TYPE $m " "$TMPD/dbmetrics" || missing="$missing $m"
done
ok $([ -z "$missing" ]; echo $?) "every metric used by doc/grafana-dashboard.json and doc/prometheus-alerts.yml is exported${missing:+ (missing:$missing)}"
check "doc/grafana-dashboard.json is valid JSON" jq -e '.panels | length > 0' "$top_srcdir/doc/grafana-dashboard.json"
check "live+db: status reports the database size" sh -c "curl -s http://127.0.0.1:$PORT_livedb/api/v1/status | jq -e '.db_size_bytes > 0'"

# --- serve over a fixture database ---
"$FEEDER" --make-db "$TMPD/fixture.db" --windows 60 --cpus 2 --tasks 8
ok $? "fixture database written through the store (60 windows)"
start_feeder serve --serve "$TMPD/fixture.db"
ok $? "serve mode starts over the fixture"
S="http://127.0.0.1:$PORT_serve"
check "serve: status mode serve, 60 windows" sh -c "curl -s $S/api/v1/status | jq -e '.mode == \"serve\" and .windows == 60 and .kernel == \"6.18.0-test\" and .schema_version >= 3'"
check "serve: cpus of the last window" sh -c "curl -s $S/api/v1/cpus | jq -e '(.cpus | length) == 2 and .t_end_ns == 1060000000000'"
check "serve: tasks" sh -c "curl -s '$S/api/v1/tasks?top=5&sort=share' | jq -e '(.tasks | length) == 5 and .tasks[0].share >= .tasks[4].share'"
# the store keeps jobs of two or more tasks (one task is never unfair): of
# the feeder's two jobs, the 8-task one
check "serve: jobs (the stored ones: two or more tasks)" sh -c "curl -s $S/api/v1/jobs | jq -e '(.jobs | length) == 1 and .jobs[0].tasks == 8'"
check "serve: findings (one per 10 windows)" sh -c "curl -s $S/api/v1/findings | jq -e '(.findings | length) == 6'"
check "serve: findings filtered by kind and severity" sh -c "curl -s '$S/api/v1/findings?kind=unfairness&severity=critical' | jq -e '(.findings | length) == 3'"
check "serve: timeseries over the whole run" sh -c "curl -s '$S/api/v1/timeseries?metric=runnable_avg&cpu=1' | jq -e '(.series[0].points | length) == 60'"
curl -s "$S/metrics" >"$TMPD/smetrics"
ok $(awk -f "$top_srcdir/tests/helpers/metrics-check.awk" "$TMPD/smetrics" >/dev/null 2>&1; echo $?) "serve: /metrics valid"
check "serve: findings counter from the store" grep -q '^imbalanced_findings_total{kind="unfairness",severity="critical"} 3$' "$TMPD/smetrics"
bad 503 "serve: no event stream" "$S/api/v1/stream"
check "serve: dashboard served" test "$(code $S/)" = 200

"$FEEDER" --serve "$TMPD/missing.db" >/dev/null 2>"$TMPD/missing.err"
ok $([ $? -ne 0 ] && grep -q 'no such database' "$TMPD/missing.err"; echo $?) "serve refuses a missing database with a reason"
printf 'not a database, just text\n' >"$TMPD/junk.db"
"$FEEDER" --serve "$TMPD/junk.db" >/dev/null 2>"$TMPD/junk.err"
ok $([ $? -ne 0 ] && grep -q 'not a database' "$TMPD/junk.err"; echo $?) "serve refuses a file that is not a database"
check "HEAD is answered without a body" sh -c "curl -s -I $S/api/v1/cpus | head -1 | grep -q ' 200'"
"$FEEDER" --make-db "$TMPD/empty.db" --windows 0
start_feeder empty --serve "$TMPD/empty.db"
bad 503 "no window yet" "http://127.0.0.1:$PORT_empty/api/v1/cpus"

# --- binding and token ---
"$FEEDER" --listen 0.0.0.0:0 >"$TMPD/remote.out" 2>"$TMPD/remote.err"
ok $([ $? -ne 0 ] && grep -q 'non-loopback' "$TMPD/remote.err"; echo $?) "a non-loopback address is refused without allow_remote"
printf 's3cret-token\n' >"$TMPD/token"
start_feeder tok --listen 0.0.0.0:0 --allow-remote --token-file "$TMPD/token"
ok $? "non-loopback with allow_remote and a token file starts"
K="http://127.0.0.1:$PORT_tok"
bad 401 "no token" "$K/api/v1/status"
bad 401 "wrong token" "$K/api/v1/status" -H "Authorization: Bearer s3cret-tokem"
bad 401 "token prefix only" "$K/api/v1/status" -H "Authorization: Bearer s3cret"
check "right token: 200" test "$(code $K/api/v1/status -H 'Authorization: Bearer s3cret-token')" = 200

for f in live livedb serve empty tok; do
	stop_feeder $f
done

echo "1..$T"
[ $FAILED -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# dashboard.t - the dashboard in headless Chromium (Debian's chromium),
# driven over the DevTools protocol by tests/helpers/cdp-dashboard.py: no console
# errors or uncaught exceptions, one series per CPU and signal, the tasks
# and findings tables, live updates as windows arrive, zoom on a finding,
# no horizontal overflow on a phone.  Screenshots are saved in the build
# tree (tests/dashboard-*.png) as artifacts.
. "${top_srcdir:-.}/tests/helpers/http-lib.sh"

for tool in chromium python3 jq; do
	command -v $tool >/dev/null || { echo "1..0 # SKIP $tool not installed"; exit 0; }
done
ART="$top_builddir/tests"
mkdir -p "$ART"

start_feeder live --interval-ms 200 --cpus 2 --tasks 8
ok $? "feeder starts"
python3 "$top_srcdir/tests/helpers/cdp-dashboard.py" "http://127.0.0.1:$PORT_live/" "$ART/dashboard-live" >"$TMPD/live.json"
ok $? "chromium drove the live dashboard"
sed 's/^/# /' "$TMPD/live.json"
j() { jq -e "$1" "$TMPD/$2.json" >/dev/null; }
check "live: no console errors or uncaught exceptions" j '.errors == [] and (.first.errors_shown | not)' live
check "live: page reached ready and follows the stream" j '.first.stage == "ready" and .first.live == "live"' live
check "live: one runnable_avg and one util_avg series per CPU (2 CPUs)" j '.first.cpus == 2 and .first.series == 4 and .first.legend == 2' live
check "live: charts drawn (canvas present)" j '.first.canvases >= 1' live
check "live: job unfairness series per job" j '.first.job_series == 2' live
check "live: tasks table filled" j '.first.tasks == 8' live
check "live: findings table filled" j '.second.findings >= 1' live
check "live: updates when new windows arrive (more updates, more points)" \
	j '.second.updates > .first.updates and .second.points > .first.points and .second.seq > .first.seq' live
check "live: clicking a finding zooms the charts to its range" j '.clicked and (.after_click.zoom | length) > 0' live
check "live: no horizontal overflow on a phone-sized screen" j '.phone_overflow == false' live
check "live: laptop screenshot saved" test -s "$ART/dashboard-live-laptop.png"
check "live: phone screenshot saved" test -s "$ART/dashboard-live-phone.png"

"$FEEDER" --make-db "$TMPD/fixture.db" --windows 60 --cpus 2 --tasks 8
start_feeder serve --serve "$TMPD/fixture.db"
ok $? "serve over a fixture database starts"
python3 "$top_srcdir/tests/helpers/cdp-dashboard.py" "http://127.0.0.1:$PORT_serve/" "$ART/dashboard-serve" >"$TMPD/serve.json"
ok $? "chromium drove the offline dashboard"
sed 's/^/# /' "$TMPD/serve.json"
check "serve: no console errors" j '.errors == []' serve
check "serve: offline, history of all 60 windows from /timeseries" j '.first.stage == "ready" and (.first.live | test("offline")) and .first.points == 60 and .first.series == 4' serve
check "serve: findings table from the store" j '.first.findings == 6' serve

stop_feeder live
stop_feeder serve

echo "1..$T"
[ $FAILED -eq 0 ]

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-http.t - bench/http.sh --quick runs and reports its numbers: wrk
# throughput and p99 for /api/v1/cpus and /metrics, and the store's growth
# per day (deterministic, so the 200 MiB/day target is checked here; the
# latency target is reported, not asserted: it depends on the host's load).
. "${top_srcdir:-.}/tests/helpers/http-lib.sh"

command -v wrk >/dev/null || { echo "1..0 # SKIP wrk not installed"; exit 0; }
sh "$top_srcdir/bench/http.sh" --quick --feeder "$FEEDER" >"$TMPD/bench" 2>&1
ok $? "bench/http.sh --quick runs"
sed 's/^/# /' "$TMPD/bench"
for ep in "/api/v1/cpus c2" "/metrics c2"; do
	check "$ep: requests/s and p99 reported" \
		awk -v e="$ep" '$1 " " $2 == e && $3 > 0 && $5 > 0 { f = 1 } END { exit !f }' "$TMPD/bench"
done
check "store growth at 2 CPUs and 500 tasks <= 200 MiB/day" \
	awk '$1 == "mib_per_day" && $2 > 0 && $2 <= 200 { f = 1 } END { exit !f }' "$TMPD/bench"
echo "1..$T"
[ $FAILED -eq 0 ]

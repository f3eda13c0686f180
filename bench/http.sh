#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/http.sh - issue 6 numbers for the HTTP sink and the store.
#
#   bench/http.sh [--quick] [--feeder PATH] [--url BASE]
#
# 1. wrk on loopback against /api/v1/cpus and /metrics of a server fed one
#    window per second with 2 CPUs and 500 tasks (tests/http-feeder; or an
#    already running daemon with --url): requests/s and p99 latency.
#    Debian's wrk has no rate option (wrk2's -R), so it runs at the maximum
#    rate and prints the latency distribution; the target is p99 <= 10 ms
#    at >= 1,000 req/s.
# 2. Database growth per day at default store settings, extrapolated from
#    N simulated 1 s windows (2 CPUs, 500 tasks) committed through the
#    store; target <= 200 MiB/day.  Also the mean commit time per window.
# --quick: 2 s wrk runs and 120 windows (for tests/bench-http.t).
set -eu
quick=0
feeder=${top_builddir:-.}/tests/http-feeder
url=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--feeder) feeder=$2; shift ;;
	--url) url=$2; shift ;;
	*) echo "usage: $0 [--quick] [--feeder PATH] [--url BASE]" >&2; exit 2 ;;
	esac
	shift
done
[ -x "$feeder" ] || { echo "bench/http.sh: $feeder: not built (make check builds it)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "bench/http.sh: wrk not installed" >&2; exit 2; }
dur=10s windows=600
[ $quick -eq 1 ] && dur=2s windows=120
tmp=$(mktemp -d /tmp/imb-bench.XXXXXX)
fpid=
trap '[ -n "$fpid" ] && kill $fpid 2>/dev/null; rm -rf "$tmp"' EXIT

if [ -z "$url" ]; then
	"$feeder" --interval-ms 1000 --cpus 2 --tasks 500 >"$tmp/port" 2>"$tmp/err" &
	fpid=$!
	i=0
	while [ $i -lt 100 ] && ! grep -q '^port' "$tmp/port" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
	url="http://127.0.0.1:$(awk '{print $2}' "$tmp/port")"
	sleep 1.2
fi

to_ms() {	# wrk latency "123.45us" / "1.23ms" / "1.2s" -> ms
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
		else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
		else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.3f", v * 60000 }
		else { sub(/s$/, "", v); printf "%.3f", v * 1000 } }'
}

echo "# HTTP: wrk -t2 -d$dur --latency at max rate (Debian's wrk has no -R);"
echo "# c2 = 2 connections (near the 1,000 req/s target), c8 = saturation"
printf '%-20s %12s %10s %10s %10s  %s\n' endpoint req/s p50_ms p99_ms max_ms target
for run in "/api/v1/cpus 2" "/metrics 2" "/api/v1/cpus 8" "/metrics 8"; do
	ep=${run% *}
	conns=${run#* }
	wrk -t2 -c"$conns" -d"$dur" --latency "$url$ep" >"$tmp/wrk" 2>&1 || { cat "$tmp/wrk" >&2; exit 1; }
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk")
	p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$tmp/wrk")")
	p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$tmp/wrk")")
	max=$(to_ms "$(awk '$1 == "Latency" {print $4}' "$tmp/wrk")")
	errs=$(awk '/Non-2xx|Socket errors/ {print}' "$tmp/wrk")
	verdict=$(awk -v r="$rps" -v p="$p99" 'BEGIN { print (r >= 1000 && p <= 10) ? "met" : "MISSED" }')
	printf '%-20s %12s %10s %10s %10s  %s\n' "$ep c$conns" "$rps" "$p50" "$p99" "$max" "p99<=10ms@>=1000/s $verdict"
	[ -z "$errs" ] || echo "# $ep: $errs"
done

echo "# store: $windows simulated 1 s windows, 2 CPUs, 500 tasks, default settings"
start=$(date +%s%N)
"$feeder" --make-db "$tmp/growth.db" --windows "$windows" --cpus 2 --tasks 500
end=$(date +%s%N)
size=$(( $(stat -c %s "$tmp/growth.db") + $(stat -c %s "$tmp/growth.db-wal" 2>/dev/null || echo 0) ))
# subtract the empty-schema size so the fixed overhead is not extrapolated
"$feeder" --make-db "$tmp/empty.db" --windows 0 --cpus 2 --tasks 500
base=$(stat -c %s "$tmp/empty.db")
awk -v s="$size" -v b="$base" -v n="$windows" -v ns=$((end - start)) 'BEGIN {
	per = (s - b) / n
	day = per * 86400 / 1048576
	printf "bytes_per_window %.0f\nmib_per_day %.1f (target <= 200: %s)\n", per, day, day <= 200 ? "met" : "MISSED"
	printf "commit_ms_per_window %.3f (includes window synthesis)\n", ns / n / 1e6
	printf "raw_days 7 -> steady-state raw part %.0f MiB; minute rows are ~1/60 of that per day\n", day * 7
}'

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/http.sh - throughput of the HTTP sink and growth of the store.
#
#   bench/http.sh [--quick] [--feeder PATH] [--url BASE] [--seconds N]
#                 [--growth-seconds N]
#
# Full mode (default; root): the real daemon, `imbalanced run --source bpf`
# at default settings (1 s windows, store on), watching a live load of 500
# tasks: a python3 process whose 500 threads each wake once a second, and
# tests/helpers/hogs with 8 periodic threads (10 ms period, 10 % duty).
#  1. HTTP: wrk on loopback against /api/v1/cpus and /metrics: at the
#     maximum rate (Debian's wrk has no -R; 2 and 8 connections) and at
#     about 1,000 req/s (10 connections, each waiting 9 ms between
#     requests: wrk's Lua delay()), each for --seconds (10); requests/s, p50/p99/max latency.  For
#     each phase, and for a phase without wrk, the events and lost events
#     the pipeline counted (from /api/v1/status): the pipeline must lose
#     nothing because of HTTP load.  Target: p99 <= 10 ms at 1,000 req/s.
#  2. Store growth per day: the used pages of the database (SQLite's own
#     page and freelist counts, WAL included) at the start and after
#     --growth-seconds (600), extrapolated to a day.  Target <= 200 MiB/day
#     for 2 CPUs and 500 tasks.
# --feeder PATH: the synthetic tests/helpers/http-feeder instead of the daemon (one
#     window per second, 2 CPUs, 500 tasks) and synthetic windows committed
#     through the store for the growth (no root needed).
# --url BASE: wrk against an already running server (no lost-event figures
#     unless it is the daemon).
# --quick: feeder mode, 2 s wrk runs and 120 synthetic windows (the suite's
#     tests/t/bench-http.t).
set -eu
quick=0
wrk_s=
feeder=
url=
growth_s=600
here=$(cd "$(dirname "$0")" && pwd)
IMB=${IMBALANCED:-$here/../build/imbalanced}
HOGS=${HOGS:-$(dirname "$IMB")/tests/helpers/hogs}
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--feeder) feeder=$2; shift ;;
	--url) url=$2; shift ;;
	--growth-seconds) growth_s=$2; shift ;;
	--seconds) wrk_s=$2; shift ;;
	*) echo "usage: $0 [--quick] [--feeder PATH] [--url BASE] [--seconds N] [--growth-seconds N]" >&2; exit 2 ;;
	esac
	shift
done
if [ $quick -eq 1 ] && [ -z "$feeder" ]; then
	feeder=${top_builddir:-$(dirname "$IMB")}/tests/helpers/http-feeder
fi
command -v wrk >/dev/null || { echo "bench/http.sh: wrk not installed" >&2; exit 2; }
if [ -n "$feeder" ]; then
	[ -x "$feeder" ] || { echo "bench/http.sh: $feeder: not built (make check builds it)" >&2; exit 2; }
else
	[ "$(id -u)" = 0 ] || { echo "bench/http.sh: the daemon needs root (or use --feeder PATH)" >&2; exit 2; }
	[ -x "$IMB" ] || { echo "bench/http.sh: $IMB: not built (set IMBALANCED)" >&2; exit 2; }
	[ -x "$HOGS" ] || make -C "$(dirname "$HOGS")/.." -s tests/helpers/hogs >/dev/null 2>&1 ||
		{ echo "bench/http.sh: $HOGS: not built and cannot be (set HOGS)" >&2; exit 2; }
	command -v python3 >/dev/null || { echo "bench/http.sh: python3 not installed" >&2; exit 2; }
	command -v sqlite3 >/dev/null || { echo "bench/http.sh: sqlite3 not installed" >&2; exit 2; }
fi
dur=10 windows=600
[ $quick -eq 1 ] && dur=2 windows=120
dur=${wrk_s:-$dur}
tmp=$(mktemp -d /tmp/imb-bench.XXXXXX)
spid= lpids=
cleanup() {
	[ -n "$lpids" ] && kill $lpids 2>/dev/null
	[ -n "$spid" ] && kill $spid 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM	# so the daemon and the load go too

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
now_s() { date +%s.%N; }

# --- the server under test ---
daemon=0
if [ -z "$url" ] && [ -n "$feeder" ]; then
	"$feeder" --interval-ms 1000 --cpus 2 --tasks 500 >"$tmp/port" 2>"$tmp/err" &
	spid=$!
	i=0
	while [ $i -lt 100 ] && ! grep -q '^port' "$tmp/port" 2>/dev/null; do sleep 0.05; i=$((i + 1)); done
	url="http://127.0.0.1:$(awk '{print $2}' "$tmp/port")"
	sleep 1.2
elif [ -z "$url" ]; then
	daemon=1
	port=$(free_port)
	db=$tmp/bench.db
	"$IMB" run --source bpf --listen "127.0.0.1:$port" --db "$db" --config /dev/null \
		--set state_dir="$tmp/state" -q 2>"$tmp/daemon.err" &
	spid=$!
	url="http://127.0.0.1:$port"
	i=0
	while [ $i -lt 600 ] && ! curl -sf -o /dev/null "$url/api/v1/status" 2>/dev/null; do
		kill -0 $spid 2>/dev/null || { cat "$tmp/daemon.err" >&2; exit 1; }
		sleep 0.1
		i=$((i + 1))
	done
	# the load: 500 tasks that each run once a second, and some CPU work
	python3 -c '
import threading, time
def sleeper():
    while True:
        time.sleep(1)
for _ in range(500):
    threading.Thread(target=sleeper, daemon=True).start()
time.sleep(1e9)' &
	lpids=$!
	"$HOGS" --threads 8 --period-ms 10 --duty 10 --seconds $((growth_s + 120)) >/dev/null &
	lpids="$lpids $!"
	sleep 5	# threads started, windows with them closed
fi

status_counts() {	# "events lost windows" of the daemon now
	curl -s "$url/api/v1/status" | jq -r '"\(.events) \(.lost_events) \(.windows)"'
}

to_ms() {	# wrk latency "123.45us" / "1.23ms" / "1.2s" -> ms
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
		else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
		else if (v ~ /m$/) { sub(/m$/, "", v); printf "%.3f", v * 60000 }
		else { sub(/s$/, "", v); printf "%.3f", v * 1000 } }'
}

# a Lua delay() per connection: 10 connections x (9 ms + latency) ~ 1,000/s
printf 'function delay()\n\treturn 9\nend\n' >"$tmp/rate.lua"

if [ $daemon -eq 1 ]; then
	echo "# HTTP under a live load: imbalanced run --source bpf, default settings, 500 tasks"
else
	echo "# HTTP: $url"
fi
echo "# wrk -t2 -d${dur}s --latency; cN = N connections at the maximum rate,"
echo "# ~1k = 10 connections with a 9 ms delay between requests (about 1,000 req/s)"
printf '%-20s %10s %9s %9s %9s %10s %6s  %s\n' endpoint req/s p50_ms p99_ms max_ms events/s lost target
if [ $daemon -eq 1 ]; then
	set -- $(status_counts)
	t0=$(now_s)
	sleep $dur
	set -- $(status_counts) "$@"
	t1=$(now_s)
	awk -v e="$(($1 - $4))" -v l="$(($2 - $5))" -v t0="$t0" -v t1="$t1" 'BEGIN {
		printf "%-20s %10s %9s %9s %9s %10.0f %6d  %s\n", "(no wrk)", "-", "-", "-", "-", e / (t1 - t0), l, "lost 0: " (l == 0 ? "met" : "MISSED") }'
fi
for run in "/api/v1/cpus c2" "/metrics c2" "/api/v1/cpus ~1k" "/metrics ~1k" \
	   "/api/v1/cpus c8" "/metrics c8"; do
	ep=${run% *}
	mode=${run#* }
	case $mode in
	c*) args="-c${mode#c}" ;;
	*) args="-c10 -s $tmp/rate.lua" ;;
	esac
	[ $daemon -eq 1 ] && set -- $(status_counts)
	t0=$(now_s)
	# shellcheck disable=SC2086
	wrk -t2 $args -d"${dur}s" --latency "$url$ep" >"$tmp/wrk" 2>&1 || { cat "$tmp/wrk" >&2; exit 1; }
	t1=$(now_s)
	ev=- lost=-
	if [ $daemon -eq 1 ]; then
		set -- $(status_counts) "$@"
		ev=$(awk -v e="$(($1 - $4))" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.0f", e / (t1 - t0) }')
		lost=$(($2 - $5))
	fi
	rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk")
	p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$tmp/wrk")")
	p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$tmp/wrk")")
	max=$(to_ms "$(awk '$1 == "Latency" {print $4}' "$tmp/wrk")")
	errs=$(awk '/Non-2xx|Socket errors/ {print}' "$tmp/wrk")
	verdict=$(awk -v r="$rps" -v p="$p99" -v l="$lost" 'BEGIN {
		v = (p <= 10 ? "p99<=10ms met" : "p99<=10ms MISSED")
		if (r < 900) v = v " (below 1,000/s)"
		if (l != "-") v = v ", lost 0: " (l == 0 ? "met" : "MISSED")
		print v }')
	printf '%-20s %10s %9s %9s %9s %10s %6s  %s\n' "$ep $mode" "$rps" "$p50" "$p99" "$max" "$ev" "$lost" "$verdict"
	[ -z "$errs" ] || echo "# $ep: $errs"
done

# --- store growth ---
used_bytes() {	# pages in use (WAL included: a reader sees it) x page size
	sqlite3 "$1" 'SELECT (p.page_count - f.freelist_count) * s.page_size FROM pragma_page_count p, pragma_freelist_count f, pragma_page_size s'
}
if [ $daemon -eq 1 ]; then
	echo "# store: the daemon's database over ${growth_s} s at default settings (1 s windows), 2 CPUs, 500 tasks"
	set -- $(status_counts)
	b0=$(used_bytes "$db")
	t0=$(now_s)
	sleep "$growth_s"
	b1=$(used_bytes "$db")
	t1=$(now_s)
	set -- $(status_counts) "$@"
	tasks=$(( $(ls /proc/"${lpids%% *}"/task | wc -l) + 8 ))
	awk -v b0="$b0" -v b1="$b1" -v t0="$t0" -v t1="$t1" -v w="$(($3 - $6))" -v l="$(($2 - $5))" \
	    -v e="$(($1 - $4))" -v tasks="$tasks" 'BEGIN {
		day = (b1 - b0) / (t1 - t0) * 86400 / 1048576
		printf "windows %d, events/s %.0f, lost %d, load tasks %d\n", w, e / (t1 - t0), l, tasks
		printf "bytes_per_window %.0f\nmib_per_day %.1f (target <= 200: %s; %.2fx the target)\n", (b1 - b0) / w, day, day <= 200 ? "met" : "MISSED", day / 200
		printf "raw_days 7 -> steady-state raw part %.0f MiB; minute rows are ~1/60 of that per day\n", day * 7
	}'
	echo "# where the bytes go (dbstat, KiB per table and index):"
	sqlite3 "$db" 'SELECT name, sum(pgsize) / 1024 FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 6' 2>/dev/null |
		awk -F'|' '{ printf "#   %-24s %8d KiB\n", $1, $2 }'
	sqlite3 "$db" "SELECT printf('rows per window: cpu %.1f, task %.1f, job %.1f (jobs of one task %.1f)', (SELECT count(*) FROM cpu_samples) * 1.0 / w, (SELECT count(*) FROM task_samples) * 1.0 / w, (SELECT count(*) FROM job_samples) * 1.0 / w, (SELECT count(*) FROM job_samples WHERE tasks = 1) * 1.0 / w) FROM (SELECT count(*) AS w FROM windows)" 2>/dev/null | sed 's/^/# /'
	grep -v '^$' "$tmp/daemon.err" | sed 's/^/# daemon: /' | tail -5
	exit 0
fi
if [ -z "$feeder" ]; then
	echo "# store: no figures with --url alone (give --feeder PATH for synthetic windows)"
	exit 0
fi
echo "# store: $windows synthetic 1 s windows, 2 CPUs, 500 tasks, 2 jobs, default settings"
echo "# (a real host has a job per process that ran: 55-75 a window on this machine; the full mode measures that)"
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
	printf "bytes_per_window %.0f\nmib_per_day %.1f (target <= 200: %s; %.2fx the target)\n", per, day, day <= 200 ? "met" : "MISSED", day / 200
	printf "commit_ms_per_window %.3f (includes window synthesis)\n", ns / n / 1e6
	printf "raw_days 7 -> steady-state raw part %.0f MiB; minute rows are ~1/60 of that per day\n", day * 7
}'

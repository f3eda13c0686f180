#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# record-big-trace.sh - record a large sched trace.dat for benchmarks.
#
# Usage: bench/record-big-trace.sh OUT.dat [EVENTS]
#
# Records at least EVENTS (default 2000000) scheduler events into OUT.dat,
# for timing the trace.dat source and the analyzers on a realistic load.
# The load is context-switch heavy (stress-ng --switch: pairs of processes
# ping-ponging over pipes) plus two busy tests/helpers/hogs threads, and stops once
# the tracefs ring buffers hold EVENTS entries.  Recording itself is done by
# tests/helpers/record-fixture.sh (same event set, trace_clock perf, every knob
# restored, fails if any CPU buffer overran), here with bigger buffers.
# The output is not committed data; it goes where it is told.
#
# Environment:
#   RECORD_BUFFER_KB  per-CPU buffer, KiB (default 262144 = 256 MiB)
#   HOGS              the hogs program (default: built tests/helpers/hogs, searched
#                     next to this script's tree and in the build dirs)
#   SWITCHERS         stress-ng --switch workers (default 2)
#   MAX_SECONDS       give up the load after this long (default 60)
#
# Prints "events N" (counted in OUT.dat with trace-cmd report), the size of
# OUT.dat and the time taken.  Exit status: 0 ok, 1 failure, 2 bad usage.

set -eu

me=record-big-trace.sh
here=$(cd "$(dirname "$0")" && pwd)
TRACEFS=${TRACEFS:-/sys/kernel/tracing}

# Internal mode: the load, run by record-fixture.sh while tracing is on.
if [ "${1:-}" = "--load" ]; then
	target=$2
	hogs=$3
	pids=
	# shellcheck disable=SC2064
	trap 'kill $pids 2>/dev/null || true' EXIT
	"$hogs" --threads 2 --seconds "$MAX_SECONDS" >/dev/null &
	pids="$pids $!"
	stress-ng --switch "$SWITCHERS" --timeout "${MAX_SECONDS}s" \
		--quiet >/dev/null 2>&1 &
	pids="$pids $!"
	start=$(date +%s)
	while :; do
		n=$(cat "$TRACEFS"/per_cpu/cpu*/stats |
			awk '/^entries:/ { s += $2 } END { print s + 0 }')
		[ "$n" -ge "$target" ] && break
		if [ $(($(date +%s) - start)) -ge "$MAX_SECONDS" ]; then
			echo "$me: only $n events after ${MAX_SECONDS}s" >&2
			exit 1
		fi
		sleep 0.2
	done
	# shellcheck disable=SC2086 # a list of pids
	kill $pids 2>/dev/null || true
	wait 2>/dev/null || true
	pids=
	exit 0
fi

usage()
{
	echo "Usage: $me OUT.dat [EVENTS]" >&2
	exit 2
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	usage
fi
out=$1
target=${2:-2000000}
case $target in
''|*[!0-9]*) usage ;;
esac
[ "$target" -gt 0 ] || usage
SWITCHERS=${SWITCHERS:-2}
MAX_SECONDS=${MAX_SECONDS:-60}
RECORD_BUFFER_KB=${RECORD_BUFFER_KB:-262144}
for v in "$SWITCHERS" "$MAX_SECONDS" "$RECORD_BUFFER_KB"; do
	case $v in
	''|*[!0-9]*) echo "$me: SWITCHERS, MAX_SECONDS, RECORD_BUFFER_KB: not a number: $v" >&2; exit 2 ;;
	esac
done
export SWITCHERS MAX_SECONDS RECORD_BUFFER_KB
export TRACEFS

command -v stress-ng >/dev/null || { echo "$me: stress-ng: not found" >&2; exit 1; }
hogs=${HOGS:-}
if [ -z "$hogs" ]; then
	for h in "$here/../tests/helpers/hogs" "$here"/../build*/tests/helpers/hogs; do
		if [ -x "$h" ]; then
			hogs=$h
			break
		fi
	done
fi
if [ -z "$hogs" ] || [ ! -x "$hogs" ]; then
	echo "$me: tests/helpers/hogs not built (make check, or set HOGS)" >&2
	exit 1
fi

base=${out%.dat}
t0=$(date +%s.%N)
RECORD_TRUTH=/dev/null "$here/../tests/helpers/record-fixture.sh" "$base" -- \
	"$here/$me" --load "$target" "$hogs"
[ "$base.dat" = "$out" ] || mv "$base.dat" "$out"
t1=$(date +%s.%N)

# Count events, not report header lines.
n=$(trace-cmd report -i "$out" 2>/dev/null | grep -c ' sched_[a-z_]*: ' || true)
t2=$(date +%s.%N)
echo "events $n"
echo "bytes $(wc -c <"$out")"
echo "record_seconds $(awk "BEGIN { print $t1 - $t0 }")"
echo "count_seconds $(awk "BEGIN { print $t2 - $t1 }")"
[ "$n" -ge "$target" ] || { echo "$me: $out holds $n events, fewer than $target" >&2; exit 1; }

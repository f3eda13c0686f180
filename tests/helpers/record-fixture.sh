#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# record-fixture.sh - record a sched trace.dat fixture with its ground truth.
#
# Usage: tests/helpers/record-fixture.sh NAME -- COMMAND [ARG]...
#
# Records the scheduler events of the whole machine while COMMAND runs and
# writes NAME.dat (trace-cmd format) and NAME.truth.json (COMMAND's stdout,
# e.g. `tests/helpers/hogs --json`).  `trace-cmd record` does not work on these
# machines, so this drives tracefs directly and then runs
# `trace-cmd extract`.  It uses the top-level buffer only (other users are
# expected to use instances), saves every knob it changes and restores it on
# exit, and fails loudly if any CPU buffer overran (a fixture with holes
# would silently lie to the analyzers).
#
# Environment:
#   RECORD_BUFFER_KB  per-CPU buffer size in KiB (default 65536 = 64 MiB)
#   RECORD_TRUTH      where COMMAND's stdout goes (default NAME.truth.json)
#   TRACEFS           tracefs mount point (default /sys/kernel/tracing)
#   TRACE_CMD         trace-cmd binary (default trace-cmd)
#
# About tgids: options/record-tgid makes the kernel fill saved_tgids, and
# trace-cmd 3.1.6 `extract` does NOT store saved_tgids in the trace.dat
# (checked with `trace-cmd dump --options`: the file holds HEADERS, FTRACE
# EVENTS, EVENT FORMATS, KALLSYMS, PRINTK, TRACECLOCK, UNAME, VERSION,
# TRACEID, CPUSTAT, CMDLINES and CPUCOUNT - saved_cmdlines, pid->comm, but no
# pid->tgid map - and `trace-cmd report` has no tgid option).  A reader
# that needs pid->tgid must get it from the events: sched_process_fork (parent_pid/child_pid; a thread's tgid
# is its creator's tgid when it was created with CLONE_THREAD, which the
# event does not say).  So this script also saves the kernel's map as
# NAME.tgids ("pid tgid" lines, the saved_tgids format), which
# `imbalanced analyze NAME.dat` picks up by itself to group threads into
# processes.
#
# Exit status: 0 ok, 1 recording failed (including overruns), 2 bad usage.

set -eu

TRACEFS=${TRACEFS:-/sys/kernel/tracing}
TRACE_CMD=${TRACE_CMD:-trace-cmd}
BUFFER_KB=${RECORD_BUFFER_KB:-65536}
EVENTS="sched_switch sched_wakeup sched_wakeup_new sched_waking
sched_migrate_task sched_process_fork sched_process_exit sched_stat_runtime
sched_move_numa sched_swap_numa sched_stick_numa"

me=record-fixture.sh

usage()
{
	echo "Usage: $me NAME -- COMMAND [ARG]..." >&2
	echo "Writes NAME.dat and NAME.truth.json (COMMAND's stdout)." >&2
	exit 2
}

die()
{
	echo "$me: $*" >&2
	exit 1
}

[ $# -ge 3 ] || usage
name=$1
[ "$2" = "--" ] || usage
shift 2
case $BUFFER_KB in
''|*[!0-9]*) echo "$me: RECORD_BUFFER_KB: not a number: $BUFFER_KB" >&2; exit 2 ;;
esac
truth=${RECORD_TRUTH:-$name.truth.json}
dat=$name.dat

[ "$(id -u)" = 0 ] || die "needs root to drive tracefs"
command -v "$TRACE_CMD" >/dev/null || die "$TRACE_CMD: not found"
if ! mountpoint -q "$TRACEFS"; then
	mount -t tracefs nodev "$TRACEFS" || die "$TRACEFS: cannot mount tracefs"
fi
T=$TRACEFS
[ -d "$T/events/sched" ] || die "$T/events/sched: no sched events"
cur_tracer=$(cat "$T/current_tracer")
[ "$cur_tracer" = nop ] || die "$T/current_tracer is '$cur_tracer', not nop: someone else is tracing in the top buffer"

# --- save -----------------------------------------------------------------
saved=$(mktemp -d "${TMPDIR:-/tmp}/record-fixture.XXXXXX")
# The bracketed entry is the current clock.
sed -n 's/.*\[\(.*\)\].*/\1/p' "$T/trace_clock" >"$saved/trace_clock"
cat "$T/options/record-tgid" >"$saved/record-tgid"
cat "$T/tracing_on" >"$saved/tracing_on"
cat "$T/saved_cmdlines_size" >"$saved/saved_cmdlines_size"
cat "$T/set_event" >"$saved/set_event"
for d in "$T"/per_cpu/cpu*; do
	cat "$d/buffer_size_kb" >"$saved/buffer_size_kb.${d##*/}"
done

restore()
{
	# Best effort: every step runs even if an earlier one fails.
	echo 0 >"$T/tracing_on" || true
	: >"$T/set_event" || true
	while IFS= read -r ev; do
		echo "$ev" >>"$T/set_event" || true
	done <"$saved/set_event"
	cat "$saved/trace_clock" >"$T/trace_clock" || true
	cat "$saved/record-tgid" >"$T/options/record-tgid" || true
	cat "$saved/saved_cmdlines_size" >"$T/saved_cmdlines_size" || true
	: >"$T/trace" || true
	for f in "$saved"/buffer_size_kb.cpu*; do
		cat "$f" >"$T/per_cpu/${f##*.}/buffer_size_kb" || true
	done
	cat "$saved/tracing_on" >"$T/tracing_on" || true
	rm -rf "$saved"
}
trap restore EXIT
trap 'exit 1' INT TERM HUP

# --- set up ---------------------------------------------------------------
echo 0 >"$T/tracing_on"
: >"$T/set_event"			# only our events in the fixture
echo perf >"$T/trace_clock"
echo 1 >"$T/options/record-tgid"
echo 8192 >"$T/saved_cmdlines_size"	# keep every comm of the run
echo "$BUFFER_KB" >"$T/buffer_size_kb"
: >"$T/trace"				# clear the buffer and the stats
for ev in $EVENTS; do
	if [ -d "$T/events/sched/$ev" ]; then
		echo 1 >"$T/events/sched/$ev/enable"
	else
		echo "$me: note: kernel has no sched:$ev event" >&2
	fi
done

# --- record ---------------------------------------------------------------
echo 1 >"$T/tracing_on"
status=0
"$@" >"$truth" || status=$?
echo 0 >"$T/tracing_on"
[ "$status" = 0 ] || die "command failed with status $status: $*"

lost=0
for d in "$T"/per_cpu/cpu*; do
	ov=$(sed -n 's/^overrun: *//p' "$d/stats")
	cov=$(sed -n 's/^commit overrun: *//p' "$d/stats")
	dr=$(sed -n 's/^dropped events: *//p' "$d/stats")
	if [ "${ov:-0}" != 0 ] || [ "${cov:-0}" != 0 ] || [ "${dr:-0}" != 0 ]; then
		echo "$me: ${d##*/}: overrun $ov, commit overrun $cov, dropped $dr (raise RECORD_BUFFER_KB or lower the load)" >&2
		lost=1
	fi
done
[ "$lost" = 0 ] || die "events were lost; $dat not written"

cp "$T/saved_tgids" "$name.tgids" || die "cannot save $T/saved_tgids"
"$TRACE_CMD" extract -o "$dat" >/dev/null 2>"$saved/extract.err" || {
	cat "$saved/extract.err" >&2
	die "trace-cmd extract failed"
}
echo "$me: wrote $dat ($(wc -c <"$dat") bytes) and $truth" >&2

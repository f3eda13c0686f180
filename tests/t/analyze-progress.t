#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# analyze-progress.t - `imbalanced analyze` shows its progress line on a
# terminal (a pty from script(1)): events, rate, share done, time left;
# nothing when stderr is not a terminal or with --quiet, and the report on
# stdout is the same either way.  TAP output.
set -u

IMB=${IMBALANCED:-./imbalanced}
GEN=${TRACEDAT_GEN:-${top_builddir:-.}/bench/tracedat-gen}
FIX=${top_srcdir:-.}/tests/fixtures
T=$(mktemp -d "${TMPDIR:-/tmp}/progress-t.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"

if ! command -v script >/dev/null 2>&1 || [ ! -x "$GEN" ]; then
	echo "1..0 # SKIP needs script(1) and bench/tracedat-gen"
	exit 0
fi
case $IMB in /*) ;; *) IMB=$(pwd)/$IMB ;; esac
# long enough to be drawn (the first line comes after 0.2 s)
"$GEN" --cpus 8 --events 6000000 "$FIX/hogs2on2.dat" "$T/big.dat" >/dev/null 2>&1
ok $? "a 6 M-event trace to read"

script -qec "'$IMB' analyze --json '$T/big.dat' >'$T/tty.json'" /dev/null >"$T/tty" 2>&1
grep -q 'imbalanced: .*big.dat: [0-9.]* M events, [0-9.]* M events/s, [0-9]* %, [0-9]* s left' "$T/tty"
ok $? "on a terminal: events, rate, share done and time left on stderr"
tr '\r' '\n' <"$T/tty" | tail -n 1 | grep -q '^.\[K$'
ok $? "the line is cleared at the end"

"$IMB" analyze --json "$T/big.dat" >"$T/pipe.json" 2>"$T/pipe.err"
[ ! -s "$T/pipe.err" ]
ok $? "stderr not a terminal: nothing on it"
cmp -s "$T/tty.json" "$T/pipe.json"
ok $? "the report is the same with and without the progress line"

script -qec "'$IMB' analyze --json -q '$T/big.dat' >/dev/null" /dev/null >"$T/quiet" 2>&1
! grep -q 'events/s' "$T/quiet"
ok $? "--quiet on a terminal: no progress"

echo "1..$n"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz-tracedat.t - a short libFuzzer run (FUZZ_TIME seconds, default 25) of
# tests/fuzz/fuzz_tracedat.c through tests/fuzz/fuzz.sh: source_tracedat_read_inproc() under
# ASan+UBSan, seeded with the trace.dat fixtures.  TAP output.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${FUZZ_TIME:=25}"
export top_srcdir top_builddir
echo "1..1"
out=$(sh "$top_srcdir/tests/fuzz/fuzz.sh" tracedat "$FUZZ_TIME" 2>"$top_builddir/tests/t/fuzz-tracedat.err")
rc=$?
if [ $rc -eq 77 ]; then
	echo "ok 1 # SKIP $(head -n 1 "$top_builddir/tests/t/fuzz-tracedat.err")"
elif [ $rc -eq 0 ]; then
	echo "ok 1 - $out"
else
	echo "not ok 1 - fuzzing source_tracedat_read found a problem"
	sed 's/^/# /' "$top_builddir/tests/t/fuzz-tracedat.err"
	exit 1
fi

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz-tracedat-cpu.t - a short libFuzzer run (FUZZ_TIME seconds, default 20)
# of tests/fuzz/fuzz_tracedat_cpu.c through tests/fuzz/fuzz.sh: one CPU's
# ring-buffer pages, raw or in zstd chunks, walked by the project's own
# trace.dat reader under ASan+UBSan, seeded with pages of every event
# header kind (tests/helpers/ringpages.py).  TAP output.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${FUZZ_TIME:=20}"
export top_srcdir top_builddir
echo "1..1"
seeds=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-tdc.XXXXXX")
trap 'rm -rf "$seeds"' EXIT
if ! python3 "$top_srcdir/tests/helpers/ringpages.py" "$seeds"; then
	echo "not ok 1 - writing the seed pages failed"
	exit 1
fi
out=$(sh "$top_srcdir/tests/fuzz/fuzz.sh" tracedat_cpu "$FUZZ_TIME" "$seeds"/* \
	2>"$top_builddir/tests/t/fuzz-tracedat-cpu.err")
rc=$?
if [ $rc -eq 77 ]; then
	echo "ok 1 # SKIP $(head -n 1 "$top_builddir/tests/t/fuzz-tracedat-cpu.err")"
elif [ $rc -eq 0 ]; then
	echo "ok 1 - $out"
else
	echo "not ok 1 - fuzzing the own trace.dat page reader found a problem"
	sed 's/^/# /' "$top_builddir/tests/t/fuzz-tracedat-cpu.err"
	exit 1
fi

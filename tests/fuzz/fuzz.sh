#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz.sh - build one libFuzzer target with clang -fsanitize=fuzzer,address,
# undefined and run it for a while, seeded from the fixtures.
#
#   tests/fuzz/fuzz.sh TARGET [SECONDS] [SEED...]
#
# SECONDS defaults to $FUZZ_TIME, else 20 (FUZZ_TIME=3600 tests/fuzz/fuzz.sh
# tracedat fuzzes for an hour).
# TARGET names tests/fuzz/fuzz_TARGET.c; the sources it links are listed below
# (add a case for a new target).  Work files go to $FUZZ_DIR (default
# $top_builddir/tests/fuzz/fuzz-TARGET.dir): the binary, corpus/, run.log and any
# crash artifact.  Exit status: 0 clean run, 1 crash or build failure,
# 77 clang or its fuzzer runtime missing.  LeakSanitizer uses
# tests/lsan.supp (leaks inside libtracecmd/libtraceevent only).
: "${top_srcdir:=$(dirname "$0")/../..}" "${top_builddir:=.}"
target=${1-}
secs=${2:-${FUZZ_TIME:-20}}
case $secs in
''|*[!0-9]*) echo "fuzz.sh: SECONDS/FUZZ_TIME: not a whole number of seconds: '$secs'" >&2; exit 2 ;;
esac
[ $# -ge 2 ] && shift 2 || shift $#
CC_FUZZ=${CLANG:-clang}
dir=${FUZZ_DIR:-$top_builddir/tests/fuzz/fuzz-$target.dir}
s=$top_srcdir

case $target in
tracedat)
	srcs="$s/tests/fuzz/fuzz_tracedat.c $s/daemon/source/tracedat.c $s/daemon/source/tracedat_repair.c
		$s/daemon/source/tracedat_par.c $s/daemon/source/evring.c $s/daemon/source/evmerge.c
		$s/daemon/source/sched_fields.c $s/daemon/source/tracedat_layout.c
		$s/daemon/source/tracedat_cpu.c"
	libs="$(pkg-config --cflags --libs libtracecmd libtraceevent libzstd) -lz"
	maxlen=2000000
	[ $# -eq 0 ] && set -- "$s"/tests/fixtures/*.dat
	;;
tracedat_cpu)
	srcs="$s/tests/fuzz/fuzz_tracedat_cpu.c $s/daemon/source/tracedat_cpu.c
		$s/daemon/source/tracedat_layout.c"
	libs="$(pkg-config --cflags --libs libtraceevent libzstd) -lz"
	maxlen=65536
	;;
text)
	srcs="$s/tests/fuzz/fuzz_text.c $s/analyzers/event_text.c $s/analyzers/event.c $s/daemon/source/text.c"
	libs="-lz"
	maxlen=8192
	;;
*)
	echo "fuzz.sh: unknown target '$target' (tracedat, tracedat_cpu, text)" >&2
	exit 2
	;;
esac

if ! command -v "$CC_FUZZ" >/dev/null 2>&1; then
	echo "fuzz.sh: $CC_FUZZ not found" >&2
	exit 77
fi
mkdir -p "$dir/corpus" || exit 1
# is the libFuzzer runtime there?
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' \
	>"$dir/probe.c"
if ! "$CC_FUZZ" -fsanitize=fuzzer "$dir/probe.c" -o "$dir/probe" 2>/dev/null; then
	echo "fuzz.sh: no libFuzzer runtime for $CC_FUZZ (Debian: libclang-rt-14-dev)" >&2
	exit 77
fi
# shellcheck disable=SC2086
if ! "$CC_FUZZ" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-D_GNU_SOURCE -I"$s" $srcs $libs -o "$dir/fuzz_$target" 2>"$dir/build.log"; then
	echo "fuzz.sh: building fuzz_$target failed:" >&2
	cat "$dir/build.log" >&2
	exit 1
fi
for f in "$@"; do
	[ -f "$f" ] && cp "$f" "$dir/corpus/"
done
LSAN_OPTIONS="suppressions=$s/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
	"$dir/fuzz_$target" -max_total_time="$secs" -max_len="$maxlen" -timeout=20 \
	-rss_limit_mb=4096 -artifact_prefix="$dir/" "$dir/corpus" >"$dir/run.log" 2>&1
rc=$?
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$dir/run.log")
if [ $rc -ne 0 ]; then
	echo "fuzz.sh: fuzz_$target failed (exit $rc), artifact in $dir:" >&2
	tail -n 40 "$dir/run.log" >&2
	exit 1
fi
echo "fuzz_$target: $secs s, ${runs:-?} runs, no crash"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fuzz-text.t - a short libFuzzer run (FUZZ_TIME seconds, default 20) of
# tests/fuzz/fuzz_text.c: the text line parser and file reader under ASan+UBSan,
# seeded with a few valid lines of several kinds.  Longer runs: see
# doc/event-format.md.  TAP output.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${FUZZ_TIME:=20}"
CC_FUZZ=${CLANG:-clang}
dir=${top_builddir}/tests/fuzz/fuzz-text.dir
echo "1..2"
if ! command -v "$CC_FUZZ" >/dev/null 2>&1; then
	echo "ok 1 # SKIP clang not found"
	echo "ok 2 # SKIP clang not found"
	exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/corpus" || exit 1
if "$CC_FUZZ" -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$top_srcdir" \
	"$top_srcdir/tests/fuzz/fuzz_text.c" "$top_srcdir/analyzers/event_text.c" \
	"$top_srcdir/analyzers/event.c" "$top_srcdir/daemon/source/text.c" \
	-lz -o "$dir/fuzz_text" 2>"$dir/build.log"; then
	echo "ok 1 - fuzz_text builds with -fsanitize=fuzzer,address,undefined"
else
	echo "not ok 1 - fuzz_text builds"
	sed 's/^/# /' "$dir/build.log"
	echo "not ok 2 - fuzz run # no binary"
	exit 1
fi
printf '# imbalanced events v1\n1000000 switch cpu=0 prev_pid=12 prev_state=R next_pid=13 next_comm=a%%20b\n' \
	>"$dir/corpus/switch"
printf '5 wakeup cpu=1 pid=3 comm=x target_cpu=1 clock_task=5 clock_pelt=4\n6 pelt_cfs cpu=0 root=1 util_avg=300 load_sum=99\n' \
	>"$dir/corpus/wakeup"
printf '7 vruntime cpu=1 avg_vruntime=-5 vruntime_ref=9\n8 lost cpu=0 count=3\n9 numa_swap cpu=0 src_pid=1 dst_nid=1\n10 fork cpu=0 parent_pid=1 child_pid=2\n' \
	>"$dir/corpus/misc"
if "$dir/fuzz_text" -max_total_time="$FUZZ_TIME" -max_len=8192 \
	-artifact_prefix="$dir/" "$dir/corpus" >"$dir/run.log" 2>&1; then
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$dir/run.log")
	echo "ok 2 - ${FUZZ_TIME} s of fuzzing the text parser and reader: ${runs:-?} runs, no crash"
else
	echo "not ok 2 - the fuzzer found a crash (artifact in $dir)"
	tail -n 40 "$dir/run.log" | sed 's/^/# /'
	exit 1
fi

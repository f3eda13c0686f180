#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-detection.t - bench/detection.sh --quick runs and meets its targets:
# no false positive on balanced cases, no false negative, unfairness within
# 2 points of ground truth, and it prints the analyzers' cost line.
: "${top_srcdir:=.}" "${top_builddir:=.}"
export top_srcdir top_builddir
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	exit 0
fi
out=$(sh "$top_srcdir/bench/detection.sh" --quick 2>&1)
rc=$?
n=0
t() {
	n=$((n + 1))
	if eval "$2"; then echo "ok $n - $1"; else echo "not ok $n - $1"; fi
}
t "detection.sh --quick exits 0" '[ $rc -eq 0 ]'
t "the table has every scenario" 'echo "$out" | grep -q "^  9on8-sync " && echo "$out" | grep -q "^  numa "'
t "no false positive on balanced cases, no false negative" \
	'echo "$out" | grep -q "targets: FP on balanced cases 0 (want 0), FN 0 (want 0)"'
t "unfairness within 2 points of ground truth" \
	'echo "$out" | grep "worst unfairness error" | awk "{ exit !(\$(NF-4) + 0 <= 2) }"'
t "the cost section ran (perf) or says why not" \
	'echo "$out" | grep -Eq "analyzers: [0-9.]+ % of the samples|perf not found|perf record failed"'
echo "$out" | sed 's/^/# /'
echo "1..$n"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-detection.t - bench/detection.sh --quick runs and meets its targets:
# no false positive on balanced cases, no false negative, unfairness within
# 2 points of ground truth, and, when perf is installed, it measured the
# analyzers' cost (at most 30 % of analyze's samples); without perf it says why.
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
if command -v perf >/dev/null 2>&1; then
	# perf is here: the measurement must have run, on the generated trace at least
	t "the cost was measured (perf is installed)" \
		'echo "$out" | sed -n "/generated trace:/,\$p" | grep -Eq "analyzers: [0-9.]+ % of the samples"'
	t "the analyzers take at most 30 % of analyze's samples" \
		'echo "$out" | sed -n "s/.*analyzers: \([0-9.]*\) % of the samples.*/\1/p" | awk "{ if (\$1 > 30) bad = 1 } END { exit bad }"'
else
	t "no perf: the cost section says why it did not run" 'echo "$out" | grep -q "perf not found"'
fi
echo "$out" | sed 's/^/# /'
echo "1..$n"

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-analyze-speed.t - the analyze speed benchmark runs and prints its
# figures (quick mode: the bundled fixture and a small 64-CPU trace), so it never rots.
out=$(IMBALANCED=${IMBALANCED:-./imbalanced} PLAIN_LOOP=${top_builddir:-.}/bench/tracedat-plain-loop \
	TRACEDAT_GEN=${top_builddir:-.}/bench/tracedat-gen \
	BENCH_DIR=$(mktemp -d) sh "${top_srcdir:-.}/bench/analyze-speed.sh" --quick 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
echo "$out" | grep -q 'M events/s' && echo "$out" | grep -q 'trace-cmd report is .*x analyze' &&
	echo "$out" | grep -q 'peak RSS'
ok=$?
[ $rc = 0 ] && [ $ok = 0 ] && echo "ok 1 - bench/analyze-speed.sh --quick prints events/s, ratios and RSS" ||
	echo "not ok 1 - bench/analyze-speed.sh --quick prints events/s, ratios and RSS"
echo "1..1"

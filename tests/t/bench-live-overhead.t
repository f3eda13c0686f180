#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-live-overhead.t - bench/live-overhead.sh --quick runs and prints its figures (needs
# root for BPF and tracefs), so the benchmark never rots.
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root (BPF, tracefs)"; exit 0; fi
out=$(IMBALANCED=${IMBALANCED:-./imbalanced} sh "${top_srcdir:-.}/bench/live-overhead.sh" --quick 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
if [ $rc = 0 ] && echo "$out" | grep -q 'slowdown' && echo "$out" | grep -q '% of one CPU' &&
	echo "$out" | grep -q 'pelt_se_rate=20ms .*events, [0-9]* lost)' &&
	echo "$out" | grep -q 'nice=0 (not -10) .*events, [0-9]* lost)' &&
	echo "$out" | grep -q 'per second of the daemon.s run), [0-9]* lost events' &&
	echo "$out" | grep -q 'direct cost .*% of the load'; then
	echo "ok 1 - bench/live-overhead.sh --quick prints its figures"
else
	echo "not ok 1 - bench/live-overhead.sh --quick prints its figures"
fi
echo "1..1"

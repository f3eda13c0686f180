#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-pelt-accuracy.t - bench/pelt-accuracy.sh --quick runs and prints its figures (needs
# root for BPF and tracefs), so the benchmark never rots.
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root (BPF, tracefs)"; exit 0; fi
out=$(IMBALANCED=${IMBALANCED:-./imbalanced} sh "${top_srcdir:-.}/bench/pelt-accuracy.sh" --quick 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
if [ $rc = 0 ] && echo "$out" | grep -q 'util_avg' && echo "$out" | grep -q 'entity updates'; then
	echo "ok 1 - bench/pelt-accuracy.sh --quick prints its figures"
else
	echo "not ok 1 - bench/pelt-accuracy.sh --quick prints its figures"
fi
echo "1..1"

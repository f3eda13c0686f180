# SPDX-License-Identifier: GPL-2.0-or-later
# bench-pelt-engine.t - the PELT throughput benchmark runs and prints its
# figure (a smoke test; the figure itself is a benchmark, not a test).
bench="${top_builddir:-.}/bench/pelt-engine"
echo "1..2"
out=$("$bench" --quick 2>&1)
rc=$?
if [ $rc -eq 0 ]; then echo "ok 1 - bench/pelt-engine --quick exits 0"
else echo "not ok 1 - bench/pelt-engine --quick exits 0 (status $rc)"; fi
echo "# $out"
if printf '%s\n' "$out" | grep -Eq '^pelt-engine: [0-9]+\.[0-9] million entity updates/s'; then
	echo "ok 2 - it prints its updates-per-second figure"
else
	echo "not ok 2 - it prints its updates-per-second figure"
fi

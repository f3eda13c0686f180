#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# golden.sh - the analyzer's outputs kept byte for byte, checked or rewritten.
#
# Every recorded fixture (tests/fixtures/*.dat) and every scenario the test
# suite generates (tests/scenarios/*.scn through scenario-gen.py, the
# wakeups template for the N that scenarios.t --quick uses, groups.scn
# grouped by comm and by cgroup) is run through `imbalanced analyze --json`;
# a few also with --per-window, as the text report, as --dump-events and as
# a multi-file run.  Each case's standard output is tests/golden/CASE.out;
# when the run exits non-zero or writes to standard error, CASE.err holds
# "exit N" and that standard error.
#
#   golden.sh check    compare (TAP, one test per case; a unified diff on failure)
#   golden.sh update   rewrite tests/golden/ from the current binary
#
# A deliberate change of the analyzer's output (new PELT numbers, a new JSON
# key) is committed together with its regenerated golden files:
#
#   make golden-update          (in the build directory), or
#   IMBALANCED=build/imbalanced sh tests/helpers/golden.sh update
#
# then review `git diff tests/golden/` before committing.  Inputs are passed
# by relative names from their own folder, so no path of the machine that
# ran the update ends up in the files.
#
# env: IMBALANCED (the binary), top_srcdir (default: this script's ../..)
set -u

mode=${1:-check}
case "$mode" in
check|update) ;;
*) echo "usage: golden.sh check|update" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
: "${top_srcdir:=$(cd "$here/../.." && pwd)}"
top_srcdir=$(cd "$top_srcdir" && pwd)
: "${IMBALANCED:=$top_srcdir/build/imbalanced}"
case "$IMBALANCED" in /*) ;; *) IMBALANCED=$(pwd)/$IMBALANCED ;; esac
GOLDEN=$top_srcdir/tests/golden
FIX=$top_srcdir/tests/fixtures
SCN=$top_srcdir/tests/scenarios
GEN=$top_srcdir/tests/helpers/scenario-gen.py

if [ ! -x "$IMBALANCED" ]; then
	echo "1..0 # SKIP $IMBALANCED not built"
	exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found (scenario-gen.py)"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/imb-golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/fix" "$tmp/scn" "$tmp/out"
[ "$mode" = update ] && mkdir -p "$GOLDEN"

n=0
failed=0

# run CASE DIR ARGS...: analyze in DIR, keep stdout and (exit, stderr)
run() {
	name=$1 dir=$2
	shift 2
	(cd "$dir" && "$IMBALANCED" analyze "$@") >"$tmp/out/$name.out" 2>"$tmp/out/$name.stderr"
	rc=$?
	if [ "$rc" != 0 ] || [ -s "$tmp/out/$name.stderr" ]; then
		{ echo "exit $rc"; cat "$tmp/out/$name.stderr"; } >"$tmp/out/$name.err"
	fi
	rm -f "$tmp/out/$name.stderr"
	n=$((n + 1))
	if [ "$mode" = update ]; then
		cp "$tmp/out/$name.out" "$GOLDEN/$name.out"
		rm -f "$GOLDEN/$name.err"
		[ -f "$tmp/out/$name.err" ] && cp "$tmp/out/$name.err" "$GOLDEN/$name.err"
		return
	fi
	ok=1
	for ext in out err; do
		want=$GOLDEN/$name.$ext got=$tmp/out/$name.$ext
		if [ -f "$want" ] || [ -f "$got" ]; then
			[ -f "$want" ] || want=/dev/null
			[ -f "$got" ] || got=/dev/null
			if ! cmp -s "$want" "$got"; then
				ok=0
				diff -u "$want" "$got" | head -40 | cut -c1-300 | sed 's/^/# /'
			fi
		fi
	done
	if [ "$ok" = 1 ]; then
		echo "ok $n - $name: analyze $*"
	else
		echo "not ok $n - $name: analyze $* differs from tests/golden/$name"
		failed=$((failed + 1))
	fi
}

# The fixtures, copied so their .tgids are found beside them and the JSON
# names them by their bare file name.
cp "$FIX"/*.dat "$FIX"/*.tgids "$tmp/fix/"
for f in "$FIX"/*.dat; do
	b=$(basename "$f" .dat)
	run "fixture-$b" "$tmp/fix" --json "$b.dat"
done
for b in hogs3on2 rtapp-periodic; do
	run "fixture-$b.per-window" "$tmp/fix" --json --per-window "$b.dat"
done
run fixture-hogs3on2.report "$tmp/fix" hogs3on2.dat
run fixture-hogs2on2.dump-events "$tmp/fix" --dump-events hogs2on2.dat
run fixture-two-runs "$tmp/fix" --json hogs2on2.dat hogs3on2.dat

# The scenarios, as scenarios.t generates them.
gen() {
	python3 "$GEN" "$1" --topology "$tmp/scn/$2.topo" >"$tmp/scn/$2.txt" ||
		echo "# scenario-gen.py $1 failed"
}
for f in "$SCN"/*.scn; do
	b=$(basename "$f" .scn)
	gen "$f" "$b"
	run "scenario-$b" "$tmp/scn" --json --topology "$b.topo" "$b.txt"
done
run scenario-9on8-sync.per-window "$tmp/scn" --json --per-window --topology 9on8-sync.topo 9on8-sync.txt
run scenario-pinned.report "$tmp/scn" --topology pinned.topo pinned.txt
for kind in comm cgroup; do
	run "scenario-groups.by-$kind" "$tmp/scn" --json --group-by "$kind" groups.txt
done
for phase in sync stagger; do
	for w in 2 8 16; do
		b=wakeups-$phase-$w
		run_ms=$(python3 -c "print(round(8.0 / $w, 1))")
		sed -e "s/@N@/$w/g" -e "s/@PHASE@/$phase/g" -e "s/@RUN@/$run_ms/g" \
			"$SCN/wakeups.scn.in" >"$tmp/scn/$b.scn"
		gen "$tmp/scn/$b.scn" "$b"
		run "scenario-$b" "$tmp/scn" --json --topology "$b.topo" "$b.txt"
	done
done

if [ "$mode" = update ]; then
	# golden files of cases that no longer exist
	for g in "$GOLDEN"/*.out "$GOLDEN"/*.err; do
		[ -f "$g" ] || continue
		b=$(basename "$g")
		[ -f "$tmp/out/$b" ] || { echo "removed stale $b"; rm -f "$g"; }
	done
	echo "wrote $n cases to $GOLDEN; review: git diff tests/golden/"
	exit 0
fi
echo "1..$n"
[ "$failed" = 0 ]

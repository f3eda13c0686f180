#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tracedat-parallel.t - the parallel trace.dat reader (per-CPU readers and
# the merge) gives the serial reader's output byte for byte, and so does
# the reading through libtracecmd (IMBALANCED_TRACEDAT_LIBRARY) of the
# files the project's own reader (tracedat_layout.c) takes: text and JSON
# reports of every fixture and of generated traces with 3 and 64 CPU
# buffers (compressed and not, several reader counts), copies cut off
# inside their event data (read up to the cut, a warning, "truncated":
# true) and copies with a damaged CPU section (a one-line error naming
# the file, or the same report).  TAP output.
set -u

IMB=${IMBALANCED:-./imbalanced}
GEN=${TRACEDAT_GEN:-${top_builddir:-.}/bench/tracedat-gen}
FIX=${top_srcdir:-.}/tests/fixtures
T=$(mktemp -d "${TMPDIR:-/tmp}/tdpar-t.XXXXXX")
trap 'rm -rf "$T"' EXIT
. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"

# run MODE FILE OUT: stdout, stderr and exit status of analyze in one file
run() {
	mode=$1
	shift
	if [ "$mode" = serial ]; then
		IMBALANCED_TRACEDAT_SERIAL=1 "$IMB" analyze "$@" >"$T/o" 2>"$T/e"
	elif [ "$mode" = library ]; then
		IMBALANCED_TRACEDAT_LIBRARY=1 "$IMB" analyze "$@" >"$T/o" 2>"$T/e"
	else
		IMBALANCED_READERS=$mode "$IMB" analyze "$@" >"$T/o" 2>"$T/e"
	fi
	echo "exit $?" >>"$T/o"
	cat "$T/e" >>"$T/o"
}

# same FILE WHAT: every report form, serial vs parallel with 1, 2 and 5
# readers and vs libtracecmd
same() {
	f=$1
	bad=
	for form in "--json" "--json --per-window" "--top 1000" "--dump-events"; do
		# shellcheck disable=SC2086 # the form is a list of options
		run serial $form "$f"
		mv "$T/o" "$T/ref"
		for r in 1 2 5 library; do
			# shellcheck disable=SC2086
			run $r $form "$f"
			cmp -s "$T/ref" "$T/o" || bad="$bad [$form, $r readers]"
		done
	done
	[ -z "$bad" ]
	ok $? "$2: parallel output identical to the serial reader's${bad:+ (differs:$bad)}"
}

for f in "$FIX"/*.dat; do
	same "$f" "$(basename "$f")"
done

if [ ! -x "$GEN" ]; then
	echo "1..$n # the generated traces need bench/tracedat-gen (not built)"
	exit $fail
fi
"$GEN" --cpus 64 --events 200000 "$FIX/hogs2on2.dat" "$T/g64.dat" >/dev/null 2>&1 &&
	"$GEN" --cpus 64 --events 200000 --compression none "$FIX/hogs2on2.dat" \
		"$T/g64n.dat" >/dev/null 2>&1 &&
	"$GEN" --cpus 3 --events 60000 --seed 7 "$FIX/hogs2on2.dat" "$T/g3.dat" >/dev/null 2>&1
ok $? "tracedat-gen writes 64- and 3-CPU traces"
"$IMB" analyze --json -q "$T/g64.dat" | grep -q '"nr_cpus":64'
ok $? "the 64-CPU trace is read as 64 CPUs"
own=
for f in "$FIX"/hogs*.dat "$FIX"/rtapp-periodic.dat "$T/g64.dat" "$T/g64n.dat" "$T/g3.dat"; do
	"$IMB" analyze -v -q "$f" 2>&1 >/dev/null | grep -q "read with imbalanced's own reader" ||
		own="$own $(basename "$f")"
done
[ -z "$own" ]
ok $? "fixtures and generated traces are read without libtracecmd${own:+ (not:$own)}"
"$IMB" analyze -v -q "$FIX/pelt-lost.dat" 2>&1 >/dev/null |
	grep -q "read with libtracecmd (more than one buffer"
ok $? "a file with instance buffers is left to libtracecmd, and -v says why"
same "$T/g64.dat" "64 CPUs, zstd"
same "$T/g64n.dat" "64 CPUs, uncompressed"
same "$T/g3.dat" "3 CPUs"

# where the event data starts and the size
data_at() {
	trace-cmd dump -i "$1" --flyrecord 2>/dev/null |
		awk '/data offset and size/ { print $2; exit }'
}
size=$(stat -c %s "$T/g64.dat")
at=$(data_at "$T/g64.dat")
[ -n "$at" ] && [ "$at" -gt 0 ]
ok $? "the 64-CPU trace's event data starts at ${at:-?}"
at=${at:-$((size / 2))}

# cut inside the event data: read up to the cut, warned, truncated
cut_ok=0
cut_bad=
for frac in 10 35 60 85 97; do
	head -c $((at + (size - at) * frac / 100)) "$T/g64.dat" >"$T/cut.dat"
	run 2 --json "$T/cut.dat"
	mv "$T/o" "$T/par"
	run serial --json "$T/cut.dat"
	if cmp -s "$T/par" "$T/o" && grep -q '"truncated":true' "$T/par" &&
		grep -q 'warning: .*cut off' "$T/par" && grep -q '^exit 0' "$T/par"; then
		cut_ok=$((cut_ok + 1))
	else
		cut_bad="$cut_bad $frac%"
	fi
done
[ $cut_ok = 5 ]
ok $? "cut at 5 places in the CPU sections: read up to the cut, warning, truncated, as serial${cut_bad:+ (not:$cut_bad)}"

# a damaged CPU section: a clean one-line error or a report, never a crash
dmg_bad=
for k in 1 2 3 4 5 6 7 8; do
	cp "$T/g64.dat" "$T/dmg.dat"
	off=$((at + (size - at) * k / 9))
	printf '\377\377\377\377\377\377\377\377' |
		dd of="$T/dmg.dat" bs=1 seek=$off conv=notrunc 2>/dev/null
	run 2 --json "$T/dmg.dat"
	st=$(sed -n 's/^exit //p' "$T/o")
	case $st in
	0) ;;
	2) [ "$(grep -c '^imbalanced: ' "$T/e")" = 1 ] &&
		grep -q "^imbalanced: $T/dmg.dat: " "$T/e" || dmg_bad="$dmg_bad $off" ;;
	*) dmg_bad="$dmg_bad $off(exit $st)" ;;
	esac
	grep -q 'internal error' "$T/e" && dmg_bad="$dmg_bad $off(internal)"
done
[ -z "$dmg_bad" ]
ok $? "8 damaged CPU sections: a report or a one-line error naming the file${dmg_bad:+ (not at:$dmg_bad)}"

echo "1..$n"
exit $fail

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# layering.sh - check the rules of ARCHITECTURE.md that a grep can check.
#
#   layering.sh ROOT
#
# 1. The analysis core stays pure: every #include of ROOT/analyzers/*.[ch]
#    is either a file of analyzers/ itself or a C library header that does
#    no I/O (the allow list below).  <stdio.h> is allowed for snprintf and
#    vsnprintf only: a call of a stream or file function (fopen, printf,
#    fprintf, fwrite, puts, read, write, ...) or a use of FILE, stdin,
#    stdout or stderr fails.  Nothing from daemon/, bpf/, the build
#    directory (config.h) or a system header (unistd.h, fcntl.h, sys/...,
#    pthread.h, ...) may be included.
# 2. The tree explains itself: no source, build or documentation file
#    names a Markdown document that is not in ROOT, a design folder outside
#    it, an issue number, or an owner.
#
# Prints one line per violation ("FILE:LINE: reason") and exits 1 when there
# is one, 0 when there is none.  tests/t/layering.t runs it on the tree and
# on deliberately bad files.
set -u

root=${1:?usage: layering.sh ROOT}
cd "$root" || exit 2
bad=0
fail() {
	echo "$1"
	bad=1
}

# --- 1. analyzers/ includes and I/O -----------------------------------------
ALLOWED='assert.h ctype.h errno.h float.h inttypes.h limits.h math.h stdalign.h
stdarg.h stdbool.h stddef.h stdint.h stdio.h stdlib.h string.h'
for f in analyzers/*.c analyzers/*.h; do
	[ -f "$f" ] || continue
	grep -n '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r l; do
		n=${l%%:*}
		inc=$(printf '%s\n' "$l" | sed -n 's/.*#[[:space:]]*include[[:space:]]*\([<"][^>"]*[>"]\).*/\1/p')
		case "$inc" in
		\"*\")
			name=${inc#\"}
			name=${name%\"}
			case "$name" in
			analyzers/*) target=$name ;;
			*/*) target= ;;
			*) target=analyzers/$name ;;
			esac
			if [ -z "$target" ] || [ ! -f "$target" ]; then
				echo "$f:$n: analyzers/ includes $inc, which is not a file of analyzers/"
			fi
			;;
		\<*\>)
			name=${inc#<}
			name=${name%>}
			ok=0
			for a in $ALLOWED; do
				[ "$name" = "$a" ] && ok=1
			done
			[ $ok = 1 ] ||
				echo "$f:$n: analyzers/ includes $inc: only C library headers without I/O are allowed"
			;;
		*)
			echo "$f:$n: analyzers/ has an include this check cannot read: $l"
			;;
		esac
	done
done >"${TMPDIR:-/tmp}/layering.$$"
if [ -s "${TMPDIR:-/tmp}/layering.$$" ]; then
	cat "${TMPDIR:-/tmp}/layering.$$"
	bad=1
fi
rm -f "${TMPDIR:-/tmp}/layering.$$"

# Calls of stream and file functions, outside comments (a line starting
# with '*' or '/*' or '//' is a comment line).
IO='fopen|fdopen|freopen|fclose|fread|fwrite|fprintf|printf|vprintf|vfprintf|puts|fputs|fputc|putchar|fgets|fgetc|getline|getchar|perror|popen|fflush|fseek|ftell|open|openat|read|write|close|pread|pwrite|ioctl|mmap|opendir|readdir'
out=$(grep -nE "(^|[^A-Za-z0-9_.>])($IO)[[:space:]]*\(|(^|[^A-Za-z0-9_])(FILE|stdin|stdout|stderr)([^A-Za-z0-9_]|$)" \
	analyzers/*.c analyzers/*.h 2>/dev/null |
	grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*|//)' |
	grep -v '__attribute__((format(')
if [ -n "$out" ]; then
	printf '%s\n' "$out" | sed 's/$/  <- I\/O in analyzers\//'
	bad=1
fi

# --- 2. no document outside the tree, no issue numbers or owners ----------
# The files people read as the project's text: sources, build files,
# scripts, tests, documentation.  Generated and recorded data are left out.
files=$(find . \( -path ./build -o -path './build-*' -o -path ./.git -o -path ./autom4te.cache \
	-o -path ./tests/golden -o -path ./tests/fixtures -o -path ./bpf/vmlinux -o -path ./m4 \
	-o -path ./build-aux \) -prune -o -type f \
	\( -name '*.c' -o -name '*.h' -o -name '*.am' -o -name '*.mk' -o -name '*.ac' \
	-o -name '*.sh' -o -name '*.py' -o -name '*.t' -o -name '*.md' -o -name '*.in' \
	-o -name '*.awk' -o -name '*.yml' -o -name '*.js' -o -name '*.html' -o -name '*.css' \
	-o -name '*.[1-8]' -o -name dev -o -name run \) -print | sed 's|^\./||' | sort)
[ -n "$files" ] || { echo "no files to check under $root"; exit 2; }

# Markdown documents named anywhere must exist in the tree (by their path
# relative to the top or to the naming file, or at least by their name).
for f in $files; do
	grep -noE '[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' "$f" 2>/dev/null | while IFS=: read -r n doc; do
		d=$(dirname "$f")
		[ -f "$doc" ] || [ -f "$d/$doc" ] && continue
		base=$(basename "$doc")
		if [ -z "$(printf '%s\n' $files | grep -x "\(.*/\)\{0,1\}$base")" ]; then
			echo "$f:$n: names $doc, which is not in the tree"
		fi
	done
done >"${TMPDIR:-/tmp}/layering-doc.$$"
if [ -s "${TMPDIR:-/tmp}/layering-doc.$$" ]; then
	cat "${TMPDIR:-/tmp}/layering-doc.$$"
	bad=1
fi
rm -f "${TMPDIR:-/tmp}/layering-doc.$$"

# Folders of design notes outside the tree, tickets and owners.  The
# patterns are split so that this file does not match itself.
own='(own''er|own''ers):'
pat="\.\./shared/|shared/des""ign|[Ii]ss""ue #?[0-9]|\($own|\(integ""rator\)"
out=$(printf '%s\n' $files | xargs grep -nE "$pat" 2>/dev/null)
# ... and a ticket number wrapped onto the next comment line
split=$(printf '%s\n' $files | xargs awk '
	FNR == 1 { prev = "" }
	prev ~ /[Ii]ss''ue[[:space:]]*#?$/ && $0 ~ /^[[:space:]]*(#|\*|\/\/)?[[:space:]]*#?[0-9]/ {
		print FILENAME ":" FNR ":" $0
	}
	{ prev = $0 }' 2>/dev/null)
[ -n "$split" ] && out=$(printf '%s\n%s' "$out" "$split" | sed '/^$/d')
if [ -n "$out" ]; then
	printf '%s\n' "$out" | sed 's/$/  <- names something outside the tree (a design folder, an issue, an owner)/'
	bad=1
fi

exit $bad

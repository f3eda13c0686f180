#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# layering.t - the rules of ARCHITECTURE.md that a grep can check
# (tests/helpers/layering.sh): analyzers/ includes only itself and C library
# headers without I/O and calls no I/O function; no file names a document
# outside the tree, an issue or an owner.  The checker is first shown to
# fail on a tree of deliberately bad files, one per rule, and to pass on a
# clean one; then it runs on this tree.  TAP output.
: "${top_srcdir:=.}"
check="$top_srcdir/tests/helpers/layering.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/imb-layering.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"

# a clean tree: a pure analyzer, a note that exists, a comment naming it
mkdir -p "$tmp/good/analyzers" "$tmp/good/doc" "$tmp/good/daemon"
printf '#include <stdint.h>\n#include <stdio.h>\n#include "a.h"\n' >"$tmp/good/analyzers/a.c"
printf '/* a.h - a pure header */\n#include <stddef.h>\n' >"$tmp/good/analyzers/a.h"
printf 'static void f(char *b) { snprintf(b, 4, "%%d", 1); }\n' >>"$tmp/good/analyzers/a.c"
# (file names are put together at run time so that this file passes the
# check itself)
md=md
printf '# Notes\n' >"$tmp/good/doc/notes.$md"
printf '/* explained in doc/notes.%s */\n#include <unistd.h>\n' "$md" >"$tmp/good/daemon/d.c"
out=$(sh "$check" "$tmp/good" 2>&1)
ok $? "a clean tree passes"
[ -z "$out" ] || echo "$out" | sed 's/^/# /'

# one bad file per rule
bad="$tmp/bad"
mkdir -p "$bad/analyzers" "$bad/daemon" "$bad/bench"
printf '#include "daemon/sink/json.h"\n' >"$bad/analyzers/inc_daemon.c"
printf '#include "bpf/imbalance.h"\n' >"$bad/analyzers/inc_bpf.c"
printf '#include <unistd.h>\n' >"$bad/analyzers/inc_unistd.c"
printf '#include <sys/stat.h>\n' >"$bad/analyzers/inc_sys.c"
printf '#include <stdio.h>\nvoid f(void) { FILE *f = fopen("x", "r"); (void)f; }\n' >"$bad/analyzers/io_call.c"
printf '#include <stdio.h>\nvoid g(void) { printf("x"); }\n' >"$bad/analyzers/io_printf.c"
printf '/* see the design notes in pelt-spec.%s */\n' "$md" >"$bad/daemon/doc_outside.c"
printf '# the contract: ../sha''red/design/INTERFACES.%s\n' "$md" >"$bad/daemon/local.mk"
printf '# numbers asked by iss''ue 7\n' >"$bad/bench/issue.sh"
printf '# targets (iss''ue\n# 4): 3 %%\n' >"$bad/bench/issue_split.sh"
printf '# --- the sink (own''er: store) ---\n' >"$bad/bench/local.mk"
out=$(sh "$check" "$bad" 2>&1)
rc=$?
[ $rc = 1 ]
ok $? "a tree of bad files fails (exit $rc)"
echo "$out" | sed 's/^/# /'
for f in analyzers/inc_daemon.c analyzers/inc_bpf.c analyzers/inc_unistd.c analyzers/inc_sys.c \
	analyzers/io_call.c analyzers/io_printf.c daemon/doc_outside.c daemon/local.mk \
	bench/issue.sh bench/issue_split.sh bench/local.mk; do
	echo "$out" | grep -q "^$f:"
	ok $? "the bad file $f is reported"
done

# and this tree
out=$(sh "$check" "$top_srcdir" 2>&1)
ok $? "this tree follows the rules"
[ -z "$out" ] || echo "$out" | sed 's/^/# /'

echo "1..$n"
[ $fail = 0 ]

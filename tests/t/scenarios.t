#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# scenarios.t - the analyzers on generated scenarios and recorded fixtures:
# planted patterns found, balanced cases quiet, unfairness within 2 points
# of ground truth (tests/helpers/scenario-check.py does the work; TAP output).
: "${top_srcdir:=.}" "${top_builddir:=.}"
export top_srcdir top_builddir
if ! command -v python3 >/dev/null 2>&1; then
	echo "1..0 # SKIP python3 not found"
	exit 0
fi
exec python3 "$top_srcdir/tests/helpers/scenario-check.py" --quick

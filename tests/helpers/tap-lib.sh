# SPDX-License-Identifier: GPL-2.0-or-later
# tap-lib.sh - the TAP helpers the shell tests share: one numbered
# "ok"/"not ok" line per check, and the skip of a whole test.  Sourced by
# tests/t/*.t (the live ones through live-lib.sh); the sourcing test prints
# the plan "1..$n" when it is done and exits with $fail.

n=0
fail=0

ok() {	# ok EXIT-STATUS NAME
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		fail=1
	fi
}

skip_all() {	# skip_all REASON
	echo "1..0 # SKIP $1"
	exit 0
}

#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench-pelt-accuracy.t - bench/pelt-accuracy.sh --quick records each case
# with `imbalanced record` and prints its live and offline figures (needs
# root for BPF and cgroups), so the benchmark never rots.
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root (BPF, cgroups)"; exit 0; fi
out=$(IMBALANCED=${IMBALANCED:-./imbalanced} sh "${top_srcdir:-.}/bench/pelt-accuracy.sh" --quick 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
. "${top_srcdir:-.}/tests/helpers/tap-lib.sh"
[ $rc = 0 ] && echo "$out" | grep -q '^kernel PELT values from: ' && echo "$out" | grep -q 'entity updates'
ok $? "bench/pelt-accuracy.sh --quick runs (status $rc), says where the kernel's values come from and the engine's cost"
for c in busy periodic multi-group cgroup; do
	# the case's CPU util_avg row: live and offline samples both > 0
	echo "$out" | awk -v c="$c" '
		/^case / { cur = $2; sub(":", "", cur) }
		cur == c && $1 == "cpu" && $2 == "util_avg" && $5 > 0 && $8 > 0 && $10 != "-" { found = 1 }
		END { exit !found }'
	ok $? "case $c: recorded once, live, offline and plain-events figures with samples"
done
# the busy case's workload found in the recording: the hogs process and
# its 3 threads at least (the other new tasks are the host's)
echo "$out" | awk '
	/^case / { cur = $2; sub(":", "", cur) }
	cur == "busy" && /^  new tasks: / && $3 >= 4 { found = 1 }
	END { exit !found }'
ok $? "case busy: the workload's new tasks told from the host's others"
# the cgroup case: its cgroup in the recording, its run queues and
# entities compared (group rows with samples, live and offline)
echo "$out" | grep -q "the bench's cgroup (id [0-9]*) is in the recording's groups" &&
	echo "$out" | awk '
		/^case / { cur = $2; sub(":", "", cur) }
		cur == "cgroup" && ($1 == "group" || $1 == "gr.ent") && $2 == "util_avg" && $5 > 0 && $8 > 0 { n++ }
		END { exit n != 2 }'
ok $? "case cgroup: the bench's cgroup in the recording, its run queues and entity compared"
ls -d /sys/fs/cgroup/cpu/imb-bench-* /sys/fs/cgroup/imb-bench-* /sys/fs/cgroup/unified/imb-bench-* 2>/dev/null | grep -q .
[ $? != 0 ]
ok $? "the bench's cgroup is removed"
echo "1..$n"
exit $fail

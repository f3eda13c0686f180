#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# pelt-avg-only.t - kernel PELT records that carry averages but no sums
# (the sched_pelt_* events of out-of-tree modules such as LISA's) seed the
# engine with sums that keep those averages: a sleeping task seeded at 512
# decays to the kernel's 256 and 128 after 32 and 64 periods, instead of
# collapsing to 0 at the engine's next update.  TAP output.
set -u
IMB=${IMBALANCED:-./imbalanced}
T=$(mktemp -d "${TMPDIR:-/tmp}/pelt-avg-only-t.XXXXXX")
trap 'rm -rf "$T"' EXIT

cat >"$T/avg.events" <<'EOF2'
# imbalanced events v1
1000000 wakeup_new cpu=0 pid=20 tgid=20 prio=120 target_cpu=0 comm=t
1000100 switch cpu=0 prev_pid=0 prev_prio=120 prev_state=R next_pid=20 next_prio=120
2000000 switch cpu=0 prev_pid=20 prev_prio=120 prev_state=S next_pid=0 next_prio=120
3000000 pelt_se cpu=0 pid=20 tgid=20 cgroup_id=0 last_update_time=3000000 period_contrib=0 load_sum=0 runnable_sum=0 util_sum=0 load_avg=512 runnable_avg=512 util_avg=512
35768000 pelt_se cpu=0 pid=20 tgid=20 cgroup_id=0 last_update_time=35768000 period_contrib=0 load_sum=0 runnable_sum=0 util_sum=0 load_avg=256 runnable_avg=256 util_avg=256
68536000 pelt_se cpu=0 pid=20 tgid=20 cgroup_id=0 last_update_time=68536000 period_contrib=0 load_sum=0 runnable_sum=0 util_sum=0 load_avg=128 runnable_avg=128 util_avg=128
EOF2
"$IMB" analyze --json "$T/avg.events" >"$T/out.json" 2>"$T/err"
python3 - "$T/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
ts = r["pelt"]["task_signals"]
ok = True
for sig in ("util_avg", "runnable_avg", "load_avg"):
    s = ts[sig]
    print("# %s: %d samples, max abs error %d" % (sig, s["samples"], s["max_abs_err"]))
    ok = ok and s["samples"] == 2 and s["max_abs_err"] <= 8
print("ok 1 - averages-only kernel records: the seeded task decays as the kernel's (max error <= 8 of 1024)" if ok else
      "not ok 1 - averages-only kernel records: the seeded task decays as the kernel's (max error <= 8 of 1024)")
PY
echo "1..1"

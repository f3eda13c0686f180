#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# detection.sh - how well and how cheaply the analyzers detect what they
# should (issue 5 numbers).
#
# 1. Detection: every scenario (tests/scenarios, the wake-up template for
#    N = 2..16) and the recorded fixtures are analysed; per case and per
#    finding kind: true positives (an expected kind reported), false
#    negatives (expected, not reported), false positives (a kind neither
#    expected nor allowed); per job the reported whole-run unfairness
#    against the ground truth.  Targets: no false positive on the balanced
#    cases, no false negative, unfairness within 2 points.
# 2. Cost: the analyzers' share of the analysis time on a big generated
#    trace (9 tasks on 8 CPUs; --events N, default 2,000,000), from perf
#    samples of the analyzing process: samples in the analyzers' functions
#    (static functions prefixed ovl_ fair_ vr_ mig_ numa_ lost_ evb_ ...)
#    over all of its samples.  Target: at most 30 %.
#
# Usage: bench/detection.sh [--quick] [--events N]
#   --quick: N = 2, 8, 16 wake-up cases, 150,000-event cost trace
#   env: top_srcdir, top_builddir (default: the source and ./), IMBALANCED
set -eu

quick=
events=2000000
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=--quick; events=150000 ;;
	--events) events="$2"; shift ;;
	*) echo "usage: $0 [--quick] [--events N]" >&2; exit 2 ;;
	esac
	shift
done
case "$events" in
''|*[!0-9]*) echo "detection.sh: --events wants a number" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
: "${top_srcdir:=$here/..}" "${top_builddir:=.}"
export top_srcdir top_builddir
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "== detection: expected vs reported findings"
if ! python3 "$top_srcdir/tests/scenario-check.py" $quick --report "$tmp/report.jsonl" \
	> "$tmp/tap.txt"; then
	grep '^not ok' "$tmp/tap.txt" | sed 's/^/  check failed: /' || true
fi
grep '^# analyzer' "$tmp/tap.txt" | sed 's/^# /  /'
echo "  N vs N^2: runnable/util of N periodic tasks on one CPU at the end of the run"
sed -n 's/^# runnable\/util at the end of the run, N: /    N: /p; s/^# \( *[0-9]*:\)/    \1/p' "$tmp/tap.txt"
python3 - "$tmp/report.jsonl" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
kinds = ['overload', 'unfairness', 'vruntime_drift', 'same_task_migrated',
         'migration_pingpong', 'numa_conflict', 'lost_events']
balanced = lambda c: c in ('8on8', 'hogs2on2') or c.startswith('wakeups-stagger')
tot = {k: [0, 0, 0] for k in kinds}
fp_bal = 0
print('  %-20s %-44s %s' % ('case', 'reported', 'TP FP FN'))
for r in rows:
    rep, exp, allow = set(r['reported']), set(r['expect']), set(r['allow'])
    tp = rep & exp
    fn = exp - rep
    fp = rep - exp - allow
    for k in tp: tot[k][0] += 1
    for k in fp: tot[k][1] += 1
    for k in fn: tot[k][2] += 1
    if balanced(r['case']):
        fp_bal += len(fp)
    print('  %-20s %-44s %2d %2d %2d%s%s' % (r['case'], ','.join(sorted(rep)) or '-',
          len(tp), len(fp), len(fn), '  FP: ' + ','.join(sorted(fp)) if fp else '',
          '  FN: ' + ','.join(sorted(fn)) if fn else ''))
print('\n  %-20s %4s %4s %4s' % ('kind', 'TP', 'FP', 'FN'))
for k in kinds:
    print('  %-20s %4d %4d %4d' % (k, *tot[k]))
print('\n  unfairness, whole run: reported vs ground truth')
worst = 0.0
for r in rows:
    for job, u in sorted(r.get('unfairness', {}).items()):
        if u['reported'] is None:
            print('  %-20s job %-8s reported none, truth %.4f' % (r['case'], job, u['truth']))
            worst = 999.0
            continue
        err = abs(u['reported'] - u['truth']) * 100
        worst = max(worst, err)
        print('  %-20s job %-8s reported %.4f truth %.4f error %.2f points' %
              (r['case'], job, u['reported'], u['truth'], err))
fn_all = sum(t[2] for t in tot.values())
print('\n  targets: FP on balanced cases %d (want 0), FN %d (want 0), '
      'worst unfairness error %.2f points (want <= 2)' % (fp_bal, fn_all, worst))
EOF

echo
echo "== cost: the analyzers' share of the analysis time"
if ! command -v perf >/dev/null 2>&1; then
	echo "  perf not found: cost not measured"
	exit 0
fi
# 9 on 8 produces about 2,700 events per second of scenario
ms=$((events * 1000 / 2700))
python3 "$top_srcdir/tests/scenario-gen.py" "$top_srcdir/tests/scenarios/9on8-sync.scn" \
	--duration-ms "$ms" > "$tmp/big.txt"
n=$(grep -vc '^#' "$tmp/big.txt")
if [ -n "${IMBALANCED:-}" ] && [ -x "$IMBALANCED" ] &&
	"$IMBALANCED" analyze --json "$tmp/big.txt" > /dev/null 2>&1; then
	set -- "$IMBALANCED" analyze --json -q "$tmp/big.txt"
else
	set -- "$top_builddir/tests/scn-replay" "$tmp/big.txt"
fi
echo "  trace: $n events; analyzer: $1"
start=$(date +%s%N)
if ! perf record -q -e cpu-clock -F 2000 -o "$tmp/perf.data" -- "$@" > /dev/null 2> "$tmp/perf.err"; then
	echo "  perf record failed: $(tail -1 "$tmp/perf.err")"
	exit 0
fi
end=$(date +%s%N)
perf report -i "$tmp/perf.data" --stdio --sort sym -F overhead,sym --percent-limit 0 \
	2> /dev/null > "$tmp/perf.txt"
python3 - "$tmp/perf.txt" "$n" "$start" "$end" <<'EOF'
import re, sys
prefixes = ('ovl_', 'fair_', 'vr_', 'mig_', 'numa_', 'lost_', 'evb_', 'finding_',
            'cpu_runs_stopper', 'same_partition', 'cfg_llc', 'cfg_node')
total = ana = 0.0
top = []
for line in open(sys.argv[1]):
    m = re.match(r'\s*([\d.]+)%\s+\[[.k]\]\s+(\S+)', line)
    if not m:
        continue
    pct, sym = float(m.group(1)), m.group(2)
    total += pct
    if sym.startswith(prefixes):
        ana += pct
        top.append((pct, sym))
n, t = int(sys.argv[2]), (int(sys.argv[4]) - int(sys.argv[3])) / 1e9
share = 100 * ana / total if total else 0
print('  wall %.2f s (%.0f events/s, under perf)' % (t, n / t if t else 0))
print('  analyzers: %.1f %% of the samples (target <= 30 %%)' % share)
for pct, sym in sorted(top, reverse=True)[:6]:
    print('    %5.1f %%  %s' % (100 * pct / total, sym))
EOF

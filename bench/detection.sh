#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# detection.sh - how well and how cheaply the analyzers detect what they
# should: detection rates per finding kind and the analyzers' cost.
#
# 1. Detection: every scenario (tests/scenarios, the wake-up template for
#    N = 2..16) and the recorded fixtures are analysed; per case and per
#    finding kind: true positives (an expected kind reported), false
#    negatives (expected, not reported), false positives (a kind neither
#    expected nor allowed); per job the reported whole-run unfairness
#    against the ground truth.  Targets: no false positive on the balanced
#    cases, no false negative, unfairness within 2 points.
# 2. Cost: the analyzers' share of the whole `analyze` time, from perf
#    samples with call graphs (DWARF unwinding) of the analyzing process and
#    its children (the trace.dat reader's segment processes): a sample is
#    analyzer work when any frame of its stack is in an analyzer (the
#    overload, fairness, vruntime, migration, numa and lost analyzers'
#    functions, evidence building) or in the pipeline's fairness work
#    (window_fairness, fairness_fill, jobs_build, analyzer_job_key,
#    findings_merge), so the model lookups, libc calls and qsort they make
#    count too.  Two traces: the recorded 2-million-event trace.dat
#    (bench/record-big-trace.sh; the cached /tmp/bench/scratch/big.dat or
#    --trace FILE; recorded when absent and run as root, not in --quick)
#    and a generated one (9 tasks on 8 CPUs; --events N, default
#    2,000,000).  Target: at most 30 %.
#
# Usage: bench/detection.sh [--quick] [--events N] [--trace FILE]
#   --quick: N = 2, 8, 16 wake-up cases, 150,000-event generated trace
#   env: top_srcdir, top_builddir (default: the source and ./), IMBALANCED
set -eu

quick=
events=2000000
trace=
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=--quick; events=150000 ;;
	--events) events="$2"; shift ;;
	--trace) trace="$2"; shift ;;
	*) echo "usage: $0 [--quick] [--events N] [--trace FILE]" >&2; exit 2 ;;
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
if ! python3 "$top_srcdir/tests/helpers/scenario-check.py" $quick --report "$tmp/report.jsonl" \
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
if [ -n "${IMBALANCED:-}" ] && [ -x "$IMBALANCED" ]; then
	imb=$IMBALANCED
elif [ -x "$top_builddir/imbalanced" ]; then
	imb=$top_builddir/imbalanced
else
	echo "  imbalanced not built: cost not measured"
	exit 0
fi
cost_fail=0

# cost LABEL FILE: analyze FILE under perf; print the analyzers' share
cost() {
	n=$("$imb" analyze --json -q "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["events"])')
	echo "  $1: $2, $n events"
	start=$(date +%s%N)
	if ! perf record -q -e cpu-clock -F 2000 --call-graph dwarf,16384 -o "$tmp/perf.data" \
		-- "$imb" analyze --json -q "$2" > /dev/null 2> "$tmp/perf.err"; then
		echo "  perf record failed: $(tail -1 "$tmp/perf.err")"
		cost_fail=1
		return 0
	fi
	end=$(date +%s%N)
	perf script -i "$tmp/perf.data" -F comm,tid,ip,sym 2> /dev/null > "$tmp/perf.txt"
	python3 - "$tmp/perf.txt" "$n" "$start" "$end" <<'PY'
import re, sys
prefixes = ('ovl_', 'fair_', 'vr_', 'mig_', 'numa_', 'lost_', 'evb_', 'finding_',
            'cpu_runs_stopper', 'same_partition', 'cfg_llc', 'cfg_node')
pipeline_fairness = {'window_fairness', 'fairness_fill', 'jobs_build', 'analyzer_job_key',
                     'findings_merge'}

def analyzer(sym):
    sym = sym.split('.')[0]         # ovl_cpu_refresh.isra.0
    return sym.startswith(prefixes) or sym in pipeline_fairness

total = ana = 0
leaf = {}
stack = []
def flush():
    global total, ana
    if not stack:
        return
    total += 1
    if any(analyzer(s) for s in stack):
        ana += 1
        leaf[stack[0]] = leaf.get(stack[0], 0) + 1
for line in open(sys.argv[1]):
    if not line.strip():
        flush()
        stack = []
        continue
    m = re.match(r'\s+[0-9a-f]+\s+(\S+)', line)
    if m:
        stack.append(re.sub(r'\+0x[0-9a-f]+$', '', m.group(1)))
flush()
n, t = int(sys.argv[2]), (int(sys.argv[4]) - int(sys.argv[3])) / 1e9
share = 100.0 * ana / total if total else 0
print('    wall %.2f s under perf (%.0f events/s), %d samples' % (t, n / t if t else 0, total))
print('    analyzers: %.1f %% of the samples (target <= 30 %%)' % share)
print('    where the analyzers\' samples end (leaf function):')
for sym, c in sorted(leaf.items(), key=lambda x: -x[1])[:6]:
    print('      %5.1f %%  %s' % (100.0 * c / total, sym))
PY
}

# the recorded trace
big=${trace:-/tmp/bench/scratch/big.dat}
if [ ! -f "$big" ] && [ -z "$quick" ] && [ -z "$trace" ] && [ "$(id -u)" = 0 ]; then
	mkdir -p /tmp/bench/scratch
	sh "$top_srcdir/bench/record-big-trace.sh" "$big" 2000000 | sed 's/^/  record: /' ||
		rm -f "$big"
fi
if [ -f "$big" ]; then
	cost "recorded trace" "$big"
else
	echo "  recorded trace: $big absent (bench/record-big-trace.sh records it, as root)"
fi

# the generated trace: 9 on 8 produces about 2,700 events per second of scenario
ms=$((events * 1000 / 2700))
python3 "$top_srcdir/tests/helpers/scenario-gen.py" "$top_srcdir/tests/scenarios/9on8-sync.scn" \
	--duration-ms "$ms" > "$tmp/big.txt"
cost "generated trace" "$tmp/big.txt"
exit $cost_fail

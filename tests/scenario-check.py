#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""scenario-check.py - generate every scenario, analyze it, check findings (TAP).

For each tests/scenarios/*.scn: expand it with scenario-gen.py, run the
analyzers on it, and check that every `expect` kind is reported, that no
kind outside `expect` + `allow` is, and that each job's whole-run
unfairness is within 2 points of the generator's ground truth.  The
wakeups template is expanded for N = 2..16 tasks waking together and
staggered: runnable/util must grow with N when they wake together and stay
near 1 when staggered.  The recorded fixtures hogs3on2/hogs2on2 are checked
when the `imbalanced` binary can read them.

The analyzer is `$IMBALANCED analyze --json` when that binary reads the
text event format, else the core-library harness tests/scn-replay.

Usage: scenario-check.py [--quick] [--report FILE]
  --report FILE   also write one JSON line per case (bench/detection.sh)
  env: top_srcdir, top_builddir, IMBALANCED
"""

import json
import os
import subprocess
import sys
import tempfile

SRC = os.environ.get('top_srcdir', os.path.join(os.path.dirname(__file__), '..'))
BUILD = os.environ.get('top_builddir', '.')
GEN = os.path.join(SRC, 'tests', 'scenario-gen.py')
SCN = os.path.join(SRC, 'tests', 'scenarios')
FIX = os.path.join(SRC, 'tests', 'fixtures')
KINDS = ['overload', 'unfairness', 'vruntime_drift', 'same_task_migrated',
         'migration_pingpong', 'numa_conflict', 'lost_events']

n_test = 0
failed = 0
report = []


def ok(cond, name, todo=None):
    global n_test, failed
    n_test += 1
    line = '%s %d - %s' % ('ok' if cond else 'not ok', n_test, name)
    if todo:
        line += ' # TODO ' + todo
    elif not cond:
        failed += 1
    print(line, flush=True)
    return cond


def diag(msg):
    for ln in str(msg).splitlines():
        print('# ' + ln, flush=True)


def imbalanced_reads_text(tmp):
    exe = os.environ.get('IMBALANCED')
    if not exe or not os.access(exe, os.X_OK):
        return None
    probe = os.path.join(tmp, 'probe.txt')
    with open(probe, 'w') as f:
        f.write('1000 wakeup cpu=0 pid=5 prio=120 target_cpu=0 comm=x\n'
                '2000000 runtime cpu=0 pid=5 runtime_ns=1000\n')
    r = subprocess.run([exe, 'analyze', '--json', probe], capture_output=True)
    return exe if r.returncode == 0 else None


def analyze(exe, events, topo=None):
    if exe:
        cmd = [exe, 'analyze', '--json', '-q']
        if topo:
            cmd += ['--topology', topo]
        cmd.append(events)
    else:
        cmd = [os.path.join(BUILD, 'tests', 'scn-replay')]
        if topo:
            cmd += ['--topology', topo]
        cmd.append(events)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError('%s: exit %d: %s' % (' '.join(cmd), r.returncode, r.stderr.strip()))
    d = json.loads(r.stdout)
    if 'runs' in d:
        d = d['runs'][0]
    return d


def generate(scn_path, tmp, name):
    ev = os.path.join(tmp, name + '.txt')
    truth = os.path.join(tmp, name + '.truth.json')
    topo = os.path.join(tmp, name + '.topo')
    with open(ev, 'w') as out:
        subprocess.run([sys.executable, GEN, scn_path, '--truth', truth, '--topology', topo],
                       stdout=out, check=True)
    with open(truth) as f:
        return ev, json.load(f), topo


def job_unfairness(d, tgid):
    for j in d.get('jobs', []):
        if j['key'] == 'process:%s' % tgid:
            return j['unfairness']
    return None


def check_kinds(name, d, expect, allow, todo=None):
    kinds = sorted({f['kind'] for f in d['findings']})
    for k in expect:
        ok(k in kinds, '%s: %s reported' % (name, k), todo)
    extra = [k for k in kinds if k not in expect and k not in allow]
    ok(not extra, '%s: no unexpected finding kinds %s' % (name, extra or ''), todo)
    return kinds


def scenario(exe, tmp, fname):
    name = fname[:-4]
    ev, truth, topo = generate(os.path.join(SCN, fname), tmp, name)
    d = analyze(exe, ev, topo)
    kinds = check_kinds(name, d, truth['expect'], truth['allow'])
    errs = {}
    for tgid, u in truth['unfairness'].items():
        got = job_unfairness(d, tgid)
        errs[tgid] = (got, u)
        ok(got is not None and abs(got - u) <= 0.02,
           '%s: job %s unfairness %s vs truth %.4f (within 2 points)' %
           (name, tgid, 'none' if got is None else '%.4f' % got, u))
    report.append(dict(case=name, expect=truth['expect'], allow=truth['allow'], reported=kinds,
                       unfairness={k: {'reported': v[0], 'truth': v[1]} for k, v in errs.items()}))
    check = CONTENT.get(name)
    if check:
        check(name, d, truth)
    return d


def near(a, b, tol=0.01):
    return a is not None and abs(a - b) <= tol * max(abs(b), 1)


def content_pinned(name, d, truth):
    """3 busy tasks pinned to CPU 0 of node 0 (CPUs 0-1), node 1 = CPUs 2-3 idle."""
    span = d['span_ns']
    lv = [c['idle_with_waiters_by_level'] for c in d['cpus']]
    diag('idle with waiters by level: %s' % lv)
    ok(lv[0].get('node') == 0 and lv[0].get('machine') == 0,
       '%s: the busy CPU 0 is never idle with waiters' % name)
    ok(near(lv[1].get('node'), span) and near(lv[1].get('machine'), span),
       '%s: CPU 1 idle while its node had waiters the whole run (whole-run total)' % name)
    ok(all(lv[c].get('node') == 0 and near(lv[c].get('machine'), span) for c in (2, 3)),
       '%s: CPUs 2-3 idle with waiters on the machine level only' % name)
    ok(all('llc' not in x for x in lv), '%s: no LLC level without an llc column' % name)
    subj = {f['subject'] for f in d['findings'] if f['kind'] == 'overload'}
    ok('node0' in subj and not any(x.startswith('llc') for x in subj),
       '%s: node groups are labelled node, not llc %s' % (name, sorted(subj)))
    wc = d.get('work_conservation')
    if wc is not None:
        ok(near(wc['node']['idle_with_waiters_ns'], span) and
           near(wc['machine']['idle_with_waiters_ns'], 3 * span) and
           near(wc['machine']['fraction_of_cpu_time'], 0.75),
           '%s: run totals per level: node %d, machine %d ns of %d' %
           (name, wc['node']['idle_with_waiters_ns'], wc['machine']['idle_with_waiters_ns'],
            span))
    f = [f for f in d['findings'] if f['kind'] == 'overload' and f['subject'] == 'node0']
    ok(f and near(f[0]['evidence']['idle_with_waiters_ns'], span, 0.02) and
       f[0]['evidence']['imbalance_pct'] == 117,
       '%s: node0 finding: episode idle-with-waiters time and the NUMA imbalance_pct' % name)


CONTENT = {
    'pinned': content_pinned,
}


def wakeups(exe, tmp, quick):
    tpl = open(os.path.join(SCN, 'wakeups.scn.in')).read()
    ns = [2, 8, 16] if quick else list(range(2, 17))
    ratio = {}
    for phase in ('sync', 'stagger'):
        for n in ns:
            run = round(8.0 / n, 1)
            name = 'wakeups-%s-%d' % (phase, n)
            path = os.path.join(tmp, name + '.scn')
            with open(path, 'w') as f:
                f.write(tpl.replace('@N@', str(n)).replace('@PHASE@', phase)
                        .replace('@RUN@', str(run)))
            ev, truth, topo = generate(path, tmp, name)
            d = analyze(exe, ev, topo)
            ratio[phase, n] = d['cpus'][0]['runnable_util_ratio']
            kinds = sorted({f['kind'] for f in d['findings']})
            dis = [f for f in d['findings'] if f['subject'].endswith('threshold')]
            exp = ['overload'] if phase == 'sync' and n >= 8 else []
            report.append(dict(case=name, expect=exp, allow=['overload'], reported=kinds,
                               runnable_util_ratio=ratio[phase, n],
                               disagreement=bool(dis)))
            if phase == 'sync' and n >= 8:
                ok(bool(dis) and dis[0]['evidence'].get('wakeups_simultaneous_pct', 0) > 80,
                   '%s: fixed and scaled thresholds disagree, wake-ups simultaneous' % name)
            if phase == 'stagger':
                ok(not kinds, '%s: no finding %s' % (name, kinds or ''))
    diag('runnable/util at the end of the run, N: sync / stagger')
    for n in ns:
        diag('%2d: %.2f / %.2f' % (n, ratio['sync', n], ratio['stagger', n]))
    ok(all(ratio['stagger', n] < 1.3 for n in ns), 'staggered wake-ups: runnable/util < 1.3 for all N')
    ok(all(ratio['sync', n] >= 0.35 * (n + 1) for n in ns),
       'simultaneous wake-ups: runnable/util >= 0.35 (N + 1) for all N')
    ok(ratio['sync', ns[-1]] > 3 * ratio['sync', ns[0]],
       'simultaneous wake-ups: runnable/util grows with N (%.2f at N=%d, %.2f at N=%d)' %
       (ratio['sync', ns[0]], ns[0], ratio['sync', ns[-1]], ns[-1]))


def fixtures(exe):
    cases = [('hogs3on2', ['overload'], ['vruntime_drift', 'unfairness'], None),
             ('hogs2on2', [], [], None)]
    for name, expect, allow, todo in cases:
        dat = os.path.join(FIX, name + '.dat')
        with open(os.path.join(FIX, name + '.truth.json')) as f:
            truth = json.load(f)
        if not exe:
            ok(True, '%s # SKIP imbalanced analyze not built' % name)
            continue
        try:
            d = analyze(exe, dat)
        except RuntimeError as e:
            ok(False, '%s: analyze: %s' % (name, e))
            continue
        u = truth['unfairness']
        exp = list(expect) + (['unfairness'] if u > 0.10 else [])
        kinds = check_kinds(name, d, exp, allow, todo)
        got = job_unfairness(d, truth['pid'])
        ok(got is not None and abs(got - u) <= 0.02,
           '%s: unfairness %s vs truth %.4f (within 2 points)' %
           (name, 'none' if got is None else '%.4f' % got, u))
        if name == 'hogs3on2':
            subj = {f['subject'] for f in d['findings'] if f['kind'] == 'overload'}
            ok({'cpu0', 'cpu1'} <= subj, 'hogs3on2: overload on both CPUs %s' % sorted(subj))
        report.append(dict(case=name, expect=exp, allow=allow, reported=kinds,
                           unfairness={str(truth['pid']): {'reported': got, 'truth': u}}))


def main(argv):
    quick = '--quick' in argv
    rep = argv[argv.index('--report') + 1] if '--report' in argv else None
    with tempfile.TemporaryDirectory() as tmp:
        exe = imbalanced_reads_text(tmp)
        diag('analyzer: %s' % (exe + ' analyze' if exe else 'tests/scn-replay (core library)'))
        for fname in sorted(os.listdir(SCN)):
            if fname.endswith('.scn'):
                scenario(exe, tmp, fname)
        wakeups(exe, tmp, quick)
        fixtures(exe)
    print('1..%d' % n_test)
    if rep:
        with open(rep, 'w') as f:
            for r in report:
                f.write(json.dumps(r) + '\n')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

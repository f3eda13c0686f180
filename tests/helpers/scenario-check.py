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

SRC = os.environ.get('top_srcdir', os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('top_builddir', '.')
GEN = os.path.join(SRC, 'tests', 'helpers', 'scenario-gen.py')
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
        cmd = [os.path.join(BUILD, 'tests', 'helpers', 'scn-replay')]
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


def content_9on8_sync(name, d, truth):
    """The article's case: the finding names the task the balancer always moves."""
    busy = [t for t in truth['tasks'] if t['busy']]
    top = max(busy, key=lambda t: t['lb_moves'])
    total = sum(t['lb_moves'] for t in busy)
    fair = truth['duration_ns'] * truth['cpus'] / len(busy)   # all always runnable
    lost = fair - top['cpu_ns']
    f = [f for f in d['findings'] if f['kind'] == 'same_task_migrated']
    ev = f[0]['evidence'] if f else {}
    diag('truth: pid %d moved %d of %d times, %.1f ms lost; reported: %s' %
         (top['pid'], top['lb_moves'], total, lost / 1e6, f[0]['summary'] if f else 'none'))
    ok(len(f) == 1 and ev.get('pid') == top['pid'] and
       f[0]['subject'].startswith('pid %d ' % top['pid']),
       '%s: same_task_migrated names pid %d, the task the balancer always moves' %
       (name, top['pid']))
    ok(ev.get('lb_migrations') == top['lb_moves'] and ev.get('lb_migrations_all') == total,
       '%s: with its move count %s of %s (truth %d of %d)' %
       (name, ev.get('lb_migrations'), ev.get('lb_migrations_all'), top['lb_moves'], total))
    ok(near(ev.get('lost_ns'), lost, 0.01),
       '%s: and the CPU time it lost, %.1f ms (truth %.1f ms, within 1 %%)' %
       (name, (ev.get('lost_ns') or 0) / 1e6, lost / 1e6))


def content_drift(name, d, truth):
    f = [f for f in d['findings'] if f['kind'] == 'vruntime_drift']
    want = truth['behind']
    ok(f and f[0]['evidence'].get('behind') == want and
       f[0]['subject'] == 'cpus ' + ','.join(str(c) for c in want),
       '%s: vruntime_drift names the CPUs that fall behind %s (%s)' %
       (name, want, f[0]['subject'] if f else 'none'))


def content_numa(name, d, truth):
    moves = truth['numa_moves']
    onto = {}
    for pid, src, dst in moves:
        onto[dst] = onto.get(dst, 0) + 1
    pid, src, dst = moves[-1]
    nodes = {f['subject']: f for f in d['findings'] if f['kind'] == 'numa_conflict'}
    f = nodes.get('node %d' % dst)
    ok(f and f['evidence']['onto_overloaded'] == onto[dst] and
       f['evidence']['last_destination']['class'] == 'overloaded' and
       f['evidence']['last_source']['node'] == src,
       '%s: numa_conflict names node %d with its %d moves onto it while overloaded, from node %d'
       % (name, dst, onto[dst], src))
    t = [f for s, f in nodes.items() if s.startswith('pid %d ' % pid)]
    ok(t and t[0]['evidence']['last_numa_move'] == [src, dst] and
       t[0]['evidence']['bounces'] >= len(moves),
       '%s: and pid %d, bounced between nodes %d and %d (%s bounces, >= %d undone moves)' %
       (name, pid, src, dst, t[0]['evidence']['bounces'] if t else 'no', len(moves)))


def content_numa_swap(name, d, truth):
    f = [f for f in d['findings'] if f['kind'] == 'numa_conflict' and f['subject'] == 'node 0']
    ev = f[0]['evidence'] if f else {}
    ok(ev.get('numa_swaps') == 4 and ev.get('numa_moves') == 0 and ev.get('onto_overloaded') == 4,
       '%s: each of the 4 swaps put a task onto the overloaded node 0 (%s)' %
       (name, ev.get('onto_overloaded')))
    ok(ev.get('numa_sticks') == 3, '%s: the 3 sched_stick_numa are counted' % name)


def content_nice(name, d, truth):
    by = {t['comm']: t for t in d['tasks']}
    hi, lo = by.get('hi0'), by.get('lo0')
    want = 3121 / (3121 + 1024)
    ok(hi and lo and near(hi['fair_share'], want, 0.01) and near(lo['fair_share'], 1 - want, 0.01),
       '%s: fair share by weight: nice -5 %.3f, nice 0 %.3f (kernel weights: %.3f, %.3f)' %
       (name, hi['fair_share'] if hi else 0, lo['fair_share'] if lo else 0, want, 1 - want))


def content_groups(name, d, truth):
    ok(not [f for f in d['findings'] if f['kind'] == 'unfairness'],
       '%s: by process (one task each) no unfairness finding' % name)


def content_smt(name, d, truth):
    pct = {f['subject']: f['evidence']['imbalance_pct'] for f in d['findings']
           if f['kind'] == 'overload'}
    ok(pct.get('cpu0') == 110 and pct.get('core0') == 117,
       '%s: CPU 0 classified with the SMT imbalance_pct 110, core 0 with the MC one 117 %s' %
       (name, pct))


CONTENT = {
    'smt': content_smt,
    'pinned': content_pinned,
    '9on8-sync': content_9on8_sync,
    'drift': content_drift,
    'numa': content_numa,
    'numa-swap': content_numa_swap,
    'nice': content_nice,
    'groups': content_groups,
}


def group_by(exe, tmp):
    """--group-by comm and cgroup on the groups scenario: one job of three tasks."""
    ev, truth, topo = generate(os.path.join(SCN, 'groups.scn'), tmp, 'groups-by')
    for kind, key, tk in (('comm', 'comm:worker', 'unfairness_comm'),
                          ('cgroup', 'cgroup:7', 'unfairness_cgroup')):
        if not exe:
            ok(True, 'group-by %s # SKIP imbalanced analyze not built' % kind)
            continue
        r = subprocess.run([exe, 'analyze', '--json', '-q', '--group-by', kind, ev],
                           capture_output=True, text=True)
        d = json.loads(r.stdout)
        j = [j for j in d['jobs'] if j['key'] == key]
        u = list(truth[tk].values())[0]
        ok(j and j[0]['kind'] == kind and j[0]['tasks'] == 3 and abs(j[0]['unfairness'] - u) <= 0.02,
           'groups --group-by %s: job %s of 3 tasks, unfairness %s vs truth %.4f' %
           (kind, key, '%.4f' % j[0]['unfairness'] if j else 'none', u))
        ok(any(f['kind'] == 'unfairness' and f['subject'] == 'job %s (whole run)' % key
               for f in d['findings']),
           'groups --group-by %s: the unfairness finding names job %s' % (kind, key))


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


def fail_on(exe):
    """analyze --fail-on: exit 1 at or above the severity, 0 below, 2 for a bad one."""
    cases = [('hogs3on2', 'warning', 1), ('hogs2on2', 'info', 0), ('hogs2on2', 'fatal', 2)]
    for name, sev, want in cases:
        if not exe:
            ok(True, 'fail-on %s # SKIP imbalanced analyze not built' % sev)
            continue
        r = subprocess.run([exe, 'analyze', '-q', '--fail-on', sev,
                            os.path.join(FIX, name + '.dat')], capture_output=True, text=True)
        ok(r.returncode == want and (want != 2 or ('fail-on' in r.stderr and not r.stdout)),
           '%s --fail-on %s: exit %d (want %d)%s' %
           (name, sev, r.returncode, want, ': ' + r.stderr.strip() if want == 2 else ''))


def fixtures(exe):
    cases = [('hogs3on2', ['overload'], ['vruntime_drift'], None),
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
        got = job_unfairness(d, truth['pid'])
        # unfairness is expected exactly when the measured one is above the threshold
        exp = list(expect) + (['unfairness'] if got is not None and got > 0.10 else [])
        kinds = check_kinds(name, d, exp, allow, todo)
        uf = [f for f in d['findings'] if f['kind'] == 'unfairness']
        ok(all(f['value'] > f['threshold'] == 0.10 for f in uf) and
           (not uf or any(abs(f['value'] - got) < 1e-6 for f in uf)),
           '%s: unfairness findings only above the 10 %% threshold, at the measured %.4f' %
           (name, got or 0))
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
        diag('analyzer: %s' % (exe + ' analyze' if exe else 'tests/helpers/scn-replay (core library)'))
        for fname in sorted(os.listdir(SCN)):
            if fname.endswith('.scn'):
                scenario(exe, tmp, fname)
        wakeups(exe, tmp, quick)
        group_by(exe, tmp)
        fixtures(exe)
        fail_on(exe)
    print('1..%d' % n_test)
    if rep:
        with open(rep, 'w') as f:
            for r in report:
                f.write(json.dumps(r) + '\n')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

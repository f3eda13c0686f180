#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""scenario-gen.py - expand a scenario file into the text event format.

A scenario (tests/scenarios/*.scn) describes CPUs, NUMA nodes, tasks with
run/sleep patterns and a scripted timeline (balancer migrations, NUMA
moves).  This program simulates a small CFS-like scheduler over it and
writes the events a tracer would have recorded: sched_switch with R / R+ /
S states, sched_waking + sched_wakeup, sched_migrate_task with the context
of its cause (pull on the destination CPU, the migration/N stopper for
active balance and NUMA moves), sched_stat_runtime at every tick and at
every switch out, sched_move_numa.  The output is deterministic.

Usage: scenario-gen.py SCENARIO.scn [--topology FILE] [--truth FILE]
                       [--duration-ms MS] > events.txt

--duration-ms overrides the scenario's duration (benchmarks: big traces);
--topology writes the `cpu N node M [core C]` file for `analyze --topology`;
--truth writes JSON: every task's CPU time and balancer moves, per
process (and per comm, per cgroup) with two or more always-runnable tasks
unfairness = 1 - min/max of their CPU time, the CPUs whose tasks fall
behind when nothing moves, the NUMA moves; also the expect/allow lines.

Scenario lines (# comments):
  cpus N
  node ID CPULIST                 e.g. node 1 4-7
  smt N                           N hardware threads per core (CPUs 0..N-1 are core 0)
  duration_ms MS
  slice_ms MS                     time slice when tasks share a CPU (3)
  tick_ms MS                      tick: sched_stat_runtime of the running task (4)
  task NAME count=N [tgid=G|each] [nice=N] [cpus=LIST] [comm=C] [cgroup=ID]
       [period_ms=P run_ms=R phase=sync|stagger]
                                  busy unless period_ms is given; N tasks
                                  NAME0..NAME{N-1}, placed round robin on LIST;
                                  tgid=each: a process per task; comm: all
                                  named C; cgroup: the id sched_switch gives
  balance mode=sync|stagger interval_ms=MS [start_ms=MS] [dest=next|pingpong]
                                  every interval, the busiest CPU's waiting task
                                  is pulled by another CPU (sync: on the
                                  interval grid; stagger: jittered instants)
  migrate at_ms=MS task=NAME to=CPU [how=pull|active|affinity]
  numa at_ms=MS task=NAME to=NODE [undo_ms=MS]
                                  a NUMA move (stopper), and if undo_ms, a
                                  balancer pull back that much later
  numa_swap at_ms=MS task=A with=B
                                  sched_swap_numa: A and B trade places (stopper)
  numa_stick at_ms=MS task=NAME to=NODE
                                  sched_stick_numa: a NUMA move that failed
  lost at_ms=MS count=N [cpu=C]   the source reports N lost events
  expect KIND...                  findings this scenario must produce
  allow KIND...                   findings it may produce
"""

import json
import sys

STEP_NS = 100_000          # simulation step: 100 us
STOPPER_PID = 10000        # migration/N has pid STOPPER_PID + N


def cpu_list(text):
    out = []
    for part in text.split(','):
        if '-' in part:
            a, b = part.split('-')
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def kv(words):
    d = {}
    for w in words:
        if '=' not in w:
            raise ValueError('expected key=value, got %r' % w)
        k, v = w.split('=', 1)
        d[k] = v
    return d


class Task:
    def __init__(self, pid, tgid, name, nice, cpu, period_ns, run_ns, phase_ns):
        self.pid, self.tgid, self.name, self.nice = pid, tgid, name, nice
        self.cpu = cpu
        self.period_ns, self.burst_ns, self.phase_ns = period_ns, run_ns, phase_ns
        self.busy = period_ns == 0
        self.state = 'S' if not self.busy else 'R'
        self.left_ns = 0            # periodic: work left in this period
        self.next_wake = phase_ns
        self.run_ns = 0             # truth: CPU time
        self.acct_ns = 0            # last runtime accounting instant
        self.slice_start = 0
        self.comm = name
        self.cgroup = 0
        self.lb_moves = 0           # truth: balancer moves (pull / active)

    @property
    def prio(self):
        return 120 + self.nice


class Sim:
    def __init__(self, sc):
        self.sc = sc
        self.ncpu = sc['cpus']
        self.out = []
        self.curr = [None] * self.ncpu       # Task or None (idle)
        self.queue = [[] for _ in range(self.ncpu)]
        self.tasks = sc['tasks']
        self.t = 0
        self.k = 0                          # events in this step
        self.rng = 12345

    def rand(self, n):
        self.rng = (self.rng * 1103515245 + 12345) & 0x7fffffff
        return self.rng % n

    def emit(self, kind, cpu, **f):
        ts = self.t + min(self.k, 99) * 1000
        self.k += 1
        fields = ' '.join('%s=%s' % (k, v) for k, v in f.items())
        self.out.append('%d %s cpu=%d %s' % (ts, kind, cpu, fields))

    def now(self):
        return self.t + min(self.k, 99) * 1000

    # --- accounting and switches ---
    def account(self, cpu):
        p = self.curr[cpu]
        if p is None or isinstance(p, str):
            return
        now = self.now()
        d = now - p.acct_ns
        if d > 0:
            self.emit('runtime', cpu, pid=p.pid, runtime_ns=d)
            p.run_ns += d
            p.acct_ns = now

    def who(self, p, cpu):
        if p is None:
            return 0, 'swapper/%d' % cpu, 120
        if p == 'stopper':
            return STOPPER_PID + cpu, 'migration/%d' % cpu, 0
        return p.pid, p.comm, p.prio

    def switch(self, cpu, nxt, prev_state):
        prev = self.curr[cpu]
        self.account(cpu)
        pp, pc, pr = self.who(prev, cpu)
        np_, nc, nr = self.who(nxt, cpu)
        f = dict(prev_pid=pp, prev_comm=pc, prev_prio=pr, prev_state=prev_state,
                 next_pid=np_, next_comm=nc, next_prio=nr)
        if isinstance(prev, Task):
            f['prev_tgid'] = prev.tgid
        if isinstance(nxt, Task):
            f['next_tgid'] = nxt.tgid
            if nxt.cgroup:
                f['next_cgroup'] = nxt.cgroup
        self.emit('switch', cpu, **f)
        self.curr[cpu] = nxt
        if isinstance(nxt, Task):
            nxt.acct_ns = self.now()
            nxt.slice_start = self.now()

    def pick(self, cpu, prev_state):
        nxt = self.queue[cpu].pop(0) if self.queue[cpu] else None
        self.switch(cpu, nxt, prev_state)

    def enqueue(self, p, cpu):
        p.cpu = cpu
        if self.curr[cpu] is None:
            self.switch(cpu, p, 'R')
        else:
            self.queue[cpu].append(p)

    def nr(self, cpu):
        return (self.curr[cpu] is not None) + len(self.queue[cpu])

    # --- actions ---
    def wake(self, p):
        cpu = p.cpu
        self.emit('waking', cpu, pid=p.pid, tgid=p.tgid, prio=p.prio, target_cpu=cpu,
                  comm=p.comm)
        self.emit('wakeup', cpu, pid=p.pid, tgid=p.tgid, prio=p.prio, target_cpu=cpu,
                  comm=p.comm)
        p.state = 'R'
        p.left_ns = p.burst_ns
        self.enqueue(p, cpu)

    def migrate(self, p, dest, how):
        src = p.cpu
        if src == dest:
            return
        running = self.curr[src] is p
        if running and how == 'pull':
            how = 'active'
        if how == 'pull':
            self.queue[src].remove(p)
            self.emit('migrate', dest, pid=p.pid, prio=p.prio, orig_cpu=src, dest_cpu=dest,
                      comm=p.comm)
            self.enqueue(p, dest)
            return
        if how == 'affinity':
            if running:
                how = 'active'
            else:
                self.queue[src].remove(p)
                # from a third CPU (the task calling sched_setaffinity)
                other = next((c for c in range(self.ncpu) if c not in (src, dest)), src)
                self.emit('migrate', other, pid=p.pid, prio=p.prio, orig_cpu=src,
                          dest_cpu=dest, comm=p.comm)
                self.enqueue(p, dest)
                return
        # active balance / NUMA move: the stopper of the source CPU pushes it
        prev = self.curr[src]
        if running:
            self.curr[src] = p
            self.switch(src, 'stopper', 'R+')
        else:
            self.queue[src].remove(p)
            if prev is not None:
                self.queue[src].insert(0, prev)
            self.switch(src, 'stopper', 'R+' if prev is not None else 'R')
        self.emit('migrate', src, pid=p.pid, prio=p.prio, orig_cpu=src, dest_cpu=dest,
                  comm=p.comm)
        self.pick(src, 'S')
        self.enqueue(p, dest)

    def numa_move(self, p, node, undo_ns):
        cpus = self.sc['nodes'][node]
        dest = min(cpus, key=lambda c: (self.nr(c), c))
        src = p.cpu
        self.emit('numa_move', src, src_pid=p.pid, src_tgid=p.tgid, src_ngid=0, src_cpu=src,
                  src_nid=self.sc['node_of'][src], dst_pid=0, dst_tgid=0, dst_ngid=0,
                  dst_cpu=dest, dst_nid=node)
        self.migrate(p, dest, 'active')
        if undo_ns:
            self.pending.append((self.t + undo_ns, 'pullback', p, src))

    def numa_swap(self, a, b):
        ca, cb = a.cpu, b.cpu
        self.emit('numa_swap', ca, src_pid=a.pid, src_tgid=a.tgid, src_ngid=0, src_cpu=ca,
                  src_nid=self.sc['node_of'][ca], dst_pid=b.pid, dst_tgid=b.tgid, dst_ngid=0,
                  dst_cpu=cb, dst_nid=self.sc['node_of'][cb])
        self.migrate(a, cb, 'active')
        self.migrate(b, ca, 'active')

    def numa_stick(self, p, node):
        cpus = self.sc['nodes'][node]
        self.emit('numa_stick', p.cpu, src_pid=p.pid, src_tgid=p.tgid, src_ngid=0,
                  src_cpu=p.cpu, src_nid=self.sc['node_of'][p.cpu], dst_pid=0, dst_tgid=0,
                  dst_ngid=0, dst_cpu=cpus[0], dst_nid=node)

    def balance(self, k, mode, dest_mode):
        busiest = max(range(self.ncpu), key=lambda c: (self.nr(c), -c))
        if self.nr(busiest) < 2 or not self.queue[busiest]:
            return
        p = self.queue[busiest][0]
        others = [c for c in range(self.ncpu) if c != busiest]
        least = min(self.nr(c) for c in others)
        cands = [c for c in others if self.nr(c) == least]
        if dest_mode == 'pingpong' and p.last_from is not None and p.last_from in cands:
            dest = p.last_from
        else:
            dest = cands[k % len(cands)]
        p.last_from = busiest
        p.lb_moves += 1
        self.migrate(p, dest, 'pull')

    # --- main loop ---
    def run(self):
        sc = self.sc
        dur = sc['duration_ns']
        slice_ns, tick_ns = sc['slice_ns'], sc['tick_ns']
        for p in self.tasks:
            p.last_from = None
        self.pending = list(sc['actions'])
        self.numa_log = []
        bal = sc.get('balance')
        bal_k, next_bal = 0, None
        if bal:
            next_bal = bal['start_ns']
        # t = 0: a CPU no task starts on shows up idle (so the model knows it);
        # busy tasks appear, periodic ones sleep until their phase
        for cpu in range(self.ncpu):
            if not any(p.busy and p.cpu == cpu for p in self.tasks):
                self.switch(cpu, None, 'R')
        for p in self.tasks:
            if p.busy:
                self.emit('wakeup_new', p.cpu, pid=p.pid, tgid=p.tgid, prio=p.prio,
                          target_cpu=p.cpu, comm=p.comm)
                self.enqueue(p, p.cpu)
        self.t = STEP_NS
        while self.t < dur:
            self.k = 0
            for p in self.tasks:
                if not p.busy and p.state == 'S' and self.t >= p.next_wake:
                    p.next_wake += p.period_ns
                    self.wake(p)
            for a in [a for a in self.pending if a[0] <= self.t]:
                self.pending.remove(a)
                if a[1] == 'migrate':
                    self.migrate(a[2], a[3], a[4])
                elif a[1] == 'lost':
                    self.emit('lost', a[2], count=a[3])
                elif a[1] == 'numa':
                    self.numa_log.append((a[2].pid, self.sc['node_of'][a[2].cpu], a[3]))
                    self.numa_move(a[2], a[3], a[4])
                elif a[1] == 'numa_swap':
                    self.numa_swap(a[2], a[3])
                elif a[1] == 'numa_stick':
                    self.numa_stick(a[2], a[3])
                elif a[1] == 'pullback':
                    p, dest = a[2], a[3]
                    self.migrate(p, dest, 'active' if self.curr[p.cpu] is p else 'pull')
            if bal and self.t >= next_bal:
                self.balance(bal_k, bal['mode'], bal['dest'])
                bal_k += 1
                next_bal = bal['start_ns'] + bal_k * bal['interval_ns']
                if bal['mode'] == 'stagger':
                    next_bal += self.rand(bal['interval_ns'] // 2 // STEP_NS) * STEP_NS
            for cpu in range(self.ncpu):
                p = self.curr[cpu]
                if not isinstance(p, Task):
                    continue
                if not p.busy:
                    p.left_ns -= STEP_NS
                    if p.left_ns <= 0:
                        p.state = 'S'
                        self.pick(cpu, 'S')
                        continue
                if self.queue[cpu] and self.t - p.slice_start >= slice_ns:
                    self.queue[cpu].append(p)
                    self.pick(cpu, 'R+')
            if self.t % tick_ns == 0:
                for cpu in range(self.ncpu):
                    self.account(cpu)
            self.t += STEP_NS
        self.k = 0
        for cpu in range(self.ncpu):
            self.account(cpu)


def parse(path):
    sc = dict(cpus=1, duration_ns=2_000_000_000, slice_ns=3_000_000, tick_ns=4_000_000,
              tasks=[], actions=[], nodes={}, expect=[], allow=[])
    specs = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            words = line.split('#', 1)[0].split()
            if not words:
                continue
            w, rest = words[0], words[1:]
            try:
                if w == 'cpus':
                    sc['cpus'] = int(rest[0])
                elif w == 'smt':
                    sc['smt'] = int(rest[0])
                elif w == 'node':
                    sc['nodes'][int(rest[0])] = cpu_list(rest[1])
                elif w == 'duration_ms':
                    sc['duration_ns'] = int(float(rest[0]) * 1e6)
                elif w == 'slice_ms':
                    sc['slice_ns'] = int(float(rest[0]) * 1e6)
                elif w == 'tick_ms':
                    sc['tick_ns'] = int(float(rest[0]) * 1e6)
                elif w == 'task':
                    specs.append((rest[0], kv(rest[1:])))
                elif w == 'balance':
                    d = kv(rest)
                    sc['balance'] = dict(mode=d.get('mode', 'sync'),
                                         interval_ns=int(float(d['interval_ms']) * 1e6),
                                         start_ns=int(float(d.get('start_ms', 100)) * 1e6),
                                         dest=d.get('dest', 'next'))
                elif w in ('migrate', 'numa', 'lost', 'numa_swap', 'numa_stick'):
                    sc['actions'].append((w, kv(rest)))
                elif w in ('expect', 'allow'):
                    sc[w].extend(rest)
                else:
                    raise ValueError('unknown keyword %r' % w)
            except (ValueError, IndexError, KeyError) as e:
                sys.exit('scenario-gen: %s:%d: %s' % (path, lineno, e))
    if not sc['nodes']:
        sc['nodes'] = {0: list(range(sc['cpus']))}
    sc['node_of'] = {c: n for n, cs in sc['nodes'].items() for c in cs}
    pid = 1000
    byname = {}
    for name, d in specs:
        n = int(d.get('count', 1))
        each = d.get('tgid') == 'each'
        tgid = int(d.get('tgid', pid)) if not each else 0
        cpus = cpu_list(d['cpus']) if 'cpus' in d else list(range(sc['cpus']))
        period = int(float(d.get('period_ms', 0)) * 1e6)
        run = int(float(d.get('run_ms', 0)) * 1e6)
        phase = d.get('phase', 'stagger')
        for i in range(n):
            pid += 1
            if phase == 'sync':
                ph = STEP_NS
            else:
                ph = STEP_NS + (i * period // n) // STEP_NS * STEP_NS if period else 0
            t = Task(pid, pid if each else tgid, '%s%d' % (name, i), int(d.get('nice', 0)),
                     cpus[i % len(cpus)], period, run, ph)
            t.comm = d.get('comm', t.name)
            t.cgroup = int(d.get('cgroup', 0))
            sc['tasks'].append(t)
            byname[t.name] = t
        pid += 10
    acts = []
    for w, d in sc['actions']:
        at = int(float(d['at_ms']) * 1e6) // STEP_NS * STEP_NS
        if w == 'lost':
            acts.append((at, 'lost', int(d.get('cpu', 0)), int(d['count']), None))
            continue
        p = byname[d['task']]
        if w == 'migrate':
            acts.append((at, 'migrate', p, int(d['to']), d.get('how', 'pull')))
        elif w == 'numa_swap':
            acts.append((at, 'numa_swap', p, byname[d['with']], None))
        elif w == 'numa_stick':
            acts.append((at, 'numa_stick', p, int(d['to']), None))
        else:
            acts.append((at, 'numa', p, int(d['to']), int(float(d.get('undo_ms', 0)) * 1e6)))
    sc['actions'] = acts
    return sc


def main(argv):
    args, topo, truth, dur = [], None, None, None
    it = iter(argv[1:])
    for a in it:
        if a == '--duration-ms':
            dur = int(float(next(it)) * 1e6)
        elif a == '--topology':
            topo = next(it)
        elif a == '--truth':
            truth = next(it)
        else:
            args.append(a)
    if len(args) != 1:
        sys.exit(__doc__.split('\n\n')[2])
    sc = parse(args[0])
    if dur:
        sc['duration_ns'] = dur
    sim = Sim(sc)
    sim.run()
    sys.stdout.write('# generated by scenario-gen.py from %s\n' % args[0])
    sys.stdout.write('\n'.join(sim.out) + '\n')
    if topo:
        with open(topo, 'w') as f:
            for c in range(sc['cpus']):
                f.write('cpu %d node %d%s\n' % (c, sc['node_of'].get(c, 0),
                                               ' core %d' % (c // sc['smt']) if sc.get('smt')
                                               else ''))
    if truth:
        def unfair(key):
            jobs = {}
            for p in sc['tasks']:
                if p.busy:
                    jobs.setdefault(key(p), []).append(p.run_ns)
            return {str(g): 1 - min(v) / max(v) for g, v in jobs.items()
                    if len(v) >= 2 and max(v)}
        behind = None
        if not sc.get('balance') and not sc['actions']:
            # nothing moves: a CPU with more busy tasks than the least loaded one falls behind
            n = [sum(1 for p in sc['tasks'] if p.busy and p.cpu == c) for c in range(sc['cpus'])]
            busy = [c for c in range(sc['cpus']) if n[c]]
            behind = [c for c in busy if n[c] > min(n[b] for b in busy)]
        with open(truth, 'w') as f:
            json.dump(dict(tasks=[dict(pid=p.pid, tgid=p.tgid, comm=p.comm, nice=p.nice,
                                       cpu_ns=p.run_ns, busy=p.busy, lb_moves=p.lb_moves)
                                  for p in sc['tasks']],
                           duration_ns=sc['duration_ns'], cpus=sc['cpus'],
                           unfairness=unfair(lambda p: p.tgid),
                           unfairness_comm=unfair(lambda p: p.comm),
                           unfairness_cgroup=unfair(lambda p: p.cgroup),
                           behind=behind, numa_moves=sim.numa_log,
                           expect=sc['expect'], allow=sc['allow']), f)
            f.write('\n')


if __name__ == '__main__':
    main(sys.argv)

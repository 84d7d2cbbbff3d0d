#!/usr/bin/env python3
"""Inclusive costs of a Callgrind profile, counted as callgrind_annotate --inclusive=yes does.

    inclusive.py [--max PERCENT] [--top N] [--event EVENT] CALLGRIND_OUT...

A function's inclusive cost is its self cost plus the inclusive cost of its calls to other
functions (a call of a function to itself, same name including Callgrind's 'N recursion suffix,
is left out, as callgrind_annotate and KCachegrind leave it out; the numbers equal
callgrind_annotate's). Recursion through other functions (a -> b'2 -> a'2 -> b'2) is counted
once per level, as callgrind_annotate and KCachegrind without cycle detection count it, so a
deeply recursive program can pass 100% with a correct call stack.

With --cycles it counts as KCachegrind does by default ("Detect cycles"): the functions of a
cycle of calls (a strongly connected component of the call graph, such as a -> b'2 -> a'2 -> b'2)
are counted together, and each of them gets the cycle's inclusive cost: the self costs of its
functions plus their calls to functions outside the cycle. Then no function can be above 100%
with a correct call stack (a call out of a cycle cannot run inside another call out of the same
cycle: its callee would reach the cycle and belong to it), whatever the recursion depth; a stack
that kept a frame too long still can, where the frame is not in a cycle with what ran after it.

Prints the N functions with the highest inclusive cost as a percentage of the profile's total
(the summary line), highest first, and with --max exits 1 if any function is above PERCENT (a
call stack that Callgrind got wrong counts the costs after a stale frame once per frame:
thousands of percent). Reads .zst through zstd.
"""
import argparse
import collections
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from cgsummary import Names, open_text  # noqa: E402


def inclusive(path, event, cycles=False):
    objs, fns = Names(), Names()
    self_cost = collections.Counter()
    calls = collections.Counter()
    arcs = collections.Counter()  # (caller, callee) -> inclusive cost of the calls
    total = None
    events = None
    npos = 1
    col = 0
    ob = fn = cob = cfn = None
    after_calls = False
    for line in open_text(path):
        if not line:
            continue
        c = line[0]
        if c.isdigit() or c in '+-*':
            if events is None:
                continue
            parts = line.split()
            vals = parts[npos:]
            v = int(vals[col]) if col < len(vals) else 0
            if after_calls:
                if cfn != fn:
                    calls[fn] += v
                    arcs[(fn, cfn)] += v
                after_calls = False
            else:
                self_cost[fn] += v
            continue
        if line.startswith('positions:'):
            npos = len(line.split()[1:])
        elif line.startswith('events:'):
            events = line.split()[1:]
            col = events.index(event) if event else 0
        elif line.startswith('summary:') or line.startswith('totals:'):
            total = int(line.split()[1:][col])
        elif line.startswith('ob='):
            ob = os.path.basename(objs.get(line[3:]))
        elif line.startswith('fn='):
            fn = (ob, fns.get(line[3:]))
            cob = None
        elif line.startswith('cob='):
            cob = os.path.basename(objs.get(line[4:]))
        elif line.startswith('cfn='):
            cfn = (cob if cob is not None else ob, fns.get(line[4:]))
        elif line.startswith('calls='):
            after_calls = True
            cob = None
        elif line.startswith('jfn='):
            fns.get(line[4:])
        elif line.startswith('jcob='):
            objs.get(line[5:])
        elif line.startswith(('cfi=', 'cfl=', 'fi=', 'fe=', 'fl=', 'jfi=')):
            pass
    if total is None:
        total = sum(self_cost.values())
    incl = {f: self_cost[f] + calls[f] for f in set(self_cost) | set(calls)}
    if cycles:
        comp = components(set(incl) | {g for _, g in arcs}, arcs)
        cycle_incl = collections.Counter()
        for f in incl:
            cycle_incl[comp[f]] += self_cost[f]
        for (f, g), v in arcs.items():
            if comp[f] != comp[g]:
                cycle_incl[comp[f]] += v
        sizes = collections.Counter(comp.values())
        incl = {f: cycle_incl[comp[f]] if sizes[comp[f]] > 1 else v for f, v in incl.items()}
    return total, incl, self_cost


def components(nodes, arcs):
    """Strongly connected components of the call graph (Tarjan's, iterative): node -> index."""
    succ = collections.defaultdict(list)
    for f, g in arcs:
        succ[f].append(g)
    index, low, comp = {}, {}, {}
    stack, on_stack = [], set()
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp[w] = v
                    if w == v:
                        break
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return comp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--max', type=float, help='exit 1 if a function is above PERCENT inclusive')
    ap.add_argument('--top', type=int, default=10)
    ap.add_argument('--event', default=None, help='event name (default: the first)')
    ap.add_argument('--expect-over', action='store_true',
                    help='with --max: exit 0 only if some function IS above PERCENT (a negative '
                         'control: a missing file or a crash still fails)')
    ap.add_argument('--cycles', action='store_true',
                    help='count the functions of a cycle of calls together, as KCachegrind does '
                         'by default (Detect cycles)')
    ap.add_argument('profile', nargs='+')
    args = ap.parse_args()
    status = 0
    for path in args.profile:
        total, incl, self_cost = inclusive(path, args.event, args.cycles)
        if not total:
            print(f'inclusive.py: {path}: no costs', file=sys.stderr)
            status = 1
            continue
        top = sorted(incl.items(), key=lambda kv: (-kv[1], kv[0]))
        print(f'{path}: total {total}')
        for (ob, name), v in top[:args.top]:
            print(f'  {100.0 * v / total:10.2f}% incl {100.0 * self_cost[(ob, name)] / total:7.2f}% '
                  f'self  {ob}:{name}')
        if args.max is not None:
            over = [(f, v) for f, v in top if 100.0 * v / total > args.max]
            for (ob, name), v in over:
                print(f'inclusive.py: {path}: {ob}:{name} has {100.0 * v / total:.2f}% inclusive '
                      f'cost, expected at most {args.max}%', file=sys.stderr)
            if over != [] and not args.expect_over:
                status = 1
            if over == [] and args.expect_over:
                print(f'inclusive.py: {path}: expected a function above {args.max}% inclusive, '
                      f'found none', file=sys.stderr)
                status = 1
    sys.exit(status)


if __name__ == '__main__':
    main()

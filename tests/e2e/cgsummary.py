#!/usr/bin/env python3
"""Canonical summary of Callgrind output files, for comparing captures.

    cgsummary.py [--objects REGEX] FILE...

Prints one sorted line per function (self cost per event) and per call edge (call count and
inclusive cost), named "object-basename:function" (the object's basename, so that captures taken
in different directories compare), then the summary line. --objects keeps only functions whose
"object-basename:function" name matches REGEX (both ends of an edge are kept if either matches).
--incl-objects REGEX prints an edge's inclusive cost only when the callee's name matches (the
inclusive cost of main, or of anything reaching libc's thread synchronisation, varies between
runs; call counts do not).
Reads .zst files through the zstd command.
"""
import argparse
import collections
import os
import re
import subprocess
import sys


def open_text(path):
    if path.endswith('.zst'):
        return subprocess.run(['zstd', '-dc', path], check=True, capture_output=True,
                              text=True).stdout.splitlines()
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read().splitlines()


class Names:
    """Callgrind's name compression: "(id) name" defines, "(id)" refers."""

    def __init__(self):
        self.table = {}

    def get(self, text):
        m = re.match(r'^\((\d+)\)(?: (.*))?$', text)
        if not m:
            return text
        if m.group(2) is not None:
            self.table[m.group(1)] = m.group(2)
        return self.table[m.group(1)]


def summarize(lines):
    objs, files, fns = Names(), Names(), Names()
    npos = 1
    events = []
    self_cost = collections.defaultdict(lambda: collections.Counter())
    calls = collections.defaultdict(lambda: [0, collections.Counter()])
    summary = totals = None
    ob = fn = None
    cob = cfn = None
    pending_call = None
    for line in lines:
        if not line or line[0] == '#':
            continue
        if line.startswith('positions:'):
            npos = len(line.split()[1:])
        elif line.startswith('events:'):
            events = line.split()[1:]
        elif line.startswith('summary:'):
            summary = line.split()[1:]
        elif line.startswith('totals:'):
            totals = line.split()[1:]
        elif line.startswith('ob='):
            ob = os.path.basename(objs.get(line[3:]))
        elif line.startswith(('fl=', 'fi=', 'fe=')):
            files.get(line[3:])
        elif line.startswith('fn='):
            fn = ob + ':' + fns.get(line[3:])
            cob = None
        elif line.startswith('cob='):
            cob = os.path.basename(objs.get(line[4:]))
        elif line.startswith(('cfi=', 'cfl=', 'jfi=')):
            files.get(line[4:])
        elif line.startswith('jfn='):
            fns.get(line[4:])
        elif line.startswith('cfn='):
            cfn = fns.get(line[4:])
        elif line.startswith('calls='):
            pending_call = int(line[6:].split()[0])
        elif line.startswith(('jump=', 'jcnd=')):
            pass
        elif line[0] in '0123456789+-*':
            parts = line.split()
            costs = [int(x) for x in parts[npos:]]
            if pending_call is not None:
                callee = (cob if cob is not None else ob) + ':' + cfn
                edge = calls[(fn, callee)]
                edge[0] += pending_call
                for ev, c in zip(events, costs):
                    edge[1][ev] += c
                pending_call = None
                cob = None
            else:
                for ev, c in zip(events, costs):
                    self_cost[fn][ev] += c
        # other header lines (version, creator, pid, cmd, part, desc, ...) are not compared
    return events, self_cost, calls, summary or totals


def cost_text(events, counter):
    return ' '.join('%s=%d' % (ev, counter[ev]) for ev in events)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--objects', default=None)
    ap.add_argument('--incl-objects', default=None)
    ap.add_argument('files', nargs='+')
    args = ap.parse_args()
    keep = re.compile(args.objects) if args.objects else None
    incl = re.compile(args.incl_objects) if args.incl_objects else None

    def kept(name):
        return keep is None or keep.search(name)

    for path in args.files:
        events, self_cost, calls, summary = summarize(open_text(path))
        out = []
        for fn, cost in self_cost.items():
            if kept(fn):
                out.append('fn %s %s' % (fn, cost_text(events, cost)))
        for (caller, callee), (count, cost) in calls.items():
            if kept(caller) or kept(callee):
                show = incl is None or incl.search(callee)
                out.append('call %s -> %s calls=%d%s' % (
                    caller, callee, count, ' ' + cost_text(events, cost) if show else ''))
        print('# %s' % re.sub(r'\.zst$', '', os.path.basename(path)))
        for line in sorted(out):
            print(line)
        if keep is None:
            print('summary %s' % ' '.join(summary or []))


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Checks a Callgrind profile's inclusive costs against the callers a program's source gives.

    callers.py [--pair CALLEE=CALLER]... [--entry NAME=PERCENT]... [--show NAME]... PROFILE

--pair: CALLEE has one caller in the source, CALLER; its inclusive cost must not be larger than
CALLER's. --entry: NAME's inclusive cost must be at least PERCENT of the profile's total, or, as
NAME=PERCENT%OTHER, at least PERCENT of OTHER's self cost (OTHER one name or several joined by
'+', summed: the functions that do the program's work under NAME). --most NAME=PERCENT%OTHER:
NAME's inclusive cost must be at most PERCENT of OTHER's self cost (a frame that goes on
collecting cost while its stack is suspended fails it), in the readings --readings names (default
all). --only-caller CALLEE=CALLER: KCachegrind's calls into CALLEE come from CALLER only (or
CALLEE itself): code that ran after its frame was left shows as called by the function whose
frame it ran in instead. NAME is a function
name as the profile spells it (without Callgrind's 'N recursion suffix, whose levels are counted
together); every function of that name counts, whatever its file and object. --show prints NAME's numbers without checking them.

Each check is made in four readings of the profile, as its consumers read it:
  annotate   callgrind_annotate --inclusive=yes (run; the largest of a function's file:function
             entries)
  plain      the same count done here (inclusive.py): self cost plus calls to other functions
  cycles     KCachegrind's default, cycle detection: a cycle of calls counts together
             (inclusive.py --cycles)
  kcachegrind  KCachegrind's TraceFunction::update: the calls into a function when it is
             called, else its self cost plus its calls (tests/cli/kcachegrind_reading.py)
A function's levels of recursion ('2, '3) are summed in every reading but annotate, which leaves
them apart. Prints each name's costs; exits 1 if a check fails in any reading, 2 if a name is
missing from the profile.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', '..', 'cli'))
from inclusive import inclusive  # noqa: E402
import kcachegrind_reading  # noqa: E402

LEVEL = re.compile(r"'[0-9]+$")


def base_name(name):
    return LEVEL.sub('', name)


def by_name(costs, key_name):
    out = collections.Counter()
    for key, v in costs.items():
        out[base_name(key_name(key))] += v
    return out


def annotate_reading(path):
    """callgrind_annotate --inclusive=yes: name -> inclusive, summed over file:function lines."""
    # From a directory of its own: callgrind_annotate shortens file names under the working
    # directory, and then splits a function whose fl= and cfi= spell its file differently.
    with tempfile.TemporaryDirectory() as cwd:
        text = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100',
                               '--auto=no', os.path.abspath(path)], check=True,
                              capture_output=True, text=True, errors='replace', cwd=cwd).stdout
    out = collections.Counter()
    started = False
    for line in text.splitlines():
        if 'file:function' in line:
            started = True
            continue
        m = re.match(r'^\s*([0-9,]+) \(\s*[0-9.]+%\)\s+(.*?)(?: \[[^]]*\])?$', line)
        if not started or not m or 'PROGRAM TOTALS' in line:
            continue
        fn = m.group(2)
        # file:function; a file name has no ':' here (paths, ???)
        fn = fn.split(':', 1)[1] if ':' in fn else fn
        if LEVEL.search(fn):
            continue  # annotate leaves recursion levels apart: the outermost counts
        # A function's lines in other files (fi=, fe=: inlined code, or a call through a PLT
        # stub, file ???) make entries of their own, and the function's own entry counts their
        # calls too: the largest entry is the function's.
        out[fn] = max(out[fn], int(m.group(1).replace(',', '')))
    return out


def kcachegrind_inclusive(path, callers_out=None):
    reading = kcachegrind_reading.Reading(functions_only=True)
    loader = kcachegrind_reading.Loader(reading)
    with open(path, 'rb') as f:
        for raw in f:
            loader.line(raw.decode('utf-8', 'surrogateescape').rstrip('\r\n'))
    called = collections.defaultdict(collections.Counter)
    calling = collections.defaultdict(collections.Counter)
    for (caller, callee), _ in reading.call_count.items():
        if callers_out is not None:
            callers_out[base_name(callee[0])].add(base_name(caller[0]))
        if caller == callee:
            continue
        called[callee].update(reading.call_cost[(caller, callee)])
        calling[caller].update(reading.call_cost[(caller, callee)])
    event = loader.events[0] if loader.events else None
    out = collections.Counter()
    for key in reading.first_names:
        costs = called[key] if key in called else (
            collections.Counter(reading.self_cost.get(key, {})) + calling.get(key, collections.Counter()))
        out[base_name(key[0])] += costs.get(event, 0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--pair', action='append', default=[], metavar='CALLEE=CALLER')
    ap.add_argument('--entry', action='append', default=[], metavar='NAME=PERCENT[%OTHER]')
    ap.add_argument('--most', action='append', default=[], metavar='NAME=PERCENT%OTHER')
    ap.add_argument('--only-caller', action='append', default=[], metavar='CALLEE=CALLER')
    ap.add_argument('--readings', default=None,
                    help='comma-separated readings for --most (default: all)')
    ap.add_argument('--show', action='append', default=[], metavar='NAME')
    ap.add_argument('profile')
    args = ap.parse_args()

    callers_of = collections.defaultdict(set)  # KCachegrind's calls: callee -> callers
    total, plain, self_cost = inclusive(args.profile, None)
    _, cycles, _ = inclusive(args.profile, None, cycles=True)
    readings = {
        'annotate': annotate_reading(args.profile),
        'plain': by_name(plain, lambda k: k[1]),
        'cycles': by_name(cycles, lambda k: k[1]),
        'kcachegrind': kcachegrind_inclusive(args.profile, callers_of),
    }
    selfs = by_name(self_cost, lambda k: k[1])

    pairs = [p.split('=', 1) for p in args.pair]
    entries = []
    for e in args.entry:
        name, spec = e.split('=', 1)
        percent, _, other = spec.partition('%')
        entries.append((name, float(percent), [o for o in other.split('+') if o]))
    mosts = []
    for e in args.most:
        name, spec = e.split('=', 1)
        percent, _, other = spec.partition('%')
        mosts.append((name, float(percent), [o for o in other.split('+') if o]))
    only = [p.split('=', 1) for p in args.only_caller]
    names = sorted({n for p in pairs + only for n in p} | {e[0] for e in entries + mosts} |
                   {o for e in entries + mosts for o in e[2]} | set(args.show))
    missing = [n for n in names if n not in readings['plain']]
    if missing:
        print(f'callers.py: {args.profile}: no function named {", ".join(missing)}',
              file=sys.stderr)
        sys.exit(2)

    print(f'{args.profile}: total {total}')
    print(f'  {"":40} ' + ' '.join(f'{r:>12}' for r in readings) + f' {"self":>12}')
    for n in names:
        print(f'  {n[:40]:40} ' + ' '.join(
            f'{100.0 * readings[r][n] / total:11.2f}%' for r in readings) +
            f' {100.0 * selfs[n] / total:11.2f}%')

    failed = False
    for callee, caller in pairs:
        for r, incl in readings.items():
            if incl[callee] > incl[caller]:
                print(f'callers.py: {r}: {callee} has {incl[callee]} inclusive, more than its '
                      f'caller {caller} ({incl[caller]})', file=sys.stderr)
                failed = True
    for name, percent, others in entries:
        for r, incl in readings.items():
            whole = sum(selfs[o] for o in others) if others else total
            what = '+'.join(others) + ' self' if others else 'the total'
            if incl[name] < percent / 100.0 * whole:
                print(f'callers.py: {r}: {name} has {incl[name]} inclusive, less than {percent}% '
                      f'of {what} ({whole})', file=sys.stderr)
                failed = True
    for callee, caller in only:
        others = sorted(c for c in callers_of[callee] if c not in (caller, callee))
        if others:
            print(f'callers.py: kcachegrind: {callee} is called by {", ".join(others)} too, not '
                  f'only by {caller}', file=sys.stderr)
            failed = True
    most_readings = args.readings.split(',') if args.readings else list(readings)
    for name, percent, others in mosts:
        for r, incl in readings.items():
            if r not in most_readings:
                continue
            work = sum(selfs[o] for o in others)
            if incl[name] > percent / 100.0 * work:
                print(f'callers.py: {r}: {name} has {incl[name]} inclusive, more than {percent}% '
                      f'of {"+".join(others)} self ({work}): it collected cost while it did not '
                      f'run', file=sys.stderr)
                failed = True
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()

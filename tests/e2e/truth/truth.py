#!/usr/bin/env python3
"""The truth check of a runtime's call graph: is what KCachegrind shows what the program did?

    truth.py RUNTIME WORK_PROFILE BASELINE_PROFILE [--assert CHECK,...] [--json FILE]
    truth.py --expect RUNTIME N

WORK_PROFILE is `cg-inject record`'s injected profile of the runtime's chain program (README.md)
run with N > 0, BASELINE_PROFILE the profile of the same program run with N = 0 (the same
start-up, main called, no work). Both are read as KCachegrind reads them
(tests/cli/kcachegrind_reading.py). The bound counts inclusive costs as KCachegrind does by
default, with cycle detection (tests/e2e/callgraph/inclusive.py --cycles: the functions of a
cycle of calls count together); chain and entry without it (with it, every function of a cycle
shows the cycle's cost, and the runtimes' start-up puts the program's functions in one).

The checks (the first event, Ir):
- bound: no function above 100% of the profile's total (each function as KCachegrind lists it,
  recursion levels 'N apart).
- chain: inclusive(caller) >= inclusive(callee) for every pair of the program's functions where
  the source gives the callee exactly one caller (main -> a -> b -> leaf, main -> rec,
  main -> invoke -> cb, and the runtime's extra pairs), each function's outermost level (its
  name without 'N) with its versions in several ELF images, which KCachegrind lists apart,
  summed.
- entry: inclusive(entry) >= 90% of the program's own cost. The program's own cost is the cost
  of running its work: the total of WORK_PROFILE minus the total of BASELINE_PROFILE, so
  everything the runtime does to start and stop (loading, its own code, compiling the start-up
  code) is left out, and nothing depends on the call stack Callgrind drew. It does include work
  the program causes on other threads (a JIT compiler thread optimizing main, the garbage
  collector), which no call stack puts under main: the programs do enough work to keep that
  small. The entry is the program's main function, where the runtime calls the user's code
  (PHP: php_execute_script, see flat).
- annotate: the chain's pairs as callgrind_annotate --inclusive=yes counts them (no cycle
  detection, each recursion level apart); for PHP and MoarVM, the entry's inclusive cost.
- flat (PHP, MoarVM): no call between two PHP functions. PHP's JIT makes no machine call from one PHP
  function to another (docs/call-tracking.md): a call edge between two PHP functions would be
  one that cg-inject or Callgrind invented.

Prints one line per check with the measured numbers, and with --json writes them for table.sh.
Exits 1 if a check named in --assert fails, 2 on bad input. Every check is computed and printed
whether asserted or not.
--expect RUNTIME N prints what the program prints for N (a reference implementation).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'cli'))
sys.path.insert(0, os.path.join(HERE, '..', 'callgraph'))
import kcachegrind_reading  # noqa: E402
from inclusive import components  # noqa: E402

BASE_CHAIN = [('main', 'a'), ('a', 'b'), ('b', 'leaf'), ('main', 'rec'), ('main', 'invoke'),
              ('invoke', 'cb')]

# Per runtime: how a program function is spelled in the injected profile (a regular expression
# on KCachegrind's function name, with the function's id in group 'f'), the entry, the pairs.
RUNTIMES = {
    'node': dict(name=r"(?:JS:[*~^+]?)?(?P<f>main|a|b|leaf|rec|cb|invoke)", file='chain.js',
                 entry='main', chain=BASE_CHAIN),
    'java': dict(name=r"(?:\S+ )?Chain\.(?P<f>main|a|b|leaf|rec|cb|invoke)\(.*\)",
                 entry='main', chain=BASE_CHAIN),
    'php': dict(name=r"(?P<f>main|a|b|leaf|rec|cb|invoke|mapped)", file='chain.php',
                entry='php_execute_script', flat=True, chain=[]),
    'erlang': dict(name=r"chain:(?P<f>main|a|b|leaf|rec|cb|invoke|work|round_trip|serve|"
                        r"server_loop|loop_a|loop_rec|loop_cb|loop_trip)/\d+",
                   entry='main',
                   chain=[('main', 'loop_a'), ('loop_a', 'a'), ('a', 'b'), ('main', 'loop_rec'),
                          ('loop_rec', 'rec'), ('main', 'loop_cb'), ('loop_cb', 'invoke'),
                          ('invoke', 'cb'), ('main', 'loop_trip'), ('loop_trip', 'round_trip'),
                          ('round_trip', 'work'), ('server_loop', 'serve')]),
    'mono': dict(name=r"Chain:(?P<f>Main|A|B|Leaf|Rec|Cb|Invoke) \(.*\)", entry='Main',
                 chain=[(x.capitalize(), y.capitalize()) for x, y in BASE_CHAIN]),
    'moarvm': dict(name=r"(?P<f>main|a|b|leaf|rec|cb|invoke)", file='chain.raku',
                   entry='MVM_interp_run', flat=True, chain=[]),
}

ENTRY_SHARE = (90.0, 103.0)


def expected_output(runtime, n):
    if n is None:
        return ''
    def leaf(i):
        x = i
        for k in range(20):
            x = (x * 31 + k) % 1000003
        return x

    def rec(m):
        s = 1
        for k in range(2, m + 1):
            s += k % 7
        return s
    s = sum(leaf(i) + 2 for i in range(n)) + (n // 100) * rec(60)
    s += sum((v * 17) % 101 + 1 for v in range(n))
    if runtime == 'php':
        s += sum(leaf(v) % 13 for v in range(n // 10 + 1))
    if runtime == 'erlang':
        s += sum(leaf(v + 7) % 17 + v % 13 for v in range(n // 10))
    return str(s)


def read(path):
    reading = kcachegrind_reading.Reading(functions_only=True)
    loader = kcachegrind_reading.Loader(reading)
    total = None
    with open(path, 'rb') as f:
        for raw in f:
            line = raw.decode('utf-8', 'surrogateescape').rstrip('\r\n')
            if line.startswith(('summary:', 'totals:')):
                total = int(line.split()[1])  # Callgrind writes totals: last: it wins
            loader.line(line)
    return reading, loader.events, total


ANNOTATE_LINE = re.compile(r'\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*?)(?: \[([^\]]*)\])?')


def annotate_inclusive(path):
    """Each function's inclusive cost of the first event as callgrind_annotate --inclusive=yes
    prints it, by (name, file, object) ('???' is no file)."""
    out = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100',
                          '--auto=no', path], check=True, capture_output=True,
                         text=True, errors='surrogateescape').stdout
    costs = {}
    listing = False
    for line in out.splitlines():
        if line.rstrip().endswith('file:function'):
            listing = True
            continue
        m = ANNOTATE_LINE.fullmatch(line) if listing else None
        if not m:
            continue
        file, _, name = m.group(2).partition(':')
        key = (name, '' if file == '???' else file, m.group(3) or '')
        costs[key] = costs.get(key, 0) + int(m.group(1).replace(',', ''))
    return costs


class View:
    """A profile as KCachegrind shows it (functions by name, file and object; recursion levels
    'N apart): each function's inclusive cost with cycle detection, KCachegrind's default (a
    function in a cycle of calls gets the cycle's cost), and without it (TraceFunction::update:
    the sum of the calls into the function, or for one nothing calls its self cost plus its
    calls, kcachegrind_reading.py --inclusive); and the size of the cycle each function is in."""

    def __init__(self, reading, event):
        self.self_cost = collections.Counter()
        self.arcs = collections.Counter()
        for key, costs in reading.self_cost.items():
            self.self_cost[key] += costs.get(event, 0)
        for (caller, callee), costs in reading.call_cost.items():
            if caller != callee:  # KCachegrind leaves out a function's calls to itself
                self.arcs[(caller, callee)] += costs.get(event, 0)
        nodes = set(self.self_cost) | {f for f, _ in self.arcs} | {g for _, g in self.arcs}
        self.comp = components(nodes, self.arcs)
        sizes = collections.Counter(self.comp.values())
        cycle_cost = collections.Counter()
        calls_out, calls_in = collections.Counter(), collections.Counter()
        for f in nodes:
            cycle_cost[self.comp[f]] += self.self_cost[f]
        for (f, g), v in self.arcs.items():
            calls_out[f] += v
            calls_in[g] += v
            if self.comp[f] != self.comp[g]:
                cycle_cost[self.comp[f]] += v
        self.cycle_size = {f: sizes[self.comp[f]] for f in nodes}
        self.incl = {f: cycle_cost[self.comp[f]] if sizes[self.comp[f]] > 1
                     else self.self_cost[f] + calls_out[f] for f in nodes}
        self.incl_plain = {f: calls_in[f] if f in calls_in else self.self_cost[f] + calls_out[f]
                           for f in nodes}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--expect', nargs=2, metavar=('RUNTIME', 'N'))
    ap.add_argument('--assert', dest='asserted', default='')
    ap.add_argument('--json')
    ap.add_argument('args', nargs='*')
    args = ap.parse_args()
    if args.expect:
        n = args.expect[1]
        print(expected_output(args.expect[0], int(n) if n != '-' else None))
        return
    if len(args.args) != 3 or args.args[0] not in RUNTIMES:
        ap.error('expected RUNTIME WORK_PROFILE BASELINE_PROFILE, RUNTIME one of '
                 + ', '.join(RUNTIMES))
    runtime, work_path, base_path = args.args
    spec = RUNTIMES[runtime]
    reading, events, total = read(work_path)
    base_reading, _, base_total = read(base_path)
    if not events or not total or base_total is None:
        print(f'truth.py: {work_path} or {base_path}: no events or totals', file=sys.stderr)
        sys.exit(2)
    event = events[0]
    name_re = re.compile(spec['name'] + r"(?P<level>'\d+)?")

    def program_function(key):
        """The program function a KCachegrind function is (any recursion level), or None."""
        name, file, obj = key
        m = name_re.fullmatch(name)
        # JIT code: named after its perf map, or in an ELF image of a jitdump's code (or unnamed).
        if not m or not (obj == '' or obj.endswith(('.map', '.dump', '.elf'))):
            return None
        if file and 'file' in spec and spec['file'] not in file:
            return None
        return m.group('f')

    def outermost(view, f):
        """The keys KCachegrind lists for f's outermost level: its name without 'N, one per
        ELF image its versions sit in (a runtime function such as PHP's entry by its name)."""
        if spec.get('flat') and f == spec['entry']:
            return [k for k in view.incl if k[0] == f]
        return [k for k in view.incl if "'" not in k[0] and program_function(k) == f]

    def incl_of(view, f):
        return sum(view.incl_plain[k] for k in outermost(view, f))

    work = View(reading, event)
    base = View(base_reading, event)
    results = collections.OrderedDict()

    top = max(work.incl, key=lambda k: work.incl[k])
    top_pct = 100.0 * work.incl[top] / total
    results['bound'] = dict(ok=top_pct <= 100.0, value=round(top_pct, 2), function=top[0],
                            text=f'max {top_pct:.2f}% inclusive ({top[0]})')

    pairs = []
    for caller, callee in spec['chain']:
        if not outermost(work, caller) or not outermost(work, callee):
            pairs.append(dict(caller=caller, callee=callee, ok=False, text=(
                f'{caller} -> {callee}: ' + ' and '.join(
                    f for f in (caller, callee) if not outermost(work, f)) + ' not in the profile')))
            continue
        c, d = incl_of(work, caller), incl_of(work, callee)
        pairs.append(dict(caller=caller, callee=callee, caller_ir=c, callee_ir=d, ok=c >= d,
                          text=f'{caller} {100.0 * c / total:.2f}% < {callee} '
                               f'{100.0 * d / total:.2f}%'))
    bad = [p['text'] for p in pairs if not p['ok']]
    if spec['chain']:
        results['chain'] = dict(ok=not bad, pairs=pairs,
                                text='; '.join(bad) if bad else f'{len(pairs)} pairs hold')

    # The entry: the cost the work adds under it, against the cost the work adds to the run.
    own = total - base_total
    entry_work, entry_base = incl_of(work, spec['entry']), incl_of(base, spec['entry'])
    share = 100.0 * (entry_work - entry_base) / own if own > 0 else 0.0
    cycle = max((work.cycle_size[k] for k in outermost(work, spec['entry'])), default=0)
    ok = own > 0 and ENTRY_SHARE[0] <= share <= ENTRY_SHARE[1]
    text = (f"{spec['entry']} {share:.2f}% of the program's own cost ({entry_work:,} - "
            f'{entry_base:,} of {total:,} - {base_total:,} Ir)')
    if cycle > 1:
        text += (f'; with cycle detection it is in a cycle of {cycle} functions, '
                 f'{100.0 * max(work.incl[k] for k in outermost(work, spec["entry"])) / total:.2f}%'
                 ' of the run')
    results['entry'] = dict(ok=ok, value=round(share, 2), entry_ir=entry_work,
                            entry_baseline_ir=entry_base, total_ir=total, baseline_ir=base_total,
                            cycle=cycle, text=text)

    if spec.get('flat'):
        edges = sorted({(program_function(f), program_function(g)) for f, g in work.arcs
                        if program_function(f) and program_function(g)})
        callers = collections.defaultdict(set)
        for f, g in work.arcs:
            if program_function(g) and not program_function(f):
                callers[program_function(g)].add(re.sub(r"'\d+$", '', f[0]))
        if not callers and not edges:
            results['flat'] = dict(ok=False, edges=[], text=(
                'no program function in the profile as JIT code (not compiled: nothing to check)'))
        else:
            results['flat'] = dict(ok=not edges, edges=edges, text=(
                'calls between program functions: ' + ', '.join(f'{f} -> {g}' for f, g in edges)
                if edges else 'no call between program functions; callers: ' + '; '.join(
                    f'{g} <- {", ".join(sorted(c))}' for g, c in sorted(callers.items()))))

    # The same pairs as callgrind_annotate counts them (--inclusive=yes: no cycle detection,
    # each recursion level a function of its own; the outermost level by its name without 'N).
    annotate = annotate_inclusive(work_path)
    if spec['chain']:
        def annotated(f):
            return sum(v for (name, file, obj), v in annotate.items()
                       if "'" not in name and program_function((name, file, obj)) == f)
        bad = []
        for caller, callee in spec['chain']:
            c, d = annotated(caller), annotated(callee)
            if not c or c < d:
                bad.append(f'{caller} {100.0 * c / total:.2f}% < {callee} {100.0 * d / total:.2f}%')
        results['annotate'] = dict(ok=not bad, text=(
            'callgrind_annotate: ' + ('; '.join(bad) if bad
                                      else f'{len(spec["chain"])} pairs hold')))
    else:
        c = sum(v for (name, _, _), v in annotate.items() if name == spec['entry'])
        results['annotate'] = dict(ok=0 < c <= total, text=(
            f"callgrind_annotate: {spec['entry']} {100.0 * c / total:.2f}% inclusive"))

    asserted = [c for c in args.asserted.split(',') if c]
    for c in asserted:
        if c not in results:
            ap.error(f'--assert: no check {c} for {runtime} (checks: {", ".join(results)})')
    status = 0
    for name, r in results.items():
        verdict = 'ok' if r['ok'] else 'FAIL'
        mark = 'asserted' if name in asserted else 'not asserted'
        print(f'{runtime}: {name}: {verdict} ({mark}): {r["text"]}')
        if name in asserted and not r['ok']:
            status = 1
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(runtime=runtime, checks=results), f, indent=1)
    sys.exit(status)


if __name__ == '__main__':
    main()

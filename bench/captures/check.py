#!/usr/bin/env python3
"""The fidelity checks of one real capture (issue 33), for the large captures the scripts here
make and the repository cannot hold:

    python3 bench/captures/check.py CG_INJECT PROFILE [--perf-map MAP | --jitdump DUMP]...

Injects PROFILE with the given sources into a scratch directory and checks the output as its
consumers read it:
- totals: callgrind_annotate's PROGRAM TOTALS are the input's;
- no `calls=0` line (Callgrind never writes one; callgrind_annotate then misreads the next line);
- KCachegrind (tests/cli/kcachegrind_reading.py) and cg-inject's own reading (--callgraph, which
  follows callgrind_annotate's file rules) see the same functions, self costs and calls;
- no call target without a function block that the input did not have;
- no function in two spellings: a JS-style disambiguated name `f:LINE` beside a bare `f` in
  the same file (one definition must have one name whatever ELF image its versions land in);
- what stays unnamed (cg-inject's own summary line).
Prints one line per check and exits 1 if any fails.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, '..', '..', 'tests', 'cli', 'kcachegrind_reading.py')


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def annotate_totals(path):
    out = run(['callgrind_annotate', '--threshold=100', path]).stdout
    for line in out.splitlines():
        if 'PROGRAM TOTALS' in line:
            return line.split('(')[0].strip() if '(' in line else line.split()[0]
    raise SystemExit(f'check.py: no PROGRAM TOTALS from callgrind_annotate {path}')


def model(*args):
    return run(['python3', MODEL, *args]).stdout


def two_spellings(functions_text):
    """Names `f:LINE[:COL]` and `f` side by side in one file, from the model's `fn` lines."""
    by_file = collections.defaultdict(set)
    for line in functions_text.splitlines():
        m = re.match(r"fn \('(.*)', '(.*)', '(.*)'\)", line)
        if m:
            by_file[m.group(2)].add(m.group(1))
    found = []
    for file, names in by_file.items():
        if not file:
            continue
        for name in names:
            base = re.sub(r'(:\d+){1,2}$', '', name)
            if base != name and base in names:
                found.append(f'{file}: {base!r} and {name!r}')
    return sorted(found)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    cg_inject, profile, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed = 0

    def report(ok, what):
        nonlocal failed
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}")

    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, 'out')
        graph = os.path.join(scratch, 'out.json')
        done = subprocess.run([cg_inject, '--no-discover', '-i', profile, *sources, '-o', out,
                               '--callgraph', graph, '--stats'], capture_output=True, text=True)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            raise SystemExit(f'check.py: cg-inject exited {done.returncode}')
        unnamed = [l for l in done.stderr.splitlines() if 'in unnamed JIT code' in l]
        print('     ' + (unnamed[0].strip() if unnamed else 'cg-inject printed no unnamed-code line'))

        before, after = annotate_totals(profile), annotate_totals(out)
        report(before == after, f'totals (callgrind_annotate): {before} -> {after}')

        with open(out) as f:
            zero = sum(1 for line in f if line.startswith('calls=0 '))
        report(zero == 0, f'calls=0 lines: {zero}')

        kcachegrind = model('--functions-only', out)
        own = model('--project-callgraph', graph)
        report(kcachegrind == own,
               'KCachegrind and callgrind_annotate rules read the same functions and calls')

        new_blockless = set(model('--blockless', out).splitlines()) - set(
            model('--blockless', profile).splitlines())
        report(not new_blockless,
               f'call targets without a block, new: {len(new_blockless)}'
               + (f' (e.g. {sorted(new_blockless)[0]})' if new_blockless else ''))

        spellings = two_spellings(kcachegrind)
        report(not spellings, f'functions in two spellings: {len(spellings)}'
               + (f' (e.g. {spellings[0]})' if spellings else ''))
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()

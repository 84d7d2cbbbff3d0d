#!/usr/bin/env python3
"""Which functions of an executable ran JIT code in their frame, and could they have?

    jit_context.py PROFILE PERF_MAP EXECUTABLE

Callgrind (with the bundled patches 0005-0008) gives JIT code that nothing called the frame of
the function that jumped into it: V8's Builtins_CallFunction_ReceiverIsAny ends by jumping through
a register to the called function's code, and that code's instructions are counted in its frame
(PROFILE is written with --dump-instr=yes: every cost line has its instruction address). A
function can only get there by jumping into JIT code, which the code of a function in EXECUTABLE
does by an indirect jump (`jmp *%rcx`, `br x16`); a direct jump goes to another of its symbols
(a tail call, a frame of its own). So a function of EXECUTABLE whose frame holds JIT code's
instructions but whose code has no indirect jump had returned already: its frame outlived its
RET, and Callgrind counted what its caller did next in it (with 0001-0007, V8's
Builtins_StringPrototypeStartsWith after Function.prototype.call moved the return address).

JIT code is what PERF_MAP (/tmp/perf-PID.map) lists outside EXECUTABLE's loadable segments.
Prints each function of EXECUTABLE with JIT code in its frame, its Ir there and whether its code
has an indirect jump; exits 1 if any has none (a frame that outlived its function), 2 on bad
input (no JIT code in the profile at all: nothing was checked).
"""
import bisect
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from cgsummary import Names, open_text  # noqa: E402


def load_segments(exe):
    out = subprocess.run(['readelf', '-lW', exe], check=True, capture_output=True,
                         text=True).stdout
    segs = []
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == 'LOAD':
            vaddr, memsz = int(parts[2], 16), int(parts[5], 16)
            segs.append((vaddr, vaddr + memsz))
    return segs


def jit_ranges(perf_map, segs):
    """Sorted, merged (start, end) ranges of JIT code: perf map entries outside EXECUTABLE."""
    ranges = []
    with open(perf_map) as f:
        for line in f:
            parts = line.split(maxsplit=2)
            if len(parts) < 2:
                continue
            start, size = int(parts[0], 16), int(parts[1], 16)
            if any(lo <= start < hi for lo, hi in segs):
                continue  # V8's embedded builtins, listed too (Builtin:...)
            ranges.append((start, start + size))
    ranges.sort()
    merged = []
    for lo, hi in ranges:
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def in_ranges(ranges, starts, addr):
    i = bisect.bisect_right(starts, addr) - 1
    return i >= 0 and addr < ranges[i][1]


def jit_cost_by_function(profile, obj_name, ranges):
    """Ir at JIT code addresses per function of the object named obj_name (recursion levels
    ('N) merged)."""
    starts = [lo for lo, _ in ranges]
    objs, fns = Names(), Names()
    cost = collections.Counter()
    ob = fn = None
    last = 0
    skip_next = 0  # 1: the next line is a call's cost line (inclusive, not self)
    ir_col = None
    npos = 1
    for line in open_text(profile):
        if not line:
            continue
        c = line[0]
        if c.isdigit() or c in '+-*':
            parts = line.split()
            tok = parts[0]
            if tok == '*':
                addr = last
            elif tok[0] in '+-':
                addr = last + int(tok)
            else:
                addr = int(tok, 16) if tok.startswith('0x') else int(tok)
            last = addr
            if skip_next:
                skip_next = 0
                continue
            if ob == obj_name and ir_col is not None and in_ranges(ranges, starts, addr):
                vals = parts[npos:]
                cost[fn] += int(vals[ir_col]) if ir_col < len(vals) else 0
            continue
        if line.startswith('positions:'):
            pos = line.split()[1:]
            if pos[0] != 'instr':
                sys.exit(f'jit_context.py: {profile}: expected positions: instr ..., got {line}'
                         ' (record with --dump-instr=yes)')
            npos = len(pos)
        elif line.startswith('events:'):
            ir_col = line.split()[1:].index('Ir')
        elif line.startswith('ob='):
            ob = os.path.basename(objs.get(line[3:]))
        elif line.startswith('fn='):
            fn = re.sub(r"'\d+$", '', fns.get(line[3:]))
        elif line.startswith('cob='):
            objs.get(line[4:])
        elif line.startswith('cfn='):
            fns.get(line[4:])
        elif line.startswith('jcob='):
            objs.get(line[5:])
        elif line.startswith('jfn='):
            fns.get(line[4:])
        elif line.startswith(('calls=', 'jump=', 'jcnd=')):
            skip_next = 1  # the source position (and for calls=, the call's inclusive cost)
    return cost


def symbols(exe):
    out = subprocess.run(['nm', '-S', '--defined-only', exe], check=True, capture_output=True,
                         text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and parts[2] in 'tTwW':
            syms.setdefault(parts[3], (int(parts[0], 16), int(parts[1], 16)))
    return syms


def has_indirect_jump(exe, start, size):
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn', f'--start-address={start:#x}',
                          f'--stop-address={start + size:#x}', exe],
                         check=True, capture_output=True, text=True).stdout
    return re.search(r'\t(jmp|bnd jmp|notrack jmp)\s+\*|\tbr\s+x', out) is not None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    profile, perf_map, exe = sys.argv[1:]
    ranges = jit_ranges(perf_map, load_segments(exe))
    cost = jit_cost_by_function(profile, os.path.basename(exe), ranges)
    if not cost:
        print(f'jit_context.py: {profile}: no JIT code of {perf_map} in any frame of '
              f'{os.path.basename(exe)}: nothing checked', file=sys.stderr)
        sys.exit(2)
    syms = symbols(exe)
    bad = []
    for fn, ir in cost.most_common():
        # Callgrind's names are demangled; nm's are not: C++ functions are looked up demangled.
        sym = syms.get(fn)
        if sym is None:
            ok = None
        else:
            ok = has_indirect_jump(exe, *sym)
        verdict = {True: 'jumps into code', False: 'NO indirect jump', None: 'not a symbol'}[ok]
        print(f'  {ir:12d} Ir of JIT code in the frame of {fn}: {verdict}')
        if ok is False:
            bad.append((fn, ir))
    for fn, ir in bad:
        print(f'jit_context.py: {profile}: {fn} has {ir} Ir of JIT code in its frame, expected 0: '
              f'its code has no indirect jump, so its frame outlived its return', file=sys.stderr)
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()

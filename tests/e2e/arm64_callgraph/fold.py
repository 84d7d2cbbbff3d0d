#!/usr/bin/env python3
"""Folds a Callgrind profile into the call stacks of the program's own functions.

    fold.py --own REGEX CALLGRIND_OUT

Reads the `calls=` edges (caller -> callee, after undoing name compression) and walks them from
every function that nothing calls, printing each distinct path once, sorted, one per line, frames
joined by ';' (recursion levels keep Callgrind's 'N suffix). A path does not enter a function
twice (a recursion edge back onto the path ends it). Functions of objects whose basename matches
REGEX are the program's own and print as their bare name; a foreign function (libc, ld.so, ???)
prints as "object:function", but only where one of the program's functions sits below it (a
callback, or a resolver that wrongly took over a subtree): foreign leaves such as malloc are left
out, and so are foreign frames above the first own frame. A function of the program that no symbol
covers (Callgrind names it by its address) prints as "(no symbol)". Exits 1 if the profile has no calls
edge between two of the program's functions (an empty or truncated profile), or if it has a
function named by --absent (anywhere, as caller or callee).
"""
import argparse
import collections
import os
import re
import sys

# Callgrind's name compression, shared with the twin comparison.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from cgsummary import Names  # noqa: E402


# How Callgrind names a function that no symbol covers: the address of the BB it was entered at
# (with ' [PLT]' and the like for special sections, and recursion levels as 'N).
NO_SYMBOL = re.compile(r"^0x[0-9a-f]+('[0-9]+)?$")


def read_edges(path):
    objs, fns = Names(), Names()
    edges = collections.defaultdict(set)
    nodes = set()
    ob = fn = cob = cfn = None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('ob='):
                ob = os.path.basename(objs.get(line[3:]))
            elif line.startswith('fn='):
                fn = (ob, fns.get(line[3:]))
                nodes.add(fn)
                cob = None
            elif line.startswith('cob='):
                cob = os.path.basename(objs.get(line[4:]))
            elif line.startswith('cfn='):
                cfn = (cob if cob is not None else ob, fns.get(line[4:]))
            elif line.startswith('calls='):
                edges[fn].add(cfn)
                nodes.add(cfn)
                cob = None  # a cob= names the object of one call only
            elif line.startswith('jfn='):
                fns.get(line[4:])  # may define a name id used later
    return nodes, edges


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--own', required=True, help='regex on object basenames of the program')
    ap.add_argument('--absent', action='append', default=[], metavar='OBJECT:FUNCTION',
                    help='exit 1 if a function "object-basename:name" (exact) is in the profile')
    ap.add_argument('profile')
    args = ap.parse_args()
    own_re = re.compile(args.own)
    nodes, edges = read_edges(args.profile)
    own = {n for n in nodes if own_re.search(n[0])}

    present = sorted(f'{n[0]}:{n[1]}' for n in nodes if f'{n[0]}:{n[1]}' in args.absent)
    if present:
        print(f'fold.py: {args.profile}: has {", ".join(present)}, which must be absent',
              file=sys.stderr)
        sys.exit(1)

    if not any(c in own for n in own for c in edges.get(n, ())):
        print(f'fold.py: {args.profile}: no call between two functions of objects matching '
              f'{args.own!r}', file=sys.stderr)
        sys.exit(1)

    called = {c for cs in edges.values() for c in cs}
    roots = sorted(n for n in nodes if n not in called)
    stacks = set()

    def label(n):
        if n in own:
            # Callgrind names code that no symbol covers after its address, which changes with
            # the compiler: nosym_reentry has one such function.
            return '(no symbol)' if NO_SYMBOL.match(n[1]) else n[1]
        return f'{n[0]}:{n[1]}'

    def walk(node, path):
        path = path + [node]
        # Printed frames: from the first own frame down to the last own frame of this path.
        own_idx = [i for i, n in enumerate(path) if n in own]
        if own_idx and path[-1] in own:
            stacks.add(';'.join(label(n) for n in path[own_idx[0]:]))
        for c in sorted(edges.get(node, ())):
            if c not in path:
                walk(c, path)

    sys.setrecursionlimit(10000)
    for r in roots:
        walk(r, [])
    for s in sorted(stacks):
        print(s)


if __name__ == '__main__':
    main()

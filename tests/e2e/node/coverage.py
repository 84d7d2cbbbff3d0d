#!/usr/bin/env python3
"""How much of a Callgrind profile's unnamed code (ob=???) a perf map or jitdump covers.

    coverage.py CALLGRIND_OUT[.zst] (--perf-map FILE | --jitdump FILE)...

Needs --dump-instr=yes (cost lines carry instruction addresses). Prints the total cost, the cost
at addresses in ob=??? blocks, and how much of that lies inside a function of the sources: the
ceiling that cg-inject's injection can reach on this capture. Exit status 0; the caller decides.
"""
import bisect
import os
import re
import struct
import subprocess
import sys



def lines_of(path):
    if path.endswith('.zst'):
        data = subprocess.run(['zstd', '-dc', path], check=True, capture_output=True).stdout
    else:
        data = open(path, 'rb').read()
    return data.decode('utf-8', 'replace').splitlines()


def perf_map_ranges(path):
    for line in lines_of(path):
        parts = line.split(' ', 2)
        if len(parts) == 3:
            yield int(parts[0], 16), int(parts[1], 16)


def jitdump_ranges(path):
    data = open(path, 'rb').read() if not path.endswith('.zst') else subprocess.run(
        ['zstd', '-dc', path], check=True, capture_output=True).stdout
    pos = struct.unpack_from('<I', data, 8)[0]
    while pos + 16 <= len(data):
        rid, size = struct.unpack_from('<II', data, pos)
        if rid == 0:
            _, _, vma, _, csize = struct.unpack_from('<IIQQQ', data, pos + 16)
            yield vma, csize
        elif rid == 1:
            _, _, vma, _, _, csize = struct.unpack_from('<IIQQQQ', data, pos + 16)
            yield vma, csize
        pos += max(size, 16)


def main():
    args = sys.argv[1:]
    profile = args.pop(0)
    ranges = []
    while args:
        kind, path = args.pop(0), args.pop(0)
        ranges += list(perf_map_ranges(path) if kind == '--perf-map' else jitdump_ranges(path))
    ranges.sort()
    starts = [r[0] for r in ranges]

    def covered(addr):
        i = bisect.bisect_right(starts, addr) - 1
        # Overlapping entries (a reused address): look back a little.
        for j in range(i, max(i - 8, -1), -1):
            if ranges[j][0] <= addr < ranges[j][0] + ranges[j][1]:
                return True
        return False

    names = {}
    unknown_obj = False
    addr = 0
    total = unknown = hit = 0
    pending_call = False
    for line in lines_of(profile):
        if line.startswith('cob='):  # shares the object name table; defines, never switches
            m = re.match(r'^\((\d+)\) (.*)$', line[4:])
            if m:
                names[m.group(1)] = m.group(2)
        elif line.startswith('ob='):
            m = re.match(r'^\((\d+)\)(?: (.*))?$', line[3:])
            name = line[3:]
            if m:
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                name = names[m.group(1)]
            unknown_obj = name == '???'
        elif line.startswith('calls='):
            pending_call = True
        elif line and line[0] in '0123456789+-*':
            parts = line.split()
            tok = parts[0]
            if tok.startswith('0x'):
                addr = int(tok, 16)
            elif tok[0] in '+-':
                addr += int(tok)
            if pending_call:  # inclusive cost of a call: not self cost
                pending_call = False
                continue
            cost = int(parts[2]) if len(parts) > 2 else 0
            total += cost
            if unknown_obj:
                unknown += cost
                if covered(addr):
                    hit += cost
    print('total %d unknown %d (%.2f%%) covered %d (%.2f%% of unknown)' % (
        total, unknown, 100.0 * unknown / max(total, 1), hit, 100.0 * hit / max(unknown, 1)))


if __name__ == '__main__':
    main()

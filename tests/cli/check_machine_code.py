#!/usr/bin/env python3
"""Checks a cg-inject output's JIT functions the way KCachegrind's machine-code view reads them.

usage: check_machine_code.py PROFILE OBJDUMP ADDR2LINE CODE_SOURCE...

CODE_SOURCE is a jitdump (plain or .zst) or moar:MAP:DIR (a MoarVM perf map and its raw code
directory). For every function whose ob= ends in `.elf` and that has instruction positions:
  - ob= is resolved as KCachegrind does (libviews/instrview.cpp searchFile): an absolute path as
    it is; a relative one against the working directory, else its basename in the profile's
    directory;
  - KCachegrind's command is run for each run of addresses (a new call where the gap exceeds
    10000 bytes): OBJDUMP -C -d --start-address=FIRST-20 --stop-address=LAST+20 OBJECT;
  - an instruction must start at every position of the function, and every byte printed inside
    the function's code version equals that version's bytes from the source;
  - at one address with a line-table row, `ADDR2LINE -e IMAGE ADDR` prints that file:line.
Every image gets `readelf -a -W` without a warning. Prints counts; exits 1 on any failure.
Environment: LINES=v8 also accepts line rows 0x40 too high and counts tables addr2line does not
print (Node); REBUILT_CALL_SITES=N expects N call sites at a return address - 1 (default 0).
"""
import os
import re
import struct
import subprocess
import sys
from collections import defaultdict


def read_bytes(path):
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    with open(path, "rb") as f:
        return f.read()


def jitdump_versions(path):
    """(name, start, code bytes, line rows [(addr, file, line)]) per CODE_LOAD and CODE_MOVE."""
    data = read_bytes(path)
    magic, version, header_size = struct.unpack_from("<III", data, 0)
    assert magic == 0x4A695444, path
    off = header_size
    loads = {}  # code_index -> (name, code, rows)
    pending_debug = {}  # code_addr -> rows
    versions = []
    while off + 16 <= len(data):
        rid, total, _ts = struct.unpack_from("<IIQ", data, off)
        if total < 16 or off + total > len(data):
            break
        body = off + 16
        if rid == 0:  # CODE_LOAD
            _pid, _tid, vma, code_addr, size, index = struct.unpack_from("<IIQQQQ", data, body)
            p = body + 40
            end = data.index(b"\0", p)
            name = data[p:end].decode("utf-8", "replace")
            code = data[end + 1:end + 1 + size]
            rows = pending_debug.pop(code_addr, [])
            loads[index] = (name, code, rows)
            versions.append((name, code_addr, code, rows))
        elif rid == 1:  # CODE_MOVE
            _pid, _tid, _vma, old, new, size, index = struct.unpack_from("<IIQQQQQ", data, body)
            if index in loads:
                name, code, rows = loads[index]
                moved = [(a - old + new, f, l) for a, f, l in rows]
                versions.append((name, new, code, moved))
        elif rid == 2:  # DEBUG_INFO
            code_addr, nr = struct.unpack_from("<QQ", data, body)
            p = body + 16
            rows = []
            last_file = ""
            for _ in range(nr):
                addr, line, _disc = struct.unpack_from("<QII", data, p)
                p += 16
                end = data.index(b"\0", p)
                raw = data[p:end]
                p = end + 1
                fname = last_file if raw == b"\xff" else raw.decode("utf-8", "replace")
                last_file = fname
                rows.append((addr, fname, line))
            pending_debug[code_addr] = rows
        elif rid == 3:
            break
        off += total
    return versions


def moar_versions(spec):
    """moar:MAP:DIR -> one version per map line paired with DIR's n-th moar-jit-*.bin file."""
    _, map_path, bin_dir = spec.split(":", 2)
    lines = [l.split(" ", 2) for l in open(map_path).read().splitlines() if l.strip()]
    bins = sorted((f for f in os.listdir(bin_dir) if re.match(r"moar-jit-\d+\.bin$", f)),
                  key=lambda f: int(re.findall(r"\d+", f)[0]))
    versions = []
    for (start, size, name), b in zip(lines, bins):
        code = read_bytes(os.path.join(bin_dir, b))
        if len(code) == int(size, 16):
            versions.append((name, int(start, 16), code, []))
    return versions


def profile_functions(path):
    """(ob, fn) -> set of instruction addresses of the function's position lines, and
    (ob, fn) -> the call-site addresses among them (lines after calls=)."""
    text = read_bytes(path).decode("utf-8", "replace")
    names = {"ob": {}, "fl": {}, "fn": {}}
    space = {"ob": "ob", "cob": "ob", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl",
             "cfl": "fl", "jfi": "fl", "fn": "fn", "cfn": "fn", "jfn": "fn"}
    columns = ["line"]
    ob = fn = None
    last = []
    out = defaultdict(set)
    call_sites = defaultdict(set)
    after = None  # "calls" when the next position line is a call site

    def name_of(key, value):
        m = re.match(r"\((\d+)\)(?: (.*))?$", value)
        if not m:
            return value
        table = names[space[key]]
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), value)

    def parse_positions(tokens):
        values = []
        for i, tok in enumerate(tokens[:len(columns)]):
            base = last[i] if i < len(last) else 0
            if tok == "*":
                values.append(base)
            elif tok[0] in "+-":
                values.append(base + int(tok, 0))
            else:
                values.append(int(tok, 0))
        return values

    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("positions:"):
            columns = line.split(":", 1)[1].split()
            continue
        m = re.match(r"([a-z]+)=(.*)$", line)
        if m:
            key, value = m.groups()
            if key in space:
                value = name_of(key, value)
                if key == "ob":
                    ob = value
                elif key == "fn":
                    fn = value
            if key in ("calls", "jump", "jcnd"):
                after = key
            continue
        if ":" in line.split()[0]:
            continue  # header lines (events:, summary:, totals: ...)
        tokens = line.split()
        if not (tokens[0][0].isdigit() or tokens[0][0] in "+-*"):
            continue
        pos = parse_positions(tokens)
        last = pos
        if "instr" in columns and ob is not None and fn is not None:
            out[(ob, fn)].add(pos[columns.index("instr")])
            if after == "calls":
                call_sites[(ob, fn)].add(pos[columns.index("instr")])
        after = None
    return out, call_sites


def resolve_object(ob, profile_dir):
    if os.path.isabs(ob):
        return ob if os.path.exists(ob) else None
    if os.path.exists(ob):
        return os.path.abspath(ob)
    beside = os.path.join(profile_dir, os.path.basename(ob))
    return beside if os.path.exists(beside) else None


INSN = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2,8} )+)\s*(?:\t(\S.*))?$")


def objdump_listing(objdump, obj, first, last):
    cmd = [objdump, "-C", "-d", "--start-address=0x%x" % max(first - 20, 0),
           "--stop-address=0x%x" % (last + 20), obj]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True, errors="replace").stdout
    starts = set()
    data = {}
    for line in text.splitlines():
        m = INSN.match(line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        words = m.group(2).split()
        if m.group(3):
            starts.add(addr)
        # x86 prints bytes; AArch64 prints one little-endian 32-bit word per instruction.
        for w in words:
            if len(w) == 2:
                data[addr] = int(w, 16)
                addr += 1
            else:
                for b in bytes.fromhex(w)[::-1]:
                    data[addr] = b
                    addr += 1
    return starts, data


def main():
    profile, objdump, addr2line = sys.argv[1:4]
    versions = []
    for spec in sys.argv[4:]:
        versions += moar_versions(spec) if spec.startswith("moar:") else jitdump_versions(spec)
    by_name = defaultdict(list)
    for v in versions:
        by_name[v[0]].append(v)
        # V8 names ("JS:*sumTo /path/x.js:7:15"): the profile shows the bare function name.
        m = re.match(r"^[A-Za-z]+:[*~^+-]?([^ ]+) ", v[0])
        if m:
            by_name[m.group(1)].append(v)
        # MoarVM names ("fib(fib.raku:3)"): the name before the location.
        m = re.match(r"^(.*)\(([^()]*):\d+\)$", v[0])
        if m:
            by_name[m.group(1) or "(anonymous)"].append(v)
    profile_dir = os.path.dirname(os.path.abspath(profile))
    functions, call_sites = profile_functions(profile)
    failures = 0
    checked = {"functions": 0, "addresses": 0, "bytes": 0, "objdump_calls": 0, "addr2line": 0,
               "rebuilt_call_sites": 0}
    images = set()

    def fail(msg):
        nonlocal failures
        failures += 1
        if failures <= 20:
            print("FAIL: " + msg, file=sys.stderr)

    lines_mode = os.environ.get("LINES", "strict")

    def check_lines(fn, obj, start, code, rows):
        """addr2line at the last row of the table (the JIT's own file:line)."""
        shifts = (0,) if lines_mode == "strict" else (0, 0x40)  # V8 writes rows 0x40 too high
        for shift in shifts:
            inside = [(a - shift, f, l) for a, f, l in rows if start <= a - shift < start + len(code)]
            if not inside:
                continue
            addr, fname, line_no = inside[-1]
            if any(r[0] == addr for r in inside[:-1]):
                continue
            got = subprocess.run([addr2line, "-e", obj, "0x%x" % addr], capture_output=True,
                                 text=True).stdout.strip()
            got = re.sub(r" \(discriminator \d+\)$", "", got)
            if got == "%s:%d" % (fname, line_no):
                checked["addr2line"] += 1
                return
        if rows and lines_mode == "strict":
            fail("%s: addr2line does not print the jitdump's file:line in %s" % (fn, obj))
        elif rows:
            checked["addr2line_unmatched"] = checked.get("addr2line_unmatched", 0) + 1

    for (ob, fn), addrs in sorted(functions.items()):
        if not ob.endswith(".elf"):
            continue
        obj = resolve_object(ob, profile_dir)
        if obj is None:
            fail("%s: ob=%s not found as KCachegrind looks for it" % (fn, ob))
            continue
        images.add(obj)
        # The profile's function name may carry a recursion suffix ('2), and before it the
        # definition's position where two definitions share a name (`(anonymous):770`,
        # `f:12:41`, `f (/dir/file.js:3:1)`: resolve/definition_names.h).
        base = re.sub(r"'\d+$", "", fn)
        # A block kept apart from its function (issue 33 item 7) names where it was entered.
        base = re.sub(r" \(entered at 0x[0-9a-f]+, \+0x[0-9a-f]+\)$", "", base)
        candidates = [base, re.sub(r":\d+(:\d+)?$", "", base), re.sub(r" \([^()]*:\d+:\d+\)$", "", base)]
        named = [v for name in dict.fromkeys(candidates) for v in by_name.get(name, [])]
        holders = {a: [v for v in named if v[1] <= a < v[1] + len(v[2])] for a in addrs}
        orphans = sorted(a for a, vs in holders.items() if not vs)
        if orphans:
            fail("%s: 0x%x lies in no code version of that name in the sources" % (fn, orphans[0]))
            continue
        checked["functions"] += 1
        # Callgrind writes the call site of a frame it rebuilt when instrumentation started inside
        # a callee (--instr-atstart=no) as the return address - 1: not an instruction start in
        # any object. Such positions are counted and left out (with them, KCachegrind's objdump
        # call would start 20 bytes before a non-boundary; on AArch64 it then decodes misaligned).
        true_starts = set()
        for v in {(v[1], len(v[2])) for a in addrs for v in holders[a]}:
            true_starts |= objdump_listing(objdump, obj, v[0] + 20, v[0] + v[1] - 20)[0]
        rebuilt = {a for a in call_sites.get((ob, fn), ())
                   if a not in true_starts and a + 1 in true_starts}
        checked["rebuilt_call_sites"] += len(rebuilt)
        ordered = sorted(set(addrs) - rebuilt)
        groups = [[ordered[0]]]
        for a in ordered[1:]:
            if a - groups[-1][-1] > 10000:
                groups.append([a])
            else:
                groups[-1].append(a)
        starts, data = set(), {}
        for g in groups:
            s, d = objdump_listing(objdump, obj, g[0], g[-1])
            starts |= s
            data.update(d)
            checked["objdump_calls"] += 1
        for a in ordered:
            checked["addresses"] += 1
            if a not in starts:
                fail("%s in %s: no instruction starts at 0x%x" % (fn, ob, a))
        # Per address range: the printed bytes must be those of one version of the function
        # there (a moved function has one per address; reuse puts the others in other images).
        used = {}
        for a in ordered:
            def mismatches(v):
                return [x for x in range(v[1], v[1] + len(v[2])) if x in data and data[x] != v[2][x - v[1]]]
            best = min(holders[a], key=lambda v: len(mismatches(v)))
            used[(best[1], len(best[2]), best[2])] = (best, mismatches(best))
        for (name, start, code, rows), bad in used.values():
            checked["bytes"] += sum(1 for x in range(start, start + len(code)) if x in data) - len(bad)
            if bad:
                fail("%s: %d printed bytes differ from the source's code, first at 0x%x" % (fn, len(bad), bad[0]))
            check_lines(fn, obj, start, code, rows)
    for obj in sorted(images):
        r = subprocess.run(["readelf", "-a", "-W", obj], capture_output=True, text=True,
                           errors="replace")
        if r.returncode != 0 or "arning" in r.stdout + r.stderr:
            fail("readelf -a %s: %s" % (obj, (r.stdout + r.stderr)[:300]))
    want_rebuilt = int(os.environ.get("REBUILT_CALL_SITES", "0"))
    if checked["rebuilt_call_sites"] != want_rebuilt:
        fail("%d rebuilt call sites, expected %d" % (checked["rebuilt_call_sites"], want_rebuilt))
    if checked["functions"] == 0:
        fail("no JIT function with an image and instruction positions in %s" % profile)
    print("%s: %d images, %d functions, %d addresses, %d objdump calls, %d bytes equal, "
          "%d addr2line (%d tables not matched), %d rebuilt call sites"
          % (profile, len(images), checked["functions"], checked["addresses"],
             checked["objdump_calls"], checked["bytes"], checked["addr2line"],
             checked.get("addr2line_unmatched", 0), checked["rebuilt_call_sites"]))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

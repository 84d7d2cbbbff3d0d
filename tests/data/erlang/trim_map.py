# trim_map.py PROFILE MAP > TRIMMED: the map entries that contain an instruction address of the
# profile (cost lines and call targets, --dump-instr=yes), in the map's order.
import bisect, sys
prof, mapf = sys.argv[1], sys.argv[2]
addrs = set()
cur = 0
def pos(tok, base):
    if tok.startswith('0x'): return int(tok, 16)
    if tok == '*': return base
    if tok[0] in '+-': return base + int(tok)
    return int(tok)
for line in open(prof, errors='replace'):
    if not line or line[0] not in '0123456789+-*c':
        continue
    if line.startswith('calls='):
        parts = line.split()
        if len(parts) > 1:
            try: addrs.add(pos(parts[1], cur))
            except ValueError: pass
        continue
    if line[0] == 'c': continue
    tok = line.split(None, 1)[0]
    try:
        cur = pos(tok, cur)
    except ValueError:
        continue
    addrs.add(cur)
sa = sorted(addrs)
out = []
for line in open(mapf):
    p = line.split(' ', 2)
    if len(p) < 3: continue
    start = int(p[0], 16); size = int(p[1], 16)
    i = bisect.bisect_left(sa, start)
    if i < len(sa) and sa[i] < start + size:
        out.append(line)
sys.stdout.write(''.join(out))
print(f"kept {len(out)} entries, {len(sa)} addresses", file=sys.stderr)

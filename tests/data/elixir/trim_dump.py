# trim_dump.py DUMP PATTERN > TRIMMED: the jitdump's header and the records of the code whose name
# matches the regular expression PATTERN (its CODE_LOAD and the DEBUG_INFO for the same code
# address), bytes unchanged, in the dump's order.
import re, struct, sys
data = open(sys.argv[1], 'rb').read()
pattern = re.compile(sys.argv[2].encode())
header_size = struct.unpack_from('<I', data, 8)[0]
records = []
pos = header_size
while pos + 16 <= len(data):
    kind, size = struct.unpack_from('<II', data, pos)
    if size < 16 or pos + size > len(data):
        break
    records.append((kind, pos, size))
    pos += size
kept_code = set()
for kind, pos, size in records:
    if kind == 0:  # CODE_LOAD: pid, tid, vma, code_addr, code_size, code_index, name
        code_addr = struct.unpack_from('<Q', data, pos + 32)[0]
        name = data[pos + 56:data.index(b'\0', pos + 56)]
        if pattern.search(name):
            kept_code.add(code_addr)
out = [data[:header_size]]
for kind, pos, size in records:
    if kind in (0, 2) and struct.unpack_from('<Q', data, pos + (32 if kind == 0 else 16))[0] in kept_code:
        out.append(data[pos:pos + size])
sys.stdout.buffer.write(b''.join(out))
print(f"kept {len(out) - 1} of {len(records)} records", file=sys.stderr)

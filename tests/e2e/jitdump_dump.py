#!/usr/bin/env python3
"""Prints a jitdump (linux tools/perf/Documentation/jitdump-specification.txt) as text, one line
per record, leaving out what changes between runs (timestamps, pid, tid) unless --all.

    jitdump_dump.py [--all] FILE
"""
import struct
import sys

KINDS = {0: 'LOAD', 1: 'MOVE', 2: 'DEBUG_INFO', 3: 'CLOSE', 4: 'UNWINDING_INFO'}


def cstr(buf, pos):
    end = buf.index(b'\0', pos)
    return buf[pos:end].decode('ascii', 'replace'), end + 1


def main():
    show_all = '--all' in sys.argv[1:]
    path = [a for a in sys.argv[1:] if a != '--all'][0]
    data = open(path, 'rb').read()
    magic, version, hsize, mach, _pad, pid, ts, flags = struct.unpack_from('<IIIIIIQQ', data, 0)
    if magic != 0x4A695444:
        sys.exit('%s: expected jitdump magic 0x4a695444, got %#x' % (path, magic))
    print('header version=%d size=%d elf_mach=%d flags=%d%s' % (
        version, hsize, mach, flags, ' pid=%d timestamp=%d' % (pid, ts) if show_all else ''))
    pos = hsize
    while pos < len(data):
        rid, size, ts = struct.unpack_from('<IIQ', data, pos)
        body = pos + 16
        extra = ' timestamp=%d' % ts if show_all else ''
        kind = KINDS.get(rid, 'UNKNOWN_%d' % rid)
        if rid == 0:
            rpid, tid, vma, addr, csize, index = struct.unpack_from('<IIQQQQ', data, body)
            name, code_pos = cstr(data, body + 40)
            code = data[code_pos:code_pos + csize]
            if show_all:
                extra += ' pid=%d tid=%d' % (rpid, tid)
            print('LOAD vma=%#x code_addr=%#x size=%d index=%d name=%s code=%s%s' % (
                vma, addr, csize, index, name, code.hex(), extra))
        elif rid == 1:
            rpid, tid, vma, old, new, csize, index = struct.unpack_from('<IIQQQQQ', data, body)
            if show_all:
                extra += ' pid=%d tid=%d' % (rpid, tid)
            print('MOVE vma=%#x old=%#x new=%#x size=%d index=%d%s' % (vma, old, new, csize,
                                                                      index, extra))
        elif rid == 2:
            addr, n = struct.unpack_from('<QQ', data, body)
            p = body + 16
            entries = []
            for _ in range(n):
                eaddr, line, discrim = struct.unpack_from('<QII', data, p)
                name, p = cstr(data, p + 16)
                entries.append('%#x:%s:%d%s' % (eaddr, name, line,
                                                '/%d' % discrim if discrim else ''))
            print('DEBUG_INFO code_addr=%#x entries=%s%s' % (addr, ','.join(entries), extra))
        else:
            print('%s size=%d%s' % (kind, size, extra))
        if size < 16:
            sys.exit('%s: record at %d has size %d' % (path, pos, size))
        pos += size


if __name__ == '__main__':
    main()

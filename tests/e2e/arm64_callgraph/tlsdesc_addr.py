#!/usr/bin/env python3
"""Prints the address of _dl_tlsdesc_return in an AArch64 dynamic linker, found by its code.

    tlsdesc_addr.py LD_SO

The cross C library's ld-linux-aarch64.so.1 has no symbol table, so the TLS-descriptor resolver
(glibc sysdeps/aarch64/dl-tlsdesc.S: an optional BTI C / NOP landing pad, `ldr x0, [x0, #8]`,
`ret`) is found in the executable segment by those instruction words. Prints the entry (the
landing pad if there is one) as 0x%016x, the way Callgrind names a function without a symbol.
Exits 1 unless exactly one match is found.
"""
import struct
import sys

LDR_X0_X0_8, RET, NOP, BTI_C = 0xf9400400, 0xd65f03c0, 0xd503201f, 0xd503245f


def main():
    data = open(sys.argv[1], 'rb').read()
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        sys.exit(f'tlsdesc_addr.py: {sys.argv[1]}: not a 64-bit little-endian ELF file')
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    matches = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
            '<IIQQQQ', data, phoff + i * phentsize)
        if p_type != 1 or not p_flags & 1:  # PT_LOAD, PF_X
            continue
        words = struct.unpack_from(f'<{p_filesz // 4}I', data, p_offset)
        for j in range(1, len(words) - 1):
            if words[j] == LDR_X0_X0_8 and words[j + 1] == RET:
                entry = j - 1 if words[j - 1] in (NOP, BTI_C) else j
                matches.append(p_vaddr + 4 * entry)
    if len(matches) != 1:
        sys.exit(f'tlsdesc_addr.py: {sys.argv[1]}: expected one `ldr x0, [x0, #8]; ret`, '
                 f'found {len(matches)}')
    print(f'0x{matches[0]:016x}')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
"""Writes hostile ELF64 x86-64 objects for the tests of objects named by `ob=` (issue 36 items 1
and 2), so that no large binary is committed. Each case is small to describe and cheap to make;
what makes it hostile is how its section headers and tables point at each other.

    hostile_elf.py CASE OUT [N [M]]

Cases (N and M scale each; the defaults are the issue's recipes):
  rela-headers      N=65,000 SHT_RELA headers over one M=100,000-entry relocation block (6.6 MB)
  dynamic-headers   N=65,000 SHT_DYNAMIC headers over one M=100,000-entry dynamic section
  note-headers      N=65,000 SHT_NOTE headers over one block of M=100,000 notes, no build id
  symtab-headers    N=65,000 SHT_SYMTAB headers over one M=20,000-symbol table
  symtab-aliases    an ET_EXEC whose .symtab has N=250,000 STT_FUNC symbols at one address
  plt-long-name     a .plt of M=2,000 slots whose jumps read one GOT entry, whose one relocation
                    names a symbol of N=1 MB
  plt-ok            a well-formed little shared object with two PLT slots (free, malloc): the
                    control for the cases above
  plt-pie NAMES     a little PIE executable (DF_1_PIE) whose PLT slots, from 0x80 on, 16 bytes
                    apart, name the comma-separated NAMES in turn (a program "rebuilt" with its
                    slots in another order)
"""
import struct
import sys

SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_DYNAMIC, SHT_NOTE, SHT_DYNSYM = 2, 3, 4, 6, 7, 11
SHF_ALLOC, SHF_EXECINSTR = 2, 4
ET_EXEC, ET_DYN = 2, 3
STT_FUNC = 2
R_X86_64_GLOB_DAT = 6


class Elf:
    """Sections are appended as (name, type, flags, addr, data, link, entsize); the file is laid
    out as header, program header, section contents, .shstrtab, section headers. Addresses equal
    file offsets plus `base` (one PT_LOAD maps the whole file)."""

    def __init__(self, etype=ET_DYN, base=0):
        self.etype, self.base = etype, base
        self.sections = []  # dicts
        self.extra_headers = []  # (name, type, offset_of_section_index, size, link, entsize)
        self.blob = bytearray(64 + 56)  # header + one program header, filled at the end

    def add(self, name, stype, data, flags=SHF_ALLOC, link=0, entsize=0, align=16):
        while len(self.blob) % align:
            self.blob.append(0)
        offset = len(self.blob)
        self.blob += data
        self.sections.append(dict(name=name, type=stype, flags=flags, offset=offset,
                                  addr=self.base + offset, size=len(data), link=link,
                                  entsize=entsize))
        return len(self.sections)  # its index (section 0 is the null section)

    def addr_of(self, index):
        return self.sections[index - 1]['addr']

    def repeat(self, index, count, stype=None):
        """`count` more headers that describe section `index`'s bytes again."""
        s = self.sections[index - 1]
        for _ in range(count):
            copy = dict(s)
            if stype is not None:
                copy['type'] = stype
            self.sections.append(copy)

    def write(self, path):
        names = bytearray(b'\0')
        name_at = {}
        for s in self.sections:
            if s['name'] not in name_at:
                name_at[s['name']] = len(names)
                names += s['name'].encode() + b'\0'
        name_at['.shstrtab'] = len(names)
        names += b'.shstrtab\0'
        shstr_offset = len(self.blob)
        self.blob += names
        while len(self.blob) % 8:
            self.blob.append(0)
        shoff = len(self.blob)
        shnum = len(self.sections) + 2
        assert shnum < 0xff00, 'too many sections for e_shnum'
        headers = bytearray(64)  # the null section
        for s in self.sections:
            headers += struct.pack('<IIQQQQIIQQ', name_at[s['name']], s['type'], s['flags'],
                                   s['addr'], s['offset'], s['size'], s['link'], 0, 8,
                                   s['entsize'])
        headers += struct.pack('<IIQQQQIIQQ', name_at['.shstrtab'], SHT_STRTAB, 0, 0,
                               shstr_offset, len(names), 0, 0, 1, 0)
        self.blob += headers
        size = len(self.blob)
        ident = b'\x7fELF' + bytes([2, 1, 1, 0]) + bytes(8)
        header = ident + struct.pack('<HHIQQQIHHHHHH', self.etype, 62, 1, self.base, 64, shoff,
                                     0, 64, 56, 1, 64, shnum, shnum - 1)
        phdr = struct.pack('<IIQQQQQQ', 1, 5, 0, self.base, self.base, size, size, 0x1000)
        self.blob[0:64] = header
        self.blob[64:120] = phdr
        with open(path, 'wb') as out:
            out.write(self.blob)


def dynsym(elf, names):
    """.dynstr and .dynsym with one undefined function symbol per name; returns .dynsym's index."""
    strings = bytearray(b'\0')
    symbols = bytearray(24)
    for name in names:
        symbols += struct.pack('<IBBHQQ', len(strings), 0x12, 0, 0, 0, 0)  # GLOBAL FUNC UNDEF
        strings += name + b'\0'
    dynstr = elf.add('.dynstr', SHT_STRTAB, bytes(strings))
    return elf.add('.dynsym', SHT_DYNSYM, bytes(symbols), link=dynstr, entsize=24, align=8)


def plt(elf, slots, got_of_slot):
    """A .plt of `slots` 16-byte x86-64 slots, each `jmp *GOT(%rip)`; got_of_slot(i, slot_addr)
    gives the GOT address slot i reads. Returns the section index."""
    start = len(elf.blob) + (-len(elf.blob)) % 16
    code = bytearray()
    for i in range(slots):
        addr = elf.base + start + 16 * i
        disp = got_of_slot(i, addr) - (addr + 6)
        code += b'\xff\x25' + struct.pack('<i', disp) + b'\x0f\x1f\x44\x00\x00' + bytes(5)
    index = elf.add('.plt', 1, bytes(code), flags=SHF_ALLOC | SHF_EXECINSTR, entsize=16)
    assert elf.addr_of(index) == elf.base + start
    return index


def rela(elf, entries, symtab_index):
    """A .rela.dyn of (got_address, symbol_index) GLOB_DAT entries; returns its index."""
    data = b''.join(struct.pack('<QQq', got, (sym << 32) | R_X86_64_GLOB_DAT, 0)
                    for got, sym in entries)
    return elf.add('.rela.dyn', SHT_RELA, data, link=symtab_index, entsize=24, align=8)


def main():
    case, out = sys.argv[1], sys.argv[2]
    if case == 'plt-pie':
        names = [name.encode() for name in sys.argv[3].split(',')]
        elf = Elf()
        got = 0x200000
        slots = plt(elf, len(names), lambda i, addr: got + 8 * i)
        assert elf.addr_of(slots) == 0x80, hex(elf.addr_of(slots))
        sym = dynsym(elf, names)
        rela(elf, [(got + 8 * i, i + 1) for i in range(len(names))], sym)
        DT_FLAGS_1, DF_1_PIE = 0x6ffffffb, 0x08000000
        elf.add('.dynamic', SHT_DYNAMIC, struct.pack('<qQqQ', DT_FLAGS_1, DF_1_PIE, 0, 0),
                entsize=16, align=8)
        elf.write(out)
        return
    n = int(sys.argv[3]) if len(sys.argv) > 3 else None
    m = int(sys.argv[4]) if len(sys.argv) > 4 else None
    if case == 'rela-headers':
        elf = Elf()
        sym = dynsym(elf, [b'free'])
        got = 0x100000
        index = rela(elf, [(got + 8 * i, 1) for i in range(m or 100_000)], sym)
        elf.repeat(index, (n or 65_000) - 1)
    elif case == 'dynamic-headers':
        elf = Elf()
        data = struct.pack('<qQ', 21, 0) * (m or 100_000)  # DT_DEBUG: no DT_NULL nor DT_FLAGS_1
        index = elf.add('.dynamic', SHT_DYNAMIC, data, entsize=16, align=8)
        elf.repeat(index, (n or 65_000) - 1)
    elif case == 'note-headers':
        elf = Elf()
        data = struct.pack('<III', 4, 4, 1) + b'GNU\0' + bytes(4)  # NT_GNU_ABI_TAG, not a build id
        index = elf.add('.note', SHT_NOTE, data * (m or 100_000), align=4)
        elf.repeat(index, (n or 65_000) - 1)
    elif case == 'symtab-headers':
        elf = Elf(ET_EXEC, 0x400000)
        strings = bytearray(b'\0')
        symbols = bytearray(24)
        for i in range(m or 20_000):
            symbols += struct.pack('<IBBHQQ', len(strings), 0x12, 0, 1, 0x400000 + 16 * i, 16)
            strings += b'f%d\0' % i
        strtab = elf.add('.strtab', SHT_STRTAB, bytes(strings), flags=0)
        index = elf.add('.symtab', SHT_SYMTAB, bytes(symbols), flags=0, link=strtab, entsize=24,
                        align=8)
        elf.repeat(index, (n or 65_000) - 1)
    elif case == 'symtab-aliases':
        elf = Elf(ET_EXEC, 0x400000)
        strings = bytearray(b'\0')
        symbols = bytearray(24)
        for i in range(n or 250_000):
            symbols += struct.pack('<IBBHQQ', len(strings), 0x12, 0, 1, 0x401000, 64)
            strings += b'alias_%07d\0' % i
        strtab = elf.add('.strtab', SHT_STRTAB, bytes(strings), flags=0)
        elf.add('.symtab', SHT_SYMTAB, bytes(symbols), flags=0, link=strtab, entsize=24, align=8)
    elif case == 'plt-long-name':
        elf = Elf()
        sym = dynsym(elf, [b'x' * (n or 1 << 20)])
        got = 0x200000
        plt(elf, m or 2000, lambda i, addr: got)
        rela(elf, [(got, 1)], sym)
    elif case == 'plt-ok':
        elf = Elf()
        sym = dynsym(elf, [b'free', b'malloc'])
        got = 0x200000
        plt(elf, 2, lambda i, addr: got + 8 * i)
        rela(elf, [(got, 1), (got + 8, 2)], sym)
    else:
        sys.exit('unknown case ' + case)
    elf.write(out)


if __name__ == '__main__':
    main()

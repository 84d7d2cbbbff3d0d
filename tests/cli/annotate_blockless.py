#!/usr/bin/env python3
"""The call targets without a function block in callgrind_annotate's reading of a Callgrind file.

callgrind_annotate (valgrind callgrind/callgrind_annotate.in) knows a function by `file:name`:
ids stand for names only, the object is ignored, fn= takes the current file (fl=, fi= or fe=), a
call's callee the cfi=/cfl= file or else the current one. Prints one `file:name` per line.

Usage: annotate_blockless.py FILE   (zstd input is expanded by the caller)
"""
import re
import sys

LINE = re.compile(r'^(fl|fi|fe|fn|cfi|cfl|cfn)=(.*)$')
COMPRESSED = re.compile(r'^\((\d+)\)(?:\s+(.*))?$')


def main():
    ids = {'fl': {}, 'fn': {}}

    def name(space, value):
        m = COMPRESSED.match(value)
        if not m:
            return value
        if m.group(2) is not None:
            ids[space][m.group(1)] = m.group(2)
        return ids[space].get(m.group(1), '')

    current_file, call_file = '', None
    blocks, callees = set(), set()
    with open(sys.argv[1], 'rb') as f:
        for raw in f:
            m = LINE.match(raw.decode('utf-8', 'surrogateescape').rstrip('\r\n'))
            if not m:
                continue
            key, value = m.groups()
            if key in ('fl', 'fi', 'fe'):
                current_file = name('fl', value)
            elif key in ('cfi', 'cfl'):
                call_file = name('fl', value)
            elif key == 'fn':
                blocks.add('%s:%s' % (current_file, name('fn', value)))
            else:
                callee_file = call_file if call_file is not None else current_file
                callees.add('%s:%s' % (callee_file, name('fn', value)))
                call_file = None
    sys.stdout.write(''.join(t + '\n' for t in sorted(callees - blocks)))


if __name__ == '__main__':
    main()

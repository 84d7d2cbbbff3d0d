#!/usr/bin/env python3
"""KCachegrind's reading of a Callgrind file, as canonical text to diff.

An independent model of KDE kcachegrind's libcore/cachegrindloader.cpp (and TraceData::function
in tracedata.cpp), written for the round-trip tests so that they check the consumer most users
open, whose rules differ from callgrind_annotate's and from cg-inject's own reader:

- A function is name + file + object; TraceData keys it by the name and the *short* (base) names
  of file and object, and keeps the full names of its first sight.
- `fn=(N) name`, `cfn=(N) name` and `jfn=(N) name` bind id N to the function (name, file, object)
  in force on that line; a bare `(N)` means that function, whatever ob=/fl=/cob=/cfi= say then.
  Object and file ids are plain names. An undefined id is an unknown (empty) name; `???` is the
  empty name too.
- fl=, fi= and fe= all set the current file; fn= goes back to the file of the last fl=. A call
  without cfi= targets the current file, without cob= the current object; cob=/cfi= apply to the
  next calls= only.
- Every part (one of events:, part:, pid:, thread:, positions: once the current part has had
  its events: line) forgets all ids and the current position.
- Positions: the address column is parsed before the line column when both exist (`instr` and
  `line` in positions:); `+N`, `-N`, `*` are relative to the last cost or call-cost line.

Output: sorted lines `fn`, `self`, `line`, `instr`, `call`, one fact each, summed over parts and
keyed by event name, so two files that KCachegrind shows alike print the same text.

Usage: kcachegrind_reading.py [--functions-only] FILE   (zstd input is expanded by the caller)
       kcachegrind_reading.py --inclusive FILE
       kcachegrind_reading.py --blockless FILE
       kcachegrind_reading.py --native [--jit-object NAME]... [--from-callgraph] FILE
       kcachegrind_reading.py --project-callgraph JSON
       kcachegrind_reading.py --cycles FILE
--native prints only what an injection must keep: for every function that is not JIT code
(object `???`/empty, one of the --jit-object names cg-inject gives JIT code, or an ELF image
`OUTPUT.NAME[.N].elf` of such a source's code; a stub cg-inject named NAME@plt in a real object
was `???` code in the input and counts as such), its self and
inclusive cost, its calls to and from other such functions, and the sums of its calls to and
from JIT code. With --from-callgraph, FILE is `cg-inject --callgraph` JSON (cg-inject's own
reading) instead of a profile.
--inclusive prints each function's inclusive cost as KCachegrind's TraceFunction::update
computes it: the sum of the calls into it when it is called, else its self cost plus its calls,
calls of a function to itself (simple recursion) left out either way. --blockless prints the call
targets that no `fn=` block names, one per line.
--cycles prints the cycles of calls (strongly connected components of two or more functions,
as KCachegrind's cycle detection groups them; a function calling itself is none), one per line,
their functions' keys sorted.
The second form prints the function-level facts of `cg-inject --callgraph` JSON (cg-inject's own
reading, which follows callgrind_annotate's file rules) under KCachegrind's function keys, so a
test can tell whether the two readings of one file agree.
"""
import collections
import json
import sys


def short(name):
    return name[name.rfind('/') + 1:]


def unknown(name):
    return '' if name == '???' else name


class Reading:
    def __init__(self, functions_only):
        self.functions_only = functions_only
        self.first_names = {}  # key -> (name, file, object) of the first sight
        self.self_cost = collections.defaultdict(collections.Counter)
        self.line_cost = collections.defaultdict(collections.Counter)
        self.instr_cost = collections.defaultdict(collections.Counter)
        self.call_count = collections.Counter()
        self.call_cost = collections.defaultdict(collections.Counter)
        self.blocks = set()  # functions some fn= line names

    def function(self, name, file, obj):
        key = (name, short(file), short(obj))
        self.first_names.setdefault(key, (name, file, obj))
        return key

    def inclusive_text(self):
        called = collections.defaultdict(collections.Counter)
        calling = collections.defaultdict(collections.Counter)
        for (caller, callee), count in self.call_count.items():
            if caller == callee:
                continue  # simple recursion
            called[callee].update(self.call_cost[(caller, callee)])
            calling[caller].update(self.call_cost[(caller, callee)])
        out = []
        for key in self.first_names:
            if key in called:
                costs = called[key]
            else:
                costs = collections.Counter(self.self_cost.get(key, {}))
                costs.update(calling.get(key, {}))
            out.append('inclusive %r %s' % (key, sorted(c for c in costs.items() if c[1])))
        return '\n'.join(sorted(out)) + '\n'

    def text(self):
        out = []
        if not self.functions_only:
            for key, (name, file, obj) in self.first_names.items():
                out.append('fn %r file=%r ob=%r' % (key, file, obj))
        for key, costs in self.self_cost.items():
            nonzero = sorted(c for c in costs.items() if c[1])
            if nonzero:  # a function only called, or only with zero costs, has no self line
                out.append('self %r %s' % (key, nonzero))
        for key, count in self.call_count.items():
            costs = sorted(c for c in self.call_cost[key].items() if c[1])
            out.append('call %r count=%d %s' % (key, count, costs))
        if not self.functions_only:
            for key, costs in self.line_cost.items():
                out.append('line %r %s' % (key, sorted(c for c in costs.items() if c[1])))
            for key, costs in self.instr_cost.items():
                out.append('instr %r %s' % (key, sorted(c for c in costs.items() if c[1])))
        return '\n'.join(sorted(out)) + '\n'


class Loader:
    PART_KEYS = ('events', 'part', 'pid', 'thread', 'positions')

    def __init__(self, reading):
        self.r = reading
        self.events = None
        self.has_line, self.has_addr = True, False
        self.new_part()

    def new_part(self):
        self.ids = {'ob': {}, 'fl': {}, 'fn': {}}
        self.obj = self.file = self.function_file = self.function = None
        self.called_obj = self.called_file = self.called_function = None
        self.jump_file = None
        self.pos = [0, 0]  # addr, line
        self.next_kind = 'self'  # or 'call', 'jump': what the next position line is
        self.call_count = 0
        self.mapping = False  # the part has had its events: line

    def compressed(self, space, text, make):
        if not (len(text) >= 2 and text[0] == '(' and text[1].isdigit()):
            return make(unknown(text))
        close = text.find(')')
        index = int(text[1:close])
        rest = text[close + 1:].lstrip()
        if rest:
            value = make(unknown(rest))
            self.ids[space][index] = value
            return value
        value = self.ids[space].get(index)
        return value if value is not None else make('')

    def name(self, space, text):
        return self.compressed(space, text, lambda n: n)

    def func(self, text, file, obj):
        return self.compressed('fn', text, lambda n: self.r.function(n, file or '', obj or ''))

    def parse_position(self, tokens):
        pos = list(self.pos)
        columns = (['addr'] if self.has_addr else []) + (['line'] if self.has_line else [])
        for i, column in enumerate(columns):
            tok = tokens[i]
            slot = 0 if column == 'addr' else 1
            if tok == '*':
                continue
            if tok[0] in '+-':
                diff = int(tok[1:], 0)
                pos[slot] = self.pos[slot] + diff if tok[0] == '+' else self.pos[slot] - diff
            else:
                pos[slot] = int(tok, 0)
        return pos, tokens[len(columns):]

    def line(self, text):
        if not text or text[0] == '#':
            return
        c = text[0]
        if c <= '9':
            self.cost_line(text)
            return
        key, sep, value = text.partition('=')
        if sep and key.isalpha():
            self.assignment(key, value)
            return
        key, sep, value = text.partition(':')
        if sep:
            self.header(key.strip(), value.strip())

    def header(self, key, value):
        if key in self.PART_KEYS and self.mapping:
            self.new_part()
        if key == 'events':
            self.events = value.split()
            self.mapping = True
        elif key == 'positions':
            self.has_line = 'line' in value
            self.has_addr = 'instr' in value

    def assignment(self, key, value):
        if key == 'fn':
            self.r.blocks.add(self.func(value, self.function_file, self.obj))
            # falls through to the common handling, which binds the same id again
        if key == 'fl':
            self.file = self.function_file = self.name('fl', value)
        elif key in ('fi', 'fe'):
            self.file = self.name('fl', value)
        elif key == 'fn':
            self.file = self.function_file
            self.function = self.func(value, self.file, self.obj)
        elif key == 'ob':
            self.obj = self.name('ob', value)
            self.function = None
        elif key == 'cob':
            self.called_obj = self.name('ob', value)
        elif key in ('cfi', 'cfl'):
            self.called_file = self.name('fl', value)
        elif key == 'cfn':
            obj = self.called_obj if self.called_obj is not None else self.obj
            file = self.called_file if self.called_file is not None else self.file
            self.called_function = self.func(value, file, obj)
        elif key == 'calls':
            self.call_count = int(value.split()[0], 0)
            self.next_kind = 'call'
        elif key == 'jfi':
            self.jump_file = self.name('fl', value)
        elif key == 'jfn':
            file = self.jump_file if self.jump_file is not None else self.file
            self.func(value, file, self.obj)  # binds the id
        elif key in ('jump', 'jcnd'):
            self.next_kind = 'jump'

    def cost_line(self, text):
        self.pos, rest = self.parse_position(text.split())
        if self.function is None:
            self.function = self.r.function('', self.file or '', self.obj or '')
        costs = collections.Counter()
        for event, value in zip(self.events, rest):
            costs[event] += int(value, 0)
        kind, self.next_kind = self.next_kind, 'self'
        if kind == 'jump':
            self.jump_file = None
            return
        if kind == 'call':
            edge = (self.function, self.called_function)
            self.r.call_count[edge] += self.call_count
            self.r.call_cost[edge].update(costs)
            self.called_obj = self.called_file = None
            return
        self.r.self_cost[self.function].update(costs)
        if self.has_line:
            self.r.line_cost[(self.function, self.file or '', self.pos[1])].update(costs)
        if self.has_addr:
            self.r.instr_cost[(self.function, self.pos[0])].update(costs)


def project_callgraph(path):
    """cg-inject's own reading (--callgraph JSON) as function-level facts."""
    reading = Reading(functions_only=True)
    with open(path) as f:
        parts = json.load(f)['parts']

    def key(k):
        return reading.function(unknown(k['function']), unknown(k['file']), unknown(k['object']))

    for part in parts:
        events = part['events']
        for fn in part['functions']:
            k = key(fn['key'])
            reading.self_cost[k].update(dict(zip(events, fn['self'])))
        for call in part['calls']:
            edge = (key(call['caller']), key(call['callee']))
            reading.call_count[edge] += call['count']
            reading.call_cost[edge].update(dict(zip(events, call['inclusive'])))
    return reading


def native_view(reading, jit_objects):
    def is_jit(key):
        # A source's object name, or an ELF image of its code (OUTPUT.SOURCE[.N].elf).
        obj = key[2]
        # A real object's PLT stub that Callgrind put in `???` and cg-inject named under its
        # object (`free@plt`, no file: issue 23 item 7) is code the input read as `???`: it is
        # compared as such on both sides. Callgrind itself never names a function NAME@plt.
        if key[0].endswith('@plt') and key[1] == '' and obj not in ('', '???'):
            return True
        return obj == '' or obj in jit_objects or (
            obj.endswith('.elf') and any('.%s.' % name in obj for name in jit_objects))

    out = []
    inclusive = collections.defaultdict(collections.Counter)
    for key, costs in reading.self_cost.items():
        if not is_jit(key):
            inclusive[key].update(costs)
    jit_calls = collections.defaultdict(lambda: [0, collections.Counter()])
    for (caller, callee), count in reading.call_count.items():
        costs = reading.call_cost[(caller, callee)]
        if not is_jit(caller):
            inclusive[caller].update(costs)
        if is_jit(caller) and is_jit(callee):
            continue
        if not is_jit(caller) and not is_jit(callee):
            out.append('call %r -> %r count=%d %s' % (caller, callee, count, sorted(costs.items())))
            continue
        side = ('to-jit', caller) if is_jit(callee) else ('from-jit', callee)
        jit_calls[side][0] += count
        jit_calls[side][1].update(costs)
    # Functions only called, or only with zero costs, have no self or inclusive line.
    for key, costs in reading.self_cost.items():
        nonzero = sorted(c for c in costs.items() if c[1])
        if not is_jit(key) and nonzero:
            out.append('self %r %s' % (key, nonzero))
    for key, costs in inclusive.items():
        nonzero = sorted(c for c in costs.items() if c[1])
        if nonzero:
            out.append('inclusive %r %s' % (key, nonzero))
    for (direction, key), (count, costs) in jit_calls.items():
        out.append('%s %r count=%d %s' % (direction, key, count, sorted(costs.items())))
    return '\n'.join(sorted(out)) + '\n'


def cycles_text(reading):
    """The strongly connected components of two or more functions (Tarjan's, iterative)."""
    succ = collections.defaultdict(list)
    for (caller, callee) in reading.call_count:
        if caller != callee:
            succ[caller].append(callee)
    nodes = sorted(set(succ) | {c for cs in succ.values() for c in cs})
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(succ[root]))]
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(succ[w])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return ''.join('%r\n' % (c,) for c in sorted(components))


def main():
    args = sys.argv[1:]
    if args[0] == '--native':
        jit_objects = {short(args[i + 1]) for i, a in enumerate(args) if a == '--jit-object'}
        if '--from-callgraph' in args:
            reading = project_callgraph(args[-1])
        else:
            reading = Reading(functions_only=True)
            loader = Loader(reading)
            with open(args[-1], 'rb') as f:
                for raw in f:
                    loader.line(raw.decode('utf-8', 'surrogateescape').rstrip('\r\n'))
        sys.stdout.write(native_view(reading, jit_objects))
        return
    if args[0] == '--cycles':
        reading = Reading(functions_only=True)
        loader = Loader(reading)
        with open(args[1], 'rb') as f:
            for raw in f:
                loader.line(raw.decode('utf-8', 'surrogateescape').rstrip('\r\n'))
        sys.stdout.write(cycles_text(reading))
        return
    if args[0] in ('--inclusive', '--blockless'):
        reading = Reading(functions_only=True)
        loader = Loader(reading)
        with open(args[1], 'rb') as f:
            for raw in f:
                loader.line(raw.decode('utf-8', 'surrogateescape').rstrip('\r\n'))
        if args[0] == '--inclusive':
            sys.stdout.write(reading.inclusive_text())
        else:
            targets = {callee for (_, callee) in reading.call_count} - reading.blocks
            sys.stdout.write(''.join('%r\n' % (t,) for t in sorted(targets)))
        return
    if args[0] == '--project-callgraph':
        sys.stdout.write(project_callgraph(args[1]).text())
        return
    functions_only = '--functions-only' in args
    path = [a for a in args if not a.startswith('--')][0]
    reading = Reading(functions_only)
    loader = Loader(reading)
    with open(path, 'rb') as f:
        for raw in f:
            loader.line(raw.decode('utf-8', 'surrogateescape').rstrip('\r\n'))
    sys.stdout.write(reading.text())


if __name__ == '__main__':
    main()

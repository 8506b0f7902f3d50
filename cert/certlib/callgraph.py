"""The whole-program call graph of the linked image.

Edges come from the disassembly: bl/blx to an address (calls), b to
another function (tail calls), ldr pc from a literal (linker veneers).
Indirect transfers (blx rN, bx rN, ...) are resolved only through
cert/indirect_calls.conf; an indirect site the file does not cover is
reported, never guessed.  The file is checked against the image in turn:
every function registered through the named sources (argument N of every
call to a registration function, the words of a table or a section) must
be an allowed target, and every function whose address the image takes
must be registered somewhere or listed as address-only.
"""
from certlib.disasm import canonical_register


class Edge:
    __slots__ = ("caller", "callee", "kind", "site")

    def __init__(self, caller, callee, kind, site):
        self.caller = caller
        self.callee = callee
        self.kind = kind      # call, tail, veneer, indirect
        self.site = site      # address of the instruction


class Finding:
    """One offence: offender (a function, symbol or file), message, location."""

    def __init__(self, offender, message, location=None, **extra):
        self.offender = offender
        self.message = message
        self.location = location
        self.extra = extra

    def as_dict(self):
        d = {"offender": self.offender, "message": self.message}
        if self.location:
            d["location"] = self.location
        d.update(self.extra)
        return d


ARG_REGISTERS = ["r0", "r1", "r2", "r3"]
CALL_CLOBBERED = {"r0", "r1", "r2", "r3", "r12", "r14"}


class CallGraph:
    def __init__(self, image, indirect_conf):
        self.image = image
        self.conf = indirect_conf
        self.edges = {f: [] for f in image.functions}
        self.callers = {f: [] for f in image.functions}
        self.indirect_sites = {}       # function -> [instructions]
        self.exception_returns = []    # instructions
        self.jump_tables = []          # (function, instruction, entries) checked
        self.computed_jumps = []       # (function, instruction) taken as local
        self.findings = []             # problems with the graph itself
        self.registered = {}           # caller name -> {function: [where]}
        self.address_taken = {}        # function -> [where]
        self._build_direct()
        self._find_address_taken()
        self._resolve_indirect()

    # ----- construction ----------------------------------------------------

    def _add(self, caller, callee, kind, site):
        if callee is None:
            return
        edge = Edge(caller, callee, kind, site)
        self.edges[caller].append(edge)
        self.callers[callee].append(edge)

    def _build_direct(self):
        image = self.image
        for f in image.functions:
            for insn in f.instructions:
                if insn.kind == "call":
                    target = image.function_at(insn.target)
                    if target is None:
                        self.findings.append(Finding(f.label, f"call at {insn.addr:08x} to "
                                                     f"{insn.target:08x}, which is no code in the image"))
                    self._add(f, target, "call", insn.addr)
                elif insn.kind == "branch":
                    if f.start <= insn.target < f.end:
                        continue
                    target = image.function_at(insn.target)
                    if target is None:
                        self.findings.append(Finding(f.label, f"branch at {insn.addr:08x} to "
                                                     f"{insn.target:08x}, which is no code in the image"))
                    self._add(f, target, "tail", insn.addr)
                elif insn.kind == "literal-jump":
                    value = image.elf.word(insn.literal) if insn.literal is not None else None
                    target = image.function_at(value & ~1) if value is not None else None
                    if target is None:
                        self.indirect_sites.setdefault(f, []).append(insn)
                    else:
                        self._add(f, target, "veneer", insn.addr)
                elif insn.kind in ("icall", "ijump"):
                    self.indirect_sites.setdefault(f, []).append(insn)
                elif insn.kind == "exception-return":
                    self.exception_returns.append(insn)
                elif insn.kind == "table-jump":
                    self._table_jump(f, insn)

    def _table_jump(self, f, insn):
        """A switch through a jump table: 'ldr pc, [pc, rN, lsl #2]' reads the
        words that follow (pc + 8); every entry must be code of f itself or
        becomes an edge.  Other computed jumps (tbb/tbh, add pc, pc, rN) are
        taken as jumps within f and listed as such."""
        if insn.mnemonic.startswith("ldr"):
            entries = []
            addr = insn.addr + 8
            while True:
                word = self.image.insn_at.get(addr)
                if word is None or not word.is_data or word.mnemonic != ".word":
                    break
                entries.append(word.value)
                addr += 4
            if not entries:
                self.findings.append(Finding(f.label, f"jump table at {insn.addr:08x} in {f.label} has no "
                                                      f"table of addresses after it", kind="unresolved-table"))
                return
            for value in entries:
                if not f.start <= value < f.end:
                    self._add(f, self.image.function_at(value & ~1), "tail", insn.addr)
            self.jump_tables.append((f, insn, len(entries)))
        else:
            self.computed_jumps.append((f, insn))

    def _function_from_word(self, value):
        """The function a data word points to (Thumb bit allowed), or None."""
        if value is None:
            return None
        f = self.image.function_at(value & ~1)
        if f is None or f.start != (value & ~1):
            return None
        if (value & 1) and not f.thumb:
            return None
        return f

    def _find_address_taken(self):
        image = self.image
        # Literal pools and movw/movt pairs in code.
        for f in image.functions:
            lows = {}
            for insn in f.instructions:
                if insn.is_data and insn.mnemonic == ".word":
                    g = self._function_from_word(insn.value)
                    if g is not None:
                        self.address_taken.setdefault(g, []).append(f"literal in {f.label} at {insn.addr:08x}")
                    continue
                root = insn.mnemonic.split(".")[0]
                if root.startswith("movw"):
                    lows[insn.writes] = _immediate_of(insn)
                elif root.startswith("movt") and insn.writes in lows and lows[insn.writes] is not None:
                    high = _immediate_of(insn)
                    if high is not None:
                        g = self._function_from_word((high << 16) | lows[insn.writes])
                        if g is not None:
                            self.address_taken.setdefault(g, []).append(f"movw/movt in {f.label} at {insn.addr:08x}")
        # Words of initialised data.
        for s in image.elf.sections:
            if not s.alloc or s.nobits or s.flags & 0x4:
                continue
            for i, value in enumerate(image.elf.words(s.addr, s.size)):
                g = self._function_from_word(value)
                if g is not None:
                    self.address_taken.setdefault(g, []).append(f"{s.name} word at {s.addr + 4 * i:08x}")

    def _resolve_register(self, f, call_index, register):
        """Value of register just before instruction call_index of f, or None.

        Walks back through straight-line code only: a branch target or a call
        in between (which clobbers argument registers) ends the search."""
        targets = {i.target for i in f.instructions if i.kind == "branch" and i.target is not None}
        reg = register
        high = None
        for insn in reversed(f.instructions[:call_index]):
            if insn.is_data:
                continue
            if insn.kind in ("call", "icall") and reg in CALL_CLOBBERED:
                return None
            if insn.kind in ("return", "ijump", "literal-jump", "table-jump") or (
                    insn.kind == "branch" and not insn.conditional):
                return None
            written = _writes(insn)
            if reg in written:
                if insn.conditional:
                    return None
                root = insn.mnemonic.split(".")[0]
                if root.startswith("ldr") and insn.literal is not None and root in ("ldr",):
                    value = self.image.elf.word(insn.literal)
                    return value if high is None else None
                if root.startswith("movt"):
                    high = _immediate_of(insn)
                    if high is None:
                        return None
                elif root.startswith("movw"):
                    low = _immediate_of(insn)
                    if low is None or high is None:
                        return None
                    return (high << 16) | low
                elif root in ("mov", "movs") and len(insn.operands.split(",")) == 2:
                    src = canonical_register(insn.operands.split(",")[1])
                    if not src.startswith("r") or not src[1:].isdigit():
                        return None
                    reg = src
                elif root in ("adr", "add") and "pc" in insn.operands:
                    return _first_hex(insn.comment) or _first_hex(insn.operands)
                else:
                    return None
            if insn.addr in targets:
                return None
        return None

    def _registered_through_call(self, function_name, argn):
        """Functions passed as argument argn to every call of function_name."""
        image = self.image
        register = ARG_REGISTERS[argn - 1]
        found, problems = {}, []
        callees = image.by_name.get(function_name, [])
        for callee in callees:
            for edge in self.callers[callee]:
                caller = edge.caller
                index = next(i for i, insn in enumerate(caller.instructions) if insn.addr == edge.site)
                value = self._resolve_register(caller, index, register)
                target = self._function_from_word(value)
                where = f"{caller.label} at {edge.site:08x}"
                table = self._data_object_at(value) if target is None and value is not None else None
                if table is not None:
                    for g, w in self._registered_in_words(table.name, table.address, table.size).items():
                        found.setdefault(g, []).extend(f"{where}: {x}" for x in w)
                    continue
                if target is None:
                    problems.append(Finding(caller.label,
                        f"cannot tell which function {caller.label} registers through "
                        f"{function_name} (argument {argn}) at {edge.site:08x}: pass the "
                        f"address of a named function", image.location(edge.site)))
                else:
                    found.setdefault(target, []).append(where)
        return found, problems

    def _data_object_at(self, value):
        """The static data object starting at value (a table passed by address)."""
        for s in self.image.elf.symbols:
            if s.kind == "OBJECT" and s.value == value and s.size > 0:
                return s
        return None

    def _registered_in_words(self, label, addr, size):
        found = {}
        for i, value in enumerate(self.image.elf.words(addr, size)):
            g = self._function_from_word(value)
            if g is not None:
                found.setdefault(g, []).append(f"{label}[{i}]")
        return found

    def _resolve_indirect(self):
        image, conf = self.image, self.conf
        all_sites = [i.addr for sites in self.indirect_sites.values() for i in sites]
        chains = image.tools.inline_chains(image.elf_path, all_sites, image.source_dir)
        self.site_info = {}
        annotated_names = set()
        for f, sites in sorted(self.indirect_sites.items(), key=lambda kv: kv[0].start):
            for insn in sites:
                chain = chains.get(insn.addr, [])
                names = [name for name, _ in chain] + [f.name] + list(getattr(f, "aliases", []))
                entry = next((conf.entries[n] for n in names if n in conf.entries), None)
                location = chain[0][1] if chain else None
                self.site_info[insn.addr] = {"function": f.label, "source_function": names[0],
                                             "location": location,
                                             "entry": entry.caller if entry else None}
                if entry is None:
                    via = f" (inlined from {names[0]})" if names[0] != f.name else ""
                    self.findings.append(Finding(names[0],
                        f"indirect call in {f.label}{via} ({insn.text()} at {insn.addr:08x}) has no entry "
                        f"in cert/indirect_calls.conf", location, kind="unannotated-indirect-call"))
                    continue
                annotated_names.add(entry.caller)
                if not f.library and location and not _source_marked(image.source_dir, location):
                    self.findings.append(Finding(names[0],
                        f"indirect call at {location} is in cert/indirect_calls.conf but its source has "
                        f"no '/* cert: indirect call, targets are ... */' comment within 3 lines above",
                        location, kind="unmarked-source"))
                for name in entry.targets:
                    for target in image.by_name.get(name, []):
                        self._add(f, target, "indirect", insn.addr)
        self.annotated_names = annotated_names
        for name, entry in conf.entries.items():
            if name not in annotated_names:
                if image.by_name.get(name) or any(
                        name == info["source_function"] for info in self.site_info.values()):
                    self.findings.append(Finding(name, f"cert/indirect_calls.conf ({entry.line.where()}) "
                                                 f"annotates {name}, which has no indirect call in the image",
                                                 kind="stale-annotation"))
                continue   # not linked into this image
            registered = {}
            for source in entry.sources:
                if source[0] == "call":
                    found, problems = self._registered_through_call(source[1], source[2])
                    self.findings.extend(problems)
                elif source[0] == "local":
                    found = {}
                elif source[0] == "table":
                    symbols = [s for s in image.elf.symbols if s.name == source[1] and s.kind == "OBJECT"]
                    found = {}
                    for s in symbols:
                        for g, w in self._registered_in_words(s.name, s.address, s.size).items():
                            found.setdefault(g, []).extend(w)
                else:
                    s = image.elf.section(source[1])
                    found = self._registered_in_words(source[1], s.addr, s.size) if s and not s.nobits else {}
                for g, where in found.items():
                    registered.setdefault(g, []).extend(where)
            self.registered[name] = registered
            for g, where in registered.items():
                if g.name not in entry.targets:
                    self.findings.append(Finding(g.label,
                        f"{g.label} is registered for the indirect calls of {name} ({where[0]}) but is "
                        f"not among its targets in cert/indirect_calls.conf ({entry.line.where()})",
                        kind="unlisted-target"))
        registered_anywhere = set()
        for regs in self.registered.values():
            registered_anywhere.update(regs)
        for g, where in sorted(self.address_taken.items(), key=lambda kv: kv[0].start):
            if g in registered_anywhere or g.name in conf.address_only:
                continue
            if any(g.name in e.targets for e in conf.entries.values()):
                continue
            self.findings.append(Finding(g.label,
                f"the address of {g.label} is taken ({where[0]}) but no entry of "
                f"cert/indirect_calls.conf allows calling it, and it is not address-only",
                kind="unaccounted-address"))

    # ----- queries ---------------------------------------------------------

    def callees(self, f):
        return [e.callee for e in self.edges[f]]

    def reachable(self, roots):
        """{function: parent edge} for everything reachable from roots."""
        parent = {r: None for r in roots}
        stack = list(roots)
        while stack:
            f = stack.pop()
            for e in self.edges[f]:
                if e.callee not in parent:
                    parent[e.callee] = e
                    stack.append(e.callee)
        return parent

    @staticmethod
    def path_to(parent, f):
        path = [f]
        while parent.get(path[-1]) is not None:
            path.append(parent[path[-1]].caller)
        return list(reversed(path))

    def cycles(self, within=None):
        """Strongly connected components with a cycle (Tarjan, iterative)."""
        nodes = list(within) if within is not None else list(self.edges)
        node_set = set(nodes)
        index, low, on_stack, stack = {}, {}, set(), []
        result, counter = [], [0]
        for start in nodes:
            if start in index:
                continue
            work = [(start, iter([e.callee for e in self.edges[start] if e.callee in node_set]))]
            index[start] = low[start] = counter[0]
            counter[0] += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                v, it = work[-1]
                advanced = False
                for w in it:
                    if w not in index:
                        index[w] = low[w] = counter[0]
                        counter[0] += 1
                        stack.append(w)
                        on_stack.add(w)
                        work.append((w, iter([e.callee for e in self.edges[w] if e.callee in node_set])))
                        advanced = True
                        break
                    elif w in on_stack:
                        low[v] = min(low[v], index[w])
                if advanced:
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
                        if w is v:
                            break
                    if len(component) > 1 or any(e.callee is v for e in self.edges[v]):
                        result.append(sorted(component, key=lambda f: f.start))
        return result


def shortest_cycle(graph, component):
    """An actual call cycle through the first member of a strongly connected
    component: [f, g, ..., f] following real edges, with the edge sites."""
    members = set(component)
    start = component[0]
    parent = {start: None}
    queue = [start]
    while queue:
        f = queue.pop(0)
        for e in graph.edges[f]:
            if e.callee not in members:
                continue
            if e.callee is start:
                path, edges = [f], [e]
                while parent[path[-1]] is not None:
                    edges.append(parent[path[-1]])
                    path.append(parent[path[-1]].caller)
                path.reverse()
                edges.reverse()
                return path + [start], edges
            if e.callee not in parent:
                parent[e.callee] = e
                queue.append(e.callee)
    return [start, start], []


def _writes(insn):
    """Registers an instruction may write (conservative for multi-register forms)."""
    import re
    root = insn.mnemonic.split(".")[0]
    regs = set()
    if insn.writes:
        regs.add(insn.writes)
    if root.startswith(("pop", "ldm")):
        m = re.search(r"\{([^}]*)\}", insn.operands)
        if m:
            regs.update(canonical_register(r) for r in m.group(1).split(","))
    if root.startswith("ldrd") or root.startswith("umull") or root.startswith("smull"):
        parts = insn.operands.split(",")
        regs.update(canonical_register(p) for p in parts[:2])
    if insn.kind in ("call", "icall"):
        regs.update(CALL_CLOBBERED)
    return regs


def _immediate_of(insn):
    import re
    m = re.search(r"#(-?(?:0x[0-9a-f]+|\d+))", insn.operands)
    return int(m.group(1), 0) & 0xFFFF if m else None


def _first_hex(text):
    import re
    m = re.search(r"\b([0-9a-f]{8})\b", text or "")
    return int(m.group(1), 16) if m else None


def _source_marked(source_dir, location):
    """True when a 'cert:' comment is on the line or up to 3 lines above it."""
    import os
    path, _, line = location.rpartition(":")
    if not line.isdigit():
        return False
    full = path if os.path.isabs(path) else os.path.join(source_dir, path)
    try:
        with open(full, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return False
    n = int(line)
    return any("cert:" in l for l in lines[max(0, n - 4):n])

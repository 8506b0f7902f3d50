"""The init phase and the run phase, as the call graph of the image sees them.

Rule: kernel_main calls kernel_enter_run_phase() exactly once, and that call
seals the heap.  A call site in kernel_main is a run-phase site when control
flow inside kernel_main can reach it from the instruction after that call;
the other call sites are init-phase sites.  Run-phase code is everything
reachable from a run-phase site or from an exception vector (a fault may
come at any time); init-phase code is what the reset entry reaches and
run-phase code does not.
"""
ENTRY = "kernel_main"
SEAL = "kernel_enter_run_phase"


class PhaseError(Exception):
    pass


def _successors(f, index):
    insn = f.instructions[index]
    nxt = [index + 1] if index + 1 < len(f.instructions) else []
    if insn.kind == "table-jump":
        # Successors: the entries of the jump table that follows (ldr pc
        # form); any other computed jump could go anywhere in f.
        index_of = {x.addr: i for i, x in enumerate(f.instructions)}
        if insn.mnemonic.startswith("ldr"):
            out, addr = [index + 1] if insn.conditional else [], insn.addr + 8
            while addr in index_of and f.instructions[index_of[addr]].mnemonic == ".word":
                target = f.instructions[index_of[addr]].value
                if target in index_of:
                    out.append(index_of[target])
                addr += 4
            return out
        return [i for i, x in enumerate(f.instructions) if not x.is_data]
    if insn.kind in ("return", "ijump", "literal-jump", "exception-return"):
        return []
    if insn.kind == "branch":
        targets = []
        if f.start <= insn.target < f.end:
            targets = [i for i, x in enumerate(f.instructions) if x.addr == insn.target]
        return targets + (nxt if insn.conditional else [])
    return nxt


def _walk(f, starts, stop_at=None):
    seen, todo = set(), list(starts)
    while todo:
        i = todo.pop()
        if i in seen or f.instructions[i].is_data:
            continue
        seen.add(i)
        if stop_at is not None and i == stop_at:
            continue
        todo.extend(_successors(f, i))
    return seen


class Phases:
    def __init__(self, ctx):
        image, graph = ctx.image(), ctx.graph()
        self.image, self.graph = image, graph
        main = image.function(ENTRY)
        seal = image.function(SEAL)
        if main is None or seal is None:
            raise PhaseError(f"{ENTRY} or {SEAL} is missing from the image: the phases cannot be told apart")
        seal_sites = [i for i, insn in enumerate(main.instructions)
                      if insn.kind in ("call", "branch") and insn.target == seal.start]
        if not seal_sites and image.function("heap_seal") is not None:
            # kernel_enter_run_phase inlined: its call of heap_seal marks the seal.
            seal = image.function("heap_seal")
            seal_sites = [i for i, insn in enumerate(main.instructions)
                          if insn.kind in ("call", "branch") and insn.target == seal.start]
        if len(seal_sites) != 1:
            raise PhaseError(f"{ENTRY} calls {SEAL} {len(seal_sites)} times (expected exactly once)")
        self.main, self.seal = main, seal
        self.seal_site = main.instructions[seal_sites[0]]
        run_indexes = _walk(main, [seal_sites[0] + 1])
        init_indexes = _walk(main, [0], stop_at=seal_sites[0])

        def call_targets(indexes):
            out = []
            for i in sorted(indexes):
                insn = main.instructions[i]
                if insn.kind in ("call",) or (insn.kind == "branch" and not main.start <= insn.target < main.end):
                    g = image.function_at(insn.target)
                    if g is not None and g is not seal:
                        out.append((insn, g))
                elif insn.kind in ("icall", "ijump"):
                    for e in graph.edges[main]:
                        if e.site == insn.addr:
                            out.append((insn, e.callee))
            return out

        self.run_sites = call_targets(run_indexes)
        self.init_sites = [s for s in call_targets(init_indexes) if s[0] not in {r[0] for r in self.run_sites}]
        vectors = ctx.vectors()
        self.vector_roots = [(name, f) for name, f in vectors.handlers()]
        roots = [g for _, g in self.run_sites] + [f for _, f in self.vector_roots]
        self.run_parent = graph.reachable(roots)
        entry = image.function_at(image.elf.entry & ~1)
        self.entry = entry
        all_parent = graph.reachable([entry]) if entry else {}
        self.init_code = {f for f in all_parent if f not in self.run_parent and f is not main}
        self.run_code = set(self.run_parent)

    def run_path(self, f):
        """Names from a run-phase root to f, the root marked with its origin."""
        path = self.graph.path_to(self.run_parent, f)
        names = [g.label for g in path]
        root = path[0]
        if any(root is g for _, g in self.run_sites):
            names.insert(0, f"{ENTRY} [after {SEAL}]")
        else:
            vec = next((name for name, g in self.vector_roots if g is root), None)
            names.insert(0, f"vector {vec}")
        return names

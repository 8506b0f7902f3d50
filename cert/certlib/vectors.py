"""The exception vector table of the image, found the way the CPU finds it:
through the address start-up code writes to VBAR (mcr p15, 0, Rt, c12, c0, 0)."""
import re

VECTOR_NAMES = ["reset", "undefined", "supervisor_call", "prefetch_abort", "data_abort",
                "reserved", "irq", "fiq"]
VBAR_RE = re.compile(r"^(\w+),\s*c12,\s*c0,\s*\{?0\}?$")


class VectorTable:
    def __init__(self, image):
        self.image = image
        self.address = None
        self.entries = []          # [(name, instruction, target function or None)]
        self.problems = []
        self.vbar_writes = []
        self._find()

    def _find(self):
        image = self.image
        tables = set()
        for f in image.functions:
            for i, insn in enumerate(f.instructions):
                if not insn.mnemonic.startswith("mcr"):
                    continue
                ops = [o.strip() for o in insn.operands.split(",")]
                # objdump: mcr 15, 0, r0, cr12, cr0, {0}
                if len(ops) >= 6 and ops[0] in ("15", "p15") and ops[1] == "0" and \
                        ops[3] in ("cr12", "c12") and ops[4] in ("cr0", "c0") and ops[5].strip("{}") == "0":
                    self.vbar_writes.append(insn)
                    value = self._register_value(f, i, ops[2])
                    if value is None:
                        self.problems.append(f"VBAR is written in {f.label} at {insn.addr:08x} with a "
                                             f"value the check cannot resolve")
                    else:
                        tables.add(value)
        if not self.vbar_writes:
            self.problems.append("no write to VBAR found: cannot locate the exception vector table")
            return
        if len(tables) != 1:
            if tables:
                self.problems.append("VBAR is set to more than one table: "
                                     + ", ".join(f"{t:08x}" for t in sorted(tables)))
            return
        self.address = tables.pop()
        for n, name in enumerate(VECTOR_NAMES):
            insn = image.insn_at.get(self.address + 4 * n)
            target = None
            if insn is None:
                self.problems.append(f"vector {name} at {self.address + 4 * n:08x} is not code")
            elif insn.kind == "branch" and not insn.conditional:
                target = image.function_at(insn.target)
            elif insn.kind == "literal-jump":
                value = image.elf.word(insn.literal)
                target = image.function_at(value & ~1) if value is not None else None
            else:
                self.problems.append(f"vector {name} at {insn.addr:08x} is '{insn.text()}', "
                                     f"not a branch to a handler")
            self.entries.append((name, insn, target))

    def _register_value(self, f, index, register):
        from certlib.disasm import canonical_register
        reg = canonical_register(register)
        for insn in reversed(f.instructions[:index]):
            if insn.writes == reg:
                if insn.literal is not None:
                    return self.image.elf.word(insn.literal)
                return None
        return None

    def handlers(self):
        """(name, function) of every vector but reset."""
        return [(name, target) for name, _, target in self.entries[1:] if target is not None]

    def reset_target(self):
        return self.entries[0][2] if self.entries else None

"""objdump -d of the node image, parsed into functions and instruction classes.

The certification reads the linked image, not the sources: whatever the
linker pulled in (newlib, libgcc, veneers, assembly) is analysed the same
way.  objdump does the decoding; this module only classifies what matters:
calls, tail calls, indirect transfers, returns, and stack-pointer changes.
"""
import re
import subprocess

CONDITIONS = "eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al"
BRANCH_RE = re.compile(rf"^(blx|bl|bx|bxj|b|cbz|cbnz)({CONDITIONS})?(\.w|\.n)?$")
HEADER_RE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
INSN_RE = re.compile(r"^\s*([0-9a-f]+):\t(\S+)(?:\t([^@;]*))?(?:[@;]\s*(.*))?$")
ADDR_OPERAND_RE = re.compile(r"^([0-9a-f]+)(?:\s+<([^>]+)>)?$")
COMMENT_ADDR_RE = re.compile(r"\b([0-9a-f]+)\s+<")
REGLIST_RE = re.compile(r"\{([^}]*)\}")
STRIP_SUFFIX_RE = re.compile(rf"^([a-z0-9]+?)(s)?({CONDITIONS})?(\.w|\.n)?$")

REGISTER_ALIASES = {"sb": "r9", "sl": "r10", "fp": "r11", "ip": "r12",
                    "sp": "r13", "lr": "r14", "pc": "r15"}


def canonical_register(name):
    name = name.strip().lower().rstrip("!")
    return REGISTER_ALIASES.get(name, name)


def register_count(reglist):
    """Registers in an objdump list like 'r4, r5, r6, lr' or 'd8-d15'."""
    count = 0
    for part in reglist.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-")
            count += int(re.sub(r"\D", "", high)) - int(re.sub(r"\D", "", low)) + 1
        else:
            count += 1
    return count


class Instruction:
    __slots__ = ("addr", "mnemonic", "operands", "comment", "kind", "target",
                 "literal", "stack_change", "writes", "conditional", "register",
                 "is_data", "value", "function")

    def __init__(self, addr, mnemonic, operands, comment):
        self.addr = addr
        self.mnemonic = mnemonic
        self.operands = operands.strip()
        self.comment = comment.strip()
        self.kind = "plain"        # call, tailcall?, branch, icall, ijump, return, data
        self.target = None         # direct target address of a call or branch
        self.literal = None        # address of a pc-relative literal this loads
        self.stack_change = None   # ("dec", n) | ("dynamic", text) | ("reset", text)
        self.writes = None         # canonical destination register, if simple
        self.conditional = False
        self.register = None       # register of an indirect call or jump
        self.is_data = mnemonic in (".word", ".short", ".byte")
        self.value = None
        self.function = None

    def text(self):
        return f"{self.mnemonic}\t{self.operands}".strip()

    def __repr__(self):
        return f"<{self.addr:08x} {self.text()}>"


def _first_comment_address(comment):
    """The address objdump prints for a pc-relative operand: '40200078 <f+0x78>'."""
    m = COMMENT_ADDR_RE.search(comment) or re.match(r"^\(?\s*(?:0x)?([0-9a-f]+)\s*\)?$", comment)
    return int(m.group(1), 16) if m else None


def classify(insn):
    """Fills kind, target, literal, stack_change and writes from the text."""
    if insn.is_data:
        insn.kind = "data"
        try:
            insn.value = int(insn.operands.split()[0], 16)
        except (ValueError, IndexError):
            insn.value = None
        return
    m = BRANCH_RE.match(insn.mnemonic)
    ops = insn.operands
    if m:
        base, cond = m.group(1), m.group(2)
        insn.conditional = cond not in (None, "al")
        if base in ("cbz", "cbnz"):
            ops = ops.split(",", 1)[1].strip() if "," in ops else ops
            base = "b"
            insn.conditional = True
        a = ADDR_OPERAND_RE.match(ops)
        if base in ("bl", "blx"):
            if a:
                insn.kind, insn.target = "call", int(a.group(1), 16)
            else:
                insn.kind, insn.register = "icall", canonical_register(ops)
            return
        if base in ("bx", "bxj"):
            reg = canonical_register(ops)
            insn.kind = "return" if reg == "r14" else "ijump"
            insn.register = reg
            return
        if a:
            insn.kind, insn.target = "branch", int(a.group(1), 16)
        return

    base = insn.mnemonic.split(".")[0]
    root = _root(base)
    operand_list = [o.strip() for o in _split_operands(ops)]
    dest = canonical_register(operand_list[0]) if operand_list else None
    insn.conditional = _has_condition(base, root)

    # Loads of a pc-relative literal: objdump prints the literal's address.
    if root in ("ldr",) and len(operand_list) >= 2 and operand_list[1].startswith("[pc"):
        insn.literal = _first_comment_address(insn.comment)

    # Transfers through pc other than branches.
    if root in ("pop", "ldm", "ldmia", "ldmfd") and "r15" in _reglist(ops):
        if root == "pop" or "sp!" in ops.replace(" ", ""):
            insn.kind = "return"
        else:
            insn.kind = "ijump"
    elif root == "ldr" and dest == "r15":
        if len(operand_list) >= 3 and operand_list[1].replace(" ", "") == "[sp]":
            insn.kind = "return"
        elif insn.literal is not None and re.match(r"^\[pc(,\s*#-?\d+)?\]$", operand_list[1]):
            insn.kind = "literal-jump"
        elif re.match(r"^\[pc,\s*r\d+", operand_list[1]):
            insn.kind = "table-jump"
        else:
            insn.kind = "ijump"
    elif root in ("mov", "movs") and dest == "r15":
        src = canonical_register(operand_list[1]) if len(operand_list) > 1 else ""
        insn.kind = "return" if src == "r14" else "ijump"
        insn.register = src
    elif root in ("add", "adds") and dest == "r15":
        insn.kind = "table-jump" if "pc" in ops.split(",", 1)[1] else "ijump"
    elif root in ("tbb", "tbh"):
        insn.kind = "table-jump"
    elif root in ("subs",) and dest == "r15":
        insn.kind = "exception-return"
    elif root in ("eret", "rfe", "rfeia", "rfeib", "rfeda", "rfedb"):
        insn.kind = "exception-return"
    if root in ("ldm", "ldmia", "ldmfd", "ldmib", "ldmda", "ldmdb") and ops.rstrip().endswith("^"):
        insn.kind = "exception-return"
    if root == "movs" and dest == "r15":
        insn.kind = "exception-return"

    insn.stack_change = _stack_change(root, operand_list, ops, dest)
    if dest and root not in ("str", "strd", "strb", "strh", "push", "stm", "stmdb",
                             "stmfd", "stmia", "cmp", "cmn", "tst", "teq", "vpush",
                             "vstm", "vstmdb", "b", "it", "ite", "itt", "nop", "mcr",
                             "mcrr", "msr", "cpsid", "cpsie", "dsb", "isb", "dmb", "wfi",
                             "wfe", "sev", "svc", "bkpt", "pld", "pli", "pldw"):
        insn.writes = dest


def _root(base):
    """Mnemonic without condition code and width, e.g. 'popne' -> 'pop'."""
    for known in ("push", "pop", "stmdb", "stmfd", "stmia", "stm", "ldmia", "ldmfd",
                  "ldmdb", "ldmib", "ldmda", "ldm", "vpush", "vpop", "strd", "ldrd",
                  "strb", "strh", "ldrb", "ldrh", "ldrsb", "ldrsh", "str", "ldr",
                  "subw", "subs", "sub", "addw", "adds", "add", "movw", "movt",
                  "movs", "mov", "mvn", "tbb", "tbh", "eret", "rfeia", "rfe", "cpsie",
                  "cpsid", "msr", "mrs", "mcr", "adr"):
        if base.startswith(known):
            rest = base[len(known):]
            if rest == "" or re.fullmatch(CONDITIONS, rest):
                return known
    return base


def _has_condition(base, root):
    rest = base[len(root):]
    return bool(rest) and bool(re.fullmatch(CONDITIONS, rest)) and rest != "al"


def _split_operands(ops):
    """Splits on commas outside brackets and braces."""
    parts, depth, current = [], 0, ""
    for c in ops:
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
    if current.strip():
        parts.append(current)
    return parts


def _reglist(ops):
    m = REGLIST_RE.search(ops)
    return [canonical_register(r) for r in m.group(1).split(",")] if m else []


def _immediate(text):
    m = re.match(r"^#(-?(?:0x[0-9a-f]+|\d+))$", text.strip())
    if not m:
        return None
    return int(m.group(1), 0)


def _stack_change(root, operands, ops, dest):
    """How an instruction moves sp downwards (the stack grows down)."""
    if root in ("push", "vpush"):
        m = REGLIST_RE.search(ops)
        n = register_count(m.group(1)) if m else 0
        size = 8 if root == "vpush" and m and "d" in m.group(1) else 4
        return ("dec", n * size)
    if root in ("stmdb", "stmfd") and operands and operands[0].replace(" ", "") == "sp!":
        m = REGLIST_RE.search(ops)
        return ("dec", register_count(m.group(1)) * 4)
    if root in ("str", "strd", "strb", "strh") and ops.rstrip().endswith("]!"):
        m = re.search(r"\[sp,\s*#(-?\d+)\]!", ops)
        if m:
            offset = int(m.group(1))
            return ("dec", -offset) if offset < 0 else None
    if dest != "r13":
        return None
    if root.startswith(("stm", "str", "vst")):
        return None   # sp is the base of a store without writeback, not written
    if root in ("pop", "vpop", "ldm", "ldmia", "ldmfd", "ldmib", "ldmda", "ldmdb", "ldrd"):
        return None   # base writeback on sp: the stack shrinks
    if operands and operands[0].strip().endswith("!"):
        return None
    # Instructions whose destination is sp.
    if root in ("sub", "subs", "subw") and len(operands) >= 2:
        if len(operands) == 2:
            imm = _immediate(operands[1])
            src = "r13"
        else:
            src = canonical_register(operands[1])
            imm = _immediate(operands[2])
        if src == "r13" and imm is not None:
            return ("dec", imm) if imm > 0 else None
        return ("dynamic", "sp decreased by a register amount")
    if root in ("add", "adds", "addw") and len(operands) >= 2:
        if len(operands) == 2:
            imm, src = _immediate(operands[1]), "r13"
        else:
            src, imm = canonical_register(operands[1]), _immediate(operands[2])
        if src == "r13" and imm is not None:
            return ("dec", -imm) if imm < 0 else None
        return ("dynamic", "sp set from another register")
    if root == "ldr":
        return ("reset", "sp loaded from memory")
    if root in ("mov", "movs"):
        return ("dynamic", "sp copied from another register")
    return ("dynamic", "sp written")


class Function:
    """A contiguous run of code under one symbol (or an unnamed gap)."""

    def __init__(self, name, start, end, symbol=None):
        self.name = name
        self.start = start
        self.end = end
        self.symbol = symbol
        self.instructions = []
        self.object = None       # object file from the link map
        self.source = None       # source path (from .su or the map)
        self.frame = None        # stack bytes: from .su, disassembly or table
        self.frame_origin = None
        self.frame_qualifier = None
        self.su_location = None

    @property
    def thumb(self):
        return self.symbol is not None and self.symbol.thumb

    def __repr__(self):
        return f"<Function {self.name} {self.start:08x}-{self.end:08x}>"


def run_objdump(objdump, elf_path):
    result = subprocess.run([objdump, "-d", "-w", "--no-show-raw-insn", elf_path],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{objdump} -d {elf_path} failed: {result.stderr.strip()}")
    return result.stdout


def parse(objdump_text):
    """All instructions (and literal words) of the executable sections."""
    instructions = []
    for line in objdump_text.splitlines():
        if not line or line.startswith(("Disassembly", "\t...", "...")) or HEADER_RE.match(line):
            continue
        m = INSN_RE.match(line)
        if not m:
            continue
        insn = Instruction(int(m.group(1), 16), m.group(2), m.group(3) or "", m.group(4) or "")
        classify(insn)
        instructions.append(insn)
    return instructions

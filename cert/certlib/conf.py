"""The committed configuration of the certification (cert/*.conf).

All files share one syntax: one entry per line, fields separated by
blanks, "double quotes" around a field with blanks, '#' to the end of the
line is a comment.  A bad line stops the tool with file:line and what was
expected.
"""
import os
import re
import shlex


class ConfError(Exception):
    pass


class Line:
    def __init__(self, path, number, fields, comment):
        self.path = path
        self.number = number
        self.fields = fields
        self.comment = comment

    def where(self):
        return f"{os.path.basename(os.path.dirname(self.path))}/{os.path.basename(self.path)}:{self.number}"

    def error(self, what):
        return ConfError(f"{self.where()}: {what}")


def read_lines(path):
    if not os.path.exists(path):
        raise ConfError(f"{path} is missing")
    lines = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            comment = raw.split("#", 1)[1].strip() if "#" in raw else ""
            try:
                fields = shlex.split(raw, comments=True)
            except ValueError as e:
                raise ConfError(f"{path}:{number}: {e}")
            if fields:
                lines.append(Line(path, number, fields, comment))
    return lines


def parse_bytes(text, line):
    m = re.fullmatch(r"(\d+)\s*([KMG]i?B?|)", text)
    if not m:
        raise line.error(f"'{text}' is not a size (expected bytes, or a number with K or M)")
    scale = {"": 1, "K": 1024, "M": 1 << 20, "G": 1 << 30}[m.group(2)[:1]]
    return int(m.group(1)) * scale


class Budgets:
    """cert/budgets.conf: NAME VALUE, every name known."""
    KNOWN = {
        "text": "bytes of .text",
        "rodata": "bytes of .rodata (with .ARM.exidx)",
        "data": "bytes of .data",
        "bss": "bytes of .bss",
        "stack": "bytes of the stack region",
        "image": "bytes from the image start to its end, stack included",
        "membership_state_65536": "membership state at 65,536 nodes",
        "frame_max": "largest stack frame of one function (-Wstack-usage)",
        "stack_margin": "factor the static stack bound is multiplied by",
        "declare_threshold": "static objects this large must be in cert/sizing.conf",
    }

    def __init__(self, path):
        self.path = path
        self.values = {}
        self.comments = {}
        for line in read_lines(path):
            if len(line.fields) != 2:
                raise line.error("expected NAME VALUE")
            name, value = line.fields
            if name not in self.KNOWN:
                raise line.error(f"unknown budget '{name}' (expected one of {', '.join(self.KNOWN)})")
            self.values[name] = parse_bytes(value, line)
            self.comments[name] = line.comment
        missing = [n for n in self.KNOWN if n not in self.values]
        if missing:
            raise ConfError(f"{path}: budgets missing: {', '.join(missing)}")

    def __getitem__(self, name):
        return self.values[name]


class IndirectEntry:
    def __init__(self, line, caller, sources, targets):
        self.line = line
        self.caller = caller
        self.sources = sources    # [("call", fn, argn) | ("table", obj) | ("section", name)]
        self.targets = targets    # allowed target names


class IndirectCalls:
    """cert/indirect_calls.conf.

      CALLER  SOURCE[,SOURCE...]  TARGET...   indirect calls in CALLER may
                                              reach these TARGETs ('-': none)
      address-only FUNCTION "why"             address taken, never called

    SOURCE says where the function pointers come from, so that the check can
    find every function actually registered: call:FUNCTION:N (argument N of
    every call to FUNCTION: a function, or a static table of them),
    table:OBJECT (the words of a static table), section:NAME (the words of
    an output section), local (a computed jump inside CALLER itself, e.g.
    libgcc's unrolled division; TARGET must be '-').
    """

    def __init__(self, path):
        self.path = path
        self.entries = {}
        self.address_only = {}
        for line in read_lines(path):
            f = line.fields
            if f[0] == "address-only":
                if len(f) < 3:
                    raise line.error('expected: address-only FUNCTION "justification"')
                self.address_only[f[1]] = " ".join(f[2:])
                continue
            if len(f) < 3:
                raise line.error("expected: CALLER SOURCE TARGET... (TARGET '-' for none)")
            sources = []
            for spec in f[1].split(","):
                parts = spec.split(":")
                if parts[0] == "call" and len(parts) == 3 and parts[2].isdigit() and 1 <= int(parts[2]) <= 4:
                    sources.append(("call", parts[1], int(parts[2])))
                elif parts[0] in ("table", "section") and len(parts) == 2:
                    sources.append((parts[0], parts[1]))
                elif parts == ["local"]:
                    sources.append(("local",))
                else:
                    raise line.error(f"bad source '{spec}' (expected call:FUNCTION:N with N 1..4, "
                                     f"table:OBJECT, section:NAME or local)")
            targets = [] if f[2:] == ["-"] else f[2:]
            if f[0] in self.entries:
                raise line.error(f"second entry for {f[0]}")
            self.entries[f[0]] = IndirectEntry(line, f[0], sources, targets)


class Deviation:
    def __init__(self, line, rule, file, line_number, justification):
        self.line = line
        self.rule = rule
        self.file = file
        self.line_number = line_number
        self.justification = justification
        self.used = 0


class Deviations:
    """cert/deviations.conf: RULE FILE[:LINE] "justification" (MISRA only)."""

    def __init__(self, path):
        self.path = path
        self.entries = []
        for line in read_lines(path):
            if len(line.fields) < 3:
                raise line.error('expected: RULE FILE[:LINE] "justification"')
            rule, where = line.fields[0], line.fields[1]
            if not re.fullmatch(r"misra-c2012-\d+\.\d+", rule):
                raise line.error(f"rule '{rule}' is not a MISRA rule id (expected misra-c2012-N.M)")
            justification = " ".join(line.fields[2:])
            if len(justification) < 20:
                raise line.error("a deviation needs a real justification (20 characters or more)")
            file, _, number = where.partition(":")
            self.entries.append(Deviation(line, rule, file, int(number) if number else None,
                                          justification))

    def match(self, rule, file, line_number):
        for d in self.entries:
            if d.rule == rule and d.file == file and d.line_number in (None, line_number):
                d.used += 1
                return d
        return None


class SizedObject:
    def __init__(self, line, symbol, source, expression, headers):
        self.line = line
        self.symbol = symbol
        self.source = source        # defining source file, or None
        self.expression = expression
        self.headers = headers
        self.why = line.comment


class Sizing:
    """cert/sizing.conf.

      object SYMBOL[@SOURCE] "C EXPRESSION" [HEADER...]   a static object and the
                                                          size it must have
      part NAME "C EXPRESSION" [HEADER...]                a part of the node's state;
                                                          the parts' growth must
                                                          equal the .bss growth
      measure NAME "C EXPRESSION" [HEADER...]             a reported quantity

    A HEADER may be a .c file: the expression is then evaluated in its scope.
    """

    def __init__(self, path):
        self.path = path
        self.objects = []
        self.measures = []
        for line in read_lines(path):
            f = line.fields
            if f[0] == "object" and len(f) >= 3:
                symbol, _, source = f[1].partition("@")
                self.objects.append(SizedObject(line, symbol, source or None, f[2], f[3:]))
            elif f[0] in ("measure", "part") and len(f) >= 3:
                m = SizedObject(line, f[1], None, f[2], f[3:])
                m.part = f[0] == "part"
                self.measures.append(m)
            else:
                raise line.error('expected: object SYMBOL[@SOURCE] "EXPRESSION" [HEADER...], '
                                 'part NAME "EXPRESSION" [HEADER...] or measure NAME "EXPRESSION" [HEADER...]')


class LibraryStack:
    """cert/library_stack.conf: FUNCTION BYTES "justification".

    For code without -fstack-usage output whose frame the disassembly
    cannot bound by itself (sp moved by a register amount)."""

    def __init__(self, path):
        self.path = path
        self.entries = {}
        for line in read_lines(path):
            if len(line.fields) < 3:
                raise line.error('expected: FUNCTION BYTES "justification"')
            self.entries[line.fields[0]] = (parse_bytes(line.fields[1], line),
                                            " ".join(line.fields[2:]), line)

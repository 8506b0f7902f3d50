"""The GNU ld link map (node.map): which object every input section came from.

With -ffunction-sections and -fdata-sections each function and each static
object has its own input section, so the map tells, address by address,
which object file (and so which source, or which library member) it is.
"""
import os
import re

SINGLE_RE = re.compile(r"^ (\.\S+|COMMON)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
NAME_ONLY_RE = re.compile(r"^ (\.\S+|COMMON)$")
CONT_RE = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
MEMBER_RE = re.compile(r"^(.*)\(([^()]+)\)$")


class InputSection:
    __slots__ = ("name", "addr", "size", "object")

    def __init__(self, name, addr, size, obj):
        self.name = name
        self.addr = addr
        self.size = size
        self.object = obj

    @property
    def library(self):
        """True for toolchain objects (newlib, libgcc): absolute paths."""
        return is_library_object(self.object)


def is_library_object(obj):
    return obj is not None and os.path.isabs(obj.split("(")[0])


def object_display(obj):
    """'libc_nano.a(libc_a-malloc.o)' for libraries, the path otherwise."""
    if obj is None:
        return "?"
    m = MEMBER_RE.match(obj)
    if m and is_library_object(obj):
        return f"{os.path.basename(m.group(1))}({m.group(2)})"
    return obj


class LinkMap:
    def __init__(self, path):
        self.path = path
        self.sections = []
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        try:
            start = lines.index("Linker script and memory map")
        except ValueError:
            start = 0
        pending = None
        for line in lines[start:]:
            m = SINGLE_RE.match(line)
            if m:
                self._add(m.group(1), m.group(2), m.group(3), m.group(4))
                pending = None
                continue
            m = NAME_ONLY_RE.match(line)
            if m:
                pending = m.group(1)
                continue
            if pending:
                m = CONT_RE.match(line)
                if m:
                    self._add(pending, m.group(1), m.group(2), m.group(3))
                pending = None
        self.sections.sort(key=lambda s: s.addr)

    def _add(self, name, addr, size, obj):
        size = int(size, 16)
        if size == 0 or obj.startswith("load address"):
            return
        self.sections.append(InputSection(name, int(addr, 16), size, obj.strip()))

    def at(self, addr):
        """The input section holding addr, or None."""
        lo, hi = 0, len(self.sections)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.sections[mid].addr <= addr:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return None
        s = self.sections[lo - 1]
        return s if s.addr <= addr < s.addr + s.size else None

"""A minimal reader of 32-bit little-endian ELF files (the node image).

Only what the checks need: section headers, the symbol table (with each
local symbol attributed to the FILE symbol that precedes it), and reading
bytes of loaded sections by address.
"""
import struct

SHT_SYMTAB = 2
SHT_NOBITS = 8
SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHF_TLS = 0x400

STT_NAMES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE",
             5: "COMMON", 6: "TLS"}
STB_NAMES = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK"}


class ElfError(Exception):
    pass


class Section:
    def __init__(self, index, name, sh_type, flags, addr, offset, size, align):
        self.index = index
        self.name = name
        self.type = sh_type
        self.flags = flags
        self.addr = addr
        self.offset = offset
        self.size = size
        self.align = align

    @property
    def alloc(self):
        return bool(self.flags & SHF_ALLOC)

    @property
    def nobits(self):
        return self.type == SHT_NOBITS

    def contains(self, addr):
        return self.addr <= addr < self.addr + self.size


class Symbol:
    def __init__(self, name, value, size, kind, bind, shndx, file):
        self.name = name
        self.value = value
        self.size = size
        self.kind = kind      # NOTYPE, OBJECT, FUNC, SECTION, FILE, TLS
        self.bind = bind      # LOCAL, GLOBAL, WEAK
        self.shndx = shndx
        self.file = file      # FILE symbol before a local symbol, else None

    @property
    def address(self):
        """The symbol's address with the Thumb bit cleared."""
        return self.value & ~1 if self.kind == "FUNC" else self.value

    @property
    def thumb(self):
        return self.kind == "FUNC" and bool(self.value & 1)

    def is_mapping(self):
        """ARM mapping symbols ($a, $t, $d and $x.N): not names of code."""
        return self.name[:1] == "$" and (len(self.name) == 2 or self.name[2] == ".")


class Elf:
    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        if self.data[:4] != b"\x7fELF":
            raise ElfError(f"{path}: not an ELF file")
        if self.data[4] != 1 or self.data[5] != 1:
            raise ElfError(f"{path}: expected a 32-bit little-endian ELF")
        (self.type, self.machine, _, self.entry, _, shoff, self.flags, _, _, _,
         shentsize, shnum, shstrndx) = struct.unpack_from("<HHIIIIIHHHHHH", self.data, 16)
        self.sections = []
        raw = []
        for i in range(shnum):
            raw.append(struct.unpack_from("<IIIIIIIIII", self.data, shoff + i * shentsize))
        strtab_off = raw[shstrndx][4] if shnum else 0
        for i, (name, sh_type, flags, addr, offset, size, link, info, align, entsize) in enumerate(raw):
            section = Section(i, self._cstr(strtab_off + name), sh_type, flags, addr,
                              offset, size, align)
            section.link = link
            section.entsize = entsize
            self.sections.append(section)
        self.symbols = self._read_symbols()

    def _cstr(self, offset):
        end = self.data.index(b"\0", offset)
        return self.data[offset:end].decode("utf-8", "replace")

    def _read_symbols(self):
        symtab = next((s for s in self.sections if s.type == SHT_SYMTAB), None)
        if symtab is None:
            raise ElfError(f"{self.path}: no symbol table (was the image stripped?)")
        strtab = self.sections[symtab.link]
        symbols = []
        current_file = None
        for i in range(symtab.size // 16):
            name, value, size, info, _, shndx = struct.unpack_from(
                "<IIIBBH", self.data, symtab.offset + i * 16)
            kind = STT_NAMES.get(info & 0xF, str(info & 0xF))
            bind = STB_NAMES.get(info >> 4, str(info >> 4))
            text = self._cstr(strtab.offset + name)
            if kind == "FILE":
                current_file = text
                continue
            if i == 0 or kind == "SECTION":
                continue
            symbols.append(Symbol(text, value, size, kind, bind, shndx,
                                  current_file if bind == "LOCAL" else None))
        return symbols

    def section(self, name):
        return next((s for s in self.sections if s.name == name), None)

    def section_at(self, addr):
        for s in self.sections:
            if s.alloc and s.contains(addr):
                return s
        return None

    def read(self, addr, length):
        """Bytes of the image at addr (None for NOBITS or unmapped memory)."""
        s = self.section_at(addr)
        if s is None or s.nobits or addr + length > s.addr + s.size:
            return None
        start = s.offset + (addr - s.addr)
        return self.data[start:start + length]

    def word(self, addr):
        raw = self.read(addr, 4)
        return None if raw is None else struct.unpack("<I", raw)[0]

    def words(self, addr, length):
        raw = self.read(addr, length - length % 4)
        if raw is None:
            return []
        return list(struct.unpack(f"<{len(raw) // 4}I", raw))

    def symbol(self, name):
        """The one symbol of that name (None when absent)."""
        found = [s for s in self.symbols if s.name == name]
        return found[0] if found else None

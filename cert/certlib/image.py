"""One built node image: node.elf, node.map, and the .su/.ci files of its tree.

Everything the checks know about code comes from here: functions (every
symbol of code in the linked image, plus any unnamed gap of code), their
instructions, where they came from (the link map), and their stack frames
(-fstack-usage for tori's own C code, the disassembly for the rest).
"""
import bisect
import os
import re

from certlib import disasm
from certlib.elf import Elf, SHF_EXECINSTR
from certlib.linkmap import LinkMap, is_library_object, object_display

SU_RE = re.compile(r"^(.*):(\d+):(\d+):(\S+)\t(\d+)\t(\S+)$")
CI_NODE_RE = re.compile(r'^node: \{ title: "([^"]+)" label: "([^"]*)"')
CI_EDGE_RE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)" label: "([^"]*)"')


class StackUsage:
    __slots__ = ("source", "line", "name", "size", "qualifier", "su_file")

    def __init__(self, source, line, name, size, qualifier, su_file):
        self.source = source
        self.line = line
        self.name = name
        self.size = size
        self.qualifier = qualifier
        self.su_file = su_file


class Image:
    def __init__(self, build_dir, tools, source_dir):
        self.build_dir = os.path.abspath(build_dir)
        self.source_dir = os.path.abspath(source_dir)
        self.tools = tools
        self.elf_path = os.path.join(self.build_dir, "node.elf")
        self.map_path = os.path.join(self.build_dir, "node.map")
        for path in (self.elf_path, self.map_path):
            if not os.path.exists(path):
                raise FileNotFoundError(f"{path} is missing (build the qemu-virt tree first)")
        self.elf = Elf(self.elf_path)
        self.linkmap = LinkMap(self.map_path)
        self.instructions = disasm.parse(disasm.run_objdump(tools.objdump, self.elf_path))
        self.insn_at = {i.addr: i for i in self.instructions}
        self.su_by_file, self.su_by_name = self._load_su()
        self.ci_indirect, self.ci_functions = self._load_ci()
        self.functions = self._build_functions()
        self._starts = [f.start for f in self.functions]
        self.by_name = {}
        for f in self.functions:
            self.by_name.setdefault(f.name, []).append(f)
            for alias in getattr(f, "aliases", ()):
                self.by_name.setdefault(alias, []).append(f)
        self._label_functions()
        self._attribute()

    # ----- functions -------------------------------------------------------

    def _code_sections(self):
        return [s for s in self.elf.sections if s.alloc and s.flags & SHF_EXECINSTR]

    def _build_functions(self):
        code = self._code_sections()
        in_code = lambda a: any(s.contains(a) for s in code)
        candidates = {}
        for sym in self.elf.symbols:
            if sym.kind not in ("FUNC", "NOTYPE") or sym.is_mapping():
                continue
            if not in_code(sym.address):
                continue
            rank = (sym.kind == "FUNC", sym.bind != "LOCAL", sym.size > 0)
            prev = candidates.get(sym.address)
            if prev is None or rank > prev[0]:
                aliases = prev[2] + [prev[1].name] if prev else []
                candidates[sym.address] = (rank, sym, aliases)
            else:
                prev[2].append(sym.name)
        starts = sorted(candidates)
        # A label inside a sized function is one of its local labels.
        functions = []
        covered_until = -1
        section_end = {}
        for s in code:
            section_end[s.index] = s.addr + s.size
        for i, addr in enumerate(starts):
            rank, sym, aliases = candidates[addr]
            if addr < covered_until and sym.kind != "FUNC":
                continue
            next_start = starts[i + 1] if i + 1 < len(starts) else None
            limit = section_end.get(sym.shndx, addr + max(sym.size, 4))
            if sym.size > 0:
                end = addr + sym.size
            else:
                end = min(next_start, limit) if next_start is not None else limit
            f = disasm.Function(sym.name, addr, end, sym)
            f.aliases = [a for a in aliases if a != sym.name]
            functions.append(f)
            covered_until = max(covered_until, end)
        functions.sort(key=lambda f: f.start)
        # Assign instructions; runs of code outside every function become
        # unnamed functions (e.g. library assembly jumping to a local label
        # that follows a sized symbol).
        starts = [f.start for f in functions]
        orphans = []
        current = None
        for insn in self.instructions:
            idx = bisect.bisect_right(starts, insn.addr) - 1
            owner = functions[idx] if idx >= 0 and functions[idx].start <= insn.addr < functions[idx].end else None
            if owner is not None:
                owner.instructions.append(insn)
                insn.function = owner
                current = None
                continue
            if insn.is_data or insn.mnemonic == "nop":
                if current is not None:
                    current.instructions.append(insn)
                    insn.function = current
                    current.end = insn.addr + 4
                continue
            if current is None or insn.addr > current.end + 4:
                current = disasm.Function(f"<code@{insn.addr:08x}>", insn.addr, insn.addr + 4)
                current.aliases = []
                orphans.append(current)
            current.instructions.append(insn)
            insn.function = current
            current.end = insn.addr + 4
        functions.extend(orphans)
        functions.sort(key=lambda f: f.start)
        for f, nxt in zip(functions, functions[1:]):
            if f.end > nxt.start:
                f.end = nxt.start
        return functions

    def function_at(self, addr):
        idx = bisect.bisect_right(self._starts, addr) - 1
        if idx >= 0 and self.functions[idx].start <= addr < max(self.functions[idx].end,
                                                                   self.functions[idx].start + 1):
            return self.functions[idx]
        return None

    def function(self, name):
        """The one function of that name; None if absent or ambiguous."""
        found = self.by_name.get(name, [])
        return found[0] if len(found) == 1 else None

    def _label_functions(self):
        for f in self.functions:
            f.label = f.name
        for name, fs in self.by_name.items():
            if len(fs) > 1:
                for f in fs:
                    if f.name == name:
                        where = f.symbol.file if f.symbol is not None and f.symbol.file else f"{f.start:08x}"
                        f.label = f"{name}@{where}"

    # ----- provenance and frames -------------------------------------------

    def _load_su(self):
        by_file, by_name = {}, {}
        for root, _, files in os.walk(self.build_dir):
            for name in files:
                if not name.endswith(".su"):
                    continue
                path = os.path.join(root, name)
                entries = []
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line in f:
                        m = SU_RE.match(line.rstrip("\n"))
                        if not m:
                            continue
                        usage = StackUsage(m.group(1), int(m.group(2)), m.group(4),
                                           int(m.group(5)), m.group(6), path)
                        entries.append(usage)
                        by_name.setdefault(usage.name, []).append(usage)
                by_file[path] = entries
        return by_file, by_name

    def _load_ci(self):
        """Indirect call sites per function, with source locations."""
        indirect, functions = {}, {}
        for root, _, files in os.walk(self.build_dir):
            for name in files:
                if not name.endswith(".ci"):
                    continue
                with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
                    for line in f:
                        m = CI_NODE_RE.match(line)
                        if m and "\\n" in m.group(2):
                            label = m.group(2).split("\\n")
                            functions.setdefault(label[0], []).append(label[1])
                            continue
                        m = CI_EDGE_RE.match(line)
                        if m and m.group(2) == "__indirect_call":
                            caller = m.group(1).rsplit(":", 1)[-1]
                            indirect.setdefault(caller, []).append(m.group(3))
        return indirect, functions

    def _su_candidates(self, obj):
        """The .su files that belong to an object named in the link map."""
        if obj is None or is_library_object(obj):
            return []
        m = re.match(r"^(.*)\(([^()]+)\)$", obj)
        if m:
            # CMake: lib<name>.a in DIR holds the objects of DIR/CMakeFiles/<name>.dir/.
            archive = os.path.join(self.build_dir, m.group(1))
            library = os.path.basename(archive)
            library = library[3:] if library.startswith("lib") else library
            target_dir = os.path.join(os.path.dirname(archive), "CMakeFiles",
                                      re.sub(r"\.a$", "", library) + ".dir") + os.sep
            member = re.sub(r"\.(obj|o)$", "", m.group(2)) + ".su"
            return [path for path in self.su_by_file
                    if os.path.basename(path) == member and path.startswith(target_dir)]
        path = re.sub(r"\.(obj|o)$", "", os.path.join(self.build_dir, obj)) + ".su"
        return [path] if path in self.su_by_file else []

    def _attribute(self):
        for f in self.functions:
            section = self.linkmap.at(f.start)
            f.object = section.object if section else None
            f.library = is_library_object(f.object)
            f.object_display = object_display(f.object)
            usage = None
            # GCC's clones are 'f.constprop.0' in the ELF, 'f.constprop' in .su;
            # several clones of one name share the largest frame.
            su_name = re.sub(r"\.\d+$", "", f.name) if re.search(r"\.(constprop|isra|part|cold)\.\d+$", f.name) else f.name
            for path in self._su_candidates(f.object):
                for u in self.su_by_file[path]:
                    if u.name in (f.name, su_name) and (usage is None or u.size > usage.size):
                        usage = u
                if usage:
                    break
            if usage is None and not f.library and f.object is not None and len(self.su_by_name.get(f.name, [])) == 1:
                usage = self.su_by_name[f.name][0]
            f.disasm_frame, f.disasm_notes = self._disassembly_frame(f)
            if usage is not None:
                f.frame = usage.size
                f.frame_qualifier = usage.qualifier
                f.frame_origin = ".su"
                f.source = self.relative(usage.source)
                f.su_location = f"{self.relative(usage.source)}:{usage.line}"
            else:
                f.frame = f.disasm_frame
                f.frame_qualifier = "static" if not f.disasm_notes else "dynamic"
                f.frame_origin = "disassembly"
                if f.object and not f.library:
                    f.source = self._source_of_object(f.object)

    def _disassembly_frame(self, f):
        """Bytes pushed or subtracted from sp anywhere in f (an upper bound)."""
        total, notes = 0, []
        for insn in f.instructions:
            change = insn.stack_change
            if change is None:
                continue
            if change[0] == "dec":
                total += change[1]
            elif change[0] == "reset":
                # The literal is the top of a stack: a fresh stack, not growth.
                notes_reset = getattr(f, "stack_resets", [])
                notes_reset.append(insn.addr)
                f.stack_resets = notes_reset
            else:
                notes.append(f"{insn.addr:08x}: {insn.text()} ({change[1]})")
        return total, notes

    def _source_of_object(self, obj):
        m = re.match(r"^(.*)\(([^()]+)\)$", obj)
        name = m.group(2) if m else os.path.basename(obj)
        return re.sub(r"\.(obj|o)$", "", name)

    def relative(self, path):
        path = os.path.abspath(path)
        if path.startswith(self.source_dir + os.sep):
            return path[len(self.source_dir) + 1:]
        return path

    def location(self, addr):
        """'file:line' of an address, from the debug information."""
        return self.tools.addr2line(self.elf_path, addr, self.source_dir)

    def symbols_named(self, name):
        return [s for s in self.elf.symbols if s.name == name]

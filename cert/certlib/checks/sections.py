"""Check 1: sections and regions of the linked image against their budgets."""
from certlib import probe
from certlib.callgraph import Finding
from certlib.report import CheckResult

ID = "sections"
TITLE = "Sections and regions"
METHOD = ("Section headers and linker symbols of node.elf: sizes of .text/.rodata/.data/.bss "
          "and the stack region, each against cert/budgets.conf; every allocated section must be "
          "one of the known kinds; the stack region must be CONFIG_STACK_SIZE bytes; no heap "
          "symbol (end, _end, __heap_start, ...), no symbol above the image, and no constant loaded "
          "by tori's code may point into the free RAM above the image; "
          "_sbrk, if linked, must go through heap_grow, whose only memory is the static init_heap "
          "of CONFIG_INIT_HEAP_SIZE bytes.  The RAM regions outside the image (cert/regions.conf) "
          "lie between QEMU's DTB and the image without overlapping, hold the bytes the build "
          "uses, and only their declared functions load an address inside them; no other "
          "constant may point into RAM below the image.")

GROUPS = {
    ".text": "text",
    ".rodata": "rodata", ".ARM.exidx": "rodata", ".ARM.extab": "rodata",
    ".init_array": "rodata", ".fini_array": "rodata", ".preinit_array": "rodata",
    ".data": "data",
    ".bss": "bss",
    ".stack": "stack",
}
HEAP_SYMBOLS = ("end", "_end", "__end__", "__heap_start", "__heap_end", "__HeapBase",
                "__HeapLimit", "_heap_start", "_heap_end", "__heap_base")


def run(ctx):
    result = CheckResult(ID, TITLE, METHOD)
    image = ctx.image()
    elf = image.elf
    budgets = ctx.budgets
    tree = ctx.tree()
    config = ctx.tree_config(tree)
    ram = probe.evaluate(tree, [("base", "QEMU_VIRT_RAM_BASE", ["board/qemu-virt/memory_map.h"]),
                                ("size", "QEMU_VIRT_RAM_SIZE", ["board/qemu-virt/memory_map.h"])])
    ram_end = ram["base"] + ram["size"]

    sections = []
    totals = {g: 0 for g in ("text", "rodata", "data", "bss", "stack")}
    for s in elf.sections:
        if not s.alloc:
            continue
        group = GROUPS.get(s.name)
        sections.append({"name": s.name, "address": f"0x{s.addr:08x}", "size": s.size,
                         "kind": "NOBITS" if s.nobits else "PROGBITS", "group": group})
        if group is None:
            result.fail(Finding(s.name, f"unexpected allocated section {s.name} ({s.size} bytes at "
                                        f"0x{s.addr:08x}): not text, read-only data, data, bss or stack"))
            continue
        totals[group] += s.size
        if s.flags & 0x400:
            result.fail(Finding(s.name, f"section {s.name} holds thread-local storage"))
    result.figures["sections"] = sections

    def sym(name):
        s = elf.symbol(name)
        return s.value if s is not None else None

    start = sym("__image_start") or min(s.addr for s in elf.sections if s.alloc)
    end = sym("__image_end") or max(s.addr + s.size for s in elf.sections if s.alloc)
    stack_bottom, stack_top = sym("__stack_bottom"), sym("__stack_top")
    image_bytes = end - start
    result.figures["image"] = {"start": f"0x{start:08x}", "end": f"0x{end:08x}", "bytes": image_bytes}
    result.figures["ram"] = {"base": f"0x{ram['base']:08x}", "end": f"0x{ram_end:08x}",
                             "free_above_image": ram_end - end}
    if stack_bottom is None or stack_top is None:
        result.fail(Finding("__stack_bottom/__stack_top", "the linker script does not mark the stack region"))
        stack_size = totals["stack"]
    else:
        stack_size = stack_top - stack_bottom
        result.figures["stack_region"] = {"bottom": f"0x{stack_bottom:08x}", "top": f"0x{stack_top:08x}",
                                          "bytes": stack_size, "last_in_image": stack_top == end}
        if stack_size != config["CONFIG_STACK_SIZE"]:
            result.fail(Finding("stack", f"the stack region is {stack_size} bytes, CONFIG_STACK_SIZE is "
                                         f"{config['CONFIG_STACK_SIZE']}"))

    for group, size in [("text", totals["text"]), ("rodata", totals["rodata"]), ("data", totals["data"]),
                        ("bss", totals["bss"]), ("stack", stack_size), ("image", image_bytes)]:
        budget = budgets[group]
        result.figures.setdefault("budgets", {})[group] = {"bytes": size, "budget": budget,
                                                           "within": size <= budget}
        if size > budget:
            result.fail(Finding(group, f"{group} is {size} bytes, over its budget of {budget} "
                                       f"(cert/budgets.conf)"))
    if end > ram_end:
        result.fail(Finding("image", f"the image ends at 0x{end:08x}, past RAM (0x{ram_end:08x})"))

    # No heap region: nothing refers to free RAM above the image.
    for name in HEAP_SYMBOLS:
        s = elf.symbol(name)
        if s is not None:
            result.fail(Finding(name, f"the image defines the heap symbol {name} (0x{s.value:08x}); a "
                                      f"heap must not grow into free RAM"))
    for s in elf.symbols:
        if end < s.value < ram_end and s.kind in ("NOTYPE", "OBJECT", "FUNC"):
            result.fail(Finding(s.name, f"symbol {s.name} is at 0x{s.value:08x}, in the free RAM above the "
                                        f"image (a region or heap outside the image?)"))
    # Constants tori's own code loads: none may point into free RAM.  (Data
    # and library literals are not scanned: their words are not all addresses.)
    for f in image.functions:
        if f.library:
            continue
        for insn in f.instructions:
            if insn.is_data and insn.value is not None and end < insn.value < ram_end:
                result.fail(Finding(f.label, f"{f.label} loads 0x{insn.value:08x}, an address in the free "
                                             f"RAM above the image (a heap or buffer outside the image?)",
                                    image.location(insn.addr)))

    _check_regions(ctx, result, image, tree, config, ram, start)

    # The init heap: the only memory an allocator can have.
    heap = {"sbrk_linked": image.function("_sbrk") is not None}
    sbrk = image.function("_sbrk")
    graph = ctx.graph()
    init_heap = [s for s in elf.symbols if s.name == "init_heap" and s.kind == "OBJECT"]
    if sbrk is not None:
        grow = image.function("heap_grow")
        if grow is None or grow not in graph.reachable([sbrk]):
            result.fail(Finding("_sbrk", "_sbrk does not go through heap_grow (kernel/heap.c): the heap "
                                         "is not the sealed init heap"))
        if len(init_heap) != 1:
            result.fail(Finding("init_heap", "_sbrk is linked but the static init_heap is not in the image"))
    if init_heap:
        s = init_heap[0]
        sec = elf.sections[s.shndx] if s.shndx < len(elf.sections) else None
        heap["init_heap"] = {"bytes": s.size, "section": sec.name if sec else None,
                             "address": f"0x{s.value:08x}"}
        if s.size != config["CONFIG_INIT_HEAP_SIZE"]:
            result.fail(Finding("init_heap", f"init_heap is {s.size} bytes, CONFIG_INIT_HEAP_SIZE is "
                                             f"{config['CONFIG_INIT_HEAP_SIZE']}"))
        if sec is None or sec.name != ".bss":
            result.fail(Finding("init_heap", "init_heap is not in .bss"))
    else:
        heap["init_heap"] = None
    result.figures["heap"] = heap

    b = result.figures["budgets"]
    heap_text = (f"init heap {heap['init_heap']['bytes']} B static" if heap["init_heap"]
                 else "no allocator linked (no heap)")
    result.summary = (f".text {b['text']['bytes']} B, .rodata {b['rodata']['bytes']} B, "
                      f".data {b['data']['bytes']} B, .bss {b['bss']['bytes']} B, stack {stack_size} B, "
                      f"image {image_bytes} B (budgets {'met' if result.verdict == 'pass' else 'NOT met'}); "
                      f"{heap_text}; free RAM above image {ram_end - end} B untouched")
    return result


def _read_regions(path):
    regions = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if words[0] != "region" or len(words) < 6:
                raise ValueError(f"{path}:{number}: expected 'region NAME BASE SIZE USED FUNCTION...'")
            regions.append({"name": words[1], "base": words[2], "size": words[3], "used": words[4],
                            "functions": set(words[5:])})
    return regions


def _check_regions(ctx, result, image, tree, config, ram, image_start):
    """Declared RAM regions below the image (cert/regions.conf)."""
    import os
    regions = _read_regions(os.path.join(ctx.cert_dir, "regions.conf"))
    headers = ["board/qemu-virt/memory_map.h", "config/tori_config.h"]
    expressions = [("dtb", "QEMU_VIRT_DTB_SIZE", headers)]
    for r in regions:
        expressions += [(r["name"] + ".base", r["base"], headers), (r["name"] + ".size", r["size"], headers)]
        if r["used"] != "-":
            expressions.append((r["name"] + ".used", r["used"], headers))
    values = probe.evaluate(tree, expressions)
    low = ram["base"] + values["dtb"]
    figures = {}
    spans = []
    for r in regions:
        base, size = values[r["name"] + ".base"], values[r["name"] + ".size"]
        used = values.get(r["name"] + ".used", size)
        r["span"] = (base, base + size)
        figures[r["name"]] = {"base": f"0x{base:08x}", "bytes": size, "used": used,
                              "functions": sorted(r["functions"])}
        if base < low or base + size > image_start:
            result.fail(Finding(r["name"], f"region {r['name']} (0x{base:08x}, {size} bytes) is not "
                                           f"between QEMU's DTB (0x{low:08x}) and the image "
                                           f"(0x{image_start:08x})"))
        if used > size:
            result.fail(Finding(r["name"], f"region {r['name']} holds {size} bytes, the build uses {used}"))
        for other, (lo, hi) in spans:
            if base < hi and lo < base + size:
                result.fail(Finding(r["name"], f"region {r['name']} overlaps region {other}"))
        spans.append((r["name"], r["span"]))
    result.figures["regions"] = figures
    # Constants tori's own code loads that point into RAM below the image.
    for f in image.functions:
        if f.library:
            continue
        for insn in f.instructions:
            if not (insn.is_data and insn.value is not None and low <= insn.value < image_start):
                continue
            owner = next((r for r in regions if r["span"][0] <= insn.value < r["span"][1]), None)
            if owner is None:
                result.fail(Finding(f.label, f"{f.label} loads 0x{insn.value:08x}, RAM below the image "
                                             f"outside every region of cert/regions.conf",
                                    image.location(insn.addr)))
            elif f.label not in owner["functions"]:
                result.fail(Finding(f.label, f"{f.label} loads 0x{insn.value:08x}, inside region "
                                             f"{owner['name']}, and is not one of its functions "
                                             f"(cert/regions.conf)", image.location(insn.addr)))

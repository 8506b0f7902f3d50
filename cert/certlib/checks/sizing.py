"""Check 2: all memory sized at build time, following the configuration."""
from fractions import Fraction

from certlib import probe
from certlib.callgraph import Finding
from certlib.elf import Elf
from certlib.linkmap import LinkMap, object_display
from certlib.report import CheckResult

ID = "sizing"
TITLE = "Compile-time sizing"
METHOD = ("The image is built at N and 2N maximum nodes (-DTORI_MAX_NODES). cert/sizing.conf "
          "declares static objects with the C expression of their size; a probe compiled with the "
          "image's own flags evaluates every expression at N, 2N and 65,536 (sizeof, CONFIG_*). "
          "Formula: .bss(2N) - .bss(N) = sum over declared objects of [size(2N) - size(N)]. The "
          "check requires: the measured .bss difference equals the formula exactly; every declared "
          "object linked has exactly its declared size at N and 2N; every object whose size changes "
          "with N is declared; every object of declare_threshold bytes or more is declared (so a "
          "table sized by a literal instead of the configuration is caught); the membership state "
          "at 65,536 nodes is within its budget.")

DATA_SECTIONS = (".bss", ".data", ".rodata", ".stack")


def _objects(elf, linkmap):
    """{(name, source basename): (size, section)} of data objects in the image."""
    out = {}
    for s in elf.symbols:
        if s.kind not in ("OBJECT", "TLS") or s.size == 0:
            continue
        section = elf.sections[s.shndx] if 0 < s.shndx < len(elf.sections) else None
        if section is None or section.name not in DATA_SECTIONS:
            continue
        input_section = linkmap.at(s.value)
        origin = object_display(input_section.object) if input_section else "?"
        out[(s.name, origin)] = (s.size, section.name)
    return out


def _matches(declared, name, origin):
    if declared.symbol != name:
        return False
    if declared.source is None:
        return True
    base = declared.source.rsplit("/", 1)[-1]
    return f"({base}.obj)" in origin or origin.endswith(f"/{base}.obj") or f"({base}.o)" in origin \
        or origin.endswith(f"/{base}.o")


def _section_size(elf, name):
    s = elf.section(name)
    return s.size if s else 0


def _per_member(delta, n):
    value = Fraction(delta, n)
    return float(value), (str(value) if value.denominator != 1 else str(value.numerator))


def run(ctx):
    result = CheckResult(ID, TITLE, METHOD)
    n = ctx.nodes()
    if 2 * n > 1048576:
        result.error(f"2N = {2 * n} is over the largest CONFIG_MAX_NODES (2^20); choose N <= 524288")
        return result
    tree_n = ctx.built_tree(n)
    tree_2n = ctx.built_tree(2 * n)
    elf_n, elf_2n = Elf(f"{tree_n.build_dir}/node.elf"), Elf(f"{tree_2n.build_dir}/node.elf")
    map_n, map_2n = LinkMap(f"{tree_n.build_dir}/node.map"), LinkMap(f"{tree_2n.build_dir}/node.map")
    objects_n, objects_2n = _objects(elf_n, map_n), _objects(elf_2n, map_2n)
    threshold = ctx.budgets["declare_threshold"]

    declared = ctx.sizing.objects
    measures = ctx.sizing.measures
    expressions = [(f"o{i}", d.expression, d.headers) for i, d in enumerate(declared)] + \
                  [(f"m{i}", m.expression, m.headers) for i, m in enumerate(measures)]
    at_n = probe.evaluate(tree_n, expressions)
    at_2n = probe.evaluate(tree_2n, expressions)
    at_65536 = probe.evaluate(tree_n, expressions, max_nodes_override=65536)

    formula_terms = []
    predicted_bss = 0
    matched = set()
    for i, d in enumerate(declared):
        key = f"o{i}"
        hits_n = [(k, v) for k, v in objects_n.items() if _matches(d, *k)]
        hits_2n = [(k, v) for k, v in objects_2n.items() if _matches(d, *k)]
        term = {"object": d.symbol + (f"@{d.source}" if d.source else ""), "expression": d.expression,
                "size_n": at_n[key], "size_2n": at_2n[key], "size_65536": at_65536[key],
                "declared_at": d.line.where(), "linked": bool(hits_n)}
        if len(hits_n) > 1:
            result.fail(Finding(d.symbol, f"{d.symbol} names {len(hits_n)} objects "
                                          f"({', '.join(k[1] for k, _ in hits_n)}): add @SOURCE in "
                                          f"cert/sizing.conf ({d.line.where()})"))
        for (k, (size, section)) in hits_n:
            matched.add(k)
            term["section"] = section
            if size != at_n[key]:
                result.fail(Finding(d.symbol, f"{d.symbol} ({k[1]}) is {size} bytes at N={n}, but its "
                                              f"declared size {d.expression} is {at_n[key]} "
                                              f"({d.line.where()})", kind="size-mismatch"))
        for (k, (size, section)) in hits_2n:
            if size != at_2n[key]:
                result.fail(Finding(d.symbol, f"{d.symbol} ({k[1]}) is {size} bytes at 2N={2 * n}, but its "
                                              f"declared size {d.expression} is {at_2n[key]} "
                                              f"({d.line.where()})", kind="size-mismatch"))
        if hits_n and term.get("section") == ".bss":
            predicted_bss += at_2n[key] - at_n[key]
        if hits_n:
            term["bytes_per_member"] = _per_member(at_2n[key] - at_n[key], n)[1]
            formula_terms.append(term)
        else:
            term["note"] = "not linked into this image"
            formula_terms.append(term)

    # Undeclared objects that scale or are large.
    for k, (size, section) in sorted(objects_n.items()):
        if k in matched:
            continue
        size_2n = objects_2n.get(k, (None, None))[0]
        if size_2n is not None and size_2n != size:
            result.fail(Finding(k[0], f"{k[0]} ({k[1]}, {section}) grows with CONFIG_MAX_NODES ({size} B at "
                                      f"N={n}, {size_2n} B at 2N) but cert/sizing.conf does not declare it",
                                kind="undeclared-scaling"))
        elif size >= threshold:
            result.fail(Finding(k[0], f"{k[0]} ({k[1]}, {section}) is a {size}-byte table that "
                                      f"cert/sizing.conf does not declare; its size follows no stated "
                                      f"configuration value (objects of {threshold} B or more must be "
                                      f"declared)", kind="undeclared-large"))
    for k, (size, section) in sorted(objects_2n.items()):
        if k not in objects_n and not any(_matches(d, *k) for d in declared):
            result.fail(Finding(k[0], f"{k[0]} ({k[1]}) exists only in the 2N image ({size} B)",
                                kind="undeclared-scaling"))

    bss_n, bss_2n = _section_size(elf_n, ".bss"), _section_size(elf_2n, ".bss")
    data_n, data_2n = _section_size(elf_n, ".data"), _section_size(elf_2n, ".data")
    delta = bss_2n - bss_n
    if delta != predicted_bss:
        result.fail(Finding(".bss", f".bss grows by {delta} B from N={n} to 2N={2 * n}, the formula predicts "
                                    f"{predicted_bss} B (difference {delta - predicted_bss} B: an undeclared "
                                    f"table, or alignment padding that changed)", kind="formula"))
    if data_2n != data_n:
        result.fail(Finding(".data", f".data changes with the node count ({data_n} B at N, {data_2n} B at 2N): "
                                     f"initialised tables must not scale"))

    measured = {}
    for i, m in enumerate(measures):
        key = f"m{i}"
        per = _per_member(at_2n[key] - at_n[key], n)
        measured[m.symbol] = {"expression": m.expression, "part": m.part,
                              "at_n": at_n[key], "at_2n": at_2n[key],
                              "at_65536": at_65536[key], "bytes_per_member": per[1],
                              "declared_at": m.line.where()}
    parts = [m for m in measures if m.part]
    parts_delta = sum(measured[m.symbol]["at_2n"] - measured[m.symbol]["at_n"] for m in parts)
    if parts and parts_delta != delta:
        result.fail(Finding("formula", f"the parts of the node's state in cert/sizing.conf ("
                                       f"{', '.join(m.symbol for m in parts)}) grow by {parts_delta} B from N "
                                       f"to 2N, .bss by {delta} B", kind="formula"))
    membership = measured.get("membership_state")
    budget = ctx.budgets["membership_state_65536"]
    if membership is None:
        result.fail(Finding("membership_state", "cert/sizing.conf has no 'measure membership_state' line"))
    elif membership["at_65536"] > budget:
        result.fail(Finding("membership_state", f"membership state at 65,536 nodes is "
                                                 f"{membership['at_65536']} B, over its budget of {budget} B"))
    membership_linked = any("membership" in s.object for s in map_n.sections)
    per_image = _per_member(delta, n)
    result.figures = {
        "n": n, "two_n": 2 * n,
        "bss": {"n": bss_n, "two_n": bss_2n, "delta": delta},
        "data": {"n": data_n, "two_n": data_2n},
        "formula": ("delta(.bss) = sum over declared objects of [size(2N) - size(N)] = "
                    + (" + ".join(f"[{t['expression']}]" for t in formula_terms if t["linked"]
                                  and t.get("section") == ".bss" and t["size_2n"] != t["size_n"]) or "0")
                    + f" = {predicted_bss} B"),
        "predicted_delta": predicted_bss,
        "parts_formula": ("delta(.bss) = " + (" + ".join(
            f"delta[{m.expression}] ({measured[m.symbol]['at_2n'] - measured[m.symbol]['at_n']} B, "
            f"{measured[m.symbol]['bytes_per_member']} B/member)" for m in parts) or "0")
            + f" = {parts_delta} B"),
        "image_bytes_per_member": per_image[1],
        "terms": formula_terms,
        "measures": measured,
        "membership_state_65536": membership["at_65536"] if membership else None,
        "membership_budget_65536": budget,
        "membership_objects_linked": membership_linked,
    }
    if result.verdict == "pass":
        ms = (f"membership state at 65,536 nodes {membership['at_65536']} B "
              f"({membership['bytes_per_member']} B/member) <= budget {budget} B")
        per_part = ", ".join(f"{m.symbol} {measured[m.symbol]['bytes_per_member']}" for m in parts
                             if measured[m.symbol]["at_2n"] != measured[m.symbol]["at_n"])
        result.summary = (f".bss {bss_n} B at N={n}, {bss_2n} B at 2N: delta {delta} B = formula "
                          f"{predicted_bss} B (B/member: {per_part or 'none'}; image {per_image[1]}); {ms}"
                          + ("" if membership_linked else " (membership not linked into the image yet)"))
    else:
        result.summary = f"delta(.bss) {delta} B vs formula {predicted_bss} B; rejected: " + ", ".join(
            sorted({f.offender for f in result.findings}))
    return result

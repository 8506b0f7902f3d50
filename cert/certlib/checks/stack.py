"""Check 5: a static bound on the one stack, from frames and the call graph."""
from certlib.callgraph import Finding, shortest_cycle
from certlib.report import CheckResult

ID = "stack"
TITLE = "Stack bound"
METHOD = ("Frames: -fstack-usage (.su) for tori's C code, cross-checked against the stack "
          "adjustments in its disassembly (the larger counts); for code without .su (newlib, "
          "libgcc, assembly) the sum of every push/sub sp/stmdb sp!/str [sp,#-n]! in the "
          "function, or an entry of cert/library_stack.conf where sp moves by a register. Whole-"
          "program call graph as for the allocator audit; every indirect call resolved by "
          "cert/indirect_calls.conf. No cycle in the graph (Tarjan SCC), no frame 'dynamic' "
          "(unbounded), no frame over frame_max. Bound = the deepest path from the reset entry "
          "(and from each exception vector, which either restarts the stack at its top or adds "
          "to the deepest path); bound x stack_margin must fit the stack region.")


def frame_of(ctx, f, result):
    """Bytes of f's frame, or None when unknown (a finding is added)."""
    lib = ctx.library_stack.entries.get(f.name)
    if lib is not None:
        return lib[0], "cert/library_stack.conf"
    if f.frame_origin == ".su":
        if f.frame_qualifier == "dynamic":
            result.fail(Finding(f.label, f"the frame of {f.label} is dynamic and unbounded (a "
                                         f"variable-length array or alloca): {f.frame} bytes static part",
                                f.su_location, kind="dynamic-frame"))
        frame = f.frame
        if not f.disasm_notes and f.disasm_frame > frame:
            result.notes.append(f"{f.label}: disassembly moves sp by {f.disasm_frame} bytes, .su says "
                                f"{frame}; the larger is used")
            frame = f.disasm_frame
        elif f.disasm_notes and f.frame_qualifier == "static":
            result.notes.append(f"{f.label}: sp written by register ({'; '.join(f.disasm_notes)}), "
                                f".su frame {frame} (static) used")
        return frame, ".su"
    if f.disasm_notes:
        result.fail(Finding(f.label, f"{f.label} ({f.object_display}) moves sp by a register amount and "
                                     f"has no .su: bound it in cert/library_stack.conf "
                                     f"({'; '.join(f.disasm_notes)})", kind="unbounded-frame"))
        return None, "disassembly"
    return f.disasm_frame, "disassembly"


def run(ctx):
    result = CheckResult(ID, TITLE, METHOD)
    image, graph = ctx.image(), ctx.graph()
    frame_max = ctx.budgets["frame_max"]
    margin = ctx.budgets["stack_margin"]

    for finding in graph.findings:
        result.fail(finding)

    cycles = graph.cycles()
    for cycle in cycles:
        path, edges = shortest_cycle(graph, cycle)
        names = [f.label for f in path]
        if len(path) == 2:
            text = f"{names[0]} calls itself"
        else:
            text = "call cycle " + names[0] + "".join(
                (" -(indirect)-> " if edges[i].kind == "indirect" else " -> ") + names[i + 1]
                for i in range(len(edges)))
        if len(cycle) > len(path) - 1:
            text += f" ({len(cycle)} functions are on cycles with it: {', '.join(f.label for f in cycle)})"
        result.fail(Finding(names[0], f"recursion: {text}",
                            image.location(edges[0].site) if edges else None,
                            kind="recursion", cycle=[f.label for f in cycle]))

    entry = image.function_at(image.elf.entry & ~1)
    vectors = ctx.vectors()
    roots = [("reset", entry)] if entry else []
    for name, f in vectors.handlers():
        roots.append((name, f))
    reachable = graph.reachable([f for _, f in roots])

    frames = {}
    origins = {}
    for f in reachable:
        frames[f], origins[f] = frame_of(ctx, f, result)
        if frames[f] is not None and frames[f] > frame_max:
            result.fail(Finding(f.label, f"the frame of {f.label} is {frames[f]} bytes, over frame_max "
                                         f"{frame_max} (cert/budgets.conf)", f.su_location, kind="big-frame"))

    in_cycle = {f for c in cycles for f in c}
    depth, best = {}, {}

    def solve(root):
        # Iterative post-order DFS; cycles were reported above and are cut here.
        stack = [(root, False)]
        visiting = set()
        while stack:
            f, done = stack.pop()
            if f in depth:
                continue
            if done:
                visiting.discard(f)
                own = frames.get(f) or 0
                deepest, pick = 0, None
                for e in graph.edges[f]:
                    g = e.callee
                    if g in depth and depth[g] > deepest:
                        deepest, pick = depth[g], g
                depth[f] = own + deepest
                best[f] = pick
                continue
            if f in visiting:
                continue
            visiting.add(f)
            stack.append((f, True))
            for e in graph.edges[f]:
                if e.callee not in depth and e.callee not in visiting:
                    stack.append((e.callee, False))

    root_depths = {}
    for name, f in roots:
        solve(f)
        root_depths[name] = depth[f]

    def path_from(f):
        out = []
        while f is not None:
            out.append(f)
            f = best.get(f)
        return out

    # A vector whose branch chain reloads sp runs on a fresh stack; otherwise
    # it may come on top of the deepest path.
    fresh = {}
    for name, f in roots[1:]:
        chain, g, seen = [f], f, {f}
        while True:
            nxt = [e.callee for e in graph.edges[g] if e.kind == "tail" and e.callee not in seen]
            if getattr(g, "stack_resets", None) or not nxt or any(e.kind == "call" for e in graph.edges[g]):
                break
            g = nxt[0]
            seen.add(g)
            chain.append(g)
        fresh[name] = any(getattr(c, "stack_resets", None) for c in chain)
    reset_depth = root_depths.get("reset", 0)
    bound = reset_depth
    for name, _ in roots[1:]:
        bound = max(bound, root_depths[name] if fresh[name] else reset_depth + root_depths[name])

    deepest_root = max(roots, key=lambda r: root_depths[r[0]] if r[0] == "reset" or fresh[r[0]]
                       else reset_depth + root_depths[r[0]])
    path = path_from(deepest_root[1])
    stack_bottom, stack_top = image.elf.symbol("__stack_bottom"), image.elf.symbol("__stack_top")
    region = (stack_top.value - stack_bottom.value) if stack_bottom and stack_top else None
    if region is None:
        result.fail(Finding("stack", "the image has no __stack_bottom/__stack_top: no stack region to fit"))
    elif bound * margin > region:
        result.fail(Finding(path[-1].label if path else "stack",
                            f"static bound {bound} B x margin {margin} = {bound * margin} B exceeds the stack "
                            f"region of {region} B; deepest path: "
                            + " -> ".join(f"{g.label}({frames.get(g)})" for g in path), kind="margin"))
    if in_cycle:
        result.notes.append("the bound cuts the recursive cycles above and is not a bound")

    library = sorted(f.label for f in reachable if origins.get(f) == "disassembly")
    result.figures = {
        "bound_bytes": bound,
        "margin": margin,
        "bound_with_margin": bound * margin,
        "stack_region_bytes": region,
        "frame_max": frame_max,
        "deepest_path": [{"function": g.label, "frame": frames.get(g), "origin": origins.get(g)} for g in path],
        "root_depths": root_depths,
        "vectors_on_fresh_stack": fresh,
        "functions_analysed": len(reachable),
        "frames_from_disassembly": library,
        "largest_frames": [{"function": f.label, "frame": frames[f]} for f in
                           sorted((f for f in reachable if frames.get(f) is not None),
                                  key=lambda f: -frames[f])[:8]],
        "recursion_cycles": [[f.label for f in c] for c in cycles],
        "jump_tables_checked": [f"{f.label} at 0x{i.addr:08x} ({n} entries)" for f, i, n in graph.jump_tables],
        "computed_jumps_taken_as_local": [f"{f.label} at 0x{i.addr:08x}: {i.text()}"
                                          for f, i in graph.computed_jumps],
        "indirect_sites": list(getattr(graph, "site_info", {}).values()),
    }
    if result.verdict == "pass":
        result.summary = (f"bound {bound} B (x{margin} = {bound * margin} B <= stack {region} B); "
                          f"deepest: " + " -> ".join(f"{g.label}({frames.get(g)})" for g in path)
                          + f"; {len(reachable)} functions, no recursion, "
                          f"{len(getattr(graph, 'site_info', {}))} indirect sites annotated")
    else:
        result.summary = f"bound {bound} B; rejected: " + ", ".join(
            sorted({f.offender for f in result.findings}))
    return result

"""Check 3: no allocation after init, from the call graph of the linked image."""
from certlib.callgraph import Finding
from certlib.checks.phases import Phases, PhaseError, ENTRY, SEAL
from certlib.report import CheckResult

ID = "allocator"
TITLE = "Allocator audit"
METHOD = ("Whole-program call graph of node.elf (objdump calls, tail calls and veneers, indirect "
          "calls through cert/indirect_calls.conf). Init phase vs run phase: a call site of "
          "kernel_main is run-phase when control flow in kernel_main reaches it after its single "
          "call to kernel_enter_run_phase; run-phase code is everything reachable from those sites "
          "and from the exception vectors. No allocator-family function (malloc, free, calloc, "
          "realloc, memalign, their _r forms, _sbrk, _sbrk_r, heap_grow, and any function that "
          "reaches _sbrk or heap_grow, which covers newlib's stdio and exit paths) may be "
          "run-phase code. The seal: kernel_enter_run_phase reaches heap_seal, and _sbrk reaches "
          "heap_grow.")

ALLOCATOR_NAMES = {
    "malloc", "free", "calloc", "realloc", "reallocf", "memalign", "aligned_alloc",
    "posix_memalign", "valloc", "pvalloc", "malloc_usable_size", "mallinfo", "malloc_trim",
    "_malloc_r", "_free_r", "_calloc_r", "_realloc_r", "_reallocf_r", "_memalign_r",
    "_valloc_r", "_pvalloc_r", "_malloc_usable_size_r", "_mallinfo_r", "_malloc_trim_r",
    "nano_malloc", "nano_free", "nano_calloc", "nano_realloc", "sbrk", "_sbrk", "_sbrk_r",
    "heap_grow", "__cxa_atexit", "atexit", "__register_exitproc", "strdup", "_strdup_r",
    "strndup", "_strndup_r", "asprintf", "vasprintf", "_asprintf_r", "_vasprintf_r",
}
GROWERS = ("_sbrk", "_sbrk_r", "heap_grow", "sbrk")
STDIO = ("printf", "iprintf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsnprintf",
         "puts", "fputs", "putchar", "fputc", "putc", "fwrite", "fflush", "_fflush_r", "setvbuf",
         "_vfprintf_r", "_vfiprintf_r", "_svfprintf_r", "_svfiprintf_r", "__swsetup_r",
         "__smakebuf_r", "__sinit", "__sfp", "_puts_r", "_printf_r", "fopen", "_fopen_r",
         "__swbuf_r", "__sflush_r", "_fwalk_reent", "_fwalk_sglue", "_putc_r", "_fputc_r",
         "_fwrite_r", "_sprintf_r", "_snprintf_r")
EXIT = ("exit", "_exit", "abort", "atexit", "__call_exitprocs", "__register_exitproc",
        "_cleanup_r", "__libc_fini_array", "__libc_init_array", "__cxa_atexit", "_Exit",
        "raise", "_raise_r", "_kill_r")


def run(ctx):
    result = CheckResult(ID, TITLE, METHOD)
    image, graph = ctx.image(), ctx.graph()
    try:
        phases = Phases(ctx)
    except PhaseError as e:
        result.fail(Finding(ENTRY, str(e)))
        result.summary = str(e)
        return result

    for finding in graph.findings:
        if finding.extra.get("kind") in ("unannotated-indirect-call", "unlisted-target") or \
                "cannot tell which function" in finding.message:
            result.fail(Finding(finding.offender, "call graph incomplete, so the run phase is not known: "
                                + finding.message, finding.location))

    present = [f for f in image.functions if f.name in ALLOCATOR_NAMES or
               any(a in ALLOCATOR_NAMES for a in getattr(f, "aliases", []))]
    growers = [f for f in image.functions if f.name in GROWERS]
    reaching = set()
    if growers:
        # Every function from which a grower is reachable allocates, in effect.
        reverse = {}
        for f, edges in graph.edges.items():
            for e in edges:
                reverse.setdefault(e.callee, []).append(f)
        todo = list(growers)
        reaching = set(growers)
        while todo:
            g = todo.pop()
            for caller in reverse.get(g, []):
                if caller not in reaching:
                    reaching.add(caller)
                    todo.append(caller)
    # The walk below stops at the first allocator on a path, so that the
    # offender is the caller that asked for memory, not some function above it.
    allocating = set(present) | set(growers)
    result.figures["allocator_functions_in_image"] = sorted(f.label for f in present)
    result.figures["functions_reaching_sbrk"] = sorted(f.label for f in reaching)

    # Walk the run phase from its roots, stopping at the first allocating function.
    offenders = {}
    for site_insn, root in phases.run_sites + [(None, g) for _, g in phases.vector_roots]:
        parent = {root: None}
        todo = [root]
        while todo:
            f = todo.pop()
            if f in allocating:
                offenders.setdefault(f, (parent, root))
                continue
            for e in graph.edges[f]:
                if e.callee not in parent:
                    parent[e.callee] = e
                    todo.append(e.callee)
    for f, (parent, root) in sorted(offenders.items(), key=lambda kv: kv[0].start):
        path = graph.path_to(parent, f)
        names = [g.label for g in path]
        origin = f"{ENTRY} [after {SEAL}]" if any(root is g for _, g in phases.run_sites) else "an exception vector"
        # The offender: the last of tori's own functions before the allocator
        # (newlib's stdio, for example, allocates on behalf of its caller).
        own = [g for g in path[:-1] if not g.library]
        offender = own[-1].label if own else f.label
        edge = parent.get(f)
        location = image.location(edge.site) if edge is not None else None
        result.fail(Finding(offender, f"{f.label} is reachable in the run phase: "
                            + " -> ".join([origin] + names), location, allocator=f.label))

    # The seal.
    seal_fn = image.function("heap_seal")
    if seal_fn is None or seal_fn not in graph.reachable([phases.seal]):
        result.fail(Finding(SEAL, f"{SEAL} does not reach heap_seal: the heap is not sealed at run time"))
    sbrk = image.function("_sbrk")
    if sbrk is not None:
        grow = image.function("heap_grow")
        if grow is None or grow not in graph.reachable([sbrk]):
            result.fail(Finding("_sbrk", "_sbrk does not reach heap_grow: late requests would not panic"))

    init_only = sorted(f.label for f in allocating if f in phases.init_code)
    allocating_transitively = allocating | reaching
    newlib = {
        "stdio_linked": sorted(f.label for f in image.functions if f.name in STDIO),
        "exit_paths_linked": sorted(f.label for f in image.functions if f.name in EXIT),
    }
    newlib["stdio_or_exit_reaching_allocator"] = sorted(
        n for n in newlib["stdio_linked"] + newlib["exit_paths_linked"]
        if any(f.label == n and f in allocating_transitively for f in image.functions))
    result.figures.update({
        "rule": "run phase = reachable from call sites of kernel_main after its one call to "
                "kernel_enter_run_phase, and from the exception vectors",
        "seal_site": f"0x{phases.seal_site.addr:08x}",
        "init_phase_calls": [g.label for _, g in phases.init_sites],
        "run_phase_calls": [g.label for _, g in phases.run_sites],
        "run_phase_functions": len(phases.run_code),
        "init_phase_functions": len(phases.init_code),
        "allocating_in_init_phase_only": init_only,
        "allocating_in_run_phase": sorted(f.label for f in offenders),
        "newlib": newlib,
        "runtime_evidence": "kernel.heap_seal (unit test) and the QEMU malloc-after-init test "
                            "show a late request panics with the sealing message",
    })
    if result.verdict == "pass":
        if present:
            result.summary = (f"{len(present)} allocator function(s) linked, reachable only in the init phase "
                              f"({', '.join(init_only) or 'none reachable at all'}); run phase "
                              f"({len(phases.run_code)} functions) allocates nothing; heap sealed by {SEAL}")
        else:
            result.summary = (f"no allocator linked (malloc, free, _sbrk and friends absent); run phase "
                              f"{len(phases.run_code)} functions; stdio {len(newlib['stdio_linked'])}, exit "
                              f"paths {len(newlib['exit_paths_linked'])} linked; heap sealed by {SEAL}")
    else:
        result.summary = (f"allocation reachable in the run phase: "
                          f"{', '.join(f.offender for f in result.findings)}")
    return result

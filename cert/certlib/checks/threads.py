"""Check 4: no threads, no interrupt handlers beyond the fault vectors."""
import re

from certlib.callgraph import Finding
from certlib.linkmap import object_display
from certlib.report import CheckResult

ID = "threads"
TITLE = "No threads, no interrupt handlers"
METHOD = ("Symbol table of node.elf: no symbol of a thread library (pthread_*, thrd_*, mtx_*, cnd_*, "
          "tss_*, __gthread*, sem_*, clone, __tls_get_addr, __aeabi_read_tp, RTOS task APIs) and no "
          "thread-local storage. Vector table found through the VBAR write of start-up code: every "
          "entry is a branch; no code reachable from the vectors returns from an exception (subs pc, "
          "lr / movs pc / eret / rfe / ldm ^), so no vector is an interrupt handler; no instruction "
          "anywhere unmasks IRQ or FIQ (cpsie i/f, msr to the CPSR control field).")

THREAD_PATTERNS = [
    r"pthread_\w*", r"__pthread\w*", r"_pthread\w*", r"thrd_\w+", r"mtx_\w+", r"cnd_\w+", r"tss_\w+",
    r"call_once", r"__gthread\w*", r"sem_(init|wait|post|destroy|open|close|timedwait|trywait|getvalue)",
    r"clone", r"__clone\w*", r"__tls_get_addr", r"__aeabi_read_tp", r"omp_\w+", r"GOMP_\w+",
    r"xTaskCreate\w*", r"osThread\w+", r"k_thread_\w+", r"tx_thread_\w+",
]
THREAD_RE = re.compile(r"^(?:" + "|".join(THREAD_PATTERNS) + r")$")


def run(ctx):
    result = CheckResult(ID, TITLE, METHOD)
    image, graph = ctx.image(), ctx.graph()
    elf = image.elf

    thread_symbols = []
    for s in elf.symbols:
        if THREAD_RE.match(s.name) or s.kind == "TLS":
            section = image.linkmap.at(s.address)
            origin = object_display(section.object) if section else "?"
            thread_symbols.append(s.name)
            loc = image.location(s.address) if s.kind == "FUNC" else None
            result.fail(Finding(s.name, f"thread-library symbol {s.name} ({s.kind.lower()}, from {origin})",
                                loc or origin))
    for s in elf.sections:
        if s.alloc and (s.flags & 0x400 or s.name in (".tdata", ".tbss")):
            result.fail(Finding(s.name, f"thread-local storage section {s.name}"))

    vectors = ctx.vectors()
    for problem in vectors.problems:
        result.fail(Finding("vector table", problem))
    chains = {}
    for name, _, target in vectors.entries:
        if target is None:
            continue
        if name == "reset":
            chains[name] = target.label
            continue
        reach = graph.reachable([target])
        returns = [insn for f in reach for insn in f.instructions if insn.kind == "exception-return"]
        for insn in returns:
            result.fail(Finding(insn.function.label,
                                f"the {name} vector reaches an exception return ({insn.text()} at "
                                f"{insn.addr:08x} in {insn.function.label}): that is an interrupt handler",
                                image.location(insn.addr)))
        # Describe the chain of branches from the vector to its first call.
        chain, f, seen = [target.label], target, {target}
        while True:
            nxt = [e.callee for e in graph.edges[f] if e.kind == "tail" and e.callee not in seen]
            calls = [e.callee for e in graph.edges[f] if e.kind == "call"]
            if calls:
                chain.append("calls " + ", ".join(sorted({c.label for c in calls})))
                break
            if not nxt:
                break
            f = nxt[0]
            seen.add(f)
            chain.append(f.label)
        chains[name] = " -> ".join(chain)

    unmask = []
    for f in image.functions:
        for insn in f.instructions:
            m = insn.mnemonic
            if m.startswith("cpsie") and re.search(r"[if]", insn.operands.split(",")[0]):
                unmask.append((f, insn))
            elif m.startswith("msr") and re.match(r"^\s*cpsr_\w*c", insn.operands, re.I):
                source = insn.operands.split(",", 1)[1].strip() if "," in insn.operands else ""
                imm = re.match(r"^#(\d+|0x[0-9a-f]+)", source)
                if imm is None or (int(imm.group(1), 0) & 0xC0) != 0xC0:
                    unmask.append((f, insn))
    for f, insn in unmask:
        result.fail(Finding(f.label, f"{f.label} may unmask interrupts ({insn.text()} at {insn.addr:08x})",
                            image.location(insn.addr)))

    result.figures = {
        "thread_symbols": thread_symbols,
        "vector_table": f"0x{vectors.address:08x}" if vectors.address is not None else None,
        "vbar_writes": [f"0x{i.addr:08x} in {i.function.label}" for i in vectors.vbar_writes],
        "vectors": chains,
        "exception_returns_in_image": [f"0x{i.addr:08x} {i.function.label}" for i in graph.exception_returns],
        "interrupt_unmasking": [f"0x{i.addr:08x} {f.label}" for f, i in unmask],
    }
    if result.verdict == "pass":
        result.summary = (f"no thread symbols, no TLS; vector table at 0x{vectors.address:08x}: "
                          f"{len(chains) - 1} fault vectors, none returns from an exception; "
                          f"IRQ/FIQ never unmasked")
    else:
        result.summary = "threads or interrupt handlers found: " + ", ".join(
            sorted({f.offender for f in result.findings}))
    return result

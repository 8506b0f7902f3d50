"""Check 6: the stack's high-water mark measured in QEMU, against the static bound."""
import os
import re
import select
import signal
import subprocess
import time

from certlib import probe
from certlib.callgraph import Finding
from certlib.checks import stack as stack_check
from certlib.report import CheckResult

ID = "runtime"
TITLE = "Runtime stack evidence"
METHOD = ("Start-up code paints the stack (board/qemu-virt/start.S, BOARD_STACK_PAINT); the node "
          "reports the deepest painted word overwritten (board_stack_high_water) as an event line "
          "on the `stack` console command and on `halt` (kernel/stack_report.c). The certified image "
          "boots in QEMU with a generated personality; a busy scenario drives its console (every "
          "command, unknown commands, over-long lines, repeated) and then halts it; every reported "
          "mark must be at most the static bound of check 'stack' and below the stack size.")

ROUNDS = 150
TIMEOUT_S = 60


def _scenario():
    lines = []
    for i in range(ROUNDS):
        lines += ["help", "stack", f"no-such-command-{i}", "x" * 300, "   ", "stack  extra words"]
    lines += ["stack", "halt"]
    return "".join(l + "\n" for l in lines)


def run(ctx):
    result = CheckResult(ID, TITLE, METHOD)
    tools = ctx.tools
    if tools.qemu is None:
        result.error("qemu-system-arm is not installed (Debian package qemu-system-arm)")
        return result
    bound_result = ctx.cached("stack", lambda: stack_check.run(ctx))
    bound = bound_result.figures.get("bound_bytes")
    image = ctx.image()
    tree = ctx.tree()
    memory = probe.evaluate(tree, [
        ("personality", "QEMU_VIRT_PERSONALITY_ADDRESS", ["board/qemu-virt/memory_map.h"]),
        ("ram_mib", "QEMU_VIRT_RAM_SIZE_MIB", ["board/qemu-virt/memory_map.h"])])

    host = ctx.tree("host")
    if not ctx.args.no_build:
        host.build("tori-personality")
    tool = os.path.join(host.build_dir, "qemu", "tori-personality")
    personality = os.path.join(ctx.build_root, "runtime-personality.bin")
    code = subprocess.run([tool, "--node", "0", "--dims", "1", "-o", personality],
                          capture_output=True, text=True)
    if code.returncode != 0:
        result.error(f"tori-personality failed: {code.stderr.strip()}")
        return result

    command = [tools.qemu, "-M", "virt", "-cpu", "cortex-a15", "-m", str(memory["ram_mib"]),
               "-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
               "-kernel", image.elf_path,
               "-device", f"loader,file={personality},addr=0x{memory['personality']:x},force-raw=on"]
    output, halted, reason = _run_qemu(command, _scenario())
    log = os.path.join(ctx.build_root, "runtime-console.log")
    with open(log, "w", encoding="utf-8") as f:
        f.write(output)

    marks = []
    for line in output.splitlines():
        if " event=stack " not in line:
            continue
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        try:
            marks.append((int(fields["high_water"]), int(fields["size"]), fields.get("reason", "?")))
        except (KeyError, ValueError):
            result.fail(Finding("stack event", f"malformed stack event line: {line.strip()}"))
    requests = [m for m in marks if m[2] == "request"]
    halts = [m for m in marks if m[2] == "halt"]
    ready = " event=ready " in output
    result.figures = {
        "scenario": f"single node, console busy loop: {ROUNDS} rounds of help, stack, unknown "
                    f"command, 300-byte line, blank line, stack with arguments; then halt",
        "torus_scenario": "not run: tori-emu has no fault injection yet and membership is not linked "
                          "into the node image",
        "command": " ".join(command),
        "console_log": log,
        "ready": ready,
        "stack_events": len(marks),
        "request_reports": len(requests),
        "halt_reports": len(halts),
        "high_water_bytes": max((m[0] for m in marks), default=None),
        "stack_size_bytes": marks[0][1] if marks else None,
        "static_bound_bytes": bound,
        "qemu_outcome": reason,
    }
    if not ready:
        result.fail(Finding("node", f"the node did not become ready in QEMU ({reason}); see {log}"))
    if not requests:
        result.fail(Finding("stack command", f"no reply to the `stack` console command; see {log}"))
    if not halts:
        result.fail(Finding("halt report", f"no stack report when the node halted; see {log}"))
    if marks:
        high = max(m[0] for m in marks)
        size = marks[0][1]
        if high >= size:
            result.fail(Finding("stack paint", f"high-water mark {high} B is the whole stack ({size} B): "
                                               f"the stack was not painted, or overflowed"))
        if bound is None:
            result.fail(Finding("stack bound", "check 'stack' produced no bound to compare with"))
        elif high > bound:
            result.fail(Finding("stack bound", f"measured high-water mark {high} B exceeds the static bound "
                                               f"{bound} B: the static analysis missed stack use",
                                kind="bound-exceeded"))
    if result.verdict == "pass":
        result.summary = (f"QEMU single-node busy run: high-water mark {max(m[0] for m in marks)} B <= "
                          f"static bound {bound} B (stack {marks[0][1]} B); {len(requests)} on request, "
                          f"{len(halts)} on halt")
    else:
        result.summary = "runtime evidence rejected: " + ", ".join(sorted({f.offender for f in result.findings}))
    return result


def _run_qemu(command, script):
    """Boots, waits for ready, feeds the script, reads until the halt event."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    output = b""
    reason = "timeout"
    deadline = time.monotonic() + TIMEOUT_S
    sent = False
    halted = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([process.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    reason = f"qemu exited ({process.poll()})"
                    break
                output += chunk
            if not sent and b" event=ready " in output:
                process.stdin.write(script.encode())
                process.stdin.flush()
                sent = True
            if b" event=halt " in output:
                halted = True
                reason = "halted"
                time.sleep(0.2)
                break
            if b" event=panic " in output:
                reason = "panic"
                break
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait()
    return output.decode("utf-8", "replace"), halted, reason

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
          "reports the deepest painted word overwritten (board_stack_usage) as an event line "
          "on the `stack` console command and on `halt` (kernel/stack_report.c). Two QEMU runs of the "
          "certified image: (1) one node whose console is driven busy (every command, unknown "
          "commands, over-long lines, repeated) and then halted, its own reports collected; (2) a "
          "2x2 torus under tori-emu with node 3 killed, run until the survivors agree on the new "
          "view, then each survivor's stack region read through QMP (pmemsave) and its mark "
          "computed from the paint. Every mark must be at most the static bound of check 'stack' "
          "and below the stack size.")

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

    host = ctx.tools_tree()
    if not ctx.args.no_build:
        host.build("tori-personality")
    tool = os.path.join(host.build_dir, "qemu", "tori-personality")
    personality = ctx.scratch("runtime-personality.bin")
    code = subprocess.run([tool, "--node", "0", "--dims", "1", "-o", personality],
                          capture_output=True, text=True)
    if code.returncode != 0:
        result.error(f"tori-personality failed: {code.stderr.strip()}")
        return result

    # -nodefaults: no device the command does not name (the virt machine's
    # default network card needs a ROM from a package tori does not install).
    command = [tools.qemu, "-M", "virt", "-cpu", "cortex-a15", "-m", str(memory["ram_mib"]),
               "-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot",
               "-kernel", image.elf_path,
               "-device", f"loader,file={personality},addr=0x{memory['personality']:x},force-raw=on"]
    output, halted, reason = _run_qemu(command, _scenario())
    log = ctx.scratch("runtime-console.log")
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
    torus = _torus_scenario(ctx, image, host, result)
    requests = [m for m in marks if m[2] == "request"]
    halts = [m for m in marks if m[2] == "halt"]
    ready = " event=ready " in output
    result.figures = {
        "scenario": f"single node, console busy loop: {ROUNDS} rounds of help, stack, unknown "
                    f"command, 300-byte line, blank line, stack with arguments (refused); then halt",
        "torus_scenario": torus,
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
    torus_marks = [v for v in torus.get("high_water_bytes", {}).values()] if isinstance(torus, dict) else []
    if marks or torus_marks:
        high = max([m[0] for m in marks] + torus_marks)
        result.figures["high_water_bytes"] = high
        size = marks[0][1] if marks else torus.get("stack_size_bytes")
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
        torus_text = (f"2x2 torus with node {torus['killed']} killed: marks "
                      + ", ".join(f"node {n} {v} B" for n, v in sorted(torus["high_water_bytes"].items()))
                      if torus.get("high_water_bytes") else "torus run: " + str(torus.get("skipped")))
        result.summary = (f"high-water mark {result.figures['high_water_bytes']} B <= static bound {bound} B "
                          f"(stack {size} B); single-node busy console {max(m[0] for m in marks)} B "
                          f"({len(requests)} reports on request, {len(halts)} on halt); {torus_text}")
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
                    try:
                        reason = f"qemu exited ({process.wait(timeout=5)})"
                    except subprocess.TimeoutExpired:
                        reason = "qemu closed its console"
                    # QEMU's own complaint, e.g. a missing firmware file.
                    last = output.decode("utf-8", "replace").strip().splitlines()[-1:]
                    if last:
                        reason += f": {last[0]}"
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


TORUS_DIMS = "2x2"
TORUS_KILL = 3


def _qmp_pmemsave(path, address, size, out_file, timeout=10.0):
    """Reads guest memory through a QEMU QMP socket into out_file."""
    import json
    import socket
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        reader = sock.makefile("r", encoding="utf-8")

        def reply():
            while True:
                line = reader.readline()
                if not line:
                    raise OSError("QMP connection closed")
                message = json.loads(line)
                if "return" in message or "error" in message:
                    return message

        json.loads(reader.readline())   # greeting
        sock.sendall(b'{"execute":"qmp_capabilities"}\n')
        reply()
        command = {"execute": "pmemsave", "arguments": {"val": address, "size": size,
                                                         "filename": out_file}}
        sock.sendall((json.dumps(command) + "\n").encode())
        answer = reply()
        if "error" in answer:
            raise OSError(f"pmemsave: {answer['error'].get('desc')}")


def _high_water(dump, paint):
    import struct
    words = struct.unpack(f"<{len(dump) // 4}I", dump[:len(dump) - len(dump) % 4])
    untouched = 0
    while untouched < len(words) and words[untouched] == paint:
        untouched += 1
    return (len(words) - untouched) * 4


def _torus_scenario(ctx, image, host, result):
    """2x2 torus under tori-emu, node 3 killed; survivors' stacks read via QMP."""
    import json
    bottom, top = image.elf.symbol("__stack_bottom"), image.elf.symbol("__stack_top")
    if bottom is None or top is None:
        return {"skipped": "no __stack_bottom/__stack_top in the image"}
    paint = probe.evaluate(ctx.tree(), [("paint", "BOARD_STACK_PAINT", ["board/qemu-virt/stack.h"])])["paint"]
    if not ctx.args.no_build:
        host.build("tori-emu")
    emu = os.path.join(host.build_dir, "qemu", "tori-emu")
    out = ctx.scratch("runtime-torus")
    if os.path.isdir(out):
        for name in os.listdir(out):
            os.remove(os.path.join(out, name))
    os.makedirs(out, exist_ok=True)
    command = [emu, "--dims", TORUS_DIMS, "--image", image.elf_path,
               "--inject", f"kill {TORUS_KILL} at 1s; restart {TORUS_KILL} at 100s", "--out", out]
    log_path = ctx.scratch("runtime-torus.log")
    figures = {"command": " ".join(command), "log": log_path, "killed": TORUS_KILL,
               "stack_size_bytes": top.value - bottom.value}
    with open(log_path, "w", encoding="utf-8") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        agreement = None
        while time.monotonic() < deadline and process.poll() is None and agreement is None:
            time.sleep(0.2)
            path = os.path.join(out, "faults.jsonl")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    for line in f:
                        try:
                            record = json.loads(line)
                        except ValueError:
                            continue
                        if record.get("record") == "fault" and record.get("agreement"):
                            agreement = record["agreement"]
        figures["agreement"] = agreement.get("result") if agreement else None
        if agreement is None:
            result.fail(Finding("torus scenario", f"the 2x2 torus did not settle after the kill "
                                                  f"(tori-emu {'exited ' + str(process.poll()) if process.poll() is not None else 'timed out'}); "
                                                  f"see {log_path}"))
            return figures
        marks = {}
        for rank in range(4):
            if rank == TORUS_KILL:
                continue
            dump_path = os.path.join(out, f"node{rank}.stack.bin")
            try:
                _qmp_pmemsave(os.path.join(out, f"node{rank}.qmp"), bottom.value, top.value - bottom.value,
                              dump_path)
                with open(dump_path, "rb") as f:
                    marks[rank] = _high_water(f.read(), paint)
            except OSError as e:
                result.fail(Finding(f"node {rank}", f"cannot read node {rank}'s stack through QMP: {e}"))
        figures["high_water_bytes"] = marks
        figures["agreement_detail"] = {k: agreement.get(k) for k in ("epoch", "live", "root", "digest")}
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
    return figures

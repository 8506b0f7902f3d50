#!/usr/bin/env python3
"""Boots the qemu-virt node image in qemu-system-arm and checks its console.

usage: qemu_node_test.py CASE --qemu QEMU --node-elf ELF --personality-tool TOOL
                         [--timeout S] [variant options]

Cases (one per CTest test, see tests/qemu/CMakeLists.txt):
  ready             valid personality (node 5 of 2x2x2): boot, then ready
  missing           no personality: the exact "missing" halt message
  bad-crc           CRC field corrupted: the exact crc32 halt message
  bad-radix         tree_radix=3 with a valid CRC: the exact field message
  bad-dims          dims=7 with a valid CRC: the exact field message
  reset             QMP system_reset: the node boots again with the same
                    personality (the loader re-applies it) and, counting
                    the reset, a new incarnation (1 + resets)
  idle-cpu          a ready, idle node costs its QEMU process < 2% of a core
  malloc-after-init builds the TORI_TEST_VARIANT=malloc-after-init image in
                    its own tree and expects the heap-sealing panic

Every QEMU process started here is killed on success, failure, timeout and
on SIGTERM/SIGINT/SIGHUP (and by the kernel, via PR_SET_PDEATHSIG, should
this script itself be killed).  Console lines are echoed for the CTest log.
Exit status: 0 pass, 1 fail, 2 usage or environment error.
"""

import argparse
import ctypes
import json
import os
import re
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import zlib

# Shared with board/qemu-virt/memory_map.h (the one definition), read from it.
MEMORY_MAP = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "board", "qemu-virt", "memory_map.h")

PERSONALITY_SIZE = 64
OFFSET_DIMS = 16
OFFSET_TREE_RADIX = 18
OFFSET_CRC = 60

IDLE_CPU_LIMIT_PERCENT = 2.0
IDLE_MEASURE_SECONDS = 4.0
HALTED_MEASURE_SECONDS = 2.0

MISSING_REASON = ("personality: missing, expected a 64-byte block with magic "
                  "'TORI' written by the loader")


class TestFailure(Exception):
    pass


class Terminated(Exception):
    pass


def on_signal(number, _frame):
    raise Terminated(f"received signal {number}")


def memory_map_value(name):
    with open(MEMORY_MAP, encoding="utf-8") as header:
        for line in header:
            match = re.match(r"#define\s+" + name + r"\s+(0x[0-9a-fA-F]+|\d+)\s*$", line)
            if match:
                return int(match.group(1), 0)
    raise TestFailure(f"{MEMORY_MAP} defines no plain {name}")


def die_with_parent():
    # Runs in the child before exec: QEMU gets SIGKILL if this script dies.
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Qemu:
    """One qemu-system-arm running a node; always stopped by stop()."""

    def __init__(self, qemu, elf, personality, work_dir, qmp=False):
        self.lines = []
        self.pending = b""
        self.qmp_path = os.path.join(work_dir, "qmp.sock") if qmp else None
        self.stderr_path = os.path.join(work_dir, "qemu.stderr")
        command = [qemu, "-M", "virt", "-cpu", "cortex-a15",
                   "-m", f"{memory_map_value('QEMU_VIRT_RAM_SIZE_MIB')}M",
                   "-nodefaults", "-display", "none", "-monitor", "none",
                   "-serial", "stdio", "-kernel", elf]
        if personality is not None:
            address = memory_map_value("QEMU_VIRT_PERSONALITY_ADDRESS")
            command += ["-device", f"loader,file={personality},addr={address:#x},force-raw=on"]
        if self.qmp_path:
            command += ["-qmp", f"unix:{self.qmp_path},server=on,wait=off"]
        print("+ " + " ".join(command), flush=True)
        self.stderr_file = open(self.stderr_path, "wb")
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE,
                                            stderr=self.stderr_file,
                                            preexec_fn=die_with_parent)
        except FileNotFoundError as error:
            raise TestFailure(f"cannot start {qemu}: {error} (install qemu-system-arm)")
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.selector.close()
        self.process.stdout.close()
        self.stderr_file.close()

    def stderr_text(self):
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()

    def _read_some(self, until):
        remaining = until - time.monotonic()
        if remaining <= 0:
            return False
        if not self.selector.select(timeout=remaining):
            return False
        chunk = os.read(self.process.stdout.fileno(), 4096)
        if not chunk:
            self.process.wait()
            raise TestFailure(f"QEMU exited with status {self.process.returncode}: "
                              f"{self.stderr_text() or '(no message)'}")
        self.pending += chunk
        while b"\n" in self.pending:
            raw, self.pending = self.pending.split(b"\n", 1)
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            print("console: " + line, flush=True)
            self.lines.append(line)
        return True

    def wait_for(self, pattern, timeout, start=0, stop_on_panic=True):
        """Returns (index, match) of the first line from `start` matching."""
        regex = re.compile(pattern)
        until = time.monotonic() + timeout
        index = start
        while True:
            while index < len(self.lines):
                match = regex.fullmatch(self.lines[index])
                if match:
                    return index, match
                if stop_on_panic and " event=panic " in self.lines[index]:
                    raise TestFailure(f"node panicked while waiting for /{pattern}/: "
                                      f"{self.lines[index]}")
                index += 1
            if not self._read_some(until):
                raise TestFailure(f"no console line matching /{pattern}/ within "
                                  f"{timeout:g} s")

    def drain(self, seconds):
        until = time.monotonic() + seconds
        while self._read_some(until):
            pass

    def cpu_seconds(self):
        # utime + stime of all of QEMU's threads, fields 14 and 15 of stat.
        with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def qmp(self, command):
        deadline = time.monotonic() + 10
        while not os.path.exists(self.qmp_path):
            if time.monotonic() > deadline:
                raise TestFailure("QMP socket never appeared")
            time.sleep(0.05)
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(10)
            sock.connect(self.qmp_path)
            stream = sock.makefile("rw", encoding="utf-8")
            json.loads(stream.readline())  # greeting
            for execute in ("qmp_capabilities", command):
                stream.write(json.dumps({"execute": execute}) + "\n")
                stream.flush()
                while True:
                    reply = json.loads(stream.readline())
                    if "event" in reply:
                        continue
                    if "error" in reply:
                        raise TestFailure(f"QMP {execute}: {reply['error']}")
                    break


def measure_cpu_percent(node, seconds):
    """Percent of one host core QEMU used over `seconds` (CPU time based)."""
    cpu_before = node.cpu_seconds()
    wall_before = time.monotonic()
    node.drain(seconds)
    cpu_used = node.cpu_seconds() - cpu_before
    wall = time.monotonic() - wall_before
    return 100.0 * cpu_used / wall, cpu_used, wall


def write_personality(tool, work_dir, name="personality.bin"):
    path = os.path.join(work_dir, name)
    command = [tool, "--node", "5", "--dims", "2x2x2", "-o", path]
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise TestFailure(f"tori-personality failed ({result.returncode}): "
                          f"{result.stderr.strip()}")
    with open(path, "rb") as f:
        block = bytearray(f.read())
    if len(block) != PERSONALITY_SIZE:
        raise TestFailure(f"tori-personality wrote {len(block)} bytes, expected 64")
    return path, block


def rewrite_block(path, block, fix_crc):
    if fix_crc:
        struct.pack_into("<I", block, OFFSET_CRC, zlib.crc32(bytes(block[:OFFSET_CRC])))
    with open(path, "wb") as f:
        f.write(block)


def panic_line(reason, node="-"):
    return (rf"tori node={re.escape(node)} event=panic t_ns=\d+ "
            rf'reason="{re.escape(reason)}"')


def expect_halt(node, reason, timeout):
    node.wait_for(r"tori node=- event=boot t_ns=\d+ board=qemu-virt", timeout)
    node.wait_for(panic_line(reason), timeout, stop_on_panic=False)
    node.drain(0.5)
    if any(" event=ready " in line for line in node.lines):
        raise TestFailure("node reported ready despite the bad personality")
    percent, used, wall = measure_cpu_percent(node, HALTED_MEASURE_SECONDS)
    print(f"halted node CPU: {percent:.2f}% of a core ({used:.2f} s over {wall:.2f} s)")
    if percent >= IDLE_CPU_LIMIT_PERCENT:
        raise TestFailure(f"a halted node used {percent:.2f}% of a core, "
                          f"expected < {IDLE_CPU_LIMIT_PERCENT}%")


def ready_pattern(incarnation=1, resets=0):
    return (rf"tori node=5 event=ready t_ns=\d+ incarnation={incarnation} nodes=8 "
            rf"heap_used=\d+ resets={resets}( .*)?")


def text_section_range(elf_path):
    """[start, end) of .text in a 32-bit little-endian ELF."""
    with open(elf_path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        raise TestFailure(f"{elf_path} is not a 32-bit little-endian ELF")
    shoff, = struct.unpack_from("<I", data, 0x20)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2E)
    names_offset = struct.unpack_from("<10I", data, shoff + shstrndx * shentsize)[4]
    for i in range(shnum):
        fields = struct.unpack_from("<10I", data, shoff + i * shentsize)
        name_start = names_offset + fields[0]
        name = data[name_start:data.index(b"\0", name_start)]
        if name == b".text":
            return fields[3], fields[3] + fields[5]
    raise TestFailure(f"{elf_path} has no .text section")


def build_variant(args):
    for needed in ("source_dir", "variant_build_dir", "cmake"):
        if not getattr(args, needed):
            raise TestFailure(f"malloc-after-init needs --{needed.replace('_', '-')}")
    build_dir = args.variant_build_dir
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        configure = [args.cmake, "-S", args.source_dir, "-B", build_dir,
                     "--toolchain", os.path.join(args.source_dir, "cmake",
                                                 "toolchain-arm-none-eabi.cmake"),
                     "-DTORI_BOARD=qemu-virt",
                     "-DTORI_TEST_VARIANT=malloc-after-init",
                     "-DCMAKE_BUILD_TYPE=MinSizeRel"]
        if args.generator:
            configure += ["-G", args.generator]
        if args.make_program:
            configure += [f"-DCMAKE_MAKE_PROGRAM={args.make_program}"]
        run_checked(configure)
    run_checked([args.cmake, "--build", build_dir, "--target", "node"])
    return os.path.join(build_dir, "node.elf")


def run_checked(command):
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, check=False)
    if result.returncode != 0:
        print(result.stdout)
        raise TestFailure(f"command failed with status {result.returncode}: {command[0]}")


def run_case(args, work_dir):
    started = []

    def boot(elf, personality, qmp=False):
        node = Qemu(args.qemu, elf, personality, work_dir, qmp=qmp)
        started.append(node)
        return node

    try:
        case = args.case
        if case == "ready":
            path, _ = write_personality(args.personality_tool, work_dir)
            node = boot(args.node_elf, path)
            node.wait_for(r"tori node=- event=boot t_ns=\d+ board=qemu-virt", args.timeout)
            node.wait_for(ready_pattern(), args.timeout)
        elif case == "missing":
            node = boot(args.node_elf, None)
            expect_halt(node, MISSING_REASON, args.timeout)
        elif case == "bad-crc":
            path, block = write_personality(args.personality_tool, work_dir)
            block[OFFSET_CRC] ^= 0x01
            rewrite_block(path, block, fix_crc=False)
            crc, = struct.unpack_from("<I", block, OFFSET_CRC)
            node = boot(args.node_elf, path)
            expect_halt(node, f"personality: crc32={crc:#x} is invalid, expected "
                              "the CRC-32 of bytes 0..59", args.timeout)
        elif case == "bad-radix":
            path, block = write_personality(args.personality_tool, work_dir)
            block[OFFSET_TREE_RADIX] = 3
            rewrite_block(path, block, fix_crc=True)
            node = boot(args.node_elf, path)
            expect_halt(node, "personality: tree_radix=3 is invalid, expected a "
                              "power of two in 2..16", args.timeout)
        elif case == "bad-dims":
            path, block = write_personality(args.personality_tool, work_dir)
            block[OFFSET_DIMS] = 7
            rewrite_block(path, block, fix_crc=True)
            node = boot(args.node_elf, path)
            expect_halt(node, "personality: dims=7 is invalid, expected 1..6", args.timeout)
        elif case == "reset":
            path, _ = write_personality(args.personality_tool, work_dir)
            node = boot(args.node_elf, path, qmp=True)
            first, _ = node.wait_for(ready_pattern(), args.timeout)
            node.qmp("system_reset")
            boot_again, _ = node.wait_for(r"tori node=- event=boot t_ns=\d+ board=qemu-virt",
                                          args.timeout, start=first + 1)
            node.wait_for(ready_pattern(incarnation=2, resets=1), args.timeout,
                          start=boot_again + 1)
        elif case == "idle-cpu":
            path, _ = write_personality(args.personality_tool, work_dir)
            node = boot(args.node_elf, path)
            node.wait_for(ready_pattern(), args.timeout)
            percent, used, wall = measure_cpu_percent(node, IDLE_MEASURE_SECONDS)
            print(f"idle node CPU: {percent:.2f}% of a core ({used:.2f} s over {wall:.2f} s)")
            if percent >= IDLE_CPU_LIMIT_PERCENT:
                raise TestFailure(f"an idle node used {percent:.2f}% of a core, "
                                  f"expected < {IDLE_CPU_LIMIT_PERCENT}%")
        elif case == "malloc-after-init":
            elf = build_variant(args)
            text_start, text_end = text_section_range(elf)
            path, _ = write_personality(args.personality_tool, work_dir)
            node = boot(elf, path)
            _, match = node.wait_for(
                r'tori node=5 event=panic t_ns=\d+ caller=(0x[0-9a-f]+) '
                r'reason="heap: allocation after init \(phase=run\) is forbidden, '
                r'caller=(0x[0-9a-f]+)"', args.timeout, stop_on_panic=False)
            if match.group(1) != match.group(2):
                raise TestFailure("the panic's caller field and message disagree")
            caller = int(match.group(1), 16)
            if not text_start <= caller < text_end:
                raise TestFailure(f"caller {caller:#x} is not in the image's code "
                                  f"[{text_start:#x}, {text_end:#x})")
            if any(" event=ready " in line for line in node.lines):
                raise TestFailure("the variant reported ready before its late malloc")
        else:
            raise TestFailure(f"unknown case '{case}'")
    finally:
        for node in started:
            node.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case")
    parser.add_argument("--qemu", default="qemu-system-arm")
    parser.add_argument("--node-elf", required=True)
    parser.add_argument("--personality-tool", required=True)
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds to wait for each expected console line")
    parser.add_argument("--source-dir")
    parser.add_argument("--variant-build-dir")
    parser.add_argument("--cmake")
    parser.add_argument("--generator")
    parser.add_argument("--make-program")
    args = parser.parse_args()

    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, on_signal)

    if args.case != "malloc-after-init" and not os.path.isfile(args.node_elf):
        print(f"qemu_node_test: {args.node_elf} does not exist (expected the "
              "qemu-virt build: cmake --preset qemu-virt && cmake --build build/qemu-virt)",
              file=sys.stderr)
        return 2
    if not os.path.isfile(args.personality_tool):
        print(f"qemu_node_test: {args.personality_tool} does not exist "
              "(expected tori-personality from the host build)", file=sys.stderr)
        return 2

    work_dir = tempfile.mkdtemp(prefix="tori-qemu-test-")
    try:
        run_case(args, work_dir)
    except (TestFailure, Terminated) as failure:
        print(f"FAIL {args.case}: {failure}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    print(f"PASS {args.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

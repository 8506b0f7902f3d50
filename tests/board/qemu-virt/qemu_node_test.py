#!/usr/bin/env python3
"""Boots the qemu-virt node image in qemu-system-arm and checks its console.

usage: qemu_node_test.py CASE --qemu QEMU --node-elf ELF --personality-tool TOOL
                         [--timeout S] [variant options]

Cases (one per CTest test, see tests/board/qemu-virt/CMakeLists.txt):
  ready             valid personality (node 5 of 2x2x2): boot, then ready
  missing           no personality: the exact "missing" halt message
  bad-crc           CRC field corrupted: the exact crc32 halt message
  bad-radix         tree_radix=3 with a valid CRC: the exact field message
  bad-dims          dims=7 with a valid CRC: the exact field message
  bad-job           a valid personality and a job block with comm_mode=4
                    and a valid CRC: the exact field message of the job
  reset             QMP system_reset: the node boots again with the same
                    personality (the loader re-applies it) and, counting
                    the reset, a new incarnation (1 + resets)
  idle-cpu          a ready, idle node costs its QEMU process < 2% of a core
  malloc-after-init builds the TORI_TEST_VARIANT=malloc-after-init image in
                    its own tree and expects the heap-sealing panic

QEMU is started, read, stopped and cleaned up by qemu_harness.py (every
process killed on any exit; console lines echoed for the CTest log).
Exit status: 0 pass, 1 fail, 2 usage or environment error.
"""

import os
import struct
import subprocess
import sys
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import qemu_harness as harness  # noqa: E402  (tests/board/qemu-virt/qemu_harness.py)
from qemu_harness import TestFailure  # noqa: E402

PERSONALITY_SIZE = 64
OFFSET_DIMS = 16
OFFSET_TREE_RADIX = 18
OFFSET_CRC = 60

JOB_SIZE = 128
JOB_OFFSET_COMM_MODE = 9
JOB_OFFSET_CRC = 124

IDLE_MEASURE_SECONDS = 4.0

MISSING_REASON = ("personality: missing, expected a 64-byte block with magic "
                  "'TORI' written by the loader")


def write_personality(tool, work_dir):
    path = os.path.join(work_dir, "personality.bin")
    block = harness.write_personality(tool, path, 5, "2x2x2")
    if len(block) != PERSONALITY_SIZE:
        raise TestFailure(f"tori-personality wrote {len(block)} bytes, expected 64")
    return path, block


def rewrite_block(path, block, fix_crc):
    if fix_crc:
        struct.pack_into("<I", block, OFFSET_CRC, zlib.crc32(bytes(block[:OFFSET_CRC])))
    with open(path, "wb") as f:
        f.write(block)


def expect_halt(node, reason, timeout):
    harness.expect_halt(node, "-", reason, timeout, cause="the bad personality")


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


def run_case(args, work_dir, started):
    def boot(elf, personality, qmp=False):
        node = harness.QemuNode(harness.node_command(args.qemu, elf, personality),
                                work_dir, qmp=qmp)
        started.append(node)
        return node

    case = args.case
    if case == "ready":
        path, _ = write_personality(args.personality_tool, work_dir)
        node = boot(args.node_elf, path)
        node.wait_for(harness.BOOT_PATTERN, args.timeout)
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
    elif case == "bad-job":
        path, _ = write_personality(args.personality_tool, work_dir)
        job_path = os.path.join(work_dir, "job.bin")
        command = [args.personality_tool, "--job-out", job_path, "--app", "allreduce"]
        print("+ " + " ".join(command), flush=True)
        if subprocess.run(command, check=False).returncode != 0:
            raise TestFailure("tori-personality --job-out failed")
        with open(job_path, "rb") as f:
            job = bytearray(f.read())
        if len(job) != JOB_SIZE:
            raise TestFailure(f"tori-personality wrote a {len(job)}-byte job, expected 128")
        job[JOB_OFFSET_COMM_MODE] = 4
        struct.pack_into("<I", job, JOB_OFFSET_CRC, zlib.crc32(bytes(job[:JOB_OFFSET_CRC])))
        with open(job_path, "wb") as f:
            f.write(job)
        node = harness.QemuNode(harness.node_command(args.qemu, args.node_elf, path,
                                                     job=job_path), work_dir)
        started.append(node)
        # The personality was read first: the panic line names the node.
        harness.expect_halt(node, "5", "job: comm_mode=4 is invalid, expected 0 (abort), "
                            "1 (blank), 2 (shrink) or 3 (rebuild)", args.timeout,
                            cause="the bad job block")
    elif case == "reset":
        path, _ = write_personality(args.personality_tool, work_dir)
        node = boot(args.node_elf, path, qmp=True)
        first, _ = node.wait_for(ready_pattern(), args.timeout)
        node.qmp("system_reset")
        boot_again, _ = node.wait_for(harness.BOOT_PATTERN, args.timeout, start=first + 1)
        node.wait_for(ready_pattern(incarnation=2, resets=1), args.timeout,
                      start=boot_again + 1)
    elif case == "idle-cpu":
        path, _ = write_personality(args.personality_tool, work_dir)
        node = boot(args.node_elf, path)
        node.wait_for(ready_pattern(), args.timeout)
        harness.expect_idle_cpu(node, IDLE_MEASURE_SECONDS, "an idle node")
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


def main():
    parser = harness.argument_parser(__doc__.split("\n")[0], "--node-elf")
    parser.add_argument("--source-dir")
    parser.add_argument("--variant-build-dir")
    parser.add_argument("--cmake")
    parser.add_argument("--generator")
    parser.add_argument("--make-program")
    args = parser.parse_args()

    required = [(args.personality_tool, "tori-personality from the host build")]
    if args.case != "malloc-after-init":
        required.append((args.node_elf, "the qemu-virt build: cmake --preset qemu-virt "
                                        "&& cmake --build build/qemu-virt"))
    return harness.run("qemu_node_test", args.case,
                       lambda work_dir, started: run_case(args, work_dir, started),
                       required)


if __name__ == "__main__":
    sys.exit(main())

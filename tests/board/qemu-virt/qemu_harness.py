"""What every QEMU test script here needs: start qemu-system-arm on a node
image, read its console line by line, wait for lines, talk QMP, measure its
CPU time, and always stop it.

Every QEMU process started through run() is killed on success, failure,
timeout and on SIGTERM/SIGINT/SIGHUP (and by the kernel, via
PR_SET_PDEATHSIG, should the script itself be killed).  Console lines are
echoed for the CTest log.  Exit status of run(): 0 pass, 1 fail, 2 usage or
environment error.
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
import subprocess
import sys
import tempfile
import time

# Shared with board/qemu-virt/memory_map.h (the one definition), read from it.
MEMORY_MAP = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "..", "board", "qemu-virt", "memory_map.h")

BOOT_PATTERN = r"tori node=- event=boot t_ns=\d+ board=qemu-virt"
IDLE_CPU_LIMIT_PERCENT = 2.0
HALTED_MEASURE_SECONDS = 2.0


class TestFailure(Exception):
    pass


class Terminated(Exception):
    pass


def _on_signal(number, _frame):
    raise Terminated(f"received signal {number}")


def memory_map_value(name):
    with open(MEMORY_MAP, encoding="utf-8") as header:
        for line in header:
            match = re.match(r"#define\s+" + name + r"\s+(0x[0-9a-fA-F]+|\d+)\s*$", line)
            if match:
                return int(match.group(1), 0)
    raise TestFailure(f"{MEMORY_MAP} defines no plain {name}")


def _die_with_parent():
    # Runs in the child before exec: QEMU gets SIGKILL if the script dies.
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_PDEATHSIG = 1
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def node_command(qemu, elf, personality=None, console_input=False, job=None):
    """The qemu-system-arm command line for one node on the virt board.

    console_input: the console also reads commands from our stdin (with
    signal=off, so a stray ^C on it is a byte, not a kill).
    job: a job block file, loaded where the launcher loads it.
    """
    command = [qemu, "-M", "virt", "-cpu", "cortex-a15",
               "-m", f"{memory_map_value('QEMU_VIRT_RAM_SIZE_MIB')}M",
               "-nodefaults", "-display", "none", "-monitor", "none"]
    if console_input:
        command += ["-chardev", "stdio,id=console,signal=off", "-serial", "chardev:console"]
    else:
        command += ["-serial", "stdio"]
    command += ["-kernel", elf]
    if personality is not None:
        address = memory_map_value("QEMU_VIRT_PERSONALITY_ADDRESS")
        command += ["-device", f"loader,file={personality},addr={address:#x},force-raw=on"]
    if job is not None:
        address = memory_map_value("QEMU_VIRT_JOB_ADDRESS")
        command += ["-device", f"loader,file={job},addr={address:#x},force-raw=on"]
    return command


class QemuNode:
    """One running qemu-system-arm; always stopped by stop().

    name labels its echoed console lines and its failures ("node 3");
    without one, lines are echoed as "console: ..." and failures unlabelled.
    """

    def __init__(self, command, work_dir, name=None, console_input=False,
                 pass_fds=(), qmp=False):
        self.name = name
        self.lines = []
        self.pending = b""
        tag = name.replace(" ", "") if name else "qemu"
        self.stderr_path = os.path.join(work_dir, f"{tag}.stderr")
        self.qmp_path = os.path.join(work_dir, f"{tag}.qmp") if qmp else None
        if self.qmp_path:
            command = command + ["-qmp", f"unix:{self.qmp_path},server=on,wait=off"]
        print(f"+ {name}: " if name else "+ ", end="")
        print(" ".join(command), flush=True)
        self.stderr_file = open(self.stderr_path, "wb")
        try:
            self.process = subprocess.Popen(
                command, stdin=subprocess.PIPE if console_input else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=self.stderr_file, pass_fds=pass_fds,
                preexec_fn=_die_with_parent)
        except FileNotFoundError as error:
            self.stderr_file.close()
            raise TestFailure(f"cannot start {command[0]}: {error} (install qemu-system-arm)")
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.process.stdout, selectors.EVENT_READ)

    def _prefix(self):
        return f"{self.name}: " if self.name else ""

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.selector.close()
        self.process.stdout.close()
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        self.stderr_file.close()

    def stderr_text(self):
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()

    def command(self, text):
        """Types one line on the node's console (needs console_input)."""
        print(f"{self.name or 'console'} <- {text}", flush=True)
        try:
            self.process.stdin.write(text.encode() + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise TestFailure(f"{self._prefix()}QEMU is gone: {self.stderr_text()}")

    def read_some(self, until):
        """Reads what is there (waiting at most until `until`); False on timeout."""
        remaining = until - time.monotonic()
        if remaining <= 0 or not self.selector.select(timeout=remaining):
            return False
        chunk = os.read(self.process.stdout.fileno(), 4096)
        if not chunk:
            self.process.wait()
            raise TestFailure(f"{self._prefix()}QEMU exited with status "
                              f"{self.process.returncode}: "
                              f"{self.stderr_text() or '(no message)'}")
        self.pending += chunk
        while b"\n" in self.pending:
            raw, self.pending = self.pending.split(b"\n", 1)
            line = raw.decode("utf-8", errors="replace").rstrip("\r")
            print(f"{self.name or 'console'}: {line}", flush=True)
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
                    raise TestFailure(f"{self.name or 'node'} panicked while waiting for "
                                      f"/{pattern}/: {self.lines[index]}")
                index += 1
            if not self.read_some(until):
                raise TestFailure(f"{self._prefix()}no console line matching /{pattern}/ "
                                  f"within {timeout:g} s")

    def drain(self, seconds):
        until = time.monotonic() + seconds
        while self.read_some(until):
            pass

    def cpu_seconds(self):
        # utime + stime of all of QEMU's threads, fields 14 and 15 of stat.
        with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def qmp(self, command):
        """Runs one QMP command (needs qmp=True); a QMP error fails the test."""
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
    """(percent of one host core, CPU s, wall s) QEMU used over `seconds`,
    reading its console meanwhile."""
    cpu_before = node.cpu_seconds()
    wall_before = time.monotonic()
    node.drain(seconds)
    cpu_used = node.cpu_seconds() - cpu_before
    wall = time.monotonic() - wall_before
    return 100.0 * cpu_used / wall, cpu_used, wall


def expect_idle_cpu(node, seconds, what, hint=""):
    """Fails unless QEMU stays under IDLE_CPU_LIMIT_PERCENT over `seconds`;
    hint ends the failure message (a likely cause)."""
    percent, used, wall = measure_cpu_percent(node, seconds)
    print(f"{what} CPU: {percent:.2f}% of a core ({used:.2f} s over {wall:.2f} s)",
          flush=True)
    if percent >= IDLE_CPU_LIMIT_PERCENT:
        raise TestFailure(f"{what} used {percent:.2f}% of a core, "
                          f"expected < {IDLE_CPU_LIMIT_PERCENT}%{hint}")


def expect_halt(node, panic_node, reason, timeout, cause, measure_cpu=True):
    """Boot, then exactly this panic, never ready; a halted node idles."""
    node.wait_for(BOOT_PATTERN, timeout)
    node.wait_for(rf"tori node={re.escape(panic_node)} event=panic t_ns=\d+ "
                  rf'reason="{re.escape(reason)}"', timeout, stop_on_panic=False)
    node.drain(0.5)
    if any(" event=ready " in line for line in node.lines):
        raise TestFailure(f"node reported ready despite {cause}")
    if measure_cpu:
        expect_idle_cpu(node, HALTED_MEASURE_SECONDS, "a halted node")


def write_personality(tool, path, node, dims):
    """Runs tori-personality; returns the 64-byte block it wrote to path."""
    command = [tool, "--node", str(node), "--dims", dims, "-o", path]
    print("+ " + " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise TestFailure(f"tori-personality failed ({result.returncode}): "
                          f"{result.stderr.strip()}")
    with open(path, "rb") as f:
        return bytearray(f.read())


def event_fields(line):
    """key=value fields of an event line ("quoted values" keep their quotes)."""
    return dict(re.findall(r"(\w+)=(\"[^\"]*\"|\S+)", line))


def argument_parser(description, image_option):
    """The options every QEMU test script takes: CASE, --qemu, the node image
    option (e.g. "--node-elf"), --personality-tool and --timeout."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("case")
    parser.add_argument("--qemu", default="qemu-system-arm")
    parser.add_argument(image_option, required=True)
    parser.add_argument("--personality-tool", required=True)
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds to wait for each expected console line")
    return parser


def run(tool, case, run_case, required_files):
    """Runs run_case(work_dir, started) with a fresh work directory; stops every
    QemuNode appended to `started`; returns the exit status for sys.exit.

    required_files: (path, what it should be) pairs checked first (status 2).
    """
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, _on_signal)
    for path, expected in required_files:
        if not os.path.isfile(path):
            print(f"{tool}: {path} does not exist (expected {expected})", file=sys.stderr)
            return 2
    work_dir = tempfile.mkdtemp(prefix=f"tori-{tool}-")
    started = []
    try:
        try:
            run_case(work_dir, started)
        finally:
            for node in started:
                node.stop()
    except (TestFailure, Terminated) as failure:
        print(f"FAIL {case}: {failure}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work_dir, ignore_errors=True)
    print(f"PASS {case}")
    return 0

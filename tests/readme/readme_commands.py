#!/usr/bin/env python3
"""Every command in the README's ```sh blocks works as written.

A command is a line of a ```sh block (with its backslash continuations).
Each one is either run verbatim, or listed in MAPPED with the CTest tests
that cover it and why it is not run here (too long, the suite itself, a
timing benchmark).  Verbatim runs happen in README order, with
TORI_NO_INSTALL=1, from a scratch directory that stands for the repository
root (every top-level entry a symlink into the real one), so what they write
(`-o node0.personality`) stays out of the tree.  A `qemu-system-arm` command
is a console session: the node must print boot, network and ready, answer
`help`, stop on `halt`, and QEMU must leave on Ctrl-A X with status 0; the
README's raw-binary variant of it runs the same way.

A command the README repeats word for word runs once, at its first line.

Fails when a command fails, when one is neither run nor mapped, when a
mapped test is not in `ctest -N`, or when MAPPED names a command the README
no longer has.

  readme_commands.py --source-dir DIR --build-dir DIR --ctest CTEST
"""
import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# Commands not run here: README command (its trailing comment dropped) ->
# (the tests that cover it, why it is not run verbatim).
MAPPED = {
    "./tori demo": (
        ["emu.faults_qemu_demo"],
        "a QEMU torus through three faults; the test runs tori-emu --demo and checks each view"),
    "./tori emu --dims 2x2x2 --spares 1 --app stencil --checkpoint-every 50 --recovery "
    "'physical=migrate' --inject 'kill 3 at iteration 120'": (
        ["emu.checkpoint_qemu_2x2x2"],
        "a QEMU job with a kill (issue 15's done-when); the test runs it and checks every restore"),
    "./tori emu --dims 2x2x2 --app stencil --checkpoint-every 50 --recovery 'physical=restart' "
    "--inject 'reboot 3 at iteration 120'": (
        ["emu.checkpoint_reboot_qemu_2x2x2"],
        "a QEMU job with a reboot; the test runs it and checks every restore"),
    "./tori test": (
        ["tori.packages", "tori.install"],
        "the whole suite, this test among it; the tori tests check what it installs and how"),
    "./tori test fast": (
        ["tori.labels"],
        "the fast part of this very suite; the test checks that every test has its area and "
        "cost labels, which is what `fast` selects"),
    "./tori emu --dims 2x2x2 --board mixed --app stencil --iterations 60 --progress 20 "
    "--app-args 4,5": (
        ["emu.app_qemu_2x2x2", "node.apps_qemu_2x2x2"],
        "a second QEMU job (the first runs verbatim); the tests run mixed stencils and compare "
        "their digests with the QEMU-only run"),
    "./tori emu --dims 2x2x2 --board mixed --app allreduce --iterations 20": (
        ["emu.app_qemu_2x2x2", "node.apps_qemu_2x2x2"],
        "another mixed job; the tests run allreduce and stencil on QEMU and mixed tori"),
    "./tori emu --dims 2x2x2 --app allreduce --iterations 200 --comm-mode abort "
    "--inject 'kill 3 at iteration 100'": (
        ["emu.ft_abort_qemu_2x2x2"],
        "exits 3 by design (the job is aborted); the test runs it and checks the status and "
        "every app-abort"),
    "./tori emu --dims 2x2x2 --app allreduce --iterations 200 --comm-mode rebuild --spares 1 "
    "--inject 'kill 3 at iteration 100'": (
        ["emu.ft_rebuild_qemu_2x2x2"],
        "a QEMU torus with a kill; the test runs it and checks every surviving and adopting "
        "rank, the adoption and the fault-free digest"),
    "./tori emu --dims 2x2x2 --app allreduce --iterations 200 --comm-mode shrink "
    "--inject 'kill 3 at iteration 100'": (
        ["emu.ft_shrink_qemu_2x2x2"],
        "a QEMU torus with a kill; the test runs it and checks every surviving rank and the "
        "comm lines"),
    "./tori emu --dims 2x2x2 --app allreduce --iterations 200 --comm-mode blank "
    "--inject 'kill 3 at iteration 100'": (
        ["emu.ft_blank_qemu_2x2x2"],
        "a QEMU torus with a kill; the test runs it and checks every surviving rank and the "
        "comm lines"),
    "./tori emu --dims 4x4x4 --board host --ping": (
        ["emu.ping_host_4x4x4"],
        "64 processes for several seconds; the test runs the same torus with --ping"),
    "./tori emu --dims 4x4x4 --board host --app allreduce": (
        ["emu.app_host_4x4x4"],
        "64 processes for several seconds; the test runs this job and checks every result"),
    "./tori emu --dims 2x2x2 --duration 10s --json": (
        ["emu.ready_qemu_2x2x2"],
        "runs 10 s by design; the test boots the same torus with --json and checks each line"),
    "./tori emu --dims 2x2x2 --inject 'kill 3 at 2s; hang 5 at 4s for 1s; link 6 x+ off at 6s; "
    "link 6 x+ on at 8s; reboot 2 at 9s; restart 3 at 11s'": (
        ["emu.faults_qemu_crash", "emu.faults_qemu_hang", "emu.faults_qemu_link_cut",
         "emu.faults_qemu_reboot", "emu.faults_qemu_restart"],
        "12 s of faults by design; each fault kind has its own QEMU scenario"),
    "./tori emu --dims 2x2x2 --chaos seed=7,rate=0.5,kinds=kill,hang,link,reboot,count=6": (
        ["emu.faults_qemu_chaos"],
        "about 15 s; the test runs a seeded chaos campaign of the same kinds on QEMU"),
    "./tori emu --dims 2x2x2 --board host --radix 2 --sequential --inject-file seed.faults": (
        ["emu.replay_sim_chaos_host"],
        "the replay of a tori-sim seed's script; the test emits it and runs this command"),
    "./tori sim --dims 4x4x4 --chaos --seeds 1000 --rate 0.5": (
        ["sim.chaos_64_radix4"],
        "1,000 seeds take about 25 s; the test runs 1,000 seeds on the same torus"),
    "./tori sim --dims 4x4x4 --routing detour --inject-file tests/sim/wall_4x4x4.script --quiet": (
        ["sim.wall_of_cuts"],
        "exits 1 by design (the lost frames break the membership); the test runs the same wall "
        "with detours and checks the pairs lost"),
    "./tori sim --dims 4x4x4 --routing table --inject-file tests/sim/wall_4x4x4.script --quiet": (
        ["sim.wall_of_cuts"],
        "the test runs the same wall with the tables and checks every pair delivered"),
    "./tori sim --dims 64x32x32 --inject 'kill 77 at 1ms'": (
        ["sim.scenarios_1024"],
        "65,536 nodes take 4 GB of memory and 10 s; the same crash paths run at 1,024 nodes"),
    "./tori bench link": (
        ["emu.bench_link_qemu", "emu.bench_link_host"],
        "a timing benchmark (minutes); the tests run it at a tiny size and check its tables"),
    "./tori bench comm": (
        ["emu.bench_comm_qemu", "emu.bench_comm_host"],
        "a timing benchmark (minutes); the tests run it at a tiny size and check its tables"),
    "./tori bench phoenix": (
        ["sim.bench_phoenix_quick"],
        "about 50 s of simulation at 224 and 1,024 nodes; the test runs it at 4x4x4 and checks "
        "every row's keys and invariants"),
    "./tori bench membership": (
        ["sim.bench_membership_small"],
        "a timing benchmark up to 65,536 nodes; the test runs it up to 512"),
    "./tori bench comm --plot comm-plots": (
        ["tools.plot_bench", "emu.bench_comm_host"],
        "a timing benchmark (minutes); one test runs it at a tiny size, the other draws "
        "recorded comm.json records and checks every plot"),
    "./tori bench faults --plot faults-plots": (
        ["tools.plot_bench", "emu.bench_faults_small"],
        "a timing benchmark (many tori); one test runs it at a tiny size, the other draws "
        "recorded bench-faults.jsonl and faults.jsonl records and checks every plot"),
    "./tori bench recovery --plot recovery-plots": (
        ["tools.plot_bench", "emu.bench_recovery_host"],
        "a timing benchmark (QEMU and host tori); one test runs it at a small size, the "
        "other draws a recorded recovery.json and checks the plot"),
    "./tori bench faults": (
        ["emu.bench_faults_small"],
        "a timing benchmark (many tori); the test runs it at a tiny size"),
    "./tori bench recovery": (
        ["emu.bench_recovery_host"],
        "a timing benchmark (QEMU and host tori, 1,024 and 4,096 simulated ranks); the test "
        "runs it on a host 2x2x2 torus and the simulator at 4x4x4"),
    "./tori bench recovery --configs none --overhead-dims none": (
        ["emu.bench_recovery_host"],
        "the simulator's part of a timing benchmark (seconds of CPU at 4,096 ranks); the test "
        "runs it at 4x4x4 beside a host torus"),
    "./tori bench recovery --configs none --overhead-dims none --sim-dims 64x32x32": (
        ["emu.bench_recovery_host"],
        "65,536 simulated ranks: 9.4 GiB and minutes per mode; the test runs the same "
        "benchmark at 4x4x4"),
    "./tori fuzz": (
        ["fuzz.build", "fuzz.frame", "fuzz.link", "fuzz.membership_codec", "fuzz.membership",
         "fuzz.personality", "fuzz.job", "fuzz.console", "fuzz.comm_codec"],
        "a minute per target by design; the tests build the fuzz tree and run every target "
        "for a fixed number of inputs"),
    "./tori fuzz --seconds 600 membership": (
        ["fuzz.membership", "tori.install"],
        "ten minutes by design; the test runs the same target briefly, tori.install checks "
        "that --seconds is refused when it is not a number"),
    "./tori cert": (
        ["cert.shipped"],
        "minutes of builds and analysis; the test runs every check on the shipped image"),
    "./tori cert --max-nodes 4096": (
        ["cert.shipped"],
        "two more image builds; the shipped run builds N and 2N, the same path at another N"),
    "./tori cert --only stack,allocator": (
        ["cert.shipped"],
        "minutes of builds; the shipped run selects its checks with --only"),
    "./tori cert --json report.json": (
        ["cert.shipped", "cert.cli_json_missing_directory"],
        "all the checks; the shipped run writes its report with --json"),
}

COMMAND_TIMEOUT_S = 120   # a command that needs longer belongs in MAPPED
CONSOLE_TIMEOUT_S = 30
EMU_OUT = re.compile(r"events\.jsonl in (/tmp/tori-emu-[A-Za-z0-9]+)"
                     r"|tori-report: (/tmp/tori-sim-[A-Za-z0-9]+)/report\.html")
RAW_VARIANT = re.compile(r"replace `(-kernel) \.\.\.` with\s+`([^`]+)`")


class Failure(Exception):
    pass


def sh_commands(readme):
    """[(line number, command)] from the ```sh blocks, continuations joined."""
    commands = []
    in_sh = False
    pending, start = "", 0
    for number, line in enumerate(readme.splitlines(), 1):
        if line.startswith("```"):
            if in_sh and pending:
                raise Failure(f"README line {start}: a continued command runs into the block's end")
            in_sh = line.strip() == "```sh"
            continue
        if not in_sh:
            continue
        if not pending:
            start = number
            line = line.strip()
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1]    # as bash joins a backslash-newline
            continue
        if pending and not pending.startswith("#"):
            commands.append((start, pending))
        pending = ""
    return commands


def key(command):
    """How MAPPED names a command: no trailing comment, single spaces."""
    return " ".join(without_comment(command).split())


def without_comment(command):
    """The command without its trailing `# ...` comment (quotes respected)."""
    quote = None
    for i, c in enumerate(command):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1].isspace()):
            return command[:i].rstrip()
    return command.rstrip()


def ctest_names(ctest, build_dir):
    listing = subprocess.run([ctest, "-N"], cwd=build_dir, capture_output=True, text=True)
    if listing.returncode != 0:
        raise Failure(f"ctest -N in {build_dir} failed: {listing.stderr.strip()}")
    return set(re.findall(r"Test\s+#\d+: (\S+)", listing.stdout))


def scratch_root(source_dir):
    """A directory standing for the repository root: symlinks to its entries.

    build/ is the real one, so each tree must be configured already: a
    README `./tori build` run from here would otherwise configure it with
    this temporary directory as its source and leave it broken."""
    for preset in ("qemu-virt", "host"):
        if not os.path.isfile(os.path.join(source_dir, "build", preset, "CMakeCache.txt")):
            raise Failure(f"build/{preset} is not configured: run ./tori build all first")
    root = tempfile.mkdtemp(prefix="tori-readme-")
    for name in os.listdir(source_dir):
        os.symlink(os.path.join(source_dir, name), os.path.join(root, name))
    return root


def stop(process):
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def remove_emu_out(output):
    """The fresh output directories the command named: tori-emu's and those
    ./tori sim makes for its records (/tmp/tori-emu-*, /tmp/tori-sim-*)."""
    for match in EMU_OUT.finditer(output):
        shutil.rmtree(match.group(1) or match.group(2), ignore_errors=True)


def run_command(command, root, env):
    """Runs a command as written; returns its output; raises Failure."""
    process = subprocess.Popen(["bash", "-c", command], cwd=root, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=COMMAND_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop(process)
        output = process.stdout.read()
        raise Failure(f"still running after {COMMAND_TIMEOUT_S} s (map it to a test in MAPPED)"
                      + tail(output))
    finally:
        if process.poll() is None:
            stop(process)
    text = output.decode("utf-8", "replace")
    remove_emu_out(text)
    if process.returncode != 0:
        raise Failure(f"exit status {process.returncode}" + tail(output))
    return text


def console_session(command, root, env):
    """A hand-booted node: boot, help, halt, then Ctrl-A X leaves QEMU (status 0)."""
    process = subprocess.Popen(["bash", "-c", command], cwd=root, env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    output = b""

    def wait_for(pattern, what):
        nonlocal output
        deadline = time.monotonic() + CONSOLE_TIMEOUT_S
        while re.search(pattern, output) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"no {what} within {CONSOLE_TIMEOUT_S} s" + tail(output))
            readable, _, _ = select.select([process.stdout], [], [], min(left, 0.5))
            if readable:
                chunk = os.read(process.stdout.fileno(), 65536)
                if not chunk:
                    process.wait()
                    raise Failure(f"QEMU exited ({process.returncode}) before {what}" + tail(output))
                output += chunk

    def type_text(text):
        process.stdin.write(text)
        process.stdin.flush()

    try:
        wait_for(rb" event=ready ", "ready event line")
        ready = output.index(b" event=ready ")
        if not re.search(rb" event=boot .*\n(?s:.*) event=network ", output[:ready]):
            raise Failure("no boot and network event lines before ready" + tail(output))
        type_text(b"help\n")
        wait_for(rb"event=help .*commands=", "answer to `help`")
        type_text(b"halt\n")
        wait_for(rb"event=halt ", "halt event line after `halt`")
        type_text(b"\x01x")      # Ctrl-A X
        try:
            process.wait(timeout=CONSOLE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Failure("Ctrl-A X did not leave QEMU" + tail(output))
        rest = process.stdout.read()
        output += rest
        if process.returncode != 0:
            raise Failure(f"QEMU left with status {process.returncode} after Ctrl-A X" + tail(output))
    finally:
        if process.poll() is None:
            stop(process)
    return output.decode("utf-8", "replace")


def tail(output, lines=15):
    if isinstance(output, bytes):
        output = output.decode("utf-8", "replace")
    every = output.strip().splitlines()
    kept = every[-lines:]
    # The launcher's own lines before the tail say why a run failed (a node
    # that ended or panicked); keep up to 20 of them.
    said = [line for line in every[:-lines] if line.startswith("tori-emu: ")][-20:]
    if said:
        kept = said + ["..."] + kept
    return ("; last output:\n    " + "\n    ".join(kept)) if kept else "; no output"


def raw_binary_variant(readme, commands):
    """The README's raw-binary boot: its hand-boot command with `-kernel FILE`
    replaced as the text says."""
    match = RAW_VARIANT.search(readme)
    if match is None:
        raise Failure("README: the raw-binary variant (replace `-kernel ...` with `...`) is gone")
    boots = [c for _, c in commands if c.startswith("qemu-system-arm ") and " -kernel " in c]
    if len(boots) != 1:
        raise Failure(f"README: expected one qemu-system-arm command with -kernel, found {len(boots)}")
    return re.sub(r"-kernel \S+", lambda _: match.group(2), boots[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--build-dir", required=True, help="the CTest tree to list with ctest -N")
    parser.add_argument("--ctest", required=True)
    args = parser.parse_args()
    source_dir = os.path.abspath(args.source_dir)
    with open(os.path.join(source_dir, "README.md"), encoding="utf-8") as f:
        readme = f.read()

    problems = []
    try:
        commands = sh_commands(readme)
        known_tests = ctest_names(args.ctest, args.build_dir)
        raw = raw_binary_variant(readme, commands)
    except Failure as failure:
        print(f"FAIL: {failure}", file=sys.stderr)
        return 1

    keys = {key(c) for _, c in commands}
    for name in MAPPED:
        if name not in keys:
            problems.append(f"MAPPED names `{name}`, which is no longer a README command")
    for line, command in commands:
        mapped = MAPPED.get(key(command))
        if mapped:
            missing = [t for t in mapped[0] if t not in known_tests]
            if missing:
                problems.append(f"README line {line}: `{command}` is mapped to {', '.join(missing)}, "
                                f"not a test in ctest -N")
            else:
                print(f"mapped  line {line}: {command}\n        -> {', '.join(mapped[0])} ({mapped[1]})")

    env = dict(os.environ, TORI_NO_INSTALL="1")
    try:
        root = scratch_root(source_dir)
    except Failure as failure:
        print(f"readme: {failure}")
        return 1
    try:
        to_run = [(line, c) for line, c in commands if key(c) not in MAPPED]
        boot_line = next(line for line, c in to_run if c.startswith("qemu-system-arm "))
        to_run.append((boot_line, raw))
        passed = {}  # key -> the README line where that command ran and passed
        for line, command in to_run:
            started = time.monotonic()
            shown = " ".join(command.split())
            if key(command) in passed:
                # The same command again (the README repeats a few where they
                # are explained): it ran as written at its first line.
                print(f"same    line {line}: {shown}\n        -> ran at line {passed[key(command)]}")
                continue
            print(f"run     line {line}: {shown}", flush=True)
            try:
                if command.startswith("qemu-system-arm "):
                    console_session(command, root, env)
                else:
                    run_command(command, root, env)
            except Failure as failure:
                problems.append(f"README line {line}: `{shown}`: {failure}")
                continue
            passed[key(command)] = line
            print(f"        ok ({time.monotonic() - started:.1f} s)", flush=True)
    except StopIteration:
        problems.append("README: no qemu-system-arm command to boot a node by hand")
    finally:
        shutil.rmtree(root, ignore_errors=True)

    if problems:
        for problem in problems:
            print(f"FAIL: {problem}", file=sys.stderr)
        return 1
    mapped = sum(1 for _, c in commands if key(c) in MAPPED)
    repeats = len(commands) - mapped - len({key(c) for _, c in commands if key(c) not in MAPPED})
    print(f"readme: {len(commands)} commands: {len(commands) - mapped} run as written (and the "
          f"raw-binary boot; {repeats} repeated, run once), {mapped} mapped to tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())

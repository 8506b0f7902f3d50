#!/usr/bin/env python3
"""./tori cert rejects bad input before any work: exit status 2, one
"tori-cert: ..." line on stderr naming the problem, nothing on stdout, and
within seconds (a run that starts building the image is a failure).

  test_cli.py CASE --tool cert/tori-cert
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

TIMEOUT_S = 60   # the checks take minutes; a rejection takes a second

VARIANT_SOURCES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "variants")


def variant_names():
    """The variants that exist: one source file each (tests/cert/variants),
    beside the services module that every variant image links."""
    return sorted(os.path.basename(path)[:-2].replace("_", "-")
                  for path in glob.glob(os.path.join(VARIANT_SOURCES, "*.c"))
                  if os.path.basename(path) != "variant_services.c")


# case -> (arguments, patterns the one line must match); {tmp} is a scratch
# directory holding an empty directory "empty" and a plain file "file".
CASES = {
    "json_missing_directory": (["--json", "{tmp}/no-such-directory/report.json"],
                               [r"--json \S+: directory \S+/no-such-directory does not exist"]),
    "json_is_directory": (["--json", "{tmp}/empty"], [r"--json \S+: \S+/empty is a directory"]),
    "variant_unknown": (["--variant", "bogus"],
                        [r"--variant: unknown test variant 'bogus' \(expected one of "]
                        + [re.escape(name) for name in variant_names()]),
    "build_root_not_directory": (["--build-root", "{tmp}/file/cert"],
                                 [r"--build-root \S+: \S+/file is not a directory"]),
    "code_scope_unknown": (["--code-scope", "no/such/place/"],
                           [r"--code-scope no/such/place/: no file or folder"]),
    "max_nodes_not_number": (["--max-nodes", "many"], [r"--max-nodes.*'many'"]),
    "no_build_without_trees": (["--no-build", "--build-root", "{tmp}/empty"],
                               [r"--no-build: no image at \S+/empty/"]),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case", choices=sorted(CASES))
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    arguments, patterns = CASES[args.case]
    with tempfile.TemporaryDirectory(prefix="tori-cert-cli-") as tmp:
        os.mkdir(os.path.join(tmp, "empty"))
        open(os.path.join(tmp, "file"), "w").close()
        command = [sys.executable, args.tool] + [a.replace("{tmp}", tmp) for a in arguments]
        print("$ " + " ".join(command), flush=True)
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print(f"FAIL: still running after {TIMEOUT_S} s: the bad input was not rejected "
                  f"before the work started", file=sys.stderr)
            return 1
        leftovers = os.listdir(os.path.join(tmp, "empty"))
    print(f"exit {run.returncode}\nstdout: {run.stdout!r}\nstderr: {run.stderr!r}")
    problems = []
    if run.returncode != 2:
        problems.append(f"exit status {run.returncode}, expected 2")
    if not re.fullmatch(r"tori-cert: [^\n]+\n", run.stderr):
        problems.append("stderr is not one 'tori-cert: ...' line")
    if run.stdout:
        problems.append("wrote to stdout (a started run) on bad input")
    for pattern in patterns:
        if not re.search(pattern, run.stderr):
            problems.append(f"the message does not match {pattern!r}")
    if leftovers:
        problems.append(f"created {leftovers} in a build root it rejected")
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

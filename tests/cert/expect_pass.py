#!/usr/bin/env python3
"""Runs ./tori cert on the shipped image and checks that every selected
check passed, with the figures the certification promises in the report.

  expect_pass.py --tool cert/tori-cert --build-root DIR --only CHECKS
                 [--long-only]

--long-only: exit 77 (skipped) unless TORI_LONG_TESTS=1 (./tori test --long).
"""
import argparse
import json
import os
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tool", required=True)
    p.add_argument("--build-root", required=True)
    p.add_argument("--only", required=True)
    p.add_argument("--long-only", action="store_true")
    args = p.parse_args()
    if args.long_only and os.environ.get("TORI_LONG_TESTS") != "1":
        print("expect_pass: skipped (long test; run ./tori test --long)")
        return 77
    os.makedirs(args.build_root, exist_ok=True)
    report_path = os.path.join(args.build_root, f"shipped.{args.only.replace(',', '+')}.report.json")
    command = [sys.executable, args.tool, "--build-root", args.build_root, "--json", report_path,
               "--only", args.only]
    print("$ " + " ".join(command), flush=True)
    run = subprocess.run(command, capture_output=True, text=True)
    print(run.stdout + run.stderr, flush=True)
    problems = []
    if run.returncode != 0:
        problems.append(f"tori-cert exited {run.returncode}, expected 0")
    if not os.path.exists(report_path):
        print(f"expect_pass: tori-cert wrote no report ({report_path})", file=sys.stderr)
        return 1
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    for key in ("git", "toolchain", "configuration", "checks", "verdict"):
        if key not in report:
            problems.append(f"the report has no '{key}'")
    if not report.get("toolchain", {}).get("cc"):
        problems.append("the report does not name the compiler")
    checks = {c["id"]: c for c in report.get("checks", [])}
    for c in checks.values():
        if c["verdict"] != "pass":
            problems.append(f"{c['id']}: {c['verdict']}: {c['summary']}")
    if "stack" in checks and not isinstance(checks["stack"]["figures"].get("bound_bytes"), int):
        problems.append("stack: no static bound in the report")
    if "runtime" in checks:
        figures = checks["runtime"]["figures"]
        if not isinstance(figures.get("high_water_bytes"), int):
            problems.append("runtime: no measured high-water mark in the report")
    if "sizing" in checks and checks["sizing"]["figures"].get("membership_state_65536") is None:
        problems.append("sizing: no membership state at 65,536 nodes in the report")
    if problems:
        for problem in problems:
            print(f"expect_pass: {problem}", file=sys.stderr)
        return 1
    print("expect_pass: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

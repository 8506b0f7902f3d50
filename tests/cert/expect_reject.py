#!/usr/bin/env python3
"""Runs ./tori cert on a deliberately bad variant image and checks that each
named check rejects it with a message naming the offender.

  expect_reject.py --tool cert/tori-cert --build-root DIR --variant NAME
                   --expect CHECK=OFFENDER [--expect ...] [--code-scope PREFIX]

CHECK is a check id (stack, allocator, ...) or code.SUBCHECK.  Passes when
tori-cert exits 1, every expected check failed, and a finding of it names
OFFENDER (in its offender, message or location); fails otherwise, saying why.
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
    p.add_argument("--variant")
    p.add_argument("--expect", action="append", required=True, metavar="CHECK=OFFENDER")
    p.add_argument("--code-scope")
    p.add_argument("--max-nodes")
    args = p.parse_args()
    expectations = []
    for item in args.expect:
        check, _, offender = item.partition("=")
        if not offender:
            p.error(f"--expect {item}: expected CHECK=OFFENDER")
        expectations.append((check, offender))
    os.makedirs(args.build_root, exist_ok=True)
    report_path = os.path.join(args.build_root, f"{args.variant or 'shipped'}.report.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    command = [sys.executable, args.tool, "--build-root", args.build_root, "--json", report_path,
               "--only", ",".join(sorted({c for c, _ in expectations}))]
    if args.variant:
        command += ["--variant", args.variant]
    if args.code_scope:
        command += ["--code-scope", args.code_scope]
    if args.max_nodes:
        command += ["--max-nodes", args.max_nodes]
    print("$ " + " ".join(command), flush=True)
    run = subprocess.run(command, capture_output=True, text=True)
    output = run.stdout + run.stderr
    print(output, flush=True)
    problems = []
    if run.returncode != 1:
        problems.append(f"tori-cert exited {run.returncode}, expected 1 (a check rejected the image)")
    report = None
    if os.path.exists(report_path):
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
    else:
        problems.append(f"no JSON report at {report_path}")
    for check, offender in expectations:
        if report is None:
            break
        check_id, _, sub = check.partition(".")
        result = next((c for c in report["checks"] if c["id"] == check_id), None)
        if result is None:
            problems.append(f"{check}: not in the report")
            continue
        if result["verdict"] != "fail":
            problems.append(f"{check}: verdict {result['verdict']}, expected fail")
        findings = [f for f in result["findings"] if not sub or f.get("subcheck") == sub]
        named = [f for f in findings if offender in f.get("offender", "") or
                 offender in f.get("message", "") or offender in (f.get("location") or "")]
        if not named:
            problems.append(f"{check}: no finding names {offender} "
                            f"(findings: {[f.get('offender') for f in findings]})")
        elif offender not in output:
            problems.append(f"{check}: the printed summary does not name {offender}")
    if problems:
        for problem in problems:
            print(f"expect_reject: {problem}", file=sys.stderr)
        return 1
    print(f"expect_reject: rejected as expected, naming "
          + ", ".join(f"{o} ({c})" for c, o in expectations))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every test in a CTest tree carries the two label axes: its area (the
first part of its name, after any "asan." prefix) and exactly one cost
(fast, slow, qemu, long), so that `./tori test fast` and `ctest -L AREA`
select what they say.  A test that boots QEMU (name with qemu or mixed)
must never be fast.

usage: check_labels.py BUILD_DIR
"""
import json
import re
import subprocess
import sys

COSTS = {"fast", "slow", "qemu", "long"}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_labels.py BUILD_DIR")
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=sys.argv[1],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check_labels: ctest --show-only failed: {out.stderr.strip()}")
    tests = json.loads(out.stdout)["tests"]
    errors = []
    for test in tests:
        name = test["name"]
        labels = []
        for prop in test.get("properties", []):
            if prop["name"] == "LABELS":
                labels = prop["value"]
        bare = name[len("asan."):] if name.startswith("asan.") else name
        area = bare.split(".", 1)[0]
        costs = [label for label in labels if label in COSTS]
        if area not in labels:
            errors.append(f"{name}: no area label '{area}' (labels: {labels})")
        if len(costs) != 1:
            errors.append(f"{name}: needs exactly one cost label of {sorted(COSTS)}, has {costs}")
        elif costs[0] == "fast" and re.search(r"(^|[._])(qemu|mixed)([._]|$)", bare):
            errors.append(f"{name}: boots QEMU but is labelled fast")
    for error in errors:
        print(error)
    print(f"labels: {len(tests)} tests, {len(errors)} problem(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""./tori bench phoenix --quick (4x4x4): every row's keys and the invariants
the figures must keep, never a time's value.
usage: bench_phoenix_check.py BENCH OUT_JSONL"""
import json
import subprocess
import sys

bench, out = sys.argv[1], sys.argv[2]
run = subprocess.run([bench, "--quick", "--json", out], capture_output=True, text=True)
if run.returncode != 0:
    sys.exit(f"tori-bench-phoenix --quick exited {run.returncode}: {run.stderr.strip()}")
for heading in ("1. Routes after a wall of cuts", "2. Kill half, restart half",
                "3. Discovery through seeds", "Figs. 4-5", "Fig. 6", "Fig. 7"):
    if heading not in run.stdout:
        sys.exit(f"the output has no '{heading}'")
rows = [json.loads(line) for line in open(out)]
wall = {r["routing"]: r for r in rows if r["series"] == "wall"}
half = [r for r in rows if r["series"] == "half"]
seeds = [r for r in rows if r["series"] == "seeds"]
keys = {"series", "dims", "nodes", "cables", "routing", "ready90_ns", "ready_ns", "repair_ns",
        "fraction_min", "stretch_mean", "stretch_max", "messages"}
assert set(wall) == {"central", "detour", "table"}, f"wall rows: {sorted(wall)}"
for r in wall.values():
    assert set(r) == keys, f"wall keys {sorted(r)}"
    assert r["cables"] == 30 and r["nodes"] == 64, r
    assert 1.0 <= r["stretch_mean"] <= r["stretch_max"], r
# detour never reaches every pair across the wall; the tables and the central
# computation do, on routes as short as the shortest paths (the central's)
assert wall["detour"]["ready_ns"] is None and wall["detour"]["fraction_min"] < 1, wall["detour"]
for name in ("table", "central"):
    assert wall[name]["ready_ns"] is not None and wall[name]["repair_ns"] is not None, wall[name]
    assert wall[name]["ready90_ns"] <= wall[name]["ready_ns"], wall[name]
assert abs(wall["table"]["stretch_mean"] - wall["central"]["stretch_mean"]) < 1e-3, wall
assert wall["table"]["messages"] > 0 and wall["detour"]["messages"] == 0, wall
half_keys = {"series", "dims", "routing", "t_ns", "pairs", "fraction", "stretch_mean",
             "stretch_max"}
assert half and {r["routing"] for r in half} == {"detour", "table"}, "no kill-half rows"
for r in half:
    assert set(r) == half_keys, f"half keys {sorted(r)}"
    assert 0 <= r["fraction"] <= 1 and r["pairs"] in (64 * 63, 32 * 31), r
    assert r["stretch_mean"] >= 1, r
assert any(r["pairs"] == 32 * 31 for r in half), "no sample with half the torus down"
assert half[-1]["pairs"] == 64 * 63 and half[-1]["fraction"] == 1, half[-1]
seed_keys = {"series", "dims", "first_dead", "dead", "seeds", "requests", "latency_ns",
             "joined"}
assert len(seeds) == 6, seeds
for r in seeds:
    assert set(r) == seed_keys and r["joined"], r
by = {(r["first_dead"], r["dead"], r["seeds"] != ""): r for r in seeds}
blocks = {(f, d) for f, d, _ in by}
assert len(blocks) == 3, blocks
# seeds never cost a request more, and with ids 1-29 dead (where the spare
# starts asking) they save many requests and much time
for f, d in blocks:
    assert by[(f, d, True)]["requests"] <= by[(f, d, False)]["requests"], by
assert by[(1, 29, True)]["requests"] < by[(1, 29, False)]["requests"], by
assert by[(1, 29, True)]["latency_ns"] < by[(1, 29, False)]["latency_ns"], by
print("sim.bench_phoenix_quick: all checks passed")

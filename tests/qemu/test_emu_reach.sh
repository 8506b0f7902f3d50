#!/bin/bash
# Issue 16's reachability sampler on a 2x2x2 host torus: --reach 200ms
# (PAIRS 100, more than the 56 ordered pairs: every pair each time) with
# the cables between nodes 0 and 1 cut at 1 s.  <out>/reach.jsonl gets a
# line per sample with every key; before the cut every pair answers at
# stretch 1; after it every pair answers again (the ping retries, or the
# detour), and 0 and 1 now take 3 hops for 1 (stretch max 3).
# usage: test_emu_reach.sh EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT"

timeout 100 "$EMU" --dims 2x2x2 --board host --heartbeat-ms 20 --detect-timeout-ms 200 \
    --reach 200ms,100 --inject 'link 0 1 off at 1s' --out "$OUT/cut" > "$OUT/cut.txt" 2>&1
check_status 0 $? "--reach with a cut"
python3 - "$OUT/cut/reach.jsonl" <<'PY' || fail "reach.jsonl: see above"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
keys = {"t_s", "pairs", "reached", "fraction", "stretch_mean", "stretch_max", "took_s",
        "unfinished"}
assert len(lines) >= 4, f"{len(lines)} samples, expected at least 4"
for l in lines:
    assert set(l) == keys, f"keys {sorted(l)}"
    assert l["pairs"] + l["unfinished"] == 56, l
    assert 0 <= l["fraction"] <= 1 and l["reached"] <= l["pairs"], l
    assert l["reached"] == 0 or l["stretch_mean"] >= 1, l
before = [l for l in lines if l["t_s"] < 0.9]
after = [l for l in lines if l["t_s"] > 1.05]
assert before and after, "no sample before or after the cut"
assert all(l["fraction"] == 1 and l["stretch_max"] == 1 for l in before), before
assert after[-1]["fraction"] == 1, f"not recovered: {after[-1]}"
assert after[-1]["stretch_max"] == 3, f"0 and 1 not 3 hops apart: {after[-1]}"
print(f"{len(lines)} samples; last {after[-1]}")
PY
echo "emu.reach_host_2x2x2: all checks passed"

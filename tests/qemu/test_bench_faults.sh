#!/bin/bash
# tori-bench-faults end to end at a tiny size (one crash on a 2x2x2 host
# torus and, with an image, on QEMU): the table has its columns and a row
# per configuration, the JSON its keys (kept in bench-faults.jsonl too, and
# drawn by tori-plot), every agreement check passed, and bad options are
# refused in one line; with --ping, the host torus's all-pairs ping and its
# floor (every pair answered, the ratio of their times).  No timing is
# asserted.  --timeout-ceiling 2 reaches every node's personality (byte 21)
# and the records.
# usage: test_bench_faults.sh BENCH OUT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
BENCH=$1
OUT=$2
IMAGE=${3:-}
rm -rf "$OUT"
mkdir -p "$OUT"
CONFIGS=host-2x2x2@20/200
[[ -n "$IMAGE" && -f "$IMAGE" ]] && CONFIGS="$CONFIGS,qemu-2x2x2@20/200"
"$BENCH" --configs "$CONFIGS" --kills 1 ${IMAGE:+--image "$IMAGE"} --json --out "$OUT/run" \
    --timeout-ceiling 2 \
    > "$OUT/stdout.jsonl" 2> "$OUT/stderr.txt"
status=$?
cat "$OUT/stderr.txt"
check_status 0 "$status" "tori-bench-faults --configs $CONFIGS --kills 1"
for column in "config" "L ms" "detect ms" "T_s ms" "model ms" "T_s/mod" "T_s/L" "fail->st" "checks" \
              "L(2) ms" "base ms" "cont ms" "T_s/con"; do
    check_contains "$OUT/stderr.txt" "$column"
done
check_contains "$OUT/stderr.txt" "host-2x2x2@20-200"
python3 - "$OUT/stdout.jsonl" "$CONFIGS" <<'PY' || fail "JSON output"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert len(rows) == len(sys.argv[2].split(",")), rows
for row in rows:
    for key in ("config", "nodes", "one_hop_ns", "detection_ns", "ts_ns", "model_ns", "ratio",
                "ts_over_l", "recovery_ns", "checks", "checks_passed", "kills"):
        assert key in row, key
    assert row["status"] == 0 and row["kills"] == 1 and row["checks"] == row["checks_passed"], row
    assert row["timeout_ceiling"] == 2, row
    assert row["one_hop_ns"] > 0 and row["model_ns"] > 0, row
    # The contention model (Figures 6-8): L(2), L(4) measured on 8 nodes, none for 8 nearest.
    assert row["base_ns"] > 0 and row["contention_ns"] > 0 and row["contention_ratio"] > 0, row
    assert row["l2_ns"] > 0 and row["l4_ns"] > 0 and row["l8_ns"] == 0, row
PY
# Host nodes print on one clock: where T_s went, level by level, in the record; the
# last install precedes the root's stable (acks follow installs).
check_contains "$OUT/stderr.txt" "host-2x2x2@20-200, where T_s goes (nodes' own clocks)"
python3 - "$OUT/run/host-2x2x2@20-200/faults.jsonl" <<'PY' || fail "per-level installs"
import json, sys
kills = [r for r in map(json.loads, open(sys.argv[1])) if r.get("action") == "kill"]
assert kills, "no kill record"
for r in kills:
    levels = r["level_install_ns"]
    assert len(levels) == r["model"]["levels"], r
    assert all(0 <= v <= r["stable"]["ts_ns"] for v in levels.values()), r
    assert set(r["fans"]) == {"k1", "k2", "k4"} and r["model"]["contention_ns"] > 0, r
PY
[[ -s "$OUT/run/host-2x2x2@20-200/faults.jsonl" ]] || fail "no fault records kept"
for node in 0 7; do
    ceiling=$(od -An -tu1 -j21 -N1 "$OUT/run/host-2x2x2@20-200/node$node.personality" | tr -d ' ')
    [[ $ceiling == 2 ]] || fail "node $node's personality has timeout ceiling '$ceiling', not 2"
done
# The summaries kept for the plots, and the plot (./tori bench faults --plot).
python3 - "$OUT/stdout.jsonl" "$OUT/run/bench-faults.jsonl" <<'PY' || fail "bench-faults.jsonl"
import json, sys
printed = [json.loads(line) for line in open(sys.argv[1])]
kept = [json.loads(line) for line in open(sys.argv[2])]
assert kept == printed and all(r["record"] == "bench-faults" for r in kept), (kept, printed)
PY
draw_bench_plots "$OUT/run/bench-faults.jsonl" "$OUT/plots" faults
check_contains "$OUT/plots/faults.dat" '"host-2x2x2@20-200 #1'
# --ping (issue 20): the all-pairs ping on the host torus at its timings and
# with the detector all but off; every pair answered in both, their ratio.
"$BENCH" --configs host-2x2x2@20/200 --kills 1 --ping --json --out "$OUT/ping" \
    > "$OUT/ping.jsonl" 2> "$OUT/ping.txt"
status=$?
cat "$OUT/ping.txt"
check_status 0 "$status" "tori-bench-faults --ping"
check_contains "$OUT/ping.txt" "All-pairs ping (tori-emu --ping)"
check_contains "$OUT/ping.txt" "all-pairs ping with the detector all but off, heartbeat 15000 ms"
python3 - "$OUT/ping.jsonl" "$OUT/ping/bench-faults.jsonl" <<'PY' || fail "--ping records"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert rows == [json.loads(line) for line in open(sys.argv[2])], rows
assert len(rows) == 1, rows
row = rows[0]
for key, timings in (("ping", (20, 200)), ("ping_floor", (15000, 60000))):
    run = row[key]
    assert (run["heartbeat_ms"], run["detect_timeout_ms"]) == timings, run
    assert run["status"] == 0 and run["pairs"] == 56 and run["answered"] == 56, run
    assert run["ping_done"] == 8 and run["duration_ns"] > 0, run
    assert run["false_detections"] >= 0 and run["view_changes"] >= 0, run
ratio = row["ping"]["duration_ns"] / row["ping_floor"]["duration_ns"]
assert abs(row["ping_ratio"] - ratio) < 0.001, row
PY
for run in ping ping-floor; do
    check_contains "$OUT/ping/host-2x2x2@20-200-$run.log" "ping: 56 of 56 ordered pairs answered"
done
# The floor differs from the ping in its detector only: the same link timings
# (bytes 56-58: the launcher's choice for the ping), heartbeat and detect apart.
links() { od -An -tu1 -j56 -N3 "$OUT/ping/host-2x2x2@20-200-$1/node3.personality"; }
[[ "$(links ping)" == "$(links ping-floor)" ]] \
    || fail "the floor's link timings '$(links ping-floor)' are not the ping's '$(links ping)'"
"$BENCH" --configs arm-2x2 > "$OUT/bad.txt" 2>&1
check_status 2 $? "a bad configuration"
check_contains "$OUT/bad.txt" "tori-bench-faults: --configs: 'arm-2x2': unknown board 'arm'"
"$BENCH" --kills 0 > "$OUT/bad.txt" 2>&1
check_status 2 $? "--kills 0"
check_contains "$OUT/bad.txt" "--kills '0' is invalid (expected 1..10)"
"$BENCH" --timeout-ceiling 65 > "$OUT/bad.txt" 2>&1
check_status 2 $? "--timeout-ceiling 65"
check_contains "$OUT/bad.txt" "tori-bench-faults: --timeout-ceiling '65' is invalid (expected a whole number in 1..64"
wait_for_no_processes "$OUT/run/" 5
wait_for_no_processes "$OUT/ping/" 5
echo "emu.bench_faults: all checks passed"

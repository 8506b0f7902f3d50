#!/bin/bash
# tori-bench-link end to end at a tiny size: it starts a 1-D torus of 4
# nodes, pings, floods over one and two hops, and prints a table and JSON
# whose structure and ratios are checked here.  Times are never asserted.
# Also: bad options give one clear line and exit 2; no node outlives it.
# usage: test_bench_link.sh BENCH BOARD OUT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
BENCH=$1
BOARD=$2
OUT=$3
IMAGE=${4:-}
[[ "$BOARD" == host ]] || skip_without_image "$IMAGE"
rm -rf "$OUT" "$OUT".*
mkdir -p "$OUT"

# Bad options: one line on stderr, exit 2, nothing started.
bad() { check_refused "$OUT" tori-bench-link "$BENCH" "$@"; }
bad "--board 'mixed' is invalid (expected qemu, host or both)" --board mixed
bad "--rounds '0' is invalid" --rounds 0
bad "--ring '2' is invalid (expected a whole number in 4..64)" --ring 2
bad "--flood-size '99999' is invalid" --flood-size 99999
bad "unknown option '--nonsense'" --nonsense
bad "node image '$OUT/none.elf' not found" --board qemu --image "$OUT/none.elf" --qemu /bin/true
bad "node program '$OUT/none' not found" --board host --node-binary "$OUT/none"

# A tiny run with --json: JSON on stdout, the table on stderr.
"$BENCH" --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --ring 4 --rounds 4 \
    --flood-count 150 --flood-size 200 --json --out "$OUT/run" \
    > "$OUT/run.json" 2> "$OUT/run.err"
status=$?
cat "$OUT/run.err"
check_status 0 "$status" "tori-bench-link --board $BOARD"
wait_for_no_processes "$OUT/run/" 5

for text in "round trips, node 0 to node H" "per extra hop: least-squares slope" \
            "floods, node 0 to node H" "frames/RTT" "1-hop RTT" "loss: " \
            "drops and refusals:" "membership in the background" \
            "$BOARD logs: $OUT/run/$BOARD"; do
    check_contains "$OUT/run.err" "$text"
done

python3 - "$OUT/run.json" "$BOARD" <<'PY' || fail "the JSON result is not as expected"
import json, math, sys
with open(sys.argv[1]) as f:
    result = json.load(f)
board_name = sys.argv[2]
def number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)
assert result["benchmark"] == "link"
assert result["ring"] == 4 and result["rounds"] == 4
assert result["flood_count"] == 150 and result["flood_size"] == 200
assert [b["board"] for b in result["boards"]] == [board_name]
board = result["boards"][0]
assert board["status"] == 0 and board["error"] is None, board
assert board["nodes"] == 4
assert isinstance(board["membership"]["failure_detections"], int)
assert isinstance(board["membership"]["views"], int)
one_hop = board["one_hop_rtt_ns"]
assert isinstance(one_hop, int) and one_hop > 0
# Hop counts 1..ring/2, each with its spread, ordered.
assert [h["hops"] for h in board["rtt"]] == [1, 2]
for h in board["rtt"]:
    assert h["samples"] + h["failed"] == 4, h
    assert h["samples"] > 0, h
    assert h["min_ns"] <= h["p10_ns"] <= h["median_ns"] <= h["p90_ns"] <= h["max_ns"], h
    assert number(h["ratio_to_one_hop"]), h
    # The ratio is computed from the medians of this run.
    assert abs(h["ratio_to_one_hop"] - h["median_ns"] / one_hop) < 1e-4 * h["ratio_to_one_hop"] + 1e-9
assert board["rtt"][0]["median_ns"] == one_hop and board["rtt"][0]["ratio_to_one_hop"] == 1
per_hop = board["per_hop"]
assert per_hop is not None and per_hop["points"] == 2
assert number(per_hop["slope_ns"]) and number(per_hop["intercept_ns"])
assert number(per_hop["ratio_to_one_hop"])
assert abs(per_hop["ratio_to_one_hop"] - per_hop["slope_ns"] / one_hop) < 1e-4 * abs(per_hop["ratio_to_one_hop"]) + 1e-9
# With two points the slope is the difference of the two medians.
m1, m2 = board["rtt"][0]["median_ns"], board["rtt"][1]["median_ns"]
assert abs(per_hop["slope_ns"] - (m2 - m1)) <= 1e-5 * max(1, abs(m2 - m1)) + 1
# Floods over one and two hops: every frame accounted for, loss stated.
assert [(f["hops"], f["dst"]) for f in board["floods"]] == [(1, 1), (2, 2)]
counters = {"retransmitted", "timeouts", "fast_retransmits", "duplicates",
            "out_of_order", "stale", "window_full", "discarded", "down_events",
            "drv_send_busy", "drv_send_errors", "drv_receive_drops", "bad_frames",
            "ring_full", "driver_busy", "link_not_up", "no_route", "link_drops",
            "ttl_expired", "forwarded"}
for f in board["floods"]:
    assert f["count"] == 150 and f["size"] == 200, f
    assert f["sent"] == 150 and not f["stalled"], f
    assert 0 < f["delivered"] <= f["sent"], f
    assert f["lost"] == f["sent"] - f["delivered"], f
    assert number(f["loss_ratio"]) and abs(f["loss_ratio"] - f["lost"] / f["sent"]) < 1e-6
    assert number(f["frames_per_one_hop_rtt"]) and f["frames_per_one_hop_rtt"] > 0, f
    assert f["span_ns"] > 0
    assert abs(f["frames_per_one_hop_rtt"] - f["delivered"] * one_hop / f["span_ns"]) \
        < 1e-4 * f["frames_per_one_hop_rtt"]
    assert set(f["counters"]) == counters, f["counters"]
    assert all(isinstance(v, int) and v >= 0 for v in f["counters"].values())
# The two-hop flood passed through node 1: it forwarded (at least) what arrived.
two = board["floods"][1]
assert two["counters"]["forwarded"] >= two["delivered"], two
PY

# The plain table goes to stdout without --json.
"$BENCH" --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --ring 4 --rounds 1 \
    --flood-count 20 --flood-size 12 --out "$OUT/table" > "$OUT/table.out" 2> "$OUT/table.err"
status=$?
cat "$OUT/table.out"
check_status 0 "$status" "tori-bench-link --board $BOARD (table)"
check_contains "$OUT/table.out" "round trips, node 0 to node H"
check_contains "$OUT/table.out" "floods, node 0 to node H"
grep -qF '{"benchmark"' "$OUT/table.out" && fail "JSON printed without --json"
wait_for_no_processes "$OUT/table/" 5
echo "emu.bench_link ($BOARD): all checks passed"

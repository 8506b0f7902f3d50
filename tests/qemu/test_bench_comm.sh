#!/bin/bash
# tori-bench-comm end to end at a tiny size: the job pingpong on a pair
# torus of BOARD (and, on host, the collective run on a 2x2x2 torus), the
# raw link measured beside it; its tables parse, its JSON record (stdout and
# <out>/comm.json) holds every figure and tori-plot draws it, and every
# ratio is a number.  Times
# and targets are never asserted.  Also: bad options give one clear line and
# exit 2; no node outlives it.
# usage: test_bench_comm.sh BENCH BOARD OUT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
BENCH=$1
BOARD=$2
OUT=$3
IMAGE=${4:-}
[[ "$BOARD" == host ]] || skip_without_image "$IMAGE"
rm -rf "$OUT" "$OUT".*
mkdir -p "$OUT"

# Bad options: one line on stderr, exit 2, nothing started.
bad() { check_refused "$OUT" tori-bench-comm "$BENCH" "$@"; }
bad "--board 'mixed' is invalid (expected qemu, host or both)" --board mixed
bad "--rounds '65' is invalid (expected a whole number in 1..64)" --rounds 65
bad "--pings '0' is invalid" --pings 0
bad "--flood-count 'x' is invalid" --flood-count x
bad "--collective-dims '3x' is invalid" --collective-dims 3x
bad "--collective-dims '1' is invalid (expected a torus of at least 2 nodes, or 'none')" \
    --collective-dims 1
bad "unknown option '--nonsense'" --nonsense
bad "node image '$OUT/none.elf' not found" --board qemu --image "$OUT/none.elf" --qemu /bin/true
bad "node program '$OUT/none' not found" --board host --node-binary "$OUT/none"

if [[ "$BOARD" == host ]]; then
    collective=2x2x2
    runs='["host pair", "host collectives"]'
else
    collective=none
    runs='["qemu pair"]'
fi

# A tiny run with --json: JSON on stdout, the tables on stderr.
"$BENCH" --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --rounds 3 --pings 5 \
    --flood-count 100 --collective-dims "$collective" --json --out "$OUT/run" \
    > "$OUT/run.json" 2> "$OUT/run.err"
status=$?
cat "$OUT/run.err"
check_status 0 "$status" "tori-bench-comm --board $BOARD"
wait_for_no_processes "$OUT/run/" 5
check_contains "$OUT/run.err" "record written to $OUT/run/comm.json"
cmp -s "$OUT/run.json" "$OUT/run/comm.json" || fail "comm.json differs from the JSON on stdout"

python3 - "$OUT/run.json" "$OUT/run.err" "$BOARD" "$runs" <<'PY' || fail "the results are not as expected"
import json, math, re, sys
with open(sys.argv[1]) as f:
    record = json.load(f)
table = open(sys.argv[2]).read()
board, runs = sys.argv[3], json.loads(sys.argv[4])
def number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value)
assert record["benchmark"] == "comm" and record["rounds"] == 3 and record["pings"] == 5
assert [r["name"] for r in record["runs"]] == runs
sizes = [0] + [1 << i for i in range(17)]  # 0 B, 1 B .. 64 KiB
for run in record["runs"]:
    assert run["status"] == 0 and run["error"] is None, run
    assert run["raw_pings"] == 5 and run["raw_rtt_ns"] > 0, run
    assert [p["bytes"] for p in run["pingpong"]] == sizes, run["pingpong"]
    assert all(p["rounds"] == 3 and p["rtt_ns"] > 0 for p in run["pingpong"])
    assert run["barrier_ns"] > 0 and run["allreduce_ns"] > 0
    if run["name"].endswith("pair"):
        assert run["board"] == board and run["nodes"] == 4
        flood = run["raw_flood"]
        assert flood["count"] == 100 and flood["sent"] == 100, flood
        assert 0 < flood["delivered"] <= 100 and number(flood["bandwidth_bytes_per_s"])
    else:
        assert run["dims"] == "2x2x2" and run["nodes"] == 8 and run["raw_flood"] is None
        assert run["tree_depth"] == 2  # 8 ranks, radix 4: 1 + 4 + 3
        # The longest root-to-rank path, 0-3-4, spans 2 + 3 torus hops.
        assert run["tree_path_hops"] == 5
        assert abs(run["model_ns"] - run["raw_rtt_ns"] * 5) < 1
# Every ratio is a number, the quotient of the figures beside it.
expected = {"pair": ["small_rtt_over_raw_rtt", "bandwidth_over_raw_flood"],
            "collectives": ["allreduce_over_model", "barrier_over_model"]}
names = [(r["run"], r["name"]) for r in record["ratios"]]
assert names == [(run, name) for run in runs for name in expected[run.split()[-1]]], names
for r in record["ratios"]:
    assert number(r["value"]) and number(r["numerator"]) and number(r["denominator"]), r
    assert abs(r["value"] - r["numerator"] / r["denominator"]) <= 1e-4 * r["value"], r
    assert isinstance(r["met"], bool) and number(r["target"]), r
# The table: one row per size for each pair, and one line per ratio whose
# value parses and matches the record.
for run in runs:
    if run.endswith("pair"):
        block = table.split("\n%s: " % run, 1)[1].split("\n\n", 1)[0]
        rows = re.findall(r"^\s+(\d+)\s+3\s+([\d.]+) us\s+([\d.]+)$", block, re.M)
        assert [int(b) for b, _, _ in rows] == sizes, block
        assert re.search(r"raw frame RTT \(ping 1\): median [\d.]+ us", block), block
        assert re.search(r"raw flood \(flood 1\): \d+ of 100 frames .*: [\d.]+ MB/s", block)
    else:
        assert re.search(r"barrier median [\d.]+ us, allreduce \(1 x int64\) median [\d.]+ us",
                         table), table
        assert re.search(r"depth 2, longest root-to-rank path 5 hops\n.*model 2 L x 5 hops = ",
                         table), table
ratio_lines = re.findall(r"^  (\S+ \S+)\s+(.+?)\s+([\d.]+)  \(([\d.]+) / ([\d.]+) (us|MB/s); "
                         r"target (<=|>=) ([\d.]+): (met|missed)\)$", table, re.M)
assert len(ratio_lines) == len(record["ratios"]), ratio_lines
for line, r in zip(ratio_lines, record["ratios"]):
    assert line[0] == r["run"] and abs(float(line[2]) - r["value"]) <= 0.006, (line, r)
PY

# The plain tables go to stdout without --json; the record still to the file.
"$BENCH" --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --rounds 1 --pings 1 \
    --flood-count 10 --collective-dims none --out "$OUT/table" > "$OUT/table.out" 2> "$OUT/table.err"
status=$?
cat "$OUT/table.out"
check_status 0 "$status" "tori-bench-comm --board $BOARD (table)"
check_contains "$OUT/table.out" "ratios (target; quoted, not enforced)"
check_contains "$OUT/table.out" "0 B ping-pong RTT / raw frame RTT"
grep -qF '{"benchmark"' "$OUT/table.out" && fail "JSON printed without --json"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT/table/comm.json" \
    || fail "no JSON record in $OUT/table/comm.json"
wait_for_no_processes "$OUT/table/" 5
# The run's plots from its record (./tori bench comm --plot).
draw_bench_plots "$OUT/run/comm.json" "$OUT/plots" comm-latency comm-bandwidth
echo "emu.bench_comm ($BOARD): all checks passed"

#!/bin/bash
# Issue 15's coordinated checkpoints end to end: `stencil` on DIMS with one
# spare under REBUILD, a checkpoint every 50 iterations of 200, and a kill
# at iteration KILL_AT.  Checks that
#   - the run exits 0 with every surviving and adopting rank ok=true and
#     the digest of the same job without the kill (computed by a host run);
#   - every rank committed the checkpoints before the kill (a `checkpoint`
#     line per rank and generation, each naming a buddy);
#   - the adopting spare restored the failed rank from the buddy's copy
#     (`restore` source=buddy, bytes moved) at the newest checkpoint before
#     the kill, every survivor from its own with nothing moved, all at the
#     same generation and iteration;
#   - the spare resumed there: its first app-progress comes after the
#     checkpoint's iteration, never from the beginning.
# KILL_AT 100 kills during the checkpoint round of iteration 100: then the
# restore is at 100 if the round committed before the node died, else at
# 50 (the previous checkpoint, which an aborted round leaves valid); the
# run says which.
# usage: test_emu_checkpoint.sh EMU OUT BOARD DIMS KILL_AT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
BOARD=$3
DIMS=$4
KILL_AT=$5
IMAGE=${6:--}
rm -rf "$OUT" && mkdir -p "$OUT"
JOB=(--dims "$DIMS" --spares 1 --app stencil --iterations 200 --progress 10
     --checkpoint-every 50 --comm-mode rebuild)
ARGS=("${JOB[@]}" --board "$BOARD" --inject "kill 3 at iteration $KILL_AT")
if [[ $BOARD == qemu ]]; then
    [[ -f $IMAGE ]] || { echo "SKIP: no qemu-virt image at $IMAGE"; exit 77; }
    ARGS+=(--image "$IMAGE")
else
    ARGS+=(--heartbeat-ms 20 --detect-timeout-ms 200)
fi
timeout 280 "$EMU" "${ARGS[@]}" --out "$OUT/run" > "$OUT/run.txt" 2>&1
check_status 0 $? "every surviving and adopting rank ok"
check_contains "$OUT/run.txt" "iteration $KILL_AT reached: kill 3"
timeout 120 "$EMU" "${JOB[@]}" --board host --out "$OUT/fault_free" \
    > "$OUT/fault_free.txt" 2>&1 || fail "the fault-free run failed"
want=$(grep -o 'ok=true, digest 0x[0-9a-f]*' "$OUT/fault_free.txt")
[[ -n $want ]] && grep -qF "$want" "$OUT/run.txt" ||
    fail "not the fault-free answer (${want:-none})"
grep -q '"event":"checkpoint"' "$OUT/fault_free/events.jsonl" ||
    fail "the fault-free run took no checkpoint"

python3 - "$OUT/run/events.jsonl" "$KILL_AT" <<'PY' || fail "checkpoint and restore checks failed"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
kill_at = int(sys.argv[2])
adopter = [e["node"] for e in events if e["event"] == "app-adopted"]
assert len(adopter) == 1, f"adopting spares: {adopter}"
adopter = adopter[0]
restores = [e for e in events if e["event"] == "restore"]
survivors = {e["node"] for e in events if e["event"] == "app-result" and e["ok"] == "true"}
assert survivors, "no rank ended ok"
assert {e["node"] for e in restores} == survivors, \
    f"restored {sorted(e['node'] for e in restores)}, ended ok {sorted(survivors)}"
points = {(e["generation"], e["iteration"]) for e in restores}
assert len(points) == 1, f"ranks restored different checkpoints: {points}"
generation, iteration = points.pop()
allowed = {kill_at // 50 * 50} | ({kill_at - 50} if kill_at % 50 == 0 else set())
assert iteration in allowed, f"restored iteration {iteration}, expected one of {allowed}"
for e in restores:
    if e["node"] == adopter:
        assert e["source"] == "buddy" and e["bytes_transferred"] > e["bytes"] > 0, e
    else:
        assert e["source"] == "own" and e["bytes_transferred"] == 0, e
checkpoints = [e for e in events if e["event"] == "checkpoint" and e["iteration"] <= iteration]
for g in range(1, generation + 1):
    ranks = {e["node"] for e in checkpoints if e["generation"] == g}
    assert len(ranks) >= len(survivors), f"generation {g} committed at {sorted(ranks)}"
assert all("buddy" in e and e["buddy"] != e["node"] for e in checkpoints)
progress = [e["iteration"] for e in events
            if e["event"] == "app-progress" and e["node"] == adopter]
assert progress and min(progress) > iteration, \
    f"the spare reported iterations {progress[:3]}..., not past the checkpoint {iteration}"
hops = sorted({e["buddy_hops"] for e in checkpoints})
print(f"restored generation {generation} (iteration {iteration}) on {len(restores)} ranks; "
      f"the spare from its buddy; buddy hops {hops}")
PY
echo "emu.checkpoint $BOARD $DIMS kill at $KILL_AT: all checks passed"

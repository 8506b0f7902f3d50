#!/bin/bash
# A 2x2x2 torus boots to all-ready with --json: every stdout line is event
# JSON, every node said ready, events.jsonl holds the same, every QEMU node's
# QMP socket answers (--check-qmp), nothing survives.  With no job block,
# every node still tags its frames with the run's key (issue 20: QEMU runs
# without a job block were keyless).
# usage: test_emu_ready.sh EMU BOARD OUT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
BOARD=$2
OUT=$3
IMAGE=${4:-}
[[ "$BOARD" == host ]] || skip_without_image "$IMAGE"
rm -rf "$OUT"
"$EMU" --dims 2x2x2 --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --json --check-qmp --duration 0 \
    --out "$OUT/run" > "$OUT.out" 2> "$OUT.err"
status=$?
cat "$OUT.err"
check_status 0 "$status" "2x2x2 $BOARD torus"
check_contains "$OUT.err" "all 8 nodes ready"
case "$BOARD" in
    qemu) check_contains "$OUT.err" "QMP: 8 QEMU nodes running" ;;
    host) check_contains "$OUT.err" "QMP: 0 QEMU nodes running" ;;
esac
check_jsonl "$OUT.out"
[[ $(count_ready_nodes "$OUT.out" ready) == 8 ]] || fail "not 8 nodes ready in the JSON"
[[ $(count_ready_nodes "$OUT.out" boot) == 8 ]] || fail "not 8 nodes booted in the JSON"
cmp -s "$OUT.out" "$OUT/run/events.jsonl" || fail "stdout JSON differs from events.jsonl"
for n in 0 1 2 3 4 5 6 7; do
    [[ -s "$OUT/run/node$n.log" ]] || fail "node$n.log is empty"
    [[ $(stat -c %s "$OUT/run/node$n.personality") == 64 ]] || fail "node$n.personality"
    grep -q 'event=network .*auth=siphash' "$OUT/run/node$n.log" ||
        fail "node$n's frames carry no job key (expected auth=siphash in node$n.log)"
done
! grep -q "carry no job key" "$OUT.err" || fail "the launcher ran keyless"
wait_for_no_processes "$OUT/run/" 5

# A run directory too deep for a unix socket path (107 bytes): QEMU makes its
# QMP socket relative to it and the launcher still reaches it.
if [[ "$BOARD" == qemu ]]; then
    DEEP="$OUT/deep"
    while (( ${#DEEP} < 110 )); do DEEP="$DEEP/directory-deep-enough"; done
    "$EMU" --dims 2 --board qemu --image "$IMAGE" --check-qmp --duration 0 \
        --out "$DEEP" > "$OUT.deep.out" 2>&1
    check_status 0 $? "a 2-node QEMU torus in a deep directory"
    check_contains "$OUT.deep.out" "QMP: 2 QEMU nodes running"
fi
echo "emu.ready ($BOARD): all checks passed"

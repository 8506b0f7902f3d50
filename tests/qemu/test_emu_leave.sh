#!/bin/bash
# Issue 16: a graceful leave on a 2x2x2 torus (host processes, or QEMU with
# IMAGE).  `leave 3 at 1s`: node 3 asks the root to remove it, every member
# says `left who=3`, nobody detects anything (no failure-detected line in
# any log), the agreement check passes with 7 live, node 3 says `left` and
# `halt` and ends cleanly (a host process exits 0; the launcher closes a
# halted QEMU): no crash is reported and the run exits 0.  On the host
# also the root's leave (node 1 takes over), and a job: `leave 3 at
# iteration 40` under shrink and blank: the survivors rebuild without 3
# and end ok with one digest; node 3's row says `left`.
# usage: test_emu_leave.sh EMU OUT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
IMAGE=${3:-}
rm -rf "$OUT" && mkdir -p "$OUT"
BOARD=(--board host --heartbeat-ms 20 --detect-timeout-ms 200)
if [[ -n $IMAGE ]]; then
    skip_without_image "$IMAGE"
    BOARD=(--board qemu --image "$IMAGE")
fi

timeout 100 "$EMU" --dims 2x2x2 "${BOARD[@]}" --inject 'leave 3 at 1s' --out "$OUT/leave" \
    > "$OUT/leave.txt" 2>&1
check_status 0 $? "leave 3"
grep -q 'pass: 7 nodes agree on epoch [0-9]*, 7 live' "$OUT/leave.txt" ||
    fail "leave: no agreement on 7 live"
for r in 0 1 2 4 5 6 7; do
    grep -q 'event=left .*who=3 ' "$OUT/leave/node$r.log" || fail "leave: node $r did not say left who=3"
done
check_contains "$OUT/leave/node3.log" "event=leaving"
grep -q 'event=left .*who=3 ' "$OUT/leave/node3.log" || fail "leave: node 3 did not say left"
check_contains "$OUT/leave/node3.log" "event=halt"
! grep -q 'event=failure-detected' "$OUT"/leave/node*.log || fail "leave: a failure was detected"
! grep -q 'event=expelled' "$OUT"/leave/node*.log || fail "leave: an expulsion"
! grep -q 'node 3 .*\(exited with\|killed by\)' "$OUT/leave.txt" || fail "leave: node 3 counted as a crash"
grep -q '^ *1 .* leave 3 .* left ' "$OUT/leave.txt" || fail "leave: the fault table does not say left"
grep -q '"record":"fault".*"action":"leave".*"detection":null.*"left_ns":[0-9]' \
    "$OUT/leave/faults.jsonl" || fail "leave: faults.jsonl has no left_ns (or a detection)"
if [[ -n $IMAGE ]]; then
    echo "emu.leave_qemu_2x2x2: all checks passed"
    exit 0
fi

# The root leaves: node 1 takes over and removes it; node 0 exits cleanly.
timeout 100 "$EMU" --dims 2x2x2 "${BOARD[@]}" --inject 'leave 0 at 1s' --out "$OUT/root" \
    > "$OUT/root.txt" 2>&1
check_status 0 $? "leave 0 (the root)"
grep -q 'pass: 7 nodes agree on epoch [0-9]*, 7 live, root 1' "$OUT/root.txt" ||
    fail "root: no agreement on 7 live with root 1"
grep -q 'event=left .*who=0 ' "$OUT/root/node0.log" || fail "root: node 0 did not say left"
! grep -q 'event=failure-detected' "$OUT"/root/node*.log || fail "root: a failure was detected"

for mode in shrink blank; do
    timeout 100 "$EMU" --dims 2x2x2 "${BOARD[@]}" --app allreduce --iterations 120 --progress 10 \
        --comm-mode "$mode" --inject 'leave 3 at iteration 40' --out "$OUT/$mode" \
        > "$OUT/$mode.txt" 2>&1
    check_status 0 $? "leave during allreduce under $mode"
    grep -q '^ *3  host  *left .*left the job (leave): owes no result' "$OUT/$mode.txt" ||
        fail "$mode: node 3's row does not say left"
    [[ $(grep -c '^ *[0-9]\+  host  *ok ' "$OUT/$mode.txt") == 7 ]] ||
        fail "$mode: not every survivor ended ok"
    ! grep -q 'event=failure-detected' "$OUT"/$mode/node*.log || fail "$mode: a failure was detected"
    ! grep -q 'event=app-abort' "$OUT"/$mode/node*.log || fail "$mode: an abort"
done
echo "emu.leave_host_2x2x2: all checks passed"

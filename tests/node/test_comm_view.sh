#!/bin/bash
# The comm service follows the membership: no view before `start` (frames
# would be dropped, counted), the initial view and WORLD after it.  Its
# end-to-end timeout is twice the link's (the default link timeout of 10 ms,
# then 30 ms), at most the core's largest (100 ms).
# usage: test_comm_view.sh PERSONALITY_TOOL NODE OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
NODE=$2
OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT"
"$TOOL" --node 0 --dims 1 -o "$OUT/node0.personality" || fail "personality"
(echo comm; echo start; sleep 0.5; echo comm; echo halt) |
    timeout 20 "$NODE" --personality "$OUT/node0.personality" > "$OUT/console.log" 2>&1
cat "$OUT/console.log"
mapfile -t states < <(grep 'event=comm-state' "$OUT/console.log")
[[ ${#states[@]} == 2 ]] || fail "not two comm-state lines"
[[ "${states[0]}" == *" has_view=0 "* && "${states[0]}" == *" views=0 "* ]] ||
    fail "a view before start: ${states[0]}"
[[ "${states[1]}" == *" has_view=1 epoch=0 rank=0 size=1 views=1 "* ]] ||
    fail "no initial view and WORLD after start: ${states[1]}"
[[ "${states[1]}" == *" drops_ahead_epoch=0 frames_held=0 held_delivered=0 held_dropped=0 "* ]] ||
    fail "no counters of the hold of frames of a newer view: ${states[1]}"
[[ "${states[0]}" == *" rto_ns=20000000"* ]] ||
    fail "end-to-end timeout not twice the link's 10 ms: ${states[0]}"
for link_rto in 30:60000000 80:100000000; do
    "$TOOL" --node 0 --dims 1 --link-rto-ms "${link_rto%%:*}" -o "$OUT/rto.personality" ||
        fail "personality"
    (echo comm; echo halt) | timeout 20 "$NODE" --personality "$OUT/rto.personality" \
        > "$OUT/rto.log" 2>&1
    grep -q "event=comm-state .* rto_ns=${link_rto#*:}\b" "$OUT/rto.log" ||
        fail "link timeout ${link_rto%%:*} ms: not rto_ns=${link_rto#*:}: $(cat "$OUT/rto.log")"
done
echo "node.comm_view: all checks passed"

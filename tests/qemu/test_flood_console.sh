#!/bin/bash
# The node's flood command (node/flood.h) on a host node with no
# cabled links: every bad command line gets its own console-error, `flood
# stats` answers with both lines, and a flood with no route ends as stalled
# (flood-done stalled=1 sent=0) instead of waiting forever.
# usage: test_flood_console.sh PERSONALITY_TOOL NODE OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
NODE=$2
OUT=$3
rm -rf "$OUT"
mkdir -p "$OUT"
"$TOOL" --node 0 --dims 2 -o "$OUT/node0.personality" || fail "personality"
{
    printf 'flood stats\n'
    printf 'flood 0 5 100\nflood 2 5 100\n'                  # self, out of range
    printf 'flood 1 0 100\nflood 1 5 11\nflood 1 5 1455\n'   # count 0, size bounds
    printf 'flood 1 10000001 100\nflood x\nflood 1 5 100 9\nflood\nflood -1 5 100\n'
    printf 'flood 1 5 100\nflood 1 5 100\n'                  # the second: busy
    sleep 3                                                  # past the stall bound
    printf 'flood stats\nhalt\n'
} | timeout 20 "$NODE" --personality "$OUT/node0.personality" > "$OUT/console.log" 2>&1
status=$?
cat "$OUT/console.log"
[[ $status == 124 ]] && fail "the node did not halt"
count() { grep -cF -- "$1" "$OUT/console.log"; }
[[ $(count 'reason="flood: expected DST to be another node') == 2 ]] || fail "DST errors"
[[ $(count "reason=\"flood: expected 'flood DST COUNT SIZE'") == 8 ]] || fail "usage errors"
[[ $(count 'reason="flood: a flood is already running"') == 1 ]] || fail "busy error"
[[ $(count 'event=flood-rx ') == 2 ]] || fail "flood-rx lines"
[[ $(count 'event=flood-links ') == 2 ]] || fail "flood-links lines"
check_contains "$OUT/console.log" "event=flood-done"
grep -E 'event=flood-done .*dst=1 count=5 size=100 sent=0 .*stalled=1' "$OUT/console.log" \
    > /dev/null || fail "the flood without a route did not end as stalled"
for key in src= id= frames= bytes= missing= old= span_ns= total_frames= total_bytes= malformed=; do
    grep -E "event=flood-rx .* $key[0-9]" "$OUT/console.log" > /dev/null || fail "flood-rx has no $key"
done
for key in retransmitted= duplicates= out_of_order= discarded= drv_receive_drops= bad_frames=; do
    grep -E "event=flood-links .* $key[0-9]" "$OUT/console.log" > /dev/null || fail "flood-links has no $key"
done
check_contains "$OUT/console.log" "event=halt"
echo "emu.flood_console: all checks passed"

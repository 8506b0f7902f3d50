#!/bin/bash
# Issue 16 on a 2x2x2 host torus: group faults and a plane cut of the one
# fault language.  `kill x>=1 at 1s` kills nodes 1 3 5 7 (one fault row
# each), `restart x>=1 at 3s` brings them back, and `cut y=0|1 except 1 at
# 6s for 1s` cuts the y+ cables of 1, 4 and 5 (the plane's four but the
# first, node 0's) and mends them; every agreement check passes, 8 live.
# usage: test_emu_groups.sh EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT"
timeout 100 "$EMU" --dims 2x2x2 --board host --heartbeat-ms 20 --detect-timeout-ms 200 \
    --inject 'kill x>=1 at 1s; restart x>=1 at 3s; cut y=0|1 except 1 at 6s for 1s' \
    --out "$OUT/run" > "$OUT/run.txt" 2>&1
check_status 0 $? "group faults"
for n in 1 3 5 7; do
    grep -q "^ *[0-9]* .* kill $n  " "$OUT/run.txt" || fail "no row for kill $n"
    grep -q "^ *[0-9]* .* restart $n  " "$OUT/run.txt" || fail "no row for restart $n"
done
[[ $(grep -c '^ *[0-9]* .* kill [0-9]  ' "$OUT/run.txt") == 4 ]] || fail "not 4 kills"
for n in 1 4 5; do
    grep -q "^ *[0-9]* .* link $n y+ off " "$OUT/run.txt" || fail "no row for link $n y+ off"
    grep -q "^ *[0-9]* .* link $n y+ on " "$OUT/run.txt" || fail "no row for link $n y+ on"
done
! grep -q 'link 0 y+ off' "$OUT/run.txt" || fail "the kept cable (node 0's) was cut"
grep -q '14 faults, 2 agreement checks, 0 failed' "$OUT/run.txt" || fail "an agreement check failed"
grep -q 'pass: epoch [0-9]*, 8 live' "$OUT/run.txt" || fail "the torus is not whole again"
echo "emu.groups_host_2x2x2: all checks passed"

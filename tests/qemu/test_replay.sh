#!/bin/bash
# A simulator seed replayed on a host torus: tori-sim writes the faults of a
# chaos seed (2x2x2, radix 2) in the one fault language (--emit-script),
# tori-emu runs that file unchanged (--inject-file, --sequential: each item
# after the torus settled from the one before, since the simulator's times
# are microseconds apart) with the CI fault timings, and every agreement
# check must pass (check_faults.py).  Seed 1139 at rate 2 draws hangs, link
# cuts (a pair of neighbours: both cables of a ring of two), a kill and a
# restart: kinds both injectors carry out.
# usage: test_replay.sh SIM EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
SIM=$1
EMU=$2
OUT=$3
rm -rf "$OUT"
mkdir -p "$OUT"
SCRIPT="$OUT/seed1139.faults"
"$SIM" --dims 2x2x2 --radix 2 --chaos --rate 2 --seed 1139 --emit-script "$SCRIPT" \
    > "$OUT/sim.txt" 2>&1
check_status 0 $? "tori-sim chaos seed 1139"
check_contains "$OUT/sim.txt" "violations=0"
for kind in kill restart hang link; do
    grep -q "^$kind " "$SCRIPT" || fail "the emitted script has no $kind (see $SCRIPT)"
done
# The file parses back in the simulator too, to the same faults.
"$SIM" --dims 2x2x2 --radix 2 --inject-file "$SCRIPT" --emit-script "$OUT/again.faults" \
    --quiet > /dev/null 2>&1
check_status 0 $? "tori-sim --inject-file of its own script"
diff <(grep -v '^#' "$SCRIPT") <(grep -v '^#' "$OUT/again.faults") \
    || fail "the script does not come back the same through tori-sim"

"$EMU" --dims 2x2x2 --board host --radix 2 --heartbeat-ms 20 --detect-timeout-ms 200 \
    --sequential --inject-file "$SCRIPT" --json --out "$OUT/run" \
    > "$OUT/stdout.jsonl" 2> "$OUT/stderr.txt"
status=$?
cat "$OUT/stderr.txt"
check_status 0 "$status" "the replay of seed 1139 on a 2x2x2 host torus"
check_contains "$OUT/stderr.txt" "agreement check"
python3 "$(dirname "$0")/check_faults.py" replay host "$OUT/run" 8 \
    || fail "replay: membership not as expected (see $OUT/run)"
wait_for_no_processes "$OUT/run/" 5
echo "emu.replay_sim_chaos_host: all checks passed"

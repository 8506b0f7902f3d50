#!/bin/bash
# Issue 16 on a 2x2x2 host torus: `ping all at T` as a script item.  Every
# running node pings every other (as --ping does): 56 pairs on the whole
# torus, 42 once node 3 is killed; the fault lines, the table and
# faults.jsonl ("ping":{"pairs":..,"answered":..}) say so, and the run
# passes.  On a ring of two with its cables cut, neither pair answers (each
# node's ping gives up after about 6 s): the run fails, in one line naming
# them.
# usage: test_emu_ping_all.sh EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT"
HOST=(--dims 2x2x2 --board host --heartbeat-ms 20 --detect-timeout-ms 200)

timeout 100 "$EMU" "${HOST[@]}" --inject 'ping all at 500ms; kill 3 at 1s; ping all at 3s' \
    --out "$OUT/ok" > "$OUT/ok.txt" 2>&1
check_status 0 $? "ping all, kill 3, ping all"
check_contains "$OUT/ok.txt" "ping all (fault #1): 56 of 56 pairs answered"
check_contains "$OUT/ok.txt" "ping all (fault #3): 42 of 42 pairs answered"
grep -q '^ *1 .* ping all .* 56/56 pairs ' "$OUT/ok.txt" || fail "the table has no 56/56 row"
grep -q '"action":"ping".*"ping":{"pairs":56,"answered":56}' "$OUT/ok/faults.jsonl" ||
    fail "faults.jsonl has no record of the first ping"
grep -q '"action":"ping".*"ping":{"pairs":42,"answered":42}' "$OUT/ok/faults.jsonl" ||
    fail "faults.jsonl has no record of the second ping"

timeout 150 "$EMU" --dims 2 --board host --heartbeat-ms 20 --detect-timeout-ms 200 \
    --inject 'link 0 1 off at 500ms; ping all at 600ms' --out "$OUT/cut" > "$OUT/cut.txt" 2>&1
status=$?
[[ $status != 0 && $status != 124 ]] || fail "ping all across a cut: exit $status, expected a failure"
grep -q 'ping all (fault #[0-9]*): 2 of 2 pairs of running nodes did not answer: 0->1 (failed), 1->0 (failed)' \
    "$OUT/cut.txt" || fail "no one-line ping failure naming 0->1 and 1->0"
echo "emu.ping_all_host_2x2x2: all checks passed"

#!/bin/bash
# Faults timed by the application's progress, on a 2x2x2 host torus with
# the CI detector timings: "hang 3 at iteration 20 for 100ms" (shorter than
# the detector timeout) leaves the job alive: it ends ok, the fault table
# and faults.jsonl show iteration 20.  "kill 3 at iteration 20" under the
# default --comm-mode abort aborts the job: every live rank reports
# app-abort naming rank 3, the run ends in bounded time with the aborted
# exit status 3; the faults still to come are reported as not fired.
# usage: test_emu_app_faults.sh EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT"
JOB=(--dims 2x2x2 --board host --heartbeat-ms 20 --detect-timeout-ms 200
     --app allreduce --iterations 60 --progress 10)

timeout 120 "$EMU" "${JOB[@]}" --inject 'hang 3 at iteration 20 for 100ms' \
    --out "$OUT/hang" > "$OUT/hang.txt" 2>&1
check_status 0 $? "a short hang at iteration 20"
check_contains "$OUT/hang.txt" "fault #1 at"
check_contains "$OUT/hang.txt" "iteration 20 reached: hang 3"
grep -q '^ *1 .* hang 3 (iteration 20) ' "$OUT/hang.txt" || fail "hang: no table row at iteration 20"
grep -q '^ *2 .* resume 3 ' "$OUT/hang.txt" || fail "hang: the resume 100ms later is missing"
grep -q '"record":"fault".*"text":"hang 3 at iteration 20 for 100ms".*"at_iteration":20,"iteration":20' \
    "$OUT/hang/faults.jsonl" || fail "hang: faults.jsonl does not record iteration 20"
check_contains "$OUT/hang.txt" "allreduce: every node ok=true"

start=$(date +%s)
timeout 120 "$EMU" "${JOB[@]}" --inject 'kill 3 at iteration 20; hang 5 at iteration 40 for 1s; kill 2 at 90s' \
    --out "$OUT/kill" > "$OUT/kill.txt" 2>&1
status=$?
elapsed=$(( $(date +%s) - start ))
[[ $status != 124 ]] || fail "kill: the run did not end within 120 s"
check_status 3 $status "a kill at iteration 20 (aborted)"
(( elapsed < 60 )) || fail "kill: the run took $elapsed s (expected it to end with the job)"
check_contains "$OUT/kill.txt" "iteration 20 reached: kill 3"
check_contains "$OUT/kill.txt" \
    "tori-emu: allreduce: aborted: every live rank (7) reported app-abort (comm 0x100, epoch"
[[ $(grep -c '^ *[0-9]* *host *abort .*failed 3$' "$OUT/kill.txt") == 7 ]] ||
    fail "kill: not every live rank's row shows its app-abort naming rank 3"
grep -q '^ *3 *host *down ' "$OUT/kill.txt" || fail "kill: node 3 is not shown down"
grep -q '^ *1 .* kill 3 (iteration 20) ' "$OUT/kill.txt" || fail "kill: no table row at iteration 20"
check_contains "$OUT/kill.txt" "the job is over: 2 scheduled faults not fired"
grep -q 'hang 5 at iteration 40 for 1s *not fired' "$OUT/kill.txt" || fail "kill: hang 5 not listed"
grep -q 'kill 2 at 90s *not fired' "$OUT/kill.txt" || fail "kill: kill 2 not listed"
grep -q '"record":"not-fired","text":"hang 5 at iteration 40 for 1s","at_iteration":40' \
    "$OUT/kill/faults.jsonl" || fail "kill: no not-fired record for hang 5"
grep -q '"record":"summary".*"not_fired":2' "$OUT/kill/faults.jsonl" ||
    fail "kill: the summary does not count 2 not fired"
echo "emu.app_faults: all checks passed"

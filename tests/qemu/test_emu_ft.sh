#!/bin/bash
# Issue 14's failure modes end to end: `kill 3 at iteration 100` on a job of
# 200 iterations (progress every 10) ends as the mode promises.  VICTIMS
# (default 3) names other ranks to kill at iteration 100: 0 (the root of
# the view and of WORLD), or two of them ("3,5"): under shrink the
# survivors then end on a communicator without both.  PRELUDE: faults
# before the kills (e.g. a spare hung until it is expelled: it must rejoin
# and still adopt the failed rank; - for none); KILL_AT: the iteration of
# the kills (100; the job runs twice as many); MSG_MODE: --msg-mode (nop);
# DURING: ranks killed inside their own recovery from the first kills
# ("5": `kill 5 at recovery`; under rebuild one more spare each).
#   abort:   every live rank reports app-abort naming the victims (and no
#            app-result), the run exits 3 with its summary line;
#   shrink, blank, rebuild: every surviving (and, under rebuild, the
#            adopting) rank reports ok=true with one digest, exit 0, no
#            communicator check failed; under rebuild one spare reports
#            app-adopted, its row says so, and the digest is the one of the
#            same job without the kill; every other rank that ends ok
#            reports app-recovered.  With the allreduce (strict), every
#            survivor learnt of the first failure inside tori_allreduce (its
#            first `comm` line says so) and all failed in one collective
#            with one error (their first app-error lines agree).
#   DURING:  each such rank began its recovery (app-rebuild) and was killed
#            then: it never reports app-recovered or app-result.
# usage: test_emu_ft.sh EMU OUT BOARD DIMS APP MODE [IMAGE|- [VICTIMS [PRELUDE [KILL_AT
#        [MSG_MODE [DURING]]]]]]
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
BOARD=$3
DIMS=$4
APP=$5
MODE=$6
IMAGE=${7:--}
VICTIMS=${8:-3}
PRELUDE=${9:-}
[[ $PRELUDE == - ]] && PRELUDE=
KILL_AT=${10:-100}
MSG_MODE=${11:-nop}
DURING=${12:-}
rm -rf "$OUT" && mkdir -p "$OUT"
INJECT=$PRELUDE
for victim in ${VICTIMS//,/ }; do
    INJECT+="${INJECT:+; }kill $victim at iteration $KILL_AT"
done
for victim in ${DURING//,/ }; do
    INJECT+="; kill $victim at recovery"
done
ALL_VICTIMS=$VICTIMS${DURING:+,$DURING}
KILLS=$(tr ',' '\n' <<< "$ALL_VICTIMS" | wc -l)
ARGS=(--dims "$DIMS" --board "$BOARD" --app "$APP" --iterations $((2 * KILL_AT)) --progress 10
      --comm-mode "$MODE" --msg-mode "$MSG_MODE" --inject "$INJECT")
if [[ $BOARD == qemu ]]; then
    [[ -f $IMAGE ]] || { echo "SKIP: no qemu-virt image at $IMAGE"; exit 77; }
    ARGS+=(--image "$IMAGE")
else
    ARGS+=(--heartbeat-ms 20 --detect-timeout-ms 200)
fi
[[ $MODE == rebuild ]] && ARGS+=(--spares "$KILLS") # a spare per failed rank

timeout 280 "$EMU" "${ARGS[@]}" --out "$OUT/run" > "$OUT/run.txt" 2>&1
status=$?
[[ $status != 124 ]] || fail "$MODE: the run did not end within 280 s"
for victim in ${VICTIMS//,/ }; do
    check_contains "$OUT/run.txt" "iteration $KILL_AT reached: kill $victim"
done
for victim in ${DURING//,/ }; do
    check_contains "$OUT/run.txt" "its node's recovery under way: kill $victim"
    grep -q "\"text\":\"kill $victim at recovery\",.*\"injected\":true,\"at_recovery\":true" \
        "$OUT/run/faults.jsonl" || fail "$MODE: no faults.jsonl record of kill $victim at recovery"
done
grep -q "communicator check failed" "$OUT/run.txt" && fail "$MODE: a communicator check failed"
events="$OUT/run/events.jsonl"
if [[ $MODE == abort ]]; then
    check_status 3 $status "$MODE: the aborted exit status"
    live=$(( $(grep -c '^ *[0-9]\+  \(host\|qemu\) ' "$OUT/run.txt") - 1 ))
    check_contains "$OUT/run.txt" \
        "tori-emu: $APP: aborted: every live rank ($live) reported app-abort (comm 0x100, epoch"
    [[ $(grep -c "\"event\":\"app-abort\".*\"failed\":\"\\?$VICTIMS\"\\?[,}]" "$events") == "$live" ]] ||
        fail "$MODE: not $live app-abort lines naming rank(s) $VICTIMS"
    grep -q '"event":"app-result"' "$events" && fail "$MODE: an app-result after the abort"
else
    check_status 0 $status "$MODE: every surviving rank ok"
    check_contains "$OUT/run.txt" "tori-emu: $APP: every surviving or adopting rank ok=true"
    grep -q '"event":"comm".*"comm":"0x100".*"state":"detected"' "$events" ||
        fail "$MODE: no comm line for WORLD after the view change"
    # At the end the launcher asks every running node for its comm core's
    # counters (comm-state: what the recovery cost on the wire).
    for node in $(grep '"event":"app-result".*"ok":"true"' "$events" |
                  grep -o '^{"event":"app-result","node":[0-9]*' | grep -o '[0-9]*$'); do
        grep -q "^{\"event\":\"comm-state\",\"node\":$node,.*\"retransmissions\":[0-9]*,\"resets\":[0-9]*," \
            "$events" || fail "$MODE: node $node reported no comm-state counters"
    done
    # Each surviving rank that ends ok reports its recovery (app-recovered,
    # which ./tori bench recovery times); an adopting spare rebuilt nothing.
    adopters=$(grep -o '"event":"app-adopted","node":[0-9]*' "$events" | grep -o '[0-9]*$')
    adopter() { grep -qx "$1" <<< "$adopters"; }
    for node in $(grep '"event":"app-result".*"ok":"true"' "$events" |
                  grep -o '^{"event":"app-result","node":[0-9]*' | grep -o '[0-9]*$'); do
        adopter "$node" ||
            grep -q "^{\"event\":\"app-recovered\",\"node\":$node," "$events" ||
            fail "$MODE: node $node ended ok without an app-recovered line"
    done
    if [[ $APP == allreduce ]]; then
        # Strict collectives: every survivor was inside tori_allreduce when
        # the first failure reached it, and all failed in the same one.
        first_error=
        for node in $(grep '"event":"app-result".*"ok":"true"' "$events" |
                      grep -o '^{"event":"app-result","node":[0-9]*' | grep -o '[0-9]*$'); do
            adopter "$node" && continue
            grep -m 1 "^{\"event\":\"comm\",\"node\":$node,.*\"state\":\"detected\"" "$events" |
                grep -q '"call":"tori_allreduce","collective":[0-9]' ||
                fail "$MODE: node $node was not inside tori_allreduce when the failure reached it"
            error=$(grep -m 1 "^{\"event\":\"app-error\",\"node\":$node," "$events" |
                    grep -o '"call":.*')
            [[ $error == '"call":"tori_allreduce","collective":'[0-9]* ]] ||
                fail "$MODE: node $node's first error is not a collective's: ${error:-none}"
            [[ -z $first_error || $error == "$first_error" ]] ||
                fail "$MODE: node $node failed with $error, another survivor with $first_error"
            first_error=$error
        done
    fi
    for victim in ${DURING//,/ }; do
        # It died inside its own recovery: begun, never ended.
        grep -q "^{\"event\":\"app-rebuild\",\"node\":$victim," "$events" ||
            fail "$MODE: node $victim began no recovery before it was killed"
        ! grep -q "^{\"event\":\"app-\(recovered\|result\)\",\"node\":$victim," "$events" ||
            fail "$MODE: node $victim ended its recovery before it was killed"
    done
    if [[ $MODE == rebuild ]]; then
        [[ $(grep -c '"event":"app-adopted"' "$events") == "$KILLS" ]] ||
            fail "$MODE: not $KILLS app-adopted line(s)"
        grep -q 'a spare that adopted a rank' "$OUT/run.txt" || fail "$MODE: no adopting row"
        # The fault-free answer: the same job without the kill (on host
        # processes: the digest is the same on every board), unless a
        # second rank was lost (expelled on a loaded machine: then the
        # survivors computed over a gap, rightly).
        grep -q '^ *[0-9]\+  \(host\|qemu\) \+out ' "$OUT/run.txt" ||
        timeout 120 "$EMU" --dims "$DIMS" --board host --app "$APP" --iterations $((2 * KILL_AT)) \
            --progress 10 --comm-mode rebuild --spares "$KILLS" --out "$OUT/fault_free" \
            > "$OUT/fault_free.txt" 2>&1 || fail "$MODE: the fault-free run failed"
        if [[ -f $OUT/fault_free.txt ]]; then
            want=$(grep -o 'ok=true, digest 0x[0-9a-f]*' "$OUT/fault_free.txt")
            [[ -n $want ]] && grep -qF "$want" "$OUT/run.txt" ||
                fail "$MODE: not the fault-free answer (${want:-none})"
        fi
    fi
fi
if [[ $ALL_VICTIMS == *,* && $MODE == shrink ]]; then
    # Both crashes are in the communicator the survivors end on (one view
    # change or two: a crash noticed later lands during the recovery).
    count=$KILLS
    size=$(grep -o '"event":"app-start".*"size":[0-9]*' "$events" | head -n 1 | grep -o '[0-9]*$')
    grep -q "\"event\":\"comm\".*\"size\":$((size - count)),.*\"state\":\"\(ok\|recovered\)\"" "$events" ||
        fail "$MODE: no rebuilt communicator of $((size - count)) ranks"
fi
echo "emu.ft $BOARD $DIMS $APP $MODE $MSG_MODE (kill $VICTIMS${DURING:+, then $DURING at recovery}): all checks passed"

#!/bin/bash
# Issue 14's failure semantics through the ftprobe test application
# (tests/node/ftprobe.c) on a 2x2x2 host torus of the test node, rank 3
# killed at iteration 100 (--comm-mode shrink):
#   nop:    during recovery (between the view change and the rebuild) no
#           live pair exchanges anything, every call is refused, and the
#           error handler ran on every survivor with PROC_FAILED;
#   cont:   live pairs (all but rank 3's partner, rank 2) do exchange in the
#           same window; the handler still ran once on every survivor;
#   agree:  one agreed value per call on every survivor (one digest), each
#           value that is certain right;
#   revoke: (no kill) every rank blocked on a live peer is released with
#           REVOKED when the last rank revokes WORLD; all shrink and go on,
#           and tori_comm_free keeps its rules (WORLD refused, a pending
#           request refuses it, then the shrunk communicator goes);
#   busy:   (no kill) allreduce, dup and agree called while the core's
#           collective slots (or its one creation) are held: each blocking
#           call starts again until the core takes it, none fails BUSY.
# Every survivor ends ok=true, which also checks an allreduce on the
# rebuilt communicator.
# usage: test_ftprobe.sh EMU TEST_NODE OUT PROBE
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
TEST_NODE=$2
OUT=$3
PROBE=$4
rm -rf "$OUT" && mkdir -p "$OUT"
ARGS=(--dims 2x2x2 --board host --node-binary "$TEST_NODE" --heartbeat-ms 20
      --detect-timeout-ms 200 --app ftprobe --comm-mode shrink)
KILL=(--iterations 200 --progress 10 --inject 'kill 3 at iteration 100')
case $PROBE in
    nop|cont) ARGS+=(--app-args 0,2,300 --msg-mode "$PROBE" "${KILL[@]}") ;;
    agree) ARGS+=(--app-args 1,1,0 --msg-mode cont "${KILL[@]}") ;;
    revoke) ARGS+=(--app-args 2,0,300 --iterations 1) ;;
    busy) ARGS+=(--app-args 3,0,0 --iterations 5) ;;
    *) fail "unknown probe '$PROBE' (expected nop, cont, agree, revoke or busy)" ;;
esac
timeout 100 "$EMU" "${ARGS[@]}" --out "$OUT/run" > "$OUT/run.txt" 2>&1
status=$?
[[ $status == 0 ]] || { tail -n 25 "$OUT/run.txt" >&2; fail "$PROBE: tori-emu exited $status"; }
if [[ $PROBE == revoke || $PROBE == busy ]]; then
    check_contains "$OUT/run.txt" "tori-emu: ftprobe: every node ok=true"
else
    check_contains "$OUT/run.txt" "tori-emu: ftprobe: every surviving or adopting rank ok=true"
fi
events="$OUT/run/events.jsonl"
field() { grep -o "\"$2\":[0-9]*" <<< "$1" | cut -d: -f2; }
live=7
[[ $PROBE == revoke || $PROBE == busy ]] && live=8
mapfile -t probes < <(grep '"event":"app-ftprobe"' "$events")
[[ ${#probes[@]} == "$live" ]] || fail "$PROBE: ${#probes[@]} app-ftprobe lines, expected $live"
exchanged_live=0
for line in "${probes[@]}"; do
    node=$(field "$line" node)
    case $PROBE in
        nop)
            [[ $(field "$line" exchanged) == 0 ]] ||
                fail "nop: node $node exchanged with its partner during recovery: $line"
            (($(field "$line" refused) > 0)) || fail "nop: node $node had no call refused: $line"
            (($(field "$line" handler_calls) > 0)) && [[ $(field "$line" handler_error) == 11 ]] ||
                fail "nop: node $node's error handler did not run with PROC_FAILED: $line"
            ;;
        cont)
            if [[ $node == 2 ]]; then
                [[ $(field "$line" exchanged) == 0 ]] ||
                    fail "cont: node 2 exchanged with its failed partner: $line"
            else
                (($(field "$line" exchanged) > 0)) ||
                    fail "cont: live node $node exchanged nothing during recovery: $line"
                exchanged_live=$((exchanged_live + 1))
            fi
            (($(field "$line" handler_calls) > 0)) ||
                fail "cont: node $node's error handler never ran: $line"
            ;;
        busy)
            [[ $(field "$line" held) == 15 && $(field "$line" accepted) == 15 ]] ||
                fail "busy: node $node: a blocking call failed while the core was busy: $line"
            ;;
        revoke)
            [[ $(field "$line" revoked) == 1 ]] ||
                fail "revoke: node $node was not released by the revoke: $line"
            [[ $(field "$line" freed) == 1 ]] ||
                fail "revoke: node $node: tori_comm_free broke its rules: $line"
            ;;
    esac
done
if [[ $PROBE == agree ]]; then
    grep -q '"event":"app-error".*"call":"tori_comm_agree"' "$events" ||
        fail "agree: no agree saw the failure (the kill came after the job?)"
fi
echo "node.ftprobe $PROBE: all checks passed"

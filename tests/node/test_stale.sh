#!/bin/bash
# A hung-then-resumed node's traffic from its old life is fenced: counted as
# stale, never delivered.  On a 2x2x2 host torus of the test node
# (tori-node-test, which holds the `stale` test application), rank 5 keeps
# a message in flight to every other rank, each carrying its view epoch and
# iteration, while the seven others pass a token around a ring without it.
# Node 5 hangs long enough to be expelled, then resumes: its unacknowledged
# frames go out again with its old epoch.  At least one survivor must name
# a stale frame from node 5 (`comm-stale source=5`, an epoch older than its
# view); no survivor's application may have taken a message from node 5
# sent in another view than its own (`app-stale ... stale=0`); every
# survivor ends ok=true with one digest, and the torus agrees afterwards.
# usage: test_stale.sh TOOL EMU TEST_NODE OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
EMU=$2
TEST_NODE=$3
OUT=$4
rm -rf "$OUT" && mkdir -p "$OUT"
HUNG=5
ITERATIONS=200
PACE_MS=10
# CONT: the survivors' ring goes on when node 5 is expelled (BLANK: no
# rebuild is asked for; ABORT, the default, would end the job).
"$TOOL" --job-out "$OUT/stale.bin" --app stale --iterations "$ITERATIONS" \
    --app-args "$HUNG,$PACE_MS" --comm-mode blank --msg-mode cont || fail "stale job"

# Expelled after the 200 ms detector timeout, resumed at 1.5 s, while the
# survivors' iterations (10 to 20 ms each) go on; the run lasts until 6 s
# after the torus settled, past the survivors' end.
"$EMU" --dims 2x2x2 --board host --node-binary "$TEST_NODE" \
    --heartbeat-ms 20 --detect-timeout-ms 200 --job "$OUT/stale.bin" \
    --inject "hang $HUNG at 500ms for 1s" --settle-quiet 6s \
    --out "$OUT/run" > "$OUT/run.txt" 2>&1 ||
    { tail -n 20 "$OUT/run.txt" >&2; fail "tori-emu failed"; }
LOGS=("$OUT"/run/node*.log)
SURVIVORS=()
for log in "${LOGS[@]}"; do
    [[ $log == */node$HUNG.log ]] || SURVIVORS+=("$log")
done
cat "${LOGS[@]}" | grep 'event=comm-stale\|event=app-stale\|event=expelled\|event=app-result'
grep -q 'event=panic' "${LOGS[@]}" && fail "a node panicked"
grep -q 'event=expelled' "$OUT/run/node$HUNG.log" || fail "node $HUNG was never expelled"
grep -q 'event=app-stale-sender' "$OUT/run/node$HUNG.log" ||
    fail "node $HUNG's application did not report what it sent"

field() { grep -o " $2=[^ ]*" <<< "$1" | cut -d= -f2; }
# Fenced: a frame of node 5's old view, dropped and counted by a survivor
# whose application was still running (the clock is the host's, shared).
fenced=0
for log in "${SURVIVORS[@]}"; do
    ended=$(field "$(grep 'event=app-result' "$log")" t_ns)
    while read -r line; do
        [[ -n $line ]] || continue
        (($(field "$line" epoch) < $(field "$line" view))) ||
            fail "a comm-stale line whose epoch is not older than the view: $line"
        [[ -n $ended ]] && (($(field "$line" t_ns) < ended)) ||
            fail "$log: the stale frame came after the application ended: $line"
        ((++fenced))
    done < <(grep "event=comm-stale .*source=$HUNG " "$log")
done
((fenced > 0)) || fail "no survivor counted a stale frame from node $HUNG"

# Never delivered: every survivor took node 5's messages only in its own view.
delivered=0
for log in "${SURVIVORS[@]}"; do
    line=$(grep 'event=app-stale ' "$log") || fail "$log: no app-stale line"
    [[ $(field "$line" stale) == 0 ]] ||
        fail "$log: a message from node $HUNG's old life was delivered: $line"
    ((delivered += $(field "$line" delivered)))
done
((delivered > 0)) || fail "no survivor took any message from node $HUNG (nothing checked)"

results=$(cat "${SURVIVORS[@]}" | grep 'event=app-result')
[[ $(grep -c " app=stale ok=true .* iterations=$ITERATIONS " <<< "$results") == 7 ]] ||
    { echo "$results" >&2; fail "not every survivor ended ok=true after $ITERATIONS iterations"; }
[[ $(grep -o ' digest=0x[0-9a-f]*' <<< "$results" | sort -u | wc -l) == 1 ]] ||
    fail "the survivors' digests differ"
echo "node.stale: $fenced comm-stale lines from node $HUNG, $delivered messages delivered in view," \
    "none stale; all checks passed"

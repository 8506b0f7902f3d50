#!/bin/bash
# A greedy application is named, never mistaken for a crash.  On a 2x2x2
# host torus of the test node (tori-node-test, which holds the greedy test
# application), rank 5 computes without calling the runtime for 400 ms (more
# than half the 600 ms detector timeout), then for 2.5 s (more than the
# timeout).  Node 5 must report `starved` (gap_ns, the call) both times, the
# second before its `expelled` line, which counts the pause (pauses >= 1);
# no other node starves, none panics, every node ends ok=true with one
# digest.  The product node does not hold the greedy application.
# usage: test_starved.sh TOOL EMU TEST_NODE PRODUCT_NODE OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
EMU=$2
TEST_NODE=$3
NODE=$4
OUT=$5
rm -rf "$OUT" && mkdir -p "$OUT"
GREEDY=5
TIMEOUT_MS=600
SHORT_MS=400
LONG_MS=2500
"$TOOL" --job-out "$OUT/greedy.bin" --app greedy --iterations 4 \
    --app-args "$GREEDY,$SHORT_MS,$LONG_MS" || fail "greedy job"

# The product node refuses the test application: it is not in its image.
"$TOOL" --node 0 --dims 1 -o "$OUT/node0.personality" || fail "personality"
(echo start; sleep 0.5; echo halt) |
    timeout 20 "$NODE" --personality "$OUT/node0.personality" --job "$OUT/greedy.bin" \
        > "$OUT/product.log" 2>&1
grep 'event=app-error' "$OUT/product.log" |
    grep -qF 'call=start app=greedy error="this image does not hold the application"' ||
    { cat "$OUT/product.log" >&2; fail "the product node ran the greedy test application"; }

"$EMU" --dims 2x2x2 --board host --node-binary "$TEST_NODE" \
    --detect-timeout-ms "$TIMEOUT_MS" --job "$OUT/greedy.bin" --duration 6s \
    --out "$OUT/run" > "$OUT/run.txt" 2>&1 ||
    { tail -n 20 "$OUT/run.txt" >&2; fail "tori-emu failed"; }
LOGS=("$OUT"/run/node*.log)
cat "$OUT"/run/node*.log | grep 'event=starved\|event=expelled\|event=app-result\|event=failure'

results=$(cat "${LOGS[@]}" | grep 'event=app-result')
[[ $(grep -c " app=greedy ok=true " <<< "$results") == 8 ]] ||
    { echo "$results" >&2; fail "not every node ended ok=true"; }
[[ $(grep -o ' digest=0x[0-9a-f]*' <<< "$results" | sort -u | wc -l) == 1 ]] ||
    fail "digests differ"
grep -q 'event=panic' "${LOGS[@]}" && fail "a node panicked"
for log in "${LOGS[@]}"; do
    [[ $log == */node$GREEDY.log ]] && continue
    grep -q 'event=starved' "$log" && fail "$log: a node that never starved reports starved"
done

log="$OUT/run/node$GREEDY.log"
mapfile -t starved < <(grep -n 'event=starved' "$log")
[[ ${#starved[@]} == 2 ]] || fail "node $GREEDY: ${#starved[@]} starved lines, expected 2"
field() { grep -o " $2=[^ ]*" <<< "$1" | cut -d= -f2; }
half_ns=$((TIMEOUT_MS * 500000))
timeout_ns=$((TIMEOUT_MS * 1000000))
for line in "${starved[@]}"; do
    [[ $(field "$line" call) == tori_iteration_done ]] ||
        fail "starved does not name the call: $line"
done
gap=$(field "${starved[0]}" gap_ns)
((gap > half_ns && gap >= SHORT_MS * 1000000)) ||
    fail "the short starvation's gap $gap is not over half the timeout"
gap=$(field "${starved[1]}" gap_ns)
((gap > timeout_ns && gap >= LONG_MS * 1000000)) ||
    fail "the long starvation's gap $gap is not over the timeout"

# The expulsion follows the long starvation and counts the node's pause.
expelled=$(grep -n 'event=expelled' "$log" | head -n 1)
[[ -n $expelled ]] || fail "node $GREEDY was not expelled after starving past the timeout"
((${expelled%%:*} > ${starved[1]%%:*})) ||
    fail "node $GREEDY: expelled before it starved past the timeout: $expelled"
pauses=$(field "$expelled" pauses)
[[ -n $pauses ]] && ((pauses >= 1)) || fail "the expelled line does not count the pause: $expelled"
grep -q "event=failure-detected .* who=$GREEDY " "${LOGS[@]}" ||
    fail "no survivor detected node $GREEDY"
echo "node.starved: all checks passed"

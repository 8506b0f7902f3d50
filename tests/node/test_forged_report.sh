#!/bin/bash
# Issue 20: one forged frame on a cable of a running host torus changes no
# view when frames carry the job key.  tori-emu runs a ring of 4 host nodes
# (root 0) with forge_relay sitting on node 1's cable to node 0: it relays
# the real traffic and, once the view is up, sends node 0 one frame from the
# cable's real address, spoofed as node 1's, with the session's link fields
# and next sequence number, carrying a NODE_FAILURE report that names live
# node 2.  With the run's key (the default) node 0 refuses it for its tag
# (a bad-tag event) and every node keeps the first view of all 4.  Without
# a key (FORGED_REPORT_AUTH=off: the frames of the code before issue 20)
# the forged report is taken as node 1's and this test fails.
# usage: test_forged_report.sh EMU NODE FORGE_RELAY OUT
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
NODE=$2
RELAY=$3
OUT=$4
AUTH=${FORGED_REPORT_AUTH:-on}
rm -rf "$OUT" && mkdir -p "$OUT"
# A slow detector (1 s): a loaded machine must not make a false
# detection look like the forgery's work; a forged report acts at once.
FORGE_NODE="$NODE" FORGE_RANK=1 FORGE_LINK=x- FORGE_VICTIM=2 FORGE_ROOT=0 FORGE_AT_MS=1500 \
    "$EMU" --dims 4 --board host --node-binary "$RELAY" --auth "$AUTH" --duration 3s \
    --heartbeat-ms 100 --detect-timeout-ms 1000 \
    --out "$OUT/run" > "$OUT/run.txt" 2>&1 ||
    { tail -n 20 "$OUT/run.txt" >&2; fail "tori-emu failed"; }
LOGS=("$OUT"/run/node*.log)
[[ ${#LOGS[@]} == 4 ]] || fail "expected 4 node logs, found ${#LOGS[@]}"
# The forgery went out (else this test proves nothing) ...
check_contains "$OUT/run/node1.log" "forge_relay: forged node_failure(2) from 1 to 0"
# ... and changed nothing: no detection, no expulsion, one view per node,
# of all 4.
for log in "${LOGS[@]}"; do
    if grep -E "event=(failure-detected|expelled|partitioned)" "$log" >&2; then
        fail "$(basename "$log"): a forged report cost a live node its place"
    fi
    views=$(grep -c "event=view " "$log")
    [[ $views == 1 ]] || { grep "event=view " "$log" >&2; fail "$(basename "$log"): $views views"; }
    check_contains "$log" "live=4"
done
# Node 0 said it refused a frame for its tag.
grep -qE "event=bad-tag .*frames=1$" "$OUT/run/node0.log" ||
    { cat "$OUT/run/node0.log" >&2; fail "node 0 told no bad-tag frames=1"; }
echo "forged report refused (auth $AUTH)"

#!/bin/bash
# --ping on a real torus: every node pings every other node, the launcher
# exits 0 only if every ordered pair answered.  Needs the nodes' `ping all`
# console command (net/torus).
# usage: test_emu_ping.sh EMU BOARD DIMS OUT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
BOARD=$2
DIMS=$3
OUT=$4
IMAGE=${5:-}
[[ "$BOARD" == host ]] || skip_without_image "$IMAGE"
rm -rf "$OUT"
"$EMU" --dims "$DIMS" --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --ping \
    --ping-timeout 30s --out "$OUT/run" > "$OUT.out" 2> "$OUT.err"
status=$?
cat "$OUT.out" "$OUT.err"
check_status 0 "$status" "--ping on a $DIMS $BOARD torus"
nodes=$(( ${DIMS//x/*} ))
pairs=$(( nodes * (nodes - 1) ))
check_contains "$OUT.out" "ping: $pairs of $pairs ordered pairs answered"
wait_for_no_processes "$OUT/run/" 5
echo "emu.ping ($DIMS $BOARD): all checks passed"

#!/bin/bash
# The host board's --pcap DIR:FILE (issue 17): a bad value stops the node
# before it starts, with one panic line naming the value and what is
# wrong, and no capture is left half-made.
# usage: test_host_pcap_options.sh PERSONALITY_TOOL NODE OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
NODE=$2
OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT"
"$TOOL" --node 0 --dims 2x2x2 -o "$OUT/node0.personality" > /dev/null || fail "personality"
# refuses "VALUE" "REASON": tori-node --pcap VALUE panics with REASON.
refuses() {
    timeout 10 "$NODE" --personality "$OUT/node0.personality" --pcap "$1" \
        < /dev/null > "$OUT/console.log" 2>&1
    local status=$?
    [[ $status != 0 && $status != 124 ]] || fail "--pcap $1: exit $status, expected a refusal"
    [[ $(grep -c 'event=panic' "$OUT/console.log") == 1 ]] || fail "--pcap $1: not one panic line"
    check_contains "$OUT/console.log" "reason=\"udp: $2"
}
refuses "x+:$OUT/x.pcap" "--pcap names a direction with no --link"
refuses "q+:$OUT/x.pcap" "--pcap q+:$OUT/x.pcap: unknown direction"
refuses "x+" "--pcap x+: expected --pcap DIR:FILE"
refuses "x+:$OUT/missing/x.pcap" "--pcap x+:$OUT/missing/x.pcap: No such file or directory"
echo "node.host_pcap_options: all checks passed"

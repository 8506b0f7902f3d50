#!/bin/bash
# tori-sim --pcap (issue 17): a crash on a 2x2x2 torus leaves one capture
# per node; tshark with the shipped dissector finds in the root's the
# failed_node messages naming node 6 to each of its children, stamped in
# virtual time and with the view epoch in the frame header as the nodes
# put it, and each child's failure_ack of that epoch; every frame of every
# capture decodes as tori with a good CRC-32 (the simulator's frames are
# keyless: no wire, no key).  With --app, the comm frames
# decode too: node 1 opens sessions and sends DATA whose envelope names
# its own rank.
# usage: test_sim_pcap.sh SIM DISSECTOR OUT
source "$(dirname "$0")/../shell_lib.sh"
SIM=$1
LUA=$2
OUT=$3
command -v tshark >/dev/null || fail "tshark is not installed (./tori test installs it)"
rm -rf "$OUT"
mkdir -p "$OUT"
"$SIM" --dims 2x2x2 --inject 'kill 6 at 1ms' --pcap "$OUT/pcap" > "$OUT/stdout.txt" 2>&1
check_status 0 $? "tori-sim --pcap"
for node in 0 1 2 3 4 5 6 7; do
    [[ -s "$OUT/pcap/node$node.pcap" ]] || fail "no capture for node $node"
done

decode() {
    local file=$1 filter=$2; shift 2
    local fields=()
    for field; do fields+=(-e "$field"); done
    tshark -X lua_script:"$LUA" -r "$file" -Y "$filter" -T fields "${fields[@]}" 2>"$OUT/tshark.err" \
        || { cat "$OUT/tshark.err" >&2; fail "tshark could not read $file"; }
}
for capture in "$OUT"/pcap/node*.pcap; do
    frames=$(decode "$capture" frame frame.number | wc -l)
    good=$(decode "$capture" 'tori.checksum.status == 1' frame.number | wc -l)
    [[ "$good" == "$frames" ]] || fail "$capture: $good of $frames frames are tori frames with a good CRC-32"
done
# Node 6 died at 1 ms: it sent and received nothing after.
late=$(decode "$OUT/pcap/node6.pcap" 'frame.time_epoch > 0.001' frame.number | wc -l)
[[ "$late" == 0 ]] || fail "node 6 has $late frames after its death at 1 ms"

decode "$OUT/pcap/node0.pcap" 'tori.mship.type == 7' tori.src tori.dst tori.mship.failed \
    tori.epoch tori.mship.epoch frame.time_epoch > "$OUT/changes.txt"
decode "$OUT/pcap/node0.pcap" 'tori.mship.type == 12' tori.src tori.dst tori.mship.ack_epoch \
    > "$OUT/acks.txt"
echo "--- the root's changes (src dst failed frame-epoch message-epoch time):"
cat "$OUT/changes.txt"
echo "--- acks (src dst acked-epoch):"
cat "$OUT/acks.txt"
# The root's children in a radix-4 tree of 8 nodes: 1 2 3 4.
[[ $(cut -f2 "$OUT/changes.txt" | sort -n | paste -sd' ') == "1 2 3 4" ]] \
    || fail "the root's failed_node messages do not go to 1 2 3 4 once each"
awk -F'\t' '$1 != 0 || $3 != 6 || $4 != $5 || $6 < 0.001 || $6 > 0.01 { exit 1 }' \
    "$OUT/changes.txt" \
    || fail "a change is not the root's naming 6, in its view's epoch, between 1 and 10 ms"
epoch=$(cut -f5 "$OUT/changes.txt" | sort -u)
[[ $(cut -f1 "$OUT/acks.txt" | sort -n | paste -sd' ') == "1 2 3 4" ]] \
    || fail "the root does not get one failure_ack from each child"
awk -F'\t' -v epoch="$epoch" '$2 != 0 || $3 != epoch { exit 1 }' "$OUT/acks.txt" \
    || fail "an ack is not to the root, of epoch $epoch"

"$SIM" --dims 2x2x2 --app allreduce --iterations 2 --pcap "$OUT/app" > "$OUT/app.txt" 2>&1
check_status 0 $? "tori-sim --app allreduce --pcap"
decode "$OUT/app/node1.pcap" 'tori.comm.kind && tori.src == 1' tori.comm.kind \
    | sort -un | paste -sd' ' > "$OUT/kinds.txt"
[[ " $(cat "$OUT/kinds.txt") " == *" 1 "*" 4 "* ]] \
    || fail "node 1 sent comm kinds $(cat "$OUT/kinds.txt"), expected open (1) and data (4) among them"
decode "$OUT/app/node1.pcap" 'tori.comm.kind == 4 && tori.src == 1 && tori.comm.flags & 1' \
    tori.comm.source_rank tori.checksum.status | sort -u > "$OUT/envelopes.txt"
[[ "$(cat "$OUT/envelopes.txt")" == $'1\t1' ]] \
    || fail "node 1's first fragments: envelopes (rank, crc) $(paste -sd' ' "$OUT/envelopes.txt"), expected 1 1"
echo "sim.pcap: all checks passed"

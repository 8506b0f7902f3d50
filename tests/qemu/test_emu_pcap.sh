#!/bin/bash
# Captures of a crash run (issue 17): `tori-emu --pcap` on a 2x2x2 torus
# with node 6 killed leaves one pcap per link end, and tshark with the
# shipped dissector (tools/wireshark/tori.lua) finds in the root's captures
# its change messages naming node 6 and its children's acks of that view.
# Every frame decodes as tori, stamped inside the run's wall-clock window
# (QEMU's filter-dump stamps with its start second, hence a second of slack
# on each side), with its check: a SipHash tag (the run's job key, which the
# dissector never sees; QEMU nodes get the key without a job block too).
# usage: test_emu_pcap.sh EMU BOARD OUT DISSECTOR [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
BOARD=$2
OUT=$3
LUA=$4
IMAGE=${5:-}
[[ "$BOARD" == host ]] || skip_without_image "$IMAGE"
command -v tshark >/dev/null || fail "tshark is not installed (./tori test installs it)"
rm -rf "$OUT"
mkdir -p "$OUT"
CHECK=2 CHECK_NAME="SipHash tag"
started=$(date +%s)
"$EMU" --dims 2x2x2 --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --heartbeat-ms 20 \
    --detect-timeout-ms 200 --inject 'kill 6 at 1s' --pcap --json --out "$OUT/run" \
    > "$OUT/stdout.jsonl" 2> "$OUT/stderr.txt"
status=$?
ended=$(date +%s)
cat "$OUT/stderr.txt"
check_status 0 "$status" "crash run with --pcap on a 2x2x2 $BOARD torus"

# A 2x2x2 torus: 8 nodes with 6 link ends each.
count=$(ls "$OUT/run/pcap" | grep -c '^node[0-7]-[xyz][+-]\.pcap$')
[[ "$count" == 48 ]] || fail "$count captures in $OUT/run/pcap, expected 48"

# decode FILE FILTER FIELD...: one line per matching frame, fields tab-separated.
decode() {
    local file=$1 filter=$2; shift 2
    local fields=()
    for field; do fields+=(-e "$field"); done
    tshark -X lua_script:"$LUA" -r "$file" -Y "$filter" -T fields "${fields[@]}" 2>"$OUT/tshark.err" \
        || { cat "$OUT/tshark.err" >&2; fail "tshark could not read $file"; }
}

: > "$OUT/changes.txt"
: > "$OUT/acks.txt"
for capture in "$OUT"/run/pcap/node0-*.pcap; do
    frames=$(decode "$capture" frame frame.number | wc -l)
    tori=$(decode "$capture" "tori.checksum.status == $CHECK" frame.number | wc -l)
    [[ "$frames" -gt 0 && "$tori" == "$frames" ]] \
        || fail "$capture: $tori of $frames frames are tori frames with a $CHECK_NAME"
    decode "$capture" frame frame.time_epoch | cut -d. -f1 | sort -n | sed -n '1p;$p' \
        > "$OUT/times.txt"
    first=$(head -1 "$OUT/times.txt")
    last=$(tail -1 "$OUT/times.txt")
    (( first >= started - 1 && last <= ended + 1 )) \
        || fail "$capture: frames stamped $first..$last, outside the run ($started..$ended)"
    # Heartbeats (1) go as link datagrams (flag 0x04), nothing else does.
    beats=$(decode "$capture" 'tori.mship.type == 1' frame.number | wc -l)
    datagrams=$(decode "$capture" 'tori.flags.datagram == 1' frame.number | wc -l)
    [[ "$beats" -gt 0 && "$datagrams" == "$beats" ]] \
        || fail "$capture: $datagrams datagram frames, $beats heartbeats (expected the same, > 0)"
    # FAILED_NODE (7) from the root 0, FAILURE_ACK (12) to it.
    decode "$capture" 'tori.mship.type == 7' tori.src tori.dst tori.mship.sender \
        tori.mship.failed tori.mship.epoch >> "$OUT/changes.txt"
    decode "$capture" 'tori.mship.type == 12 && tori.dst == 0' tori.src tori.mship.ack_epoch \
        >> "$OUT/acks.txt"
done
echo "--- the root's change messages (src dst sender failed epoch):"
sort -u "$OUT/changes.txt"
echo "--- acks to the root (src acked-epoch):"
sort -u "$OUT/acks.txt"
[[ -s "$OUT/changes.txt" ]] || fail "no failed_node message in node 0's captures"
# Each names node 6, comes from the root, and mints one epoch.
awk -F'\t' '$1 != 0 || $3 != 0 || $4 != 6 { exit 1 }' "$OUT/changes.txt" \
    || fail "a failed_node message in node 0's captures is not the root's naming node 6"
epochs=$(cut -f5 "$OUT/changes.txt" | sort -u)
[[ $(echo "$epochs" | wc -l) == 1 ]] || fail "the root's changes carry several epochs: $epochs"
# Its children ack that very view.
[[ -s "$OUT/acks.txt" ]] || fail "no failure_ack to node 0 in its captures"
awk -F'\t' -v epoch="$epochs" '$2 != epoch { exit 1 }' "$OUT/acks.txt" \
    || fail "an ack to the root acks another epoch than $epochs"
wait_for_no_processes "$OUT/run/" 5
echo "emu.pcap ($BOARD): all checks passed"

#!/bin/bash
# Issue 17's done-when, through the README's driver: `./tori emu` runs a
# crash on a 2x2x2 QEMU torus with --pcap --plot and leaves captures that
# tshark decodes with the shipped dissector (node 0's: tori frames only,
# the root's failed_node naming node 6), a timeline PNG, and a report that
# headless Chromium renders without a script error, its fault table naming
# the crash.
# usage: test_emu_see.sh SOURCE_DIR OUT
source "$(dirname "$0")/../shell_lib.sh"
SRC=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT"
CHROMIUM=$(command -v chromium) || fail "chromium is not installed (./tori test installs it)"
[[ -f $SRC/build/qemu-virt/node.elf ]] || { echo "SKIP: no qemu-virt image"; exit 77; }
TORI_NO_INSTALL=1 timeout 240 "$SRC/tori" emu --dims 2x2x2 --inject 'kill 6 at 1s' --pcap --plot \
    --out "$OUT/run" > "$OUT/run.txt" 2>&1
check_status 0 $? "./tori emu --pcap --plot crash run (see $OUT/run.txt)"

LUA=$SRC/tools/wireshark/tori.lua
for capture in "$OUT"/run/pcap/node0-*.pcap; do
    frames=$(tshark -X lua_script:"$LUA" -r "$capture" -T fields -e frame.number | wc -l)
    tori=$(tshark -X lua_script:"$LUA" -r "$capture" -Y tori -T fields -e frame.number | wc -l)
    [[ $frames -gt 0 && $tori == "$frames" ]] || fail "$capture: $tori of $frames frames decoded as tori"
    tshark -X lua_script:"$LUA" -r "$capture" -Y 'tori.mship.type == 7' -T fields \
        -e tori.mship.failed >> "$OUT/failed.txt"
done
grep -qx 6 "$OUT/failed.txt" || fail "no failed_node naming node 6 in node 0's captures"

[[ $(head -c 8 "$OUT/run/timeline.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
    fail "no timeline PNG at $OUT/run/timeline.png"

timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$OUT/profile" --dump-dom "file://$OUT/run/report.html" > "$OUT/dom.html" \
    2> "$OUT/chromium.err"
check_status 0 $? "chromium --dump-dom (see $OUT/chromium.err)"
body=$(grep -o '<body[^>]*>' "$OUT/dom.html")
[[ $body == *'data-report="ok"'* && $body != *data-script-error* ]] ||
    fail "the report's scripts did not run cleanly: $body"
grep -q '<table' "$OUT/dom.html" && grep -q 'kill 6' "$OUT/dom.html" ||
    fail "the rendered report shows no fault table naming 'kill 6'"
echo "emu.see_qemu_2x2x2: captures decoded, timeline drawn, report rendered"

#!/bin/bash
# tori-personality: a round trip through --dump, each bad option's one-line
# error (exit 2), and --dump of corrupt files naming the field.
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT"

"$TOOL" --node 5 --dims 2x2x2 --mesh x,z --radix 8 --tree torus --members 4 \
    --incarnation 7 --heartbeat-ms 20 --detect-timeout-ms 90 --link-rto-ms 6 \
    --link-retries 3 --partition every-side --timeout-ceiling 9 -o "$OUT/p5.bin" \
    || fail "writing p5"
[[ $(stat -c %s "$OUT/p5.bin") == 64 ]] || fail "p5.bin is not 64 bytes"
"$TOOL" --dump "$OUT/p5.bin" > "$OUT/p5.txt" || fail "dumping p5"
for line in node_id=5 boot_incarnation=7 role=spare dims=2x2x2 mesh=x,z coords=1,0,1 \
    nodes=8 member_count=4 tree_radix=8 tree_layout=torus heartbeat_ms=20 \
    detect_timeout_ms=90 link_rto_ms=6 link_retries=3 partition=every-side timeout_ceiling=9; do
    grep -qx -- "$line" "$OUT/p5.txt" || { cat "$OUT/p5.txt"; fail "dump lacks $line"; }
done
"$TOOL" --node 13 --dims 4x2x2 -o "$OUT/p13.bin" && "$TOOL" --dump "$OUT/p13.bin" > "$OUT/p13.txt"
grep -qx "coords=1,1,1" "$OUT/p13.txt" || fail "rank 13 of 4x2x2 is not at 1,1,1"
grep -qx "role=compute" "$OUT/p13.txt" || fail "default role is not compute"
grep -qx "mesh=none" "$OUT/p13.txt" || fail "default mesh is not none"
# The detector's ceiling (byte 21): 1 and 64 go through, the default is 4.
grep -qx "timeout_ceiling=4" "$OUT/p13.txt" || fail "default timeout ceiling is not 4"
for ceiling in 1 64; do
    "$TOOL" --node 1 --dims 2x2 --timeout-ceiling $ceiling -o "$OUT/c$ceiling.bin" &&
        "$TOOL" --dump "$OUT/c$ceiling.bin" > "$OUT/c$ceiling.txt" || fail "ceiling $ceiling"
    grep -qx "timeout_ceiling=$ceiling" "$OUT/c$ceiling.txt" || fail "ceiling $ceiling lost"
    [[ $(od -An -tu1 -j21 -N1 "$OUT/c$ceiling.bin" | tr -d ' ') == "$ceiling" ]] ||
        fail "ceiling $ceiling is not byte 21"
done

# bad option -> the message part expected on its one line
bad() { check_refused "$OUT" tori-personality "$TOOL" "$@"; }
bad "--node 8 is out of range (expected 0..7" --node 8 --dims 2x2x2 -o "$OUT/x"
bad "--node '-1' is invalid (expected a rank" --node -1 --dims 2x2x2 -o "$OUT/x"
bad "--node is missing" --dims 2x2x2 -o "$OUT/x"
bad "--dims is missing" --node 1 -o "$OUT/x"
bad "--dims '2x0x2' is invalid" --node 1 --dims 2x0x2 -o "$OUT/x"
bad "--dims '2x2x2x2x2x2x2' is invalid" --node 1 --dims 2x2x2x2x2x2x2 -o "$OUT/x"
bad "--dims 'abc' is invalid" --node 1 --dims abc -o "$OUT/x"
bad "--mesh 'z' is not a mesh spec" --node 1 --dims 2x2 --mesh z -o "$OUT/x"
bad "--radix '3' is invalid (expected a power of two in 2..16)" --node 1 --dims 2x2 --radix 3 -o "$OUT/x"
bad "--radix '32' is invalid" --node 1 --dims 2x2 --radix 32 -o "$OUT/x"
bad "--tree 'ring' is invalid (expected radix, torus or box)" --node 1 --dims 2x2 --tree ring -o "$OUT/x"
bad "--members 5 is out of range (expected 1..4" --node 1 --dims 2x2 --members 5 -o "$OUT/x"
bad "--members '0' is invalid" --node 1 --dims 2x2 --members 0 -o "$OUT/x"
bad "--incarnation 'x' is invalid" --node 1 --dims 2x2 --incarnation x -o "$OUT/x"
bad "--heartbeat-ms '0' is invalid" --node 1 --dims 2x2 --heartbeat-ms 0 -o "$OUT/x"
bad "--detect-timeout-ms 60 is not above the heartbeat of 260 ms" --node 1 --dims 2x2 --heartbeat-ms 260 -o "$OUT/x"
bad "--link-rto-ms '70000' is invalid" --node 1 --dims 2x2 --link-rto-ms 70000 -o "$OUT/x"
bad "--link-retries '256' is invalid" --node 1 --dims 2x2 --link-retries 256 -o "$OUT/x"
bad "--partition 'all' is invalid (expected primary or every-side)" --node 1 --dims 2x2 --partition all -o "$OUT/x"
bad "--timeout-ceiling '0' is invalid (expected a whole number in 1..64" --node 1 --dims 2x2 --timeout-ceiling 0 -o "$OUT/x"
bad "--timeout-ceiling '65' is invalid (expected a whole number in 1..64" --node 1 --dims 2x2 --timeout-ceiling 65 -o "$OUT/x"
bad "-o is missing" --node 1 --dims 2x2
bad "unknown option '--colour'" --node 1 --dims 2x2 --colour blue -o "$OUT/x"
bad "--radix needs a value" --node 1 --dims 2x2 --radix
bad "--node is given twice" --node 1 --node 2 --dims 2x2 -o "$OUT/x"
[[ ! -e "$OUT/x" ]] || fail "a refused command wrote its output"

# --dump of corrupt files: exit 1 and one line naming the field.
dump_error() {
    local file=$1 expected=$2
    "$TOOL" --dump "$file" > "$OUT/out.txt" 2> "$OUT/err.txt"
    check_status 1 $? "--dump $file"
    [[ $(wc -l < "$OUT/err.txt") == 1 ]] || { cat "$OUT/err.txt"; fail "not one line"; }
    check_contains "$OUT/err.txt" "$expected"
}
python3 - "$OUT" <<'PY'
import sys, zlib
out = sys.argv[1]
block = bytearray(open(out + "/p5.bin", "rb").read())
def write(name, data, fix_crc=True):
    data = bytearray(data)
    if fix_crc:
        data[60:64] = zlib.crc32(bytes(data[:60])).to_bytes(4, "little")
    open(out + "/" + name, "wb").write(data)
flipped = bytearray(block); flipped[18] ^= 0x40
write("crc.bin", flipped, fix_crc=False)
radix = bytearray(block); radix[18] = 3
write("radix.bin", radix)
magic = bytearray(block); magic[0:4] = b"ROTI"
write("magic.bin", magic)
version = bytearray(block); version[4] = 2
write("version.bin", version)
coord = bytearray(block); coord[36] = 5
write("coord.bin", coord)
for value in (0, 65):
    ceiling = bytearray(block); ceiling[21] = value
    write("ceiling%d.bin" % value, ceiling)
write("short.bin", block[:40], fix_crc=False)
write("long.bin", block + b"\0", fix_crc=False)
PY
dump_error "$OUT/crc.bin" "personality: crc32="
dump_error "$OUT/radix.bin" "personality: tree_radix=3 is invalid, expected a power of two in 2..16"
dump_error "$OUT/magic.bin" "personality: magic="
dump_error "$OUT/version.bin" "personality: version=2 is invalid, expected 1"
dump_error "$OUT/coord.bin" "personality: coord=5 is invalid"
dump_error "$OUT/ceiling0.bin" "personality: timeout_ceiling=0 is invalid, expected 1..64"
dump_error "$OUT/ceiling65.bin" "personality: timeout_ceiling=65 is invalid, expected 1..64"
dump_error "$OUT/short.bin" "personality: length=40 is invalid, expected 64 bytes"
dump_error "$OUT/long.bin" "personality: length=65 is invalid, expected exactly 64 bytes"
dump_error "$OUT/nonexistent.bin" "tori-personality: cannot read '$OUT/nonexistent.bin': No such file or directory"
dump_error "$OUT" "tori-personality: cannot read '$OUT': Is a directory"

# --help shows the defaults the tool writes, which are the node's constants
# (kernel/personality.h), never numbers of its own.
"$TOOL" --help > "$OUT/help.txt" || fail "--help"
"$TOOL" --node 0 --dims 2 -o "$OUT/defaults.bin" && "$TOOL" --dump "$OUT/defaults.bin" \
    > "$OUT/defaults.txt" || fail "writing the defaults"
HEADER="$(dirname "$0")/../../kernel/personality.h"
for pair in heartbeat-ms:heartbeat_ms:HEARTBEAT_MS detect-timeout-ms:detect_timeout_ms:DETECT_TIMEOUT_MS \
    link-rto-ms:link_rto_ms:LINK_RTO_MS link-retries:link_retries:LINK_RETRIES \
    timeout-ceiling:timeout_ceiling:TIMEOUT_CEILING; do
    IFS=: read -r option field constant <<< "$pair"
    value=$(sed -n "s/^#define PERSONALITY_DEFAULT_$constant \([0-9]*\)\$/\1/p" "$HEADER")
    [[ -n "$value" ]] || fail "no PERSONALITY_DEFAULT_$constant in $HEADER"
    grep -qx "$field=$value" "$OUT/defaults.txt" || fail "the written $field is not $value"
    grep -E -- "^  --$option .*\($value\)\$" "$OUT/help.txt" > /dev/null \
        || { cat "$OUT/help.txt"; fail "--help does not give $value as the default of --$option"; }
done
echo "emu.personality_tool: all checks passed"

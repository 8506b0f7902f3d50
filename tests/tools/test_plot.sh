#!/bin/bash
# tools/plot/tori-plot (issue 17): a fault run's timeline from its
# faults.jsonl (or a simulator run's sim.jsonl): every fault, detection,
# view install and stable mark of the records at its node and time, a PNG
# (or SVG) drawn by gnuplot; bad input is one line and exit 2, with
# nothing drawn.
# usage: test_plot.sh TORI_PLOT OUT
source "$(dirname "$0")/../shell_lib.sh"
PLOT=$1
OUT=$2
rm -rf "$OUT" && mkdir -p "$OUT/run"
command -v gnuplot >/dev/null || fail "gnuplot is not installed (./tori test installs gnuplot-nox)"
# One kill as tori-emu records it (trimmed to the fields the plot reads),
# and the summary record it ignores.
cat > "$OUT/run/faults.jsonl" <<'JSON'
{"record":"fault","index":1,"action":"kill","node":6,"text":"kill 6 at 1s","injected_ns":1000382789,"detection":{"at_ns":1188482207,"detector":4},"stable":{"at_ns":1192537780,"root":0},"views":[{"node":0,"at_ns":1188454365},{"node":1,"at_ns":1189491140},{"node":7,"at_ns":1191540644}]}
{"record":"summary","faults":1}
JSON
python3 "$PLOT" "$OUT/run/faults.jsonl" > "$OUT/plot.out" 2>&1
check_status 0 $? "tori-plot on a kill's records"
[[ $(head -c 8 "$OUT/run/timeline.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] \
    || fail "timeline.png is not a PNG"
# The marks, block by block: fault, detection, views, stable (t_ms node).
expected='1000.383 6|1188.482 4|1188.454 0|1189.491 1|1191.541 7|1192.538 0'
got=$(grep -v '^#' "$OUT/run/timeline.dat" | grep . | cut -d' ' -f1,2 | paste -sd'|')
[[ "$got" == "$expected" ]] || fail "marks '$got', expected '$expected'"
python3 "$PLOT" "$OUT/run/faults.jsonl" -o "$OUT/run/t.svg" > /dev/null 2>&1
check_status 0 $? "tori-plot -o t.svg"
check_contains "$OUT/run/t.svg" "<svg"

# A simulator run's records (tori-sim --out, trimmed): the same marks in
# virtual time, each fault labelled by what it was.
mkdir -p "$OUT/sim"
cat > "$OUT/sim/sim.jsonl" <<'JSON'
{"event":"config","dims":"4x4x4","nodes":64,"radix":4,"tree":"radix","hop_ns":4600,"cp_ns":2000,"heartbeat_ns":0,"seed":1,"app":"none"}
{"t_ns":1000000,"node":5,"event":"inject","what":"kill"}
{"t_ns":1310800,"node":6,"event":"failure-detected","who":5,"detect_ns":300800,"cause":"probe","truth":"down"}
{"t_ns":1321000,"node":63,"event":"view","epoch":"0000001000000000","root":0,"live":63,"digest":"00000000000000aa"}
{"t_ns":1419400,"node":0,"event":"stable","epoch":"0000001000000000","live":63,"ts_ns":104000}
{"event":"summary","t_ns":35080000,"ok":true}
JSON
python3 "$PLOT" "$OUT/sim/sim.jsonl" > /dev/null 2>&1
check_status 0 $? "tori-plot on a simulator run's records"
expected='1.000 5 "kill 5"|1.311 6 "kill 5"|1.321 63 "kill 5"|1.419 0 "kill 5"'
got=$(grep -v '^#' "$OUT/sim/timeline.dat" | grep -v NaN | grep . | paste -sd'|')
[[ "$got" == "$expected" ]] || fail "simulator marks '$got', expected '$expected'"
check_contains "$OUT/sim/timeline.gp" "virtual time"

# refuses "WHAT" ARGS...: exit 2, one "tori-plot: ..." line naming WHAT.
refuses() {
    local what=$1; shift
    rm -f "$OUT/bad/timeline.png"
    python3 "$PLOT" "$@" > "$OUT/refused.out" 2> "$OUT/refused.err"
    check_status 2 $? "tori-plot $*"
    [[ $(wc -l < "$OUT/refused.err") == 1 ]] || fail "tori-plot $*: not one line on stderr"
    check_contains "$OUT/refused.err" "tori-plot: $what"
    [[ ! -e "$OUT/bad/timeline.png" ]] || fail "tori-plot $*: drew a picture anyway"
}
mkdir -p "$OUT/bad"
echo '{"record":"summary","faults":0}' > "$OUT/bad/nofaults.jsonl"
echo 'kill 6 at 1s' > "$OUT/bad/text.jsonl"
echo '{"record":"fault","node":"six","injected_ns":1}' > "$OUT/bad/field.jsonl"
refuses "cannot read '$OUT/bad/missing.jsonl'" "$OUT/bad/missing.jsonl"
refuses "'$OUT/bad/nofaults.jsonl' holds no fault record" "$OUT/bad/nofaults.jsonl"
refuses "$OUT/bad/text.jsonl:1: not a JSON line" "$OUT/bad/text.jsonl"
refuses "$OUT/bad/field.jsonl:1: node is not a number" "$OUT/bad/field.jsonl"
refuses "-o 'x.jpg' is neither .png nor .svg" "$OUT/run/faults.jsonl" -o x.jpg
refuses "no records file" 
refuses "unknown option '--png'" --png
echo "tools.plot: all checks passed"

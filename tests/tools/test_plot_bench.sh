#!/bin/bash
# tools/plot/tori-plot on the benchmarks' records (issue 17): a short
# tori-bench-membership run with --json, and recorded faults, comm and
# recovery records (tests/tools/plot_records, trimmed from real runs); each
# gives its plots as a PNG and an SVG that parses, with the data the
# records hold, and drawing again from a copy of the records gives the same
# data files.  A layout the plots do not know gets its own series.
# usage: test_plot_bench.sh TORI_PLOT TORI_BENCH_MEMBERSHIP RECORDS OUT
source "$(dirname "$0")/../shell_lib.sh"
PLOT=$1
BENCH=$2
RECORDS=$3
OUT=$4
rm -rf "$OUT" && mkdir -p "$OUT"
command -v gnuplot >/dev/null || fail "gnuplot is not installed (./tori test installs gnuplot-nox)"

# draw_and_redraw KIND FILE NAME...: draws FILE's plots in OUT/KIND, then
# from a copy in OUT/KIND-again (with what lies beside it), and compares the data.
draw_and_redraw() {
    local kind=$1 file=$2; shift 2
    local dir
    for dir in "$OUT/$kind" "$OUT/$kind-again"; do
        python3 "$PLOT" "$dir/$file" > "$OUT/$kind.out" 2>&1
        check_status 0 $? "tori-plot $dir/$file"
        check_plot_files "$dir" "$@"
        [[ $dir == "$OUT/$kind-again" ]] || cp -r "$dir" "$OUT/$kind-again"
    done
    local name
    for name in "$@"; do
        cmp -s "$OUT/$kind/$name.dat" "$OUT/$kind-again/$name.dat" \
            || fail "$kind: $name.dat differs when drawn again from the records"
    done
}

# bench membership: a short run (N up to 256), its records, its plots.
mkdir -p "$OUT/membership"
"$BENCH" --max-nodes 256 --iterations 1000 --json "$OUT/membership/membership.jsonl" \
    > "$OUT/membership.txt" 2>&1
check_status 0 $? "tori-bench-membership --json"
draw_and_redraw membership membership.jsonl membership-ts-radix2 membership-ts-radix4 \
    membership-ts-radix8 membership-ocp membership-messages
# T_s versus N beside the three models, per layout: the records' figures.
python3 - "$OUT/membership" <<'PY' || fail "membership plots' data"
import json, sys
d = sys.argv[1]
ts = [r for r in map(json.loads, open(f"{d}/membership.jsonl")) if r["record"] == "bench-membership-ts"]
layouts = ["radix", "torus", "box"]
assert {r["nodes"] for r in ts} == {64, 256} and {r["layout"] for r in ts} == set(layouts), ts
blocks = [b for b in open(f"{d}/membership-ts-radix4.dat").read().split("\n\n\n") if b.strip()]
assert len(blocks) == len(layouts), len(blocks)
for layout in layouts:
    block = [b for b in blocks if f"# {layout}: N T_s base distance path (us)" in b]
    assert len(block) == 1, (layout, blocks)
    block = block[0]
    rows = [list(map(float, l.split())) for l in block.splitlines() if l and not l.startswith("#")]
    want = sorted([r["nodes"], r["ts_ns"] / 1e3, r["base_ns"] / 1e3, r["distance_ns"] / 1e3,
                   r["path_ns"] / 1e3] for r in ts if r["layout"] == layout and r["radix"] == 4)
    assert rows == want, (rows, want)
script = open(f"{d}/membership-ocp.gp").read()
assert "log(x) / log(2)" in script, "no log fit drawn"
PY
# A third layout in the records is drawn beside the others, by its name.
mkdir -p "$OUT/layouts"
sed 's/"layout":"torus"/"layout":"third"/' "$OUT/membership/membership.jsonl" \
    | grep '"third"' >> "$OUT/layouts/membership.jsonl"
cat "$OUT/membership/membership.jsonl" >> "$OUT/layouts/membership.jsonl"
python3 "$PLOT" "$OUT/layouts/membership.jsonl" > "$OUT/layouts.out" 2>&1
check_status 0 $? "tori-plot with a third layout"
check_contains "$OUT/layouts/membership-ts-radix4.dat" "# third: N T_s"
check_contains "$OUT/layouts/membership-ts-radix4.gp" "third: T_s"
check_contains "$OUT/layouts/membership-messages.gp" "third, radix 8"

# bench faults: detection, T_s and the model per crash, read from each
# configuration's faults.jsonl beside bench-faults.jsonl.
cp -r "$RECORDS/bench-faults" "$OUT/faults"
draw_and_redraw faults bench-faults.jsonl faults
expected='"qemu-2x2x2@20-200 #1 (7)" 195.693 12.5993 4.06266|"host-2x2x2@20-200 #1 (7)" 186.761 0.678762 0.338165'
got=$(grep -v '^#' "$OUT/faults/faults.dat" | grep . | paste -sd'|')
[[ "$got" == "$expected" ]] || fail "faults.dat '$got', expected '$expected'"

# bench comm: round trip and bandwidth versus size, the raw link beside them.
mkdir -p "$OUT/comm" && cp "$RECORDS/comm.json" "$OUT/comm/"
draw_and_redraw comm comm.json comm-latency comm-bandwidth
check_contains "$OUT/comm/comm-latency.dat" "# host pair: bytes rtt_us MB/s"
check_contains "$OUT/comm/comm-latency.dat" "65536 3033.9 43.2025"
check_contains "$OUT/comm/comm-latency.gp" "24.156 with lines"   # the raw frame round trip
check_contains "$OUT/comm/comm-bandwidth.gp" "71.9713 with lines" # the raw flood

# bench recovery: the phases per configuration and mode, stacked.
mkdir -p "$OUT/recovery" && cp "$RECORDS/recovery.json" "$OUT/recovery/"
draw_and_redraw recovery recovery.json recovery
# detection, then each phase's own length: view - detection, noticed - view, ...
check_contains "$OUT/recovery/recovery.dat" '"qemu-2x2x2 shrink" 55.7317 33.7109 52.3265 24.1601 16.8358 115.25'
check_contains "$OUT/recovery/recovery.gp" "rowstacked"

# Bad records: one line, exit 2, nothing drawn.
refuses() {
    local what=$1; shift
    python3 "$PLOT" "$@" > "$OUT/refused.out" 2> "$OUT/refused.err"
    check_status 2 $? "tori-plot $*"
    [[ $(wc -l < "$OUT/refused.err") == 1 ]] || fail "tori-plot $*: not one line on stderr"
    check_contains "$OUT/refused.err" "tori-plot: $what"
    [[ -z $(ls "$OUT/bad" | grep -v '\.json') ]] || fail "tori-plot $*: drew anyway"
}
mkdir -p "$OUT/bad"
echo '{"record":"bench-membership-ts","dims":"4x4x4","nodes":64,"layout":"radix","radix":4}' \
    > "$OUT/bad/short.jsonl"
echo '{"benchmark":"recovery","rows":[{"config":"qemu-2x2x2","mode":"shrink"}]}' > "$OUT/bad/rows.json"
echo '{"record":"bench-faults","config":"gone"}' > "$OUT/bad/faults.jsonl"
head -1 "$RECORDS/bench-faults/qemu-2x2x2@20-200/faults.jsonl" > "$OUT/bad/mixed.jsonl"
echo '{"benchmark":"comm","runs":[]}' >> "$OUT/bad/mixed.jsonl"
refuses "$OUT/bad/short.jsonl:1: no ts_ns" "$OUT/bad/short.jsonl"
refuses "$OUT/bad/rows.json:1: no detection_ns" "$OUT/bad/rows.json"
refuses "cannot read '$OUT/bad/gone/faults.jsonl'" "$OUT/bad/faults.jsonl"
refuses "'$OUT/bad/mixed.jsonl' mixes records of comm and timeline" "$OUT/bad/mixed.jsonl"
refuses "-o 'x.png': a benchmark's plots go to a directory" "$RECORDS/comm.json" -o x.png
echo "tools.plot_bench: all checks passed"

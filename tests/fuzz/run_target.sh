#!/bin/bash
# One run of one fuzz target: run_target.sh FUZZ_BUILD SOURCE TARGET (--seconds N | --runs N)
#   --seconds N   a long run (./tori fuzz): its corpus grows in
#                 FUZZ_BUILD/corpus/TARGET and is kept between runs
#   --runs N      a short, reproducible run (the CTest tests fuzz.TARGET):
#                 N inputs from seed 1, a fresh scratch corpus each time
# The seeds (SOURCE/tests/fuzz/corpus/TARGET) are read, never written; a
# crash leaves its input in FUZZ_BUILD/crashes/TARGET/ and exits non-zero.
set -euo pipefail
[[ $# -eq 5 ]] || { echo "usage: run_target.sh FUZZ_BUILD SOURCE TARGET --seconds|--runs N" >&2; exit 2; }
build=$1 source=$2 target=$3 mode=$4 count=$5
harness="$build/tests/fuzz/fuzz-$target"
seeds="$source/tests/fuzz/corpus/$target"
[[ -x "$harness" ]] || { echo "run_target: $harness is not built (./tori build fuzz)" >&2; exit 2; }
[[ -d "$seeds" ]] || { echo "run_target: no seed corpus $seeds" >&2; exit 2; }
crashes="$build/crashes/$target"
mkdir -p "$crashes"
case "$mode" in
    --seconds)
        corpus="$build/corpus/$target"
        mkdir -p "$corpus"
        limits=(-max_total_time="$count") ;;
    --runs)
        corpus="$build/short/$target"
        rm -rf "$corpus"
        mkdir -p "$corpus"
        limits=(-runs="$count" -seed=1) ;;
    *) echo "run_target: unknown mode $mode" >&2; exit 2 ;;
esac
# -rss_limit_mb: a node's tables are sized for 65,536 nodes.
exec "$harness" "${limits[@]}" -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "$corpus" "$seeds"

#!/bin/bash
# The shipped applications on a torus through the launcher's --job: every
# node reports app-result ok=true with one digest per application; with
# BOARDS "host qemu", the stencil digest is the same on both boards (fixed
# point: ARM and x86 compute the same bits).
# usage: test_job_apps.sh TOOL EMU NODE IMAGE OUT DIMS DURATION APPS BOARD...
#   APPS: allreduce, stencil or allreduce,stencil
#   BOARD: host, qemu, or @DIR: the digests an earlier run of this script
#   wrote in DIR/digests.txt (one "BOARD DIMS APP DIGEST" line per run),
#   compared as if they had been run here.
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
EMU=$2
NODE=$3
IMAGE=$4
OUT=$5
DIMS=$6
DURATION=$7
IFS=, read -r -a APPS <<< "$8"
shift 8
NODES=1
for size in ${DIMS//x/ }; do NODES=$((NODES * size)); done
rm -rf "$OUT" && mkdir -p "$OUT"
for board in "$@"; do
    if [[ $board == qemu && ! -f "$IMAGE" ]]; then
        echo "SKIP: node image $IMAGE is not built (run ./tori build qemu-virt)"
        exit 77
    fi
done
for board in "$@"; do
    if [[ $board == @* && ! -f "${board#@}/digests.txt" ]]; then
        fail "no digests of an earlier run in ${board#@}/digests.txt"
    fi
done
"$TOOL" --job-out "$OUT/allreduce.bin" --app allreduce --iterations 100 --progress 50 \
    --app-args 5 || fail "allreduce job"
"$TOOL" --job-out "$OUT/stencil.bin" --app stencil --iterations 60 --progress 20 \
    --app-args 4,5 || fail "stencil job"

# run BOARD APP: the run's one digest on stdout
run() {
    local board=$1 app=$2 dir="$OUT/$1-$2"
    # A slower detector: eight emulators on a loaded machine must not take
    # a pause for a death (failure semantics come with the next issue).
    "$EMU" --dims "$DIMS" --board "$board" --image "$IMAGE" --node-binary "$NODE" \
        --detect-timeout-ms 200 --job "$OUT/$app.bin" --duration "$DURATION" --out "$dir" \
        > "$dir.txt" 2>&1 ||
        { tail -n 20 "$dir.txt" >&2; fail "$board $app: tori-emu failed"; }
    local results
    results=$(cat "$dir"/node*.log | grep 'event=app-result')
    [[ $(grep -c . <<< "$results") == "$NODES" ]] ||
        { echo "$results" >&2; fail "$board $app: not $NODES results"; }
    [[ $(grep -c " app=$app ok=true " <<< "$results") == "$NODES" ]] ||
        { echo "$results" >&2; fail "$board $app: not every node ok=true"; }
    grep -q 'event=app-error\|event=starved\|event=panic' "$dir"/node*.log &&
        fail "$board $app: an app-error, starved or panic line"
    for ((rank = 0; rank < NODES; rank++)); do
        grep -q " rank=$rank " <<< "$results" || fail "$board $app: no result of rank $rank"
    done
    local digests
    digests=$(grep -o ' digest=0x[0-9a-f]*' <<< "$results" | sort -u)
    [[ $(grep -c . <<< "$digests") == 1 ]] || { echo "$results" >&2; fail "$board $app: digests differ"; }
    [[ $(cat "$dir"/node0.log | grep -c 'event=app-progress') == 3 ||
       $(cat "$dir"/node0.log | grep -c 'event=app-progress') == 2 ]] ||
        fail "$board $app: app-progress not every interval"
    echo "${digests# digest=}"
}
declare -A app_digests
: > "$OUT/digests.txt"
for board in "$@"; do
    for app in "${APPS[@]}"; do
        if [[ $board == @* ]]; then
            line=$(grep -m1 " $DIMS $app " "${board#@}/digests.txt") ||
                fail "no $DIMS $app digest in ${board#@}/digests.txt"
            read -r earlier _ _ digest <<< "$line"
            echo "$earlier $DIMS $app (${board#@}): digest $digest"
        else
            digest=$(run "$board" "$app") || exit 1
            echo "$board $DIMS $app: every node ok=true, digest $digest"
            echo "$board $DIMS $app $digest" >> "$OUT/digests.txt"
        fi
        app_digests[$app]+="$digest "
    done
done
for app in "${APPS[@]}"; do
    [[ $(tr ' ' '\n' <<< "${app_digests[$app]}" | grep . | sort -u | wc -l) == 1 ]] ||
        fail "$app digests differ between boards: ${app_digests[$app]}"
done
echo "node.job_apps: all checks passed"

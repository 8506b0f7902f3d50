#!/bin/bash
# tori-sim --app and tori-emu --app read one job the same way (--iterations,
# --app-args: tools/job_options.c), and the simulator's model applications
# compute with the nodes' kernels: the same job on a 2x2x2 torus gives the
# simulator the digest every host node reports.
# usage: test_sim_emu_digest.sh SIM EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
SIM=$1
EMU=$2
OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT"
# The CI detector timings of the other host job tests: a false suspicion on a
# loaded machine would end the job (until issue 14).
ci=(--heartbeat-ms 20 --detect-timeout-ms 200)

# compare NAME JOB...: the job's digest from both tools must be the same.
compare() {
    local name=$1; shift
    "$SIM" --dims 2x2x2 "$@" --quiet > "$OUT/$name.sim.txt" 2>&1
    check_status 0 $? "tori-sim $*"
    local sim
    sim=$(grep -o '^app name=[^ ]* ranks=8 finished=8 ok=8 digests=1 digest=[0-9a-f]*' \
              "$OUT/$name.sim.txt" | grep -o '[0-9a-f]*$')
    [[ -n $sim ]] || { cat "$OUT/$name.sim.txt" >&2; fail "$name: no ok app line from tori-sim"; }
    "$EMU" --dims 2x2x2 --board host "$@" "${ci[@]}" --out "$OUT/$name.emu" \
        > "$OUT/$name.emu.txt" 2>&1
    check_status 0 $? "tori-emu --board host $*"
    local emu
    emu=$(grep -o 'every node ok=true, digest 0x[0-9a-f]*' "$OUT/$name.emu.txt" |
              grep -o '0x.*')
    [[ -n $emu ]] || { tail -n 20 "$OUT/$name.emu.txt" >&2; fail "$name: no verdict from tori-emu"; }
    [[ 0x$sim == "$emu" ]] || fail "$name: tori-sim digest 0x$sim, the nodes' $emu"
    echo "$name: tori-sim and 8 host nodes agree on digest $emu"
}

compare stencil --app stencil --iterations 60 --app-args 3,5
compare allreduce --app allreduce --iterations 20 --app-args 7
echo "sim.app_emu_digest: all checks passed"

#!/bin/bash
# The long fault campaign (./tori test --long): 100 random faults (kill,
# hang, link cut, reboot; each undone after a while) on a 4x4x4 QEMU torus,
# every one followed by an agreement check over all live nodes; zero
# failures allowed, and the torus ends whole.  Runs only with
# TORI_LONG_TESTS=1 (about half an hour on 2 cores).
# usage: test_emu_long.sh EMU OUT IMAGE
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
IMAGE=$3
if [[ "${TORI_LONG_TESTS:-0}" != 1 ]]; then
    echo "SKIP: the long fault campaign runs only with TORI_LONG_TESTS=1 (./tori test --long)"
    exit 77
fi
skip_without_image "$IMAGE"
rm -rf "$OUT"
mkdir -p "$OUT"
# 64 QEMU nodes share 2 cores: slower links and detector (see the report
# of ./tori bench faults), or a busy machine looks like dead nodes.
"$EMU" --dims 4x4x4 --board qemu --image "$IMAGE" \
    --heartbeat-ms 100 --detect-timeout-ms 1000 --link-rto-ms 25 --link-retries 10 \
    --chaos "seed=${TORI_LONG_SEED:-2006},rate=1,kinds=kill,hang,link,reboot,count=100,hold=4s" \
    --json --out "$OUT/run" > "$OUT/stdout.jsonl" 2> "$OUT/stderr.txt"
status=$?
tail -n 140 "$OUT/stderr.txt"
check_status 0 "$status" "100 random faults on a 4x4x4 QEMU torus"
python3 "$(dirname "$0")/check_faults.py" campaign qemu "$OUT/run" 64 \
    || fail "the campaign's membership was not as expected (see $OUT/run)"
wait_for_no_processes "$OUT/run/" 10
echo "emu.long: all checks passed"

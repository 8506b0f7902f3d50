#!/bin/bash
# No node process outlives its launcher: start a 2x2x2 torus, wait until it
# is ready, then SIGKILL (or SIGINT, SIGTERM) the launcher and check that no
# process with the run's directory in its command line survives.
# usage: test_no_orphans.sh EMU BOARD SIGNAL OUT [IMAGE]
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
BOARD=$2
SIGNAL=$3
OUT=$4
IMAGE=${5:-}
[[ "$BOARD" == host || "$BOARD" == mpi ]] || skip_without_image "$IMAGE"
rm -rf "$OUT" && mkdir -p "$OUT"
RUN="$OUT/run-$SIGNAL"

"$EMU" --dims 2x2x2 --board "$BOARD" ${IMAGE:+--image "$IMAGE"} --duration 2m \
    --out "$RUN" > "$OUT/stdout" 2> "$OUT/stderr" &
launcher=$!
trap 'kill -KILL $launcher 2>/dev/null' EXIT
wait_for_line "$OUT/stdout" "all 8 nodes ready" 60 "$launcher"

if [[ "$BOARD" == mpi ]]; then
    # The ranks name the run's key file; mpiexec its working directory.
    children=$(for p in $(processes_with "$RUN/"); do
                   tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null; echo; done |
               grep -c '^[^ ]*tori-node-mpi ')
else
    children=$(processes_with "$RUN/" | grep -vx "$launcher" | wc -l)
fi
[[ "$children" == 8 ]] || fail "expected 8 node processes of $RUN, found $children"

kill "-$SIGNAL" "$launcher"
wait "$launcher"
status=$?
case "$SIGNAL" in
    KILL) check_status 137 "$status" "launcher after SIGKILL" ;;
    INT)  check_status 130 "$status" "launcher after SIGINT"
          check_contains "$OUT/stderr" "stopped by signal 2" ;;
    TERM) check_status 143 "$status" "launcher after SIGTERM" ;;
esac
wait_for_no_processes "$RUN/" 10
trap - EXIT
echo "emu.no_orphans ($BOARD, SIG$SIGNAL): all checks passed"

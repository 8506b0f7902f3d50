#!/bin/bash
# --mpi-kill kill (issue 18): a rank gets a real SIGKILL.  Whether MPICH's
# mpiexec keeps the survivors is a race in its process manager, so the run
# either passes its agreement checks or fails with every line about a rank
# or the world ending naming mpiexec and suggesting --mpi-kill stop; it
# never hangs and leaves no process behind.
# usage: test_emu_mpi_real_kill.sh EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"
timeout -s KILL 100 "$EMU" --board mpi --dims 2x2x2 --mpi-kill kill --heartbeat-ms 20 \
    --detect-timeout-ms 200 --inject 'kill 3 at 2s' --out "$OUT/run" \
    > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
status=$?
grep -v '^ *[+|]' "$OUT/stdout.txt"
cat "$OUT/stderr.txt"
[[ $status != 137 ]] || fail "the run hung (killed after 100 s)"
if [[ $status == 0 ]]; then
    python3 - "$OUT/run/faults.jsonl" <<'PY' || fail "the survivors' checks: see above"
import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
checks = [r["agreement"] for r in records if r["record"] == "fault" and "agreement" in r]
assert checks, "no agreement check"
for a in checks:
    assert a["result"] == "pass" and a["live"] == 7 and a["members"] == 7, a
print(f"the survivors kept their view: {len(checks)} check(s) passed, 7 live")
PY
else
    # Every line about a rank or the world ending names mpiexec.
    ended=$(grep -E 'closed its console|never connected|mpiexec ended' "$OUT/stderr.txt")
    [[ -n "$ended" ]] || fail "exit $status without a line about the ranks or mpiexec ending"
    while IFS= read -r line; do
        [[ "$line" == *mpiexec* && "$line" == *"--mpi-kill stop"* ]] \
            || fail "an error line does not name mpiexec and --mpi-kill stop: $line"
    done <<< "$ended"
    echo "mpiexec took the survivors down; every line says so"
fi
wait_for_no_processes "$OUT/run/" 10
echo "emu.mpi_real_kill: passed (exit $status)"

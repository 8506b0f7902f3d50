#!/bin/bash
# The job block end to end on the host board: tori-personality writes it
# (--job-out) and dumps it (--dump-job); bad options get one line and exit
# 2; a corrupt file is named by field; tori-node refuses an unreadable
# --job before starting and halts on a bad block naming the field, exactly
# like a bad personality; a good block shows on the ready line.
# The launcher's --job refuses a bad block in one line before any node starts.
# usage: test_job_block.sh PERSONALITY_TOOL NODE EMU OUT
source "$(dirname "$0")/../shell_lib.sh"
TOOL=$1
NODE=$2
EMU=$3
OUT=$4
rm -rf "$OUT" && mkdir -p "$OUT"

"$TOOL" --job-out "$OUT/job.bin" --app stencil --iterations 300 --progress 50 \
    --app-args 6,-2,0,9000000000 || fail "writing the job block"
[[ $(stat -c %s "$OUT/job.bin") == 128 ]] || fail "job.bin is not 128 bytes"
"$TOOL" --dump-job "$OUT/job.bin" > "$OUT/job.txt" || fail "dumping the job block"
for line in app=stencil iterations=300 progress_interval=50 app_args=6,-2,0,9000000000 \
    comm_mode=abort message_mode=nop checkpoint_interval=0 seed_count=0 job_key=none; do
    grep -qx -- "$line" "$OUT/job.txt" || { cat "$OUT/job.txt"; fail "dump lacks $line"; }
done
"$TOOL" --job-out "$OUT/default.bin" --app allreduce && "$TOOL" --dump-job "$OUT/default.bin" \
    > "$OUT/default.txt" || fail "default job"
grep -qx "iterations=1" "$OUT/default.txt" || fail "default iterations is not 1"
"$TOOL" --job-out "$OUT/modes.bin" --app allreduce --comm-mode rebuild --msg-mode cont &&
    "$TOOL" --dump-job "$OUT/modes.bin" > "$OUT/modes.txt" || fail "a job with modes"
grep -qx "comm_mode=rebuild" "$OUT/modes.txt" && grep -qx "message_mode=cont" "$OUT/modes.txt" ||
    { cat "$OUT/modes.txt"; fail "the modes are not in the block"; }
grep -qx "recovery_policy=none" "$OUT/modes.txt" || fail "a job without a policy"
# Issue 15: the recovery policy, binary in the block, printed back as text.
"$TOOL" --job-out "$OUT/policy.bin" --app allreduce \
    --recovery 'physical=migrate; process=restart; repeated(3 in 60s)=promote' &&
    "$TOOL" --dump-job "$OUT/policy.bin" > "$OUT/policy.txt" || fail "a job with a policy"
grep -qx "recovery_policy=process=restart; physical=migrate; network=ignore; repeated(3 in 60s)=promote; quarantine=6" \
    "$OUT/policy.txt" || { cat "$OUT/policy.txt"; fail "the policy is not in the block"; }

bad() { check_refused "$OUT" tori-personality "$TOOL" "$@"; }
bad "--app is missing" --job-out "$OUT/x"
bad "--app 'fft' is invalid (expected allreduce, stencil" --job-out "$OUT/x" --app fft
bad "--iterations '0' is invalid" --job-out "$OUT/x" --app allreduce --iterations 0
bad "--progress '11' is invalid (expected 0 (none) or a count up to --iterations)" \
    --job-out "$OUT/x" --app allreduce --iterations 10 --progress 11
bad "--app-args '1,,2' is invalid" --job-out "$OUT/x" --app allreduce --app-args 1,,2
bad "--app-args '1,2,3,4,5' is invalid (expected at most 4" --job-out "$OUT/x" --app allreduce \
    --app-args 1,2,3,4,5
bad "--app-args '99999999999999999999' is invalid" --job-out "$OUT/x" --app allreduce \
    --app-args 99999999999999999999
bad "--comm-mode 'respawn' is invalid (expected abort, blank, shrink or rebuild)" \
    --job-out "$OUT/x" --app allreduce --comm-mode respawn
bad "--msg-mode 'CONT' is invalid (expected nop or cont)" --job-out "$OUT/x" --app allreduce \
    --msg-mode CONT
bad "unknown option '--node'" --job-out "$OUT/x" --app allreduce --node 3
bad "--recovery 'physical=reboot' is invalid: 'physical=reboot' names no action" \
    --job-out "$OUT/x" --app allreduce --recovery 'physical=reboot'
bad "--dump-job takes no other options" --dump-job "$OUT/job.bin" --app allreduce
[[ ! -e "$OUT/x" ]] || fail "a refused command wrote its output"

# Corrupt files: exit 1, one line naming the field.
dump_error() {
    "$TOOL" --dump-job "$1" > "$OUT/out.txt" 2> "$OUT/err.txt"
    check_status 1 $? "--dump-job $1"
    [[ $(wc -l < "$OUT/err.txt") == 1 ]] || { cat "$OUT/err.txt"; fail "not one line: $1"; }
    check_contains "$OUT/err.txt" "$2"
}
head -c 100 "$OUT/job.bin" > "$OUT/short.bin"
dump_error "$OUT/short.bin" "job: length=100 is invalid, expected 128 bytes"
cp "$OUT/job.bin" "$OUT/flip.bin"
printf '\x07' | dd of="$OUT/flip.bin" bs=1 seek=12 conv=notrunc status=none
dump_error "$OUT/flip.bin" "job: crc32=0x"
"$TOOL" --node 0 --dims 2 -o "$OUT/p.bin"
dump_error "$OUT/p.bin" "job: length=64 is invalid"
dump_error "$OUT/none.bin" "cannot read '$OUT/none.bin'"

# The node: an unreadable --job is refused before anything starts.
"$TOOL" --node 0 --dims 1 -o "$OUT/node0.personality" || fail "personality"
echo halt | timeout 20 "$NODE" --personality "$OUT/node0.personality" --job "$OUT/none.bin" \
    > "$OUT/missing.log" 2>&1
check_status 2 $? "tori-node --job missing"
[[ $(wc -l < "$OUT/missing.log") == 1 ]] || { cat "$OUT/missing.log"; fail "not one line"; }
check_contains "$OUT/missing.log" "tori-node: cannot open job '$OUT/none.bin'"
grep -q "event=boot" "$OUT/missing.log" && fail "the node booted with an unreadable job"

# A bad block halts the node, naming the field, like a bad personality.
echo halt | timeout 20 "$NODE" --personality "$OUT/node0.personality" --job "$OUT/flip.bin" \
    > "$OUT/bad.log" 2>&1
[[ $? == 124 ]] && fail "the node did not halt on a bad job block"
check_contains "$OUT/bad.log" 'event=panic'
check_contains "$OUT/bad.log" 'reason="job: crc32=0x'
grep -q "event=ready" "$OUT/bad.log" && fail "a node with a bad job block got ready"

# A good block: the ready line names the application; no block: none.
echo halt | timeout 20 "$NODE" --personality "$OUT/node0.personality" --job "$OUT/job.bin" \
    > "$OUT/good.log" 2>&1
check_contains "$OUT/good.log" 'event=ready'
grep 'event=ready' "$OUT/good.log" | grep -q ' app=stencil' || fail "ready lacks app=stencil"
echo halt | timeout 20 "$NODE" --personality "$OUT/node0.personality" > "$OUT/nojob.log" 2>&1
grep 'event=ready' "$OUT/nojob.log" | grep -q ' app=none' || fail "ready lacks app=none"

# The launcher: a bad --job stops the run in one line, no node started.
for job in flip none; do
    "$EMU" --dims 2 --board host --node-binary "$NODE" --job "$OUT/$job.bin" --duration 1s \
        --out "$OUT/emu-$job" > "$OUT/emu.txt" 2> "$OUT/emu-err.txt"
    check_status 2 $? "tori-emu --job $job.bin"
    [[ $(wc -l < "$OUT/emu-err.txt") == 1 ]] || { cat "$OUT/emu-err.txt"; fail "not one line"; }
    [[ ! -e "$OUT/emu-$job/node0.log" ]] || fail "a node started with --job $job.bin"
done
check_contains "$OUT/emu-err.txt" "tori-emu: --job '$OUT/none.bin' cannot be read"
"$EMU" --dims 2 --board host --node-binary "$NODE" --job "$OUT/flip.bin" --duration 1s \
    --out "$OUT/emu-flip" 2> "$OUT/emu-err.txt"
check_contains "$OUT/emu-err.txt" "tori-emu: --job '$OUT/flip.bin': job: crc32=0x"
echo "node.job_block: all checks passed"

#!/bin/bash
# The launcher's handling of nodes that misbehave, with a fake node program:
# a node that never becomes ready (named, with its log tail), a panic, a
# node that exits, malformed event lines counted, and the --ping driver
# (all pairs answered; a failed pair named).
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
FAKE=$2
OUT=$3
rm -rf "$OUT" && mkdir -p "$OUT"
export FAKE_NODES=8

run() {  # run NAME MODE [options]: output in $OUT/NAME.{out,err}, status in $status
    local name=$1 mode=$2; shift 2
    FAKE_NODE_MODE=$mode "$EMU" --dims 2x2x2 --board host --node-binary "$FAKE" \
        --out "$OUT/$name" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
    status=$?
    wait_for_no_processes "$OUT/$name/" 5
}

run ok ok --duration 0
check_status 0 "$status" "fake nodes that behave"
check_contains "$OUT/ok.out" "all 8 nodes ready"
check_contains "$OUT/ok.out" "8 malformed event lines ignored"
check_contains "$OUT/ok.out" "events.jsonl in $OUT/ok"

# A relative --node-binary names a file from here, not from <out> where the nodes run.
(cd "$(dirname "$FAKE")" && FAKE_NODE_MODE=ok "$EMU" --dims 2x2x2 --board host \
    --node-binary "./$(basename "$FAKE")" --out "$OUT/relative" --duration 0 \
    > "$OUT/relative.out" 2> "$OUT/relative.err")
check_status 0 $? "a relative --node-binary"
check_contains "$OUT/relative.out" "all 8 nodes ready"
wait_for_no_processes "$OUT/relative/" 5

run never never-ready:6 --ready-timeout 2s --duration 0
check_status 1 "$status" "a node that is never ready"
check_contains "$OUT/never.err" "tori-emu: node 6 (host, pid "
check_contains "$OUT/never.err" ") is not ready after 2.0 s"
check_contains "$OUT/never.err" "last lines of $OUT/never/node6.log"
check_contains "$OUT/never.err" "| fake node 6: stuck in boot"

run panic panic:3 --duration 5s
check_status 1 "$status" "a node that panics"
check_contains "$OUT/panic.err" "tori-emu: node 3 (host) panicked: fake failure in 3"
check_contains "$OUT/panic.out" "1 node panicked"

run exit exit:5 --duration 5s
check_status 1 "$status" "a node that exits"
check_contains "$OUT/exit.err" "tori-emu: node 5 (host, pid "
check_contains "$OUT/exit.err" ") exited with status 3"
check_contains "$OUT/exit.err" "| fake node 5: leaving"

run ping ok --ping --json
check_status 0 "$status" "fake --ping"
check_contains "$OUT/ping.err" "ping: 56 of 56 ordered pairs answered"
check_contains "$OUT/ping.err" "     1      24"
check_contains "$OUT/ping.err" "     2      24"
check_contains "$OUT/ping.err" "     3       8"
check_jsonl "$OUT/ping.out"
[[ $(grep -c '"event":"ping"' "$OUT/ping.out") == 56 ]] || fail "not 56 ping events in JSON"
cmp -s "$OUT/ping.out" "$OUT/ping/events.jsonl" || fail "stdout JSON differs from events.jsonl"

# --json with stdout and stderr in one file (`> run.log 2>&1`): each stream
# writes whole lines, so every line is a JSON event or one of the launcher's
# human lines, never pieces of both (a block-buffered stdout cut JSON lines).
FAKE_NODES=64 FAKE_NODE_MODE=ok "$EMU" --dims 4x4x4 --board host --node-binary "$FAKE" \
    --ping --json --verbose --out "$OUT/merged" > "$OUT/merged.log" 2>&1
check_status 0 $? "fake --ping --json on 64 nodes, both streams in one file"
wait_for_no_processes "$OUT/merged/" 5
python3 - "$OUT/merged.log" <<'PY' || fail "$OUT/merged.log has broken lines"
import json, re, sys
human = re.compile(
    r"tori-emu: .+"                           # the launcher's own lines
    r"| +[+-]\d+\.\d{3}s  node \d+ +\S+( +\S+=(\S*|\"[^\"]*\"))*"  # an event shown
    r"|  hops +pairs +rtt median +p90 +max"   # the ping table
    r"|  +\d+ +\d+ +[\d.]+ ms +[\d.]+ ms +[\d.]+ ms"
    r"|  \d+ answers took a path longer or shorter than the shortest hop distance")
events = 0
with open(sys.argv[1]) as f:
    for number, text in enumerate(f, 1):
        assert text.endswith("\n"), f"line {number} is cut: {text!r}"
        text = text[:-1]
        if text.startswith("{"):
            event = json.loads(text)  # raises on a cut or mixed line
            assert isinstance(event["event"], str) and isinstance(event["node"], int), number
            events += 1
        else:
            assert human.fullmatch(text), f"line {number} is not a known human line: {text!r}"
assert events >= 64 * 63, f"only {events} JSON lines"
PY

run pingfail ping-fail:4 --ping --ping-parallel 3
check_status 1 "$status" "fake --ping with a failed pair"
check_contains "$OUT/pingfail.err" "ping failed: 1 of 56 pairs did not answer: 4->0 (failed)"
echo "emu.fake_nodes: all checks passed"

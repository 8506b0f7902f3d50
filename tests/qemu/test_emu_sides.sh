#!/bin/bash
# The agreement check follows the torus's sides (issue 18, emu_sides.h) on
# host tori:
#   cut_off             2x2x2, kill 3, 0, 6: node 2 (neighbours 0, 3, 6) is a
#                       side of its own; the majority side {1,4,5,7} holds
#                       the view, node 2 answers but is no member;
#   cut_off_every_side  the same under --partition every-side: node 2 holds
#                       a view of itself, the others theirs;
#   no_majority         a ring of six cut into pairs: no view anywhere, then
#                       healed: one re-formed view of all six.
# The launcher before emu_sides expected node 2 (or all six) in the view.
# usage: test_emu_sides.sh EMU SCENARIO OUT
source "$(dirname "$0")/../shell_lib.sh"
EMU=$1
SCENARIO=$2
OUT=$3
TIMING=(--heartbeat-ms 20 --detect-timeout-ms 200)
case "$SCENARIO" in
    cut_off)            ARGS=(--dims 2x2x2 --inject 'kill 3 at 1s; kill 0 at 2s; kill 6 at 3s'
                              --duration 5s) ;;
    cut_off_every_side) ARGS=(--dims 2x2x2 --partition every-side
                              --inject 'kill 3 at 1s; kill 0 at 2s; kill 6 at 3s' "${TIMING[@]}") ;;
    no_majority)        ARGS=(--dims 6 "${TIMING[@]}" --inject
                              'link 1 2 off at 1s for 4s; link 3 4 off at 1s for 4s; link 5 0 off at 1s for 4s') ;;
    *) fail "unknown scenario $SCENARIO" ;;
esac
rm -rf "$OUT"
mkdir -p "$OUT"
"$EMU" --board host "${ARGS[@]}" --out "$OUT/run" > "$OUT/stdout.txt" 2> "$OUT/stderr.txt"
status=$?
grep -v '^ *+' "$OUT/stdout.txt"
cat "$OUT/stderr.txt"
check_status 0 "$status" "$SCENARIO"
python3 - "$SCENARIO" "$OUT/run" <<'PY' || fail "$SCENARIO: see above"
import json, sys
scenario, run = sys.argv[1], sys.argv[2]
records = [json.loads(l) for l in open(f"{run}/faults.jsonl") if l.strip()]
events = [json.loads(l) for l in open(f"{run}/events.jsonl") if l.strip()]
checks = {}
for r in records:
    if r["record"] == "fault" and "agreement" in r:
        checks[r["group"]] = r["agreement"]
def named(name):
    return [e for e in events if e.get("event") == name]
for group, a in sorted(checks.items()):
    assert a["result"] == "pass", f"check #{group}: {a['reason']}"
    assert a["settled"], f"check #{group} never settled"
if scenario.startswith("cut_off"):
    # Crashes close together (a loaded machine) may share a check.
    last = checks[max(checks)]
    assert last["sides"] == 2 and last["asked"] == 5 and last["answered"] == 5, last
    views = {}
    for e in named("view"):
        views[e["node"]] = e
    if scenario == "cut_off":
        assert last["expect"] == "one-view", last
        assert last["members"] == 4 and last["live"] == 4 and last["root"] == 1, last
        assert any(e["node"] == 2 for e in named("partitioned")), "node 2 never partitioned"
    else:
        assert last["expect"] == "each-side", last
        assert last["members"] == 5 and last["live"] == 4 and last["root"] == 1, last
        assert views[2]["root"] == 2 and views[2]["live"] == 1, f"node 2's view: {views[2]}"
else:
    assert sorted(checks) == [1, 2], f"checks {sorted(checks)}"
    cut, healed = checks[1], checks[2]
    assert cut["expect"] == "no-view" and cut["sides"] == 3, cut
    assert cut["members"] == 0 and cut["asked"] == 6 and cut["answered"] == 6, cut
    assert len({e["node"] for e in named("partitioned")}) == 6, "not every node partitioned"
    assert healed["expect"] == "one-view" and healed["sides"] == 1, healed
    assert healed["members"] == 6 and healed["live"] == 6 and healed["root"] == 0, healed
    reformed = named("reformed")
    assert len(reformed) >= 1, "no view was re-formed"
print(f"emu.sides ({scenario}): {len(checks)} checks as the sides say")
PY
wait_for_no_processes "$OUT/run/" 5
echo "emu.sides_host_$SCENARIO: passed"

#!/bin/bash
# tori-bench-recovery end to end at a tiny size: one run of each mode on a
# host 2x2x2 torus (two crashes, a row each) and in the simulator at 4x4x4 (a sim-4x4x4 row per
# mode, beside a crash-free run's allreduce), the overhead runs (pingpong
# under abort,nop and shrink,cont, and on the node without the failure
# semantics when build/host-ft-off has it) on host 2x2x2, and the
# in-process loopback with and without them; the table has a row per
# mode with a verdict, recovery.json (also on stdout with --json) holds
# every phase (drawn by tori-plot), and the phases come in order.  Times
# are never asserted.
# Bad options give one clear line and exit 2.
# usage: test_bench_recovery.sh BENCH OUT
source "$(dirname "$0")/../shell_lib.sh"
BENCH=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"

bad() { check_refused "$OUT" tori-bench-recovery "$BENCH" "$@"; }
bad "--runs '10' is invalid (expected a whole number in 1..9)" --runs 10
bad "--iterations '3' is invalid" --iterations 3
bad "--modes: 'abort' is not one of shrink, blank, rebuild" --modes abort
bad "--failures '3' is invalid (expected a whole number in 1..2)" --failures 3
bad "--iterations '6' is invalid (expected at least 7 with --failures 2)" --iterations 6
bad "--configs: host-2x2x1 has 4 nodes (expected at least 8 for --failures 2" \
    --configs host-2x2x1
bad "--configs: 'arm-2x2x2': unknown board 'arm'" --configs arm-2x2x2
bad "--configs: host-3 has 3 nodes (expected more than 3" --configs host-3
bad "--sim-dims '2' is invalid" --sim-dims 2
bad "--sim-dims '2x2' is invalid (expected a torus of at least 5 nodes, or 'none')" \
    --sim-dims 4x4x4,2x2
bad "--sim-dims '8,8,8,8,8' is invalid (expected at most 4 tori)" --sim-dims 8,8,8,8,8
bad "--overhead-dims '1' is invalid (expected a torus of at least 2 nodes, or 'none')" \
    --overhead-dims 1
bad "unknown option '--nonsense'" --nonsense

# Timeouts of 20/200 ms: a loaded machine must not expel a node mid-run.
"$BENCH" --configs host-2x2x2@20/200 --runs 1 --iterations 40 --sim-dims 4x4x4 --json \
    --out "$OUT/run" > "$OUT/run.json" 2> "$OUT/run.err"
status=$?
cat "$OUT/run.err"
check_status 0 "$status" "tori-bench-recovery"
wait_for_no_processes "$OUT/run/" 5
check_contains "$OUT/run.err" "record written to $OUT/run/recovery.json"
cmp -s "$OUT/run.json" "$OUT/run/recovery.json" || fail "recovery.json differs from stdout"
python3 - "$OUT/run.json" "$OUT/run.err" <<'PY' || fail "the results are not as expected"
import json, re, sys
record = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read()
modes = ["shrink", "blank", "rebuild"]
# Two crashes a host run (kill 3, then kill 5): a row for each; the
# simulator's one.
assert record["failures"] == 2, record
assert [(r["config"], r["mode"], r["failure"]) for r in record["rows"]] == \
    [("host-2x2x2@20-200", m, f) for m in modes for f in (1, 2)] + \
    [("sim-4x4x4", m, 1) for m in modes], record
host = [r for r in record["rows"] if r["config"].startswith("host")]
sims = [r for r in record["rows"] if r["config"].startswith("sim")]
for r in host:
    assert r["config"] == "host-2x2x2@20-200" and r["runs"] == 1 and r["complete"] == 1, r
    # Stamps are the launcher's poll wakes (lines read in one wake share one).
    # The root's stable line waits for every node's acknowledgement of the
    # view, while the ranks act on it as they install it: on a host torus
    # the failure can reach the application before that line.
    assert 0 < r["detection_ns"] <= r["view_ns"], r
    assert r["detection_ns"] <= r["noticed_ns"] <= r["rebuilt_ns"] <= r["resumed_ns"], r
    assert r["ts_ns"] > 0 and r["allreduce_ns"] > 0, r
    target = 1.2 * (r["detection_ns"] + r["ts_ns"]) + r["allreduce_ns"]
    assert abs(r["target_ns"] - target) <= 2 and r["met"] == (r["resumed_ns"] <= r["target_ns"])
    verdict = "met" if r["met"] else "missed"
    crash = "1st" if r["failure"] == 1 else "2nd"
    assert re.search(r"^host-2x2x2@20-200 +%s +%s .* %s$" % (r["mode"], crash, verdict), table,
                     re.M), table
# Each crash of a run has its own detection and view (the second's view
# is another epoch's, so its times are its own, not the first's again).
for m in modes:
    first, second = [r for r in host if r["mode"] == m]
    assert first["failure"] == 1 and second["failure"] == 2, (first, second)
    assert first["allreduce_ns"] == second["allreduce_ns"], (first, second)
    assert (first["detection_ns"], first["view_ns"]) != (second["detection_ns"], second["view_ns"])
[sim] = record["sim"]
assert sim["dims"] == "4x4x4" and sim["ranks"] == 64 and sim["allreduce_ns"] > 0, sim
assert sim["plain_tree_messages"] == 126 and sim["messages_per_allreduce"] >= 126, sim
# Virtual time is exact: every phase strictly after the one before, the
# crash-free run's allreduce in each row, the target's arithmetic.
for r in sims:
    assert r["runs"] == 1 and r["complete"] == 1, r
    assert 0 < r["detection_ns"] < r["view_ns"] < r["noticed_ns"] <= r["rebuilt_ns"] \
        <= r["resumed_ns"], r
    assert 0 < r["ts_ns"] < r["view_ns"], r
    assert r["allreduce_ns"] == sim["allreduce_ns"], (r, sim)
    target = 1.2 * (r["detection_ns"] + r["ts_ns"]) + r["allreduce_ns"]
    assert abs(r["target_ns"] - target) <= 2 and r["met"] == (r["resumed_ns"] <= r["target_ns"])
    assert abs(r["resumed_over_detection"] - r["resumed_ns"] / r["detection_ns"]) < 1e-3, r
    verdict = "met" if r["met"] else "missed"
    assert re.search(r"^sim-4x4x4 +%s +1st +1/1 .* %s$" % (r["mode"], verdict), table, re.M), table
assert "runs no communicator modes yet" not in table and "sim-DIMS: tori-sim" in table
assert re.search(r"^  sim-4x4x4 +64 ranks: [0-9.]+ messages per allreduce, plain tree 126",
                 table, re.M), table
over = record["overhead"]
assert over["dims"] == "2x2x2" and over["runs"] == 1, over
for k in ("rtt0", "allreduce", "barrier"):
    a, b = over[k + "_abort_nop_ns"], over[k + "_shrink_cont_ns"]
    assert a > 0 and b > 0 and abs(over[k + "_ratio"] - b / a) < 1e-3, over
# ft-off: the node built without the failure semantics, when built
# (build/host-ft-off); the ratio is to it.
for k in ("rtt0", "allreduce", "barrier"):
    a, c = over[k + "_abort_nop_ns"], over[k + "_ft_off_ns"]
    assert (c == 0 and over[k + "_ft_ratio"] == 0) or abs(over[k + "_ft_ratio"] - a / c) < 1e-3
# The loopback: the same messages with and without (none more when nothing
# fails: a strict allreduce's result round runs only after a failure).
loop = record["loopback"]
assert loop["ranks"] == 16 and loop["runs"] == 1, loop
assert loop["pingpong_ft_messages"] == loop["pingpong_noft_messages"] == 2, loop
assert loop["allreduce_ft_messages"] == loop["allreduce_noft_messages"] == 30, loop
for k in ("pingpong", "allreduce", "barrier"):
    a, b = loop[k + "_ft_ns"], loop[k + "_noft_ns"]
    assert a > 0 and b > 0 and abs(loop[k + "_ratio"] - a / b) < 1e-3, loop
assert "ping-pong 0 B RTT" in table and "host 8x8x8" in table and "in-process" in table
PY
# The run's plot from its record (./tori bench recovery --plot).
draw_bench_plots "$OUT/run/recovery.json" "$OUT/plots" recovery
check_contains "$OUT/plots/recovery.dat" '"host-2x2x2@20-200 rebuild"'
check_contains "$OUT/plots/recovery.dat" '"host-2x2x2@20-200 rebuild 2nd"'
check_contains "$OUT/plots/recovery.dat" '"sim-4x4x4 rebuild"'
echo "tori-bench-recovery: ok"

#!/usr/bin/env python3
"""Checks a tori-emu fault run's records against what its scenario implies.

usage: check_faults.py SCENARIO BOARD RUN_DIR [NODES]

Every fault was injected, every agreement check passed and settled, and the
member set after each check is the one the faults imply (computed here on
its own: kill and hang remove a node; resume, reboot, restart and join bring
it back once it rejoined; a link cut changes nothing), with the lowest id
as root (the radix layout).  Then what each scenario must show: who
detected what, who rejoined, the link going down and up.  No timing is
asserted.
"""
import json
import sys


def fail(message):
    print(f"check_faults: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    scenario, board, run = sys.argv[1], sys.argv[2], sys.argv[3]
    nodes = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    records = load(f"{run}/faults.jsonl")
    events = load(f"{run}/events.jsonl")
    faults = [r for r in records if r["record"] == "fault"]
    summaries = [r for r in records if r["record"] == "summary"]
    if len(summaries) != 1:
        fail(f"expected one summary record, found {len(summaries)}")
    summary = summaries[0]
    if not faults:
        fail("no fault records")
    if summary["failed_checks"] != 0 or summary["injection_errors"] != 0:
        fail(f"summary: {summary}")
    if summary["faults"] != len(faults):
        fail("summary fault count differs from the records")

    spares = 1 if scenario == "join" else 0
    members = set(range(nodes - spares))
    groups = {}
    for f in faults:
        if not f["injected"]:
            fail(f"fault #{f['index']} ({f['text']}) not injected: {f.get('error')}")
        node, action = f["node"], f["action"]
        if action in ("kill", "hang"):
            members.discard(node)
        elif action in ("resume", "reboot", "restart", "join"):
            members.add(node)
        groups[f["group"]] = (f, set(members))
    checks = []
    for group in sorted(groups):
        f, expected = groups[group]
        a = f["agreement"]
        where = f"check #{group} (after fault #{f['index']}, {f['text']})"
        if a["result"] != "pass":
            fail(f"{where}: {a['reason']}")
        if not a["settled"]:
            fail(f"{where}: the torus never settled")
        if a["live"] != len(expected) or a["members"] != len(expected):
            fail(f"{where}: {a['live']} live, {a['members']} members answered; "
                 f"expected {sorted(expected)}")
        if a["root"] != min(expected):
            fail(f"{where}: root {a['root']}, expected {min(expected)}")
        if a["digest"] != a["expected_digest"]:
            fail(f"{where}: digest {a['digest']} is not {a['expected_digest']}")
        # The model's O_cp is what the nodes reported installing the view
        # (a fault that changed no view, such as a link cut, has none).
        if f["stable"] is not None and (f["model"]["ocp_samples"] < 1
                                        or f["model"]["ocp_ns"] <= 0):
            fail(f"{where}: no node reported its view install time: {f['model']}")
        checks.append((f, a, expected))

    def after(index):
        return faults[index]["injected_ns"]

    def node_events(node, name, since=0):
        return [e for e in events if e["node"] == node and e["event"] == name
                and e["emu_ns"] >= since]

    # emu_ns counts from the launcher's start, injected_ns from the job start.
    job = summary["job_start_emu_ns"]

    def expelled_then_rejoined(node, since):
        expelled = node_events(node, "expelled", since)
        if not expelled:
            fail(f"node {node} was never expelled after it resumed")
        if not node_events(node, "joined", expelled[0]["emu_ns"]):
            fail(f"node {node} never rejoined after it was expelled")

    def detected(index):
        if faults[index]["detection"] is None:
            fail(f"nobody detected fault #{index + 1} ({faults[index]['text']})")

    if scenario in ("crash", "root_crash"):
        detected(0)
        if faults[0]["stable"] is None:
            fail("no stable event after the crash")
    elif scenario == "crash_then_root":
        for index in (0, 1):
            detected(index)
            if faults[index]["stable"] is None:
                fail(f"no stable event after crash #{index + 1}")
    elif scenario == "restart":
        detected(0)
        since = job + after(1)
        if not [e for e in node_events(6, "started", since) if e["as"] == "rejoining"]:
            fail("node 6 did not start as rejoining after its restart")
        ready = node_events(6, "ready", since)
        if not ready or ready[-1]["incarnation"] < 2:
            fail(f"node 6's restart did not run a new incarnation: {ready}")
        if not node_events(6, "joined", since):
            fail("node 6 never joined after its restart")
    elif scenario == "hang":
        detected(0)
        if checks[0][1]["live"] != 7 or checks[1][1]["live"] != 8:
            fail("the hung node was not out during the hang and back after it")
        # Resumed, it holds a view the others left behind: it must find
        # itself expelled, then rejoin.
        expelled_then_rejoined(5, job + after(1))
    elif scenario == "kill_hang_4x4x4":
        detected(0)
        detected(1)
        expelled_then_rejoined(42, job + after(2))
    elif scenario == "demo":
        # A leaf, the root, then the leaf back with its old id.
        texts = [f["text"] for f in faults]
        steps = [(f["action"], f["node"]) for f in faults]
        if len(steps) != 3 or steps[0][0] != "kill" or steps[1] != ("kill", 0) or \
                steps[2] != ("restart", steps[0][1]):
            fail(f"the demo injected {texts}")
        detected(0)
        detected(1)
        for index in (0, 1, 2):
            if faults[index]["stable"] is None:
                fail(f"no stable event after {texts[index]}")
        leaf = faults[0]["node"]
        if not node_events(leaf, "joined", job + after(2)):
            fail(f"node {leaf} never rejoined after its restart")
    elif scenario == "reboot":
        since = job + after(0)
        ready = node_events(2, "ready", since)
        if not ready:
            fail("node 2 never came back ready after the reset")
        if ready[-1].get("incarnation", 0) < 2:
            fail(f"node 2 came back with incarnation {ready[-1].get('incarnation')} "
                 "(expected a new one: the board's reset counter)")
        if not [e for e in node_events(2, "started", since) if e["as"] == "rejoining"]:
            fail("node 2 did not start as rejoining after its reset")
        if not node_events(2, "joined", since):
            fail("node 2 never rejoined after its reset")
    elif scenario in ("link_cut", "link_cut_4x4"):
        cut, mend = job + after(0), job + after(1)
        # The cut cable: 6 x+ to 7 x- (2x2x2), 5 x+ to 6 x- (4x4).  A link
        # layer notices a cut only when it has frames to send on it, so at
        # least one end must see it go down, and every end that went down
        # must come back up after the mend.  The torus stays connected
        # without the cable, so the network must route around it: nobody may
        # be suspected, the view must not change.
        ends = [(6, "x+", 7), (7, "x-", 6)] if scenario == "link_cut" else \
            [(5, "x+", 6), (6, "x-", 5)]
        went_down = 0
        for node, link, peer in ends:
            downs = [e for e in node_events(node, "link", cut)
                     if e["link"] == link and e["peer"] == peer and e["state"] == "down"
                     and e["emu_ns"] < mend]
            if not downs:
                print(f"check_faults: node {node} did not notice the cut of its link {link}")
                continue
            went_down += 1
            ups = [e for e in node_events(node, "link", mend)
                   if e["link"] == link and e["state"] == "up"]
            if not ups:
                fail(f"node {node}'s link {link} never came back up after the mend")
        if went_down == 0:
            fail("neither end of the cut cable saw it go down")
        suspicions = [e for e in events if e["event"] == "failure-detected"
                      and e["emu_ns"] >= cut]
        if suspicions:
            fail(f"the link cut made nodes suspect others: {suspicions[:3]}")
        if checks[0][1]["epoch"] != checks[1][1]["epoch"] or any(
                e["event"] == "view" and e["emu_ns"] >= cut for e in events):
            fail("the view changed because of a link cut")
    elif scenario in ("double_crash", "double_crash_diagonal"):
        if faults[0]["group"] != faults[1]["group"]:
            fail("two crashes at the same time were checked separately")
        detected(0)
        detected(1)
    elif scenario in ("diagonal_fast", "diagonal_slow_links"):
        # Node 7 is in every view from the first kill on (each has 6 or 7
        # live members: 3 and 5 only are removed), never learns it was
        # expelled and never joins again; reports of it cost probes only.
        if faults[0]["group"] != faults[1]["group"]:
            fail("two crashes at the same time were checked separately")
        detected(0)
        detected(1)
        since = job + after(0)
        views = [e for e in events if e["event"] == "view" and e["emu_ns"] >= since]
        if not views:
            fail("no view after the kills")
        small = [e for e in views if e["live"] < nodes - 2]
        if small:
            fail(f"a view without a live node: {small[:3]}")
        for name in ("expelled", "joined"):
            if node_events(7, name, since):
                fail(f"node 7 {name} after the kills: {node_events(7, name, since)[:2]}")
        if not [e for e in node_events(7, "view", since) if e["live"] == nodes - 2]:
            fail("node 7 never installed the view without 3 and 5")
        reports = [e for e in events if e["event"] == "failure-detected"
                   and e.get("who") == 7 and e["emu_ns"] >= since]
        print(f"check_faults: node 7 reported {len(reports)} times, kept in "
              f"{len(views)} view installs")
    elif scenario == "join":
        since = job + after(0)
        if not [e for e in node_events(7, "started", since) if e["as"] == "spare"]:
            fail("node 7 did not start as a spare")
        if not node_events(7, "joined", since):
            fail("spare 7 never joined")
    elif scenario in ("chaos", "campaign"):
        wanted = 4 if scenario == "chaos" else 100
        new = [f for f in faults if "undo" not in f["text"]]
        if len(new) < wanted:
            fail(f"only {len(new)} random faults (expected {wanted})")
        if checks[-1][1]["live"] != nodes:
            fail("the random faults did not end on a whole torus")
    elif scenario == "chaos_rates":
        # seed 2's draw: kills only in the default group (x=1: odd ids),
        # link faults only at the x<1 group (even ids), and a fault injected
        # while an earlier one is still on (the generator of plain --chaos
        # holds one at a time).
        kills = sorted(f["node"] for f in faults if f["action"] == "kill")
        if kills != [1, 3]:
            fail(f"kills {kills}, expected [1, 3] from seed 2's draw")
        links = [f for f in faults if f["action"].startswith("link")]
        if not links or any(f["node"] % 2 != 0 for f in links):
            fail(f"link faults not all at the x<1 group: {[f['text'] for f in links]}")
        off = 0
        overlapped = False
        for f in sorted(faults, key=lambda f: f["injected_ns"]):
            if f["action"] == "link-off":
                off += 1
                overlapped = overlapped or off > 2  # a pair is two cables
            elif f["action"] == "link-on":
                off -= 1
        if not overlapped:
            fail("no two link faults were on at once")
        if len(groups) != 1:
            fail(f"{len(groups)} agreement checks, expected the faults in one group")
    print(f"check_faults: {scenario} ({board}): {len(faults)} faults, "
          f"{len(checks)} checks passed")


main()

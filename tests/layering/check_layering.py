#!/usr/bin/env python3
"""The layering check: every quoted #include in the tree against the table
of which room may include which (tests/layering/rooms.txt).

A room is a path prefix ("membership/machine/"); a file belongs to the
longest room that prefixes its path.  A file may include its own room, and
what its room's line allows: a room prefix ("net/torus/") or one header
("kernel/personality.h").  An entry "!PREFIX" forbids what the rest would
allow: "membership/: ... !membership/machine/" keeps the leaves of a room
off the sub-room built on them.  A file in no room, an include of a file that does
not exist, or an include the table does not allow fails with its line.

usage: check_layering.py [--root DIR] [--rooms FILE] [--plant FILE:HEADER]

--plant adds one include line to a file as if it were written there (the
suite's proof that a wrong include fails the check).
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = (".c", ".h", ".S")


def read_rooms(path):
    rooms = {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                sys.exit(f"{path}:{number}: expected 'room: allowed ...', got {raw.strip()!r}")
            room, allowed = line.split(":", 1)
            room = room.strip()
            if room in rooms:
                sys.exit(f"{path}:{number}: room {room!r} listed twice")
            rooms[room] = allowed.split()
    return rooms


def room_of(path, rooms):
    best = None
    for room in rooms:
        if path == room or (room.endswith("/") and path.startswith(room)):
            if best is None or len(room) > len(best):
                best = room
    return best


def allowed(target, room, rooms):
    for entry in rooms[room]:
        if entry.startswith("!") and target.startswith(entry[1:]):
            return False
    if room.endswith("/") and target.startswith(room):
        return True
    for entry in rooms[room]:
        if entry == "*":
            return True
        if entry.endswith("/") and target.startswith(entry):
            return True
        if target == entry:
            return True
    return False


def tracked_sources(root):
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=root, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"check_layering: git ls-files failed in {root}: {out.stderr.strip()}")
    return sorted(p for p in out.stdout.splitlines()
                  if p.endswith(SOURCE_SUFFIXES) and os.path.isfile(os.path.join(root, p)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description="check #include lines against the room table")
    parser.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")))
    parser.add_argument("--rooms", default=os.path.join(here, "rooms.txt"))
    parser.add_argument("--plant", action="append", default=[], metavar="FILE:HEADER",
                        help="check as if FILE also had #include \"HEADER\"")
    args = parser.parse_args()
    planted = {}
    for item in args.plant:
        path, sep, header = item.partition(":")
        if not sep or not header:
            parser.error(f"--plant takes FILE:HEADER, got {item!r}")
        planted.setdefault(path, []).append(f'#include "{header}"  /* planted */\n')
    rooms = read_rooms(args.rooms)
    errors = []
    files = tracked_sources(args.root)
    for path in files:
        room = room_of(path, rooms)
        if room is None:
            errors.append(f"{path}: in no room of {args.rooms}")
            continue
        with open(os.path.join(args.root, path), encoding="utf-8", errors="replace") as f:
            lines = f.readlines() + planted.pop(path, [])
            for number, line in enumerate(lines, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = match.group(1)
                if not os.path.isfile(os.path.join(args.root, target)):
                    errors.append(f"{path}:{number}: includes {target!r}, which is not a file "
                                  f"of the tree (includes are paths from the top)")
                elif not allowed(target, room, rooms):
                    errors.append(f"{path}:{number}: room {room} may not include {target!r}: "
                                  f"{line.strip()}")
    for path in planted:
        errors.append(f"{path}: --plant names a file that is not a tracked source")
    for error in errors:
        print(error)
    print(f"layering: {len(files)} files, {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

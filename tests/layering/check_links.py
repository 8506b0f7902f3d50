#!/usr/bin/env python3
"""The link-direction check: configure the host project into a scratch tree
with CMake's --graphviz output and require the graph of the project's own
targets to have no cycle (libraries link in one direction only).

usage: check_links.py SOURCE_DIR SCRATCH_DIR [--plant FROM:TO]

--plant adds an edge as if FROM linked TO (the suite's proof that a loop
fails the check).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

NODE = re.compile(r'^\s*"(node\d+)"\s*\[\s*label\s*=\s*"([^"]+)"')
EDGE = re.compile(r'^\s*"(node\d+)"\s*->\s*"(node\d+)"')


def read_graph(dot):
    names, edges = {}, {}
    with open(dot, encoding="utf-8") as f:
        for line in f:
            m = NODE.match(line)
            if m:
                names[m.group(1)] = m.group(2)
                continue
            m = EDGE.match(line)
            if m:
                edges.setdefault(m.group(1), set()).add(m.group(2))
    graph = {}
    for src, targets in edges.items():
        graph.setdefault(names[src], set()).update(names[t] for t in targets)
    return graph


def find_cycle(graph):
    """A list of targets forming a cycle, or None (iterative DFS)."""
    state = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph.get(start, ()))))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            if state.get(child) == 1:
                return path[path.index(child):] + [child]
            if not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(graph.get(child, ())))))
    return None


def main():
    parser = argparse.ArgumentParser(description="CMake targets link in one direction only")
    parser.add_argument("source")
    parser.add_argument("scratch")
    parser.add_argument("--plant", action="append", default=[], metavar="FROM:TO")
    args = parser.parse_args()
    shutil.rmtree(args.scratch, ignore_errors=True)
    os.makedirs(args.scratch)
    dot = os.path.join(args.scratch, "targets.dot")
    with open(os.path.join(args.scratch, "CMakeGraphVizOptions.cmake"), "w") as f:
        f.write("set(GRAPHVIZ_EXTERNAL_LIBS FALSE)\nset(GRAPHVIZ_GENERATE_PER_TARGET FALSE)\n"
                "set(GRAPHVIZ_GENERATE_DEPENDERS FALSE)\n")
    run = subprocess.run(["cmake", "-S", args.source, "-B", args.scratch, "-G", "Ninja",
                          "-DTORI_BOARD=host", f"--graphviz={dot}"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"check_links: configuring {args.source} failed:\n{run.stderr}")
        return 2
    graph = read_graph(dot)
    for item in args.plant:
        src, sep, dst = item.partition(":")
        if not sep:
            parser.error(f"--plant takes FROM:TO, got {item!r}")
        graph.setdefault(src, set()).add(dst)
    cycle = find_cycle(graph)
    edges = sum(len(v) for v in graph.values())
    if cycle:
        print("links: loop of library links: " + " -> ".join(cycle))
        return 1
    print(f"links: {len(graph)} targets, {edges} link edges, no loop")
    return 0


if __name__ == "__main__":
    sys.exit(main())

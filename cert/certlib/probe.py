"""Compile-time sizes, asked of the compiler with the image's own flags.

Each expression E becomes `char cert_probe_K[(E) + 1];` in a small C file
compiled (not linked, never run) with the compile command of a kernel
source of the tree; the object file's symbol sizes, read with nm, are the
answers.  So the values are exactly what the node's code sees, for the
cross target, at any CONFIG_MAX_NODES.
"""
import os
import re
import shlex
import tempfile

from certlib.tools import run, ToolError


class ProbeError(Exception):
    pass


def config_names(source_dir):
    """Every CONFIG_* macro defined in config/tori_config.h."""
    names = []
    with open(os.path.join(source_dir, "config", "tori_config.h"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\s*#\s*define\s+(CONFIG_[A-Z0-9_]+)\s", line)
            if m and m.group(1) not in names:
                names.append(m.group(1))
    return names


def _base_command(tree):
    commands = tree.compile_commands()
    for entry in commands:
        if os.path.relpath(entry["file"], tree.source_dir) == "kernel/main.c":
            return entry
    raise ProbeError(f"{tree.build_dir}: kernel/main.c is not in compile_commands.json")


def evaluate(tree, expressions, max_nodes_override=None):
    """{name: value} for [(name, expression, headers)], with the tree's flags.

    An expression may list a .c file among its headers, to be evaluated in
    that file's scope (its private types and macros); each such set of .c
    files gets a probe of its own, since two sources may share static names."""
    groups = {}
    for item in expressions:
        key = tuple(h for h in item[2] if h.endswith(".c"))
        groups.setdefault(key, []).append(item)
    values = {}
    for items in groups.values():
        values.update(_evaluate_group(tree, items, max_nodes_override))
    return values


def _evaluate_group(tree, expressions, max_nodes_override):
    entry = _base_command(tree)
    words = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    cleaned, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-o", "-MF", "-MT", "-MQ", "-c"):
            skip = True
            continue
        if w in ("-MD", "-MMD") or w.startswith(("-fstack-usage", "-fcallgraph-info", "-Werror")) \
                or w == entry["file"] or w.endswith(".c"):
            continue
        if max_nodes_override is not None and w.startswith("-DCONFIG_MAX_NODES="):
            continue
        cleaned.append(w)
    if max_nodes_override is not None:
        cleaned.append(f"-DCONFIG_MAX_NODES={max_nodes_override}")
    headers = ["stddef.h", "stdint.h", "config/tori_config.h"]
    for _, _, hs in expressions:
        for h in hs:
            if h not in headers:
                headers.append(h)
    lines = [f'#include "{h}"' if "/" in h else f"#include <{h}>" for h in headers]
    for i, (_, expression, _) in enumerate(expressions):
        lines.append(f"char cert_probe_{i}[(size_t)({expression}) + 1];")
    with tempfile.TemporaryDirectory(prefix="tori-cert-probe-") as tmp:
        source = os.path.join(tmp, "probe.c")
        obj = os.path.join(tmp, "probe.o")
        with open(source, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        try:
            run(cleaned + ["-fno-common", "-w", "-c", source, "-o", obj],
                cwd=entry.get("directory"))
        except ToolError as e:
            raise ProbeError(f"the size probe did not compile (check the expressions and headers "
                             f"in cert/sizing.conf): {e}")
        _, out, _ = run([tree.tools.nm, "-S", obj])
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3].startswith("cert_probe_"):
            sizes[int(parts[3][len("cert_probe_"):])] = int(parts[1], 16) - 1
    return {name: sizes[i] for i, (name, _, _) in enumerate(expressions)}

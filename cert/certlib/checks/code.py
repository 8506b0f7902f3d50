"""Check 7: code checks over the node's sources.

  warnings  every node source of the image recompiled with -Wvla -Walloca
            -Wstack-usage=frame_max (cross compiler, the image's own flags)
  misra     cppcheck's MISRA addon, rules 21.3, 17.2 and 18.8, with the
            image's defines; findings outside cert/deviations.conf fail
  tidy      clang-tidy misc-no-recursion on the host build of node code
  analyzer  GCC -fanalyzer on the host build of node code
"""
import concurrent.futures
import json
import os
import re
import shlex

from certlib.callgraph import Finding
from certlib.report import CheckResult
from certlib.tools import run as run_tool

ID = "code"
TITLE = "Code checks"
METHOD = __doc__.strip().split("\n", 1)[1].strip()
SUBCHECKS = ["warnings", "misra", "tidy", "analyzer"]
MISRA_RULES = ("misra-c2012-21.3", "misra-c2012-17.2", "misra-c2012-18.8")
CPPCHECK_FAILURES = ("syntaxError", "internalAstError", "unknownMacro", "preprocessorErrorDirective",
                     "cppcheckError", "internalError", "misra-config", "misra-c2012-0.0")
MISRA_SCRIPT = "/usr/lib/x86_64-linux-gnu/cppcheck/addons/misra.py"
WARNING_RE = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?P<col>\d+): (?P<kind>warning|error): "
                        r"(?P<message>.*?)(?: \[(?P<flag>[^\]]+)\])?$")
IN_FUNCTION_RE = re.compile(r"^(?P<file>[^:]+): In function '(?P<function>[^']+)':$")


def _words(entry):
    return shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])


def _strip_outputs(words, source):
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-o", "-MF", "-MT", "-MQ", "-c"):
            skip = True
            continue
        if w in ("-MD", "-MMD") or w.startswith(("-fstack-usage", "-fcallgraph-info")) or w == source:
            continue
        out.append(w)
    return out


def _jobs():
    return max(1, os.cpu_count() or 1)


def _compile_all(sources, extra, source_dir):
    """Recompiles each (rel, entry) with extra flags; returns diagnostics."""
    def one(item):
        rel, entry = item
        words = _strip_outputs(_words(entry), entry["file"])
        command = words + extra + ["-c", entry["file"], "-o", os.devnull]
        _, out, err = run_tool(command, cwd=entry.get("directory"), check=False)
        return rel, err + out
    findings = []
    with concurrent.futures.ThreadPoolExecutor(_jobs()) as pool:
        for rel, text in pool.map(one, sources):
            function = None
            for line in text.splitlines():
                m = IN_FUNCTION_RE.match(line)
                if m:
                    function = m.group("function")
                    continue
                m = WARNING_RE.match(line)
                if m:
                    path = os.path.relpath(os.path.abspath(os.path.join(os.path.dirname(
                        os.path.join(source_dir, rel)), m.group("file"))) if not os.path.isabs(
                        m.group("file")) else m.group("file"), source_dir)
                    findings.append({"file": path, "line": int(m.group("line")), "function": function,
                                     "message": m.group("message"), "flag": m.group("flag"),
                                     "kind": m.group("kind")})
    return findings


def _warnings(ctx, result):
    tree = ctx.built_tree()
    sources = tree.node_sources(scope=ctx.args.code_scope)
    limit = ctx.budgets["frame_max"]
    diagnostics = _compile_all(sources, ["-Wvla", "-Walloca", f"-Wstack-usage={limit}", "-Wno-error"],
                               ctx.source_dir)
    seen = set()
    for d in diagnostics:
        key = (d["file"], d["line"], d["message"])
        if key in seen:
            continue
        seen.add(key)
        offender = d["function"] or d["file"]
        result.fail(Finding(offender, f"{d['message']}" + (f" [{d['flag']}]" if d["flag"] else ""),
                            f"{d['file']}:{d['line']}", subcheck="warnings"))
    result.figures["warnings"] = {"sources": len(sources), "flags": f"-Wvla -Walloca -Wstack-usage={limit}",
                                  "diagnostics": len(seen)}
    return f"warnings: {len(sources)} sources clean" if not seen else f"warnings: {len(seen)} diagnostics"


def _misra(ctx, result):
    tools = ctx.tools
    if tools.cppcheck is None:
        raise RuntimeError("cppcheck is not installed (Debian package cppcheck)")
    tree = ctx.built_tree()
    sources = tree.node_sources(scope=ctx.args.code_scope)
    # Only the three rules are evaluated: misra.py skips globally suppressed
    # rules, and evaluating all of them takes minutes.
    kept = {r.split("-")[-1] for r in MISRA_RULES}
    suppressed = [f"{a}.{b}" for a in range(1, 23) for b in range(1, 21) if f"{a}.{b}" not in kept]
    work = os.path.join(tree.build_dir, "cert-cppcheck")
    os.makedirs(work, exist_ok=True)
    project = os.path.join(work, "compile_commands.json")
    with open(project, "w", encoding="utf-8") as f:
        json.dump([entry for _, entry in sources], f)
    addon = os.path.join(work, "misra-rules.json")
    with open(addon, "w", encoding="utf-8") as f:
        json.dump({"script": MISRA_SCRIPT, "args": ["--suppress-rules", ",".join(suppressed)]}, f)
    if not os.path.exists(MISRA_SCRIPT):
        raise RuntimeError(f"{MISRA_SCRIPT} is missing (Debian's cppcheck ships it)")
    code, out, err = run_tool([tools.cppcheck, f"--project={project}", f"--addon={addon}",
                               "--std=c11", "--platform=arm32-wchar_t4", "--quiet",
                               f"-j{_jobs()}", f"--cppcheck-build-dir={work}",
                               "--template={file}:{line}:{column}: {id}: {message}"],
                              cwd=ctx.source_dir, check=False)
    counted, others = 0, {}
    deviated = []
    for line in (err + out).splitlines():
        m = re.match(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<id>[\w.-]+): (?P<message>.*)$", line)
        if not m:
            continue
        rule = m.group("id")
        path = os.path.relpath(m.group("file"), ctx.source_dir) if os.path.isabs(m.group("file")) else m.group("file")
        if rule in CPPCHECK_FAILURES:
            # A file cppcheck could not analyse is not a file without findings.
            result.fail(Finding(path, f"cppcheck could not analyse it ({rule}: {m.group('message')})",
                                f"{path}:{m.group('line')}", subcheck="misra"))
            continue
        if rule not in MISRA_RULES:
            others[rule] = others.get(rule, 0) + 1
            continue
        counted += 1
        deviation = ctx.deviations.match(rule, path, int(m.group("line")))
        if deviation is not None:
            deviated.append(f"{rule} {path}:{m.group('line')} ({deviation.line.where()})")
            continue
        result.fail(Finding(f"{path}:{m.group('line')}", f"{rule}: {_misra_text(rule)}",
                            f"{path}:{m.group('line')}", subcheck="misra", rule=rule))
    result.figures["misra"] = {"sources": len(sources), "rules": list(MISRA_RULES),
                               "findings_in_rules": counted, "deviated": deviated,
                               "deviations_listed": len(ctx.deviations.entries),
                               "deviations_unused": [f"{d.rule} {d.file} ({d.line.where()})"
                                                     for d in ctx.deviations.entries if d.used == 0],
                               "other_misra_findings_not_checked": sum(others.values())}
    bad = counted - len(deviated)
    return (f"MISRA 21.3/17.2/18.8: {bad} findings outside {len(deviated)} deviation(s)" if bad
            else f"MISRA 21.3/17.2/18.8: 0 findings ({len(deviated)} deviated)")


def _misra_text(rule):
    return {"misra-c2012-21.3": "memory allocation functions of <stdlib.h> used",
            "misra-c2012-17.2": "function calls itself, directly or indirectly",
            "misra-c2012-18.8": "variable-length array"}.get(rule, "")


def _host_sources(ctx):
    tree = ctx.tree("host")
    tree.configure()
    return tree, [(rel, e) for rel, e in tree.node_sources(scope=ctx.args.code_scope)
                  if not rel.startswith("board/qemu-virt/")]


def _tidy(ctx, result):
    tools = ctx.tools
    if tools.clang_tidy is None:
        raise RuntimeError("clang-tidy is not installed (Debian package clang-tidy)")
    tree, sources = _host_sources(ctx)

    def one(item):
        rel, entry = item
        _, out, err = run_tool([tools.clang_tidy, "-p", tree.build_dir, "--quiet",
                                "--checks=-*,misc-no-recursion", "--warnings-as-errors=", entry["file"]],
                               check=False)
        return out + err
    found = set()
    with concurrent.futures.ThreadPoolExecutor(_jobs()) as pool:
        for text in pool.map(one, sources):
            for line in text.splitlines():
                m = WARNING_RE.match(line)
                if m and m.group("kind") == "error":
                    # clang could not compile the file: it was not checked.
                    path = os.path.relpath(m.group("file"), ctx.source_dir)
                    result.fail(Finding(path, f"clang-tidy could not analyse it: {m.group('message')}",
                                        f"{path}:{m.group('line')}", subcheck="tidy"))
                    continue
                if m and m.group("flag") and "misc-no-recursion" in m.group("flag"):
                    path = os.path.relpath(m.group("file"), ctx.source_dir)
                    found.add((path, int(m.group("line")), m.group("message")))
    for path, line, message in sorted(found):
        fn = re.search(r"function '([^']+)'", message)
        result.fail(Finding(fn.group(1) if fn else path, message, f"{path}:{line}", subcheck="tidy"))
    result.figures["tidy"] = {"sources": len(sources), "check": "misc-no-recursion", "findings": len(found)}
    return f"clang-tidy misc-no-recursion: {len(found)} findings in {len(sources)} sources"


def _analyzer(ctx, result):
    tree, sources = _host_sources(ctx)
    diagnostics = _compile_all(sources, ["-fanalyzer", "-Wno-error"], ctx.source_dir)
    seen = set()
    for d in diagnostics:
        key = (d["file"], d["line"], d["message"])
        if key in seen:
            continue
        seen.add(key)
        result.fail(Finding(d["function"] or d["file"], d["message"] + (f" [{d['flag']}]" if d["flag"] else ""),
                            f"{d['file']}:{d['line']}", subcheck="analyzer"))
    result.figures["analyzer"] = {"sources": len(sources), "diagnostics": len(seen)}
    return f"gcc -fanalyzer: {len(seen)} diagnostics in {len(sources)} host sources"


def run(ctx, subchecks=None):
    result = CheckResult(ID, TITLE, METHOD)
    parts = []
    for name in subchecks or SUBCHECKS:
        try:
            parts.append({"warnings": _warnings, "misra": _misra, "tidy": _tidy,
                          "analyzer": _analyzer}[name](ctx, result))
        except RuntimeError as e:
            result.error(f"code.{name}: {e}")
            parts.append(f"{name}: could not run")
    result.figures["subchecks"] = subchecks or SUBCHECKS
    result.summary = "; ".join(parts)
    return result

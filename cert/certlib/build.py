"""CMake build trees for the certification: the qemu-virt image at a given
node count (and test variant), and a configured-only host tree whose
compile_commands.json the host-side code checks read."""
import contextlib
import fcntl
import json
import os
import re
import shutil

from certlib.tools import run, ToolError


class BuildError(Exception):
    pass


VARIANTS_LIST = os.path.join("tests", "cert", "variants", "variants.cmake")


def test_variants(source_dir):
    """The deliberately bad test variants, as TORI_TEST_VARIANTS lists them
    in tests/cert/variants/variants.cmake (the list CMake accepts)."""
    path = os.path.join(source_dir, VARIANTS_LIST)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BuildError(f"cannot read the test variants: {e}")
    text = re.sub(r"#[^\n]*", "", text)  # comments may hold parentheses
    match = re.search(r"set\(TORI_TEST_VARIANTS\b(.*?)\)", text, re.S)
    names = match.group(1).split() if match else []
    if not names:
        raise BuildError(f"{path} has no set(TORI_TEST_VARIANTS ...) list")
    return names


# What a tree's build leaves beside its objects (-fstack-usage, -fcallgraph-info).
SEED_SUFFIXES = (".obj", ".o", ".su", ".ci", ".a")


class Tree:
    def __init__(self, tools, source_dir, build_dir, board, max_nodes=None, variant=None,
                 seed=None):
        self.tools = tools
        self.source_dir = os.path.abspath(source_dir)
        self.build_dir = os.path.abspath(build_dir)
        self.board = board
        self.max_nodes = max_nodes
        self.variant = variant
        # A variant's tree starts from the built objects of seed (the plain
        # tree at the same node count): the same sources with the same
        # command lines, so Ninja compiles only the variant's own files.
        self.seed = seed
        self.configured = False
        self.built = set()

    def cache_wanted(self):
        wanted = {"TORI_BOARD": self.board,
                  "TORI_MAX_NODES": "" if self.max_nodes is None else str(self.max_nodes),
                  "TORI_TEST_VARIANT": self.variant or ""}
        if self.board == "qemu-virt":
            wanted["CMAKE_BUILD_TYPE"] = "MinSizeRel"
        else:
            wanted["CMAKE_BUILD_TYPE"] = "RelWithDebInfo"
        return wanted

    def _cache(self):
        path = os.path.join(self.build_dir, "CMakeCache.txt")
        values = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
                    if m:
                        values[m.group(1)] = m.group(2)
        return values

    @contextlib.contextmanager
    def _locked(self):
        """Held while the tree is configured or built: two tori-cert runs
        that share a tree (the host tools tree of a variant run and of the
        shipped run, say) take turns instead of running CMake or Ninja in
        it at once."""
        os.makedirs(os.path.dirname(self.build_dir), exist_ok=True)
        with open(self.build_dir + ".lock", "w", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def configure(self):
        if self.configured:
            return
        with self._locked():
            self._configure()

    def _configure(self):
        wanted = self.cache_wanted()
        cache = self._cache()
        up_to_date = (os.path.exists(os.path.join(self.build_dir, "build.ninja"))
                      and os.path.exists(os.path.join(self.build_dir, "compile_commands.json"))
                      and all(cache.get(k, "") == v for k, v in wanted.items()))
        if not up_to_date:
            os.makedirs(self.build_dir, exist_ok=True)
            command = [self.tools.cmake, "-S", self.source_dir, "-B", self.build_dir, "-G", "Ninja",
                       "-Wno-dev"]
            if self.board == "qemu-virt":
                command += ["--toolchain",
                            os.path.join(self.source_dir, "cmake", "toolchain-arm-none-eabi.cmake")]
            command += [f"-D{k}={v}" for k, v in wanted.items()]
            fresh = not os.path.exists(os.path.join(self.build_dir, ".ninja_log"))
            try:
                run(command)
            except ToolError as e:
                raise BuildError(f"configuring {self.build_dir} failed: {e}")
            if fresh and self.seed is not None:
                self._seed_from(self.seed)
        self.configured = True

    def _seed_from(self, seed):
        """Copies seed's objects (with their times) and Ninja's logs into
        this newly configured tree.  Ninja rebuilds whatever has another
        command line here (the variant's sources, the link, generated
        files) and trusts the rest, as it would in seed itself."""
        seed.build("node")
        with seed._locked():
            for directory, subdirs, files in os.walk(seed.build_dir):
                relative = os.path.relpath(directory, seed.build_dir)
                if relative == ".":
                    subdirs[:] = [d for d in subdirs if d != "CMakeFiles"]
                for name in files:
                    if name.endswith(SEED_SUFFIXES):
                        os.makedirs(os.path.join(self.build_dir, relative), exist_ok=True)
                        shutil.copy2(os.path.join(directory, name),
                                     os.path.join(self.build_dir, relative, name))
            for name in (".ninja_log", ".ninja_deps"):
                shutil.copy2(os.path.join(seed.build_dir, name), os.path.join(self.build_dir, name))

    def build(self, target="node"):
        self.configure()
        if target in self.built:
            return
        with self._locked():
            code, out, err = run([self.tools.ninja, "-C", self.build_dir, target], check=False)
        if code != 0:
            errors = [l for l in (out + err).splitlines()
                      if re.search(r"(error|undefined reference|FAILED)", l)]
            raise BuildError(f"building {target} in {self.build_dir} failed:\n  "
                             + "\n  ".join(errors[:12] or (out + err).splitlines()[-12:]))
        self.built.add(target)

    def compile_commands(self):
        self.configure()
        with open(os.path.join(self.build_dir, "compile_commands.json"), encoding="utf-8") as f:
            return json.load(f)

    def node_sources(self, commands=None, scope=None):
        """compile_commands entries of node code (not tests, not host tools),
        optionally only those under the path prefix scope."""
        result = []
        linked = self._linked_object_dirs()
        for entry in commands or self.compile_commands():
            rel = os.path.relpath(entry["file"], self.source_dir)
            if linked is not None and not any(_output_of(entry).startswith(d) for d in linked):
                continue
            if rel.startswith(("lib/", "kernel/", "net/", "membership/", "node/", "board/")) or \
                    rel.startswith("tests/cert/variants/"):
                if rel.endswith(".c") and (scope is None or rel.startswith(scope)) and \
                        all(r != rel for r, _ in result):
                    result.append((rel, entry))
        return result

    def _linked_object_dirs(self):
        """Object directories of what node.elf links (from node.map), or None."""
        path = os.path.join(self.build_dir, "node.map")
        if not os.path.exists(path):
            return None
        dirs = set()
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.startswith("LOAD ") or os.path.isabs(line[5:].strip()):
                    continue
                obj = line[5:].strip()
                if obj.endswith(".a"):
                    library = os.path.basename(obj)[3:-2]
                    dirs.add(os.path.join(self.build_dir, os.path.dirname(obj), "CMakeFiles",
                                          library + ".dir") + os.sep)
                else:
                    dirs.add(os.path.join(self.build_dir, os.path.dirname(obj)) + os.sep)
        return dirs


def _output_of(entry):
    words = entry.get("arguments") or entry["command"].split()
    for i, w in enumerate(words):
        if w == "-o" and i + 1 < len(words):
            out = words[i + 1]
            return out if os.path.isabs(out) else os.path.join(entry.get("directory", ""), out)
    return ""

"""What the checks share, built on first use: conf files, build trees, the
analysed image and its call graph, compile-time sizes."""
import os
import subprocess

from certlib import conf, probe
from certlib.build import Tree
from certlib.callgraph import CallGraph
from certlib.image import Image
from certlib.vectors import VectorTable


class Context:
    def __init__(self, args, tools):
        self.args = args
        self.tools = tools
        self.source_dir = args.source_dir
        self.cert_dir = os.path.join(self.source_dir, "cert")
        self.build_root = args.build_root
        self.variant = args.variant
        self.budgets = conf.Budgets(os.path.join(self.cert_dir, "budgets.conf"))
        self.indirect = conf.IndirectCalls(os.path.join(self.cert_dir, "indirect_calls.conf"))
        self.deviations = conf.Deviations(os.path.join(self.cert_dir, "deviations.conf"))
        self.sizing = conf.Sizing(os.path.join(self.cert_dir, "sizing.conf"))
        self.library_stack = conf.LibraryStack(os.path.join(self.cert_dir, "library_stack.conf"))
        self._trees = {}
        self._image = None
        self._graph = None
        self._vectors = None
        self._config = None
        self.max_nodes = args.max_nodes
        self._results = {}

    def cached(self, check_id, compute):
        """A check's result computed once, shared with checks that build on it."""
        if check_id not in self._results:
            self._results[check_id] = compute()
        return self._results[check_id]

    # ----- trees -----------------------------------------------------------

    def _tree_name(self, board, max_nodes, variant):
        name = f"{board}-n{max_nodes}" if board == "qemu-virt" else board
        if variant:
            name = f"{variant}.{name}"
        return name

    def tree(self, board="qemu-virt", max_nodes=None):
        max_nodes = max_nodes or self.nodes()
        key = (board, max_nodes if board == "qemu-virt" else None)
        if key not in self._trees:
            path = os.path.join(self.build_root, self._tree_name(board, max_nodes, self.variant))
            # The shipped node count is not passed at all, so that the tree is
            # configured exactly like the qemu-virt preset.
            override = max_nodes if board == "qemu-virt" and \
                max_nodes != self.shipped_config()["CONFIG_MAX_NODES"] else None
            seed = None
            if board == "qemu-virt" and self.variant and not self.args.no_build:
                seed = Tree(self.tools, self.source_dir,
                            os.path.join(self.build_root, self._tree_name(board, max_nodes, None)),
                            board, override)
            self._trees[key] = Tree(self.tools, self.source_dir, path, board, override, self.variant,
                                    seed)
        return self._trees[key]

    def tools_tree(self):
        """The host tree whose launcher tools (tori-personality, tori-emu)
        the runtime check runs.  A test variant changes only the node's
        services, not these tools, so every variant shares the shipped
        run's tree instead of building its own."""
        if self.variant is None:
            return self.tree("host")
        key = ("host-tools",)
        if key not in self._trees:
            self._trees[key] = Tree(self.tools, self.source_dir,
                                    os.path.join(self.build_root, self._tree_name("host", None, None)),
                                    "host", None, None)
        return self._trees[key]

    def scratch(self, name):
        """A file or folder of this run under the build root, apart from
        another variant's run at the same time."""
        return os.path.join(self.build_root, f"{self.variant}.{name}" if self.variant else name)

    def built_tree(self, max_nodes=None):
        tree = self.tree("qemu-virt", max_nodes)
        if not self.args.no_build:
            tree.build("node")
        return tree

    def nodes(self):
        """N: --max-nodes, or the shipped CONFIG_MAX_NODES."""
        if self.max_nodes is None:
            self.max_nodes = self.shipped_config()["CONFIG_MAX_NODES"]
        return self.max_nodes

    def shipped_config(self):
        """CONFIG_* values of config/tori_config.h without overrides (host gcc -E)."""
        if self._config is None:
            names = probe.config_names(self.source_dir)
            source = "#include \"config/tori_config.h\"\n" + "".join(
                f"long long {n.lower()}_value = {n};\n" for n in names)
            # Evaluate by the host compiler's constant folding, read back via -S.
            result = subprocess.run([self.tools.host_cc or "gcc", "-x", "c", "-S", "-o", "-",
                                     "-I", self.source_dir, "-"], input=source, text=True,
                                    capture_output=True)
            values = {}
            current = None
            for line in result.stdout.splitlines():
                line = line.strip()
                if line.endswith(":") and line[:-1].endswith("_value"):
                    current = line[:-1]
                elif current and line.startswith(".quad"):
                    values[current] = int(line.split()[1], 0)
                    current = None
            self._config = {n: values[f"{n.lower()}_value"] for n in names
                            if f"{n.lower()}_value" in values}
            if "CONFIG_MAX_NODES" not in self._config:
                raise RuntimeError("cannot read CONFIG_MAX_NODES from config/tori_config.h: "
                                   + result.stderr.strip())
        return self._config

    # ----- the analysed image ----------------------------------------------

    def image(self):
        if self._image is None:
            tree = self.built_tree()
            self._image = Image(tree.build_dir, self.tools, self.source_dir)
        return self._image

    def graph(self):
        if self._graph is None:
            self._graph = CallGraph(self.image(), self.indirect)
        return self._graph

    def vectors(self):
        if self._vectors is None:
            self._vectors = VectorTable(self.image())
        return self._vectors

    def tree_config(self, tree, max_nodes_override=None):
        names = probe.config_names(self.source_dir)
        return probe.evaluate(tree, [(n, n, []) for n in names], max_nodes_override)

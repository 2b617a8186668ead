"""The import structure of ``src/odtkit``, read with ``ast`` (nothing is imported).

Issue 26: ``formulations/pruning.py`` and the ``pruning`` package imported each other through
five imports hidden inside functions -- a cycle that only stayed harmless because nobody lifted
them. These checks keep such cycles out:

* (a) an ``import`` inside a function of an odtkit module that would close a cycle if it stood
  at module level is refused (:data:`LAZY_CYCLES` would list any left on purpose, with why:
  none is); in the packages this issue untangled (:data:`NO_LAZY_ODTKIT`) no function imports
  an odtkit module at all;
* (b) the CLI (the package ``odtkit.cli``) imports no private name of the library (``odtkit._x``,
  ``from odtkit.x import _y``): what the command line needs has a public home; no subcommand
  module imports another, and no library module imports the CLI;
* (c) the module-level import graph has no cycle. An import of ``odtkit.p.m`` runs every
  package ``__init__`` on the way; an edge from a module to one of its *own* enclosing packages
  is not counted, because Python has started that ``__init__`` before the module (it is the
  accepted package-``__init__`` edge);
* (d) the combined graph (module-level and in-function imports together) has no cycle outside
  :data:`COMBINED_CYCLES` (named, each with why it stays: none does). (a) sees only a lazy edge
  that closes a cycle through module-level edges; two lazy imports can close one between them
  (issue 38: ``core.numeric`` imported ``methods`` for ``GUESS_ROUNDS`` inside a function while
  ``methods`` imports ``core`` inside its functions), which only (d) sees.
* (e) the tree search (``odtkit.core``) and ensemble pruning (``odtkit.pruning``) are siblings
  (issue 38): neither reaches the other through any chain of imports, module-level or inside
  functions; both reach the native extension ``odtkit._native`` directly.

Lazy imports of third-party modules (pyomo, pulp, highspy, sklearn, matplotlib, dask, tqdm,
skops) are not checked: they keep ``import odtkit`` and the CLI fast and optional extras
optional.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "odtkit"

#: Function-level imports that would be module-level cycles, left on purpose (importer, target):
#: why each one stays lazy. Anything else that closes a cycle fails (a). Empty since the last two
#: went (issue 26): check_dataset moved beside Dataset, and the search on a Dataset moved to
#: core/_binary.py below both search_tree and search_numeric.
LAZY_CYCLES: dict[tuple[str, str], str] = {}

#: Strongly connected components of the combined import graph (module-level and in-function
#: imports together) left on purpose, as sets of modules: why each stays. Any other cycle, and
#: any growth of one of these, fails (d). Empty since issue 38 moved ``GUESS_ROUNDS`` beside the
#: column readers (``datasets/_columns.py``), out of ``odtkit.methods``.
COMBINED_CYCLES: dict[frozenset[str], str] = {}

#: Packages and modules whose functions import no odtkit module at all (issue 26, point 4).
NO_LAZY_ODTKIT = (
    "odtkit.pruning",
    "odtkit.solvers",
    "odtkit._limits",
    "odtkit._validation",
    "odtkit.core.search",
    "odtkit.core._binary",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).parts)
    parts[-1] = parts[-1].split(".")[0]  # also _native.cpython-311-x86_64-linux-gnu.so
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _modules() -> set[str]:
    names = set(_sources())
    names |= {_module_name(p) for p in PACKAGE.rglob("*.so")}  # the native extension
    names |= {_module_name(p) for p in PACKAGE.rglob("*.pyi")}
    return names


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.Module) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """(module-level imports, imports inside functions), leaving out ``if TYPE_CHECKING:``."""
    top: list[ast.stmt] = []
    lazy: list[ast.stmt] = []

    def visit(nodes: list[ast.stmt], in_function: bool) -> None:
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                (lazy if in_function else top).append(node)
            elif isinstance(node, ast.If) and _is_type_checking(node):
                continue
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(node.body, True)  # type: ignore[arg-type]
            else:
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    children = getattr(node, name, None)
                    if isinstance(children, list):
                        visit(children, in_function)

    visit(tree.body, False)
    return top, lazy


def _targets(module: str, node: ast.stmt, modules: set[str], is_package: bool) -> list[str]:
    """The odtkit modules an import statement runs (the imported module and the packages on
    the way), except the importer's own enclosing packages (already initializing)."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join(package + ([base] if base else []))
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    out: list[str] = []
    for name in names:
        if name != "odtkit" and not name.startswith("odtkit."):
            continue
        while name not in modules and "." in name:
            name = name.rsplit(".", 1)[0]
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            target = ".".join(parts[:i])
            enclosing = module == target or module.startswith(target + ".")
            if target != module and (not enclosing or i == len(parts)):
                out.append(target)
    return [t for t in out if t != module and not module.startswith(t + ".")]


def _graph() -> tuple[nx.DiGraph, list[tuple[str, str, int]]]:
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    lazy_edges: list[tuple[str, str, int]] = []
    for module, path in _sources().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        top, lazy = _imports(tree)
        package = path.name == "__init__.py"
        for node in top:
            graph.add_edges_from((module, t) for t in _targets(module, node, modules, package))
        for node in lazy:
            lazy_edges += [
                (module, t, node.lineno) for t in _targets(module, node, modules, package)
            ]
    return graph, lazy_edges


def test_the_module_level_import_graph_has_no_cycle():
    graph, _ = _graph()
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, f"import cycles at module level: {cycles[:5]}"


def _combined_graph() -> nx.DiGraph:
    graph, lazy_edges = _graph()
    combined = graph.copy()
    combined.add_edges_from((importer, target) for importer, target, _ in lazy_edges)
    return combined


def test_the_combined_import_graph_has_no_cycle_outside_the_named_ones():
    combined = _combined_graph()
    components = [frozenset(c) for c in nx.strongly_connected_components(combined) if len(c) > 1]
    new = [c for c in components if c not in COMBINED_CYCLES]
    described = [
        " -> ".join(cycle + cycle[:1])
        for c in new
        for cycle in sorted(nx.simple_cycles(combined.subgraph(c)))[:5]
    ]
    assert not new, "import cycles (module-level and in-function imports):\n" + "\n".join(described)


def test_the_named_combined_cycles_are_still_cycles():
    # a named cycle that is gone (or changed) must leave the list, so that the list stays true
    components = {
        frozenset(c) for c in nx.strongly_connected_components(_combined_graph()) if len(c) > 1
    }
    stale = [sorted(c) for c in COMBINED_CYCLES if c not in components]
    assert not stale, f"no longer a cycle of the combined import graph: {stale}"


def test_no_function_level_import_hides_a_cycle():
    graph, lazy_edges = _graph()
    hidden = sorted(
        {
            f"{importer}:{line} imports {target}"
            for importer, target, line in lazy_edges
            if (importer, target) not in LAZY_CYCLES and nx.has_path(graph, target, importer)
        }
    )
    assert not hidden, "function-level imports that are module-level cycles:\n" + "\n".join(hidden)


def test_the_allowed_lazy_cycles_are_still_cycles():
    # an entry that no longer closes a cycle can be lifted to module level: then drop it here
    graph, lazy_edges = _graph()
    present = {(a, b) for a, b, _ in lazy_edges}
    for importer, target in LAZY_CYCLES:
        assert (importer, target) in present, f"{importer} no longer imports {target} lazily"
        assert nx.has_path(graph, target, importer), f"{importer} -> {target} is no cycle now"


@pytest.mark.parametrize("scope", NO_LAZY_ODTKIT)
def test_untangled_packages_import_odtkit_only_at_module_level(scope):
    _, lazy_edges = _graph()
    inside = sorted(
        {
            f"{importer}:{line} imports {target}"
            for importer, target, line in lazy_edges
            if importer == scope or importer.startswith(scope + ".")
        }
    )
    assert not inside, "\n".join(inside)


def _combined_graph() -> nx.DiGraph:
    graph, lazy_edges = _graph()
    graph.add_edges_from((a, b) for a, b, _ in lazy_edges)
    return graph


def _inside(module: str, scope: str) -> bool:
    return module == scope or module.startswith(scope + ".")


@pytest.mark.parametrize(
    ("importer", "target"), [("odtkit.pruning", "odtkit.core"), ("odtkit.core", "odtkit.pruning")]
)
def test_search_and_pruning_are_siblings(importer, target):
    # pruning needs the extension's min cut, not the tree searches: importing odtkit.core (its
    # __init__ loads every search) from pruning, or pruning from the search, is a layering error
    graph = _combined_graph()
    reached = sorted(
        f"{source} -> {reachable}"
        for source in graph
        if _inside(source, importer)
        for reachable in nx.descendants(graph, source)
        if _inside(reachable, target)
    )
    assert not reached, "\n".join(reached[:10])


@pytest.mark.parametrize("package", ["odtkit.pruning", "odtkit.core"])
def test_the_native_extension_is_a_sibling_of_search_and_pruning(package):
    graph = _combined_graph()
    assert "odtkit._native" in graph, "the extension's stub src/odtkit/_native.pyi is missing"
    users = {a for a, b in graph.in_edges("odtkit._native") if _inside(a, package)}
    assert users, f"no module of {package} imports odtkit._native"


#: The command line's subcommand modules (issue 38: ``cli.py`` split into a package), each a thin
#: adapter over the library beside the table door ``_tables`` and the shared ``_common``.
CLI_SUBCOMMANDS = tuple(
    f"odtkit.cli.{p.stem}"
    for p in sorted((PACKAGE / "cli").glob("_*.py"))
    if p.stem not in ("__init__", "__main__", "_common", "_tables")
)


def test_the_cli_imports_no_private_name_of_the_library():
    private = []
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("odtkit"):
                names = [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for name in names:
                if _inside(name, "odtkit.cli"):
                    continue  # the package's own modules
                parts = name.split(".")
                if parts[0] == "odtkit" and any(
                    p.startswith("_") and not p.startswith("__") for p in parts
                ):
                    private.append(f"cli/{path.name}:{node.lineno} {name}")
    assert not private, "the CLI imports private names:\n" + "\n".join(private)


def test_no_cli_subcommand_imports_another():
    assert {"odtkit.cli._fit", "odtkit.cli._predict", "odtkit.cli._compare"} <= set(CLI_SUBCOMMANDS)
    graph = _combined_graph()
    crossing = sorted(
        f"{a} -> {b}"
        for a, b in graph.edges
        if a in CLI_SUBCOMMANDS
        and any(_inside(b, other) for other in CLI_SUBCOMMANDS if other != a)
    )
    assert not crossing, "\n".join(crossing)


def test_the_library_never_imports_the_cli():
    graph = _combined_graph()
    inward = sorted(
        f"{a} -> {b}"
        for a, b in graph.edges
        if _inside(b, "odtkit.cli") and not _inside(a, "odtkit.cli")
    )
    assert not inward, "\n".join(inward)


def test_a_sweep_worker_runs_a_search_without_importing_scikit_learn():
    # scikit-learn's import is most of a spawned worker's start-up (issue 27: ~3 s of the ~3.4 s
    # of `import odtkit` on a loaded machine); a dp solve and a regularization path need none
    # of it (the Binarizer loads it only when a search reads raw columns)
    script = """
import sys
import odtkit
import odtkit.sweeping as sweeping
from odtkit.datasets import load

data = load("monk1")
folds = sweeping._Folds(data, None)
for index, lam in enumerate((None, 0.01)):
    task = sweeping._Task(index, "monk1", 0, 3, "dp", lam, None, 0.001, "highs")
    rows = sweeping.run_task(task, folds)
    assert rows and all(r["status"] == "optimal" for r in rows), rows
loaded = sorted(m for m in sys.modules if m == "sklearn" or m.startswith("sklearn."))
assert not loaded, loaded[:5]
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]

"""Module boundaries of the package, read from the source's syntax tree (nothing imported).

* No ``_private`` name crosses a module boundary: a module under ``engine/`` or ``app/``
  never does ``from X import _name`` nor reads ``X._name`` off an imported first-party
  module ``X``. What another module needs gets a public name where it is defined.
* No import circle inside ``engine``: the graph of every ``import`` and ``from ... import``
  between engine modules, at module level or inside functions, has no cycle. Imports
  under ``if TYPE_CHECKING:`` are left out: they never run, and they are how a lower layer
  names a higher layer's type (the import-linter contracts in ``pyproject.toml`` leave
  them out for the same reason).

Each failure names the file, the line and the name, or the modules of the cycle with the
line of each import.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = ("engine", "app")


def module_name(path: Path) -> str:
    """``engine/scan/pruning.py`` -> ``engine.scan.pruning``; a package's ``__init__.py``
    is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files(top: str) -> list[Path]:
    return sorted(p for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


MODULES: dict[str, Path] = {module_name(p): p for top in FIRST_PARTY for p in source_files(top)}
PACKAGES = {name for name, p in MODULES.items() if p.name == "__init__.py"}


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def absolute(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if module in PACKAGES else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


@dataclass(frozen=True)
class Import:
    line: int
    source: str  # the module named in the statement
    names: tuple[str, ...]  # the names taken from it (empty for ``import x``)
    bound: tuple[tuple[str, str], ...]  # (local name, module it refers to) for modules bound
    type_only: bool


def imports(module: str, tree: ast.AST) -> list[Import]:
    """Every import statement of a module, wherever it is, marked when it sits under
    ``if TYPE_CHECKING:``."""
    out: list[Import] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, ast.If) and is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, type_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = ((alias.asname, alias.name) if alias.asname
                         else (alias.name.split(".")[0], alias.name.split(".")[0]))
                out.append(Import(node.lineno, alias.name, (), (bound,), type_only))
            return
        if isinstance(node, ast.ImportFrom):
            source = absolute(module, node)
            names = tuple(a.name for a in node.names)
            bound = tuple((a.asname or a.name, f"{source}.{a.name}") for a in node.names
                          if f"{source}.{a.name}" in MODULES)
            out.append(Import(node.lineno, source, names, bound, type_only))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(tree, False)
    return out


@functools.cache
def parsed() -> dict[str, ast.AST]:
    return {name: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for name, path in MODULES.items()}


def first_party(module: str) -> bool:
    return module.split(".")[0] in FIRST_PARTY


def private_crossings(module: str, tree: ast.AST) -> list[str]:
    """``file:line: name`` for each private name this module takes from another."""
    rel = MODULES[module].relative_to(ROOT)
    found: list[str] = []
    modules_bound: dict[str, str] = {}
    for imp in imports(module, tree):
        if not first_party(imp.source):
            continue
        for local, target in imp.bound:
            modules_bound[local] = target
        if imp.source == module:
            continue
        for name in imp.names:
            if is_private(name):
                found.append(f"{rel}:{imp.line}: from {imp.source} import {name}")
    # X._name where X names a first-party module (``import engine.a.b as X``,
    # ``from engine.a import b as X``, or the dotted path ``engine.a.b._name``)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and is_private(node.attr)):
            continue
        dotted, value = [], node.value
        while isinstance(value, ast.Attribute):
            dotted.append(value.attr)
            value = value.value
        if not isinstance(value, ast.Name) or value.id not in modules_bound:
            continue
        target = ".".join([modules_bound[value.id], *reversed(dotted)])
        if target in MODULES and target != module:
            found.append(f"{rel}:{node.lineno}: {target}.{node.attr}")
    return found


def import_graph(trees: dict[str, ast.AST]) -> dict[str, dict[str, int]]:
    """engine module -> {engine module it imports at run time: line of the import}."""
    graph: dict[str, dict[str, int]] = {m: {} for m in MODULES if m.split(".")[0] == "engine"}
    for module, tree in trees.items():
        if module not in graph:
            continue
        for imp in imports(module, tree):
            if imp.type_only or imp.source.split(".")[0] != "engine":
                continue
            # ``import engine.a.b``: that module; ``from engine.a import b``: the submodule b
            # when there is one, else the module engine.a that defines b
            targets = [imp.source] if not imp.names else [
                f"{imp.source}.{n}" if f"{imp.source}.{n}" in MODULES else imp.source
                for n in imp.names]
            for target in targets:
                if target in graph and target != module:
                    graph[module].setdefault(target, imp.line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as one
    cycle through its modules, smallest module name first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[set[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            strong(v)
    out = []
    for comp in comps:
        start = min(comp)
        # a shortest way back to ``start`` inside the component (breadth first)
        prev: dict[str, str] = {}
        frontier, seen, end = [start], {start}, None
        while frontier and end is None:
            nxt = []
            for u in frontier:
                for w in sorted(graph[u]):
                    if w == start:
                        end = u
                        break
                    if w in comp and w not in seen:
                        seen.add(w)
                        prev[w] = u
                        nxt.append(w)
                if end is not None:
                    break
            frontier = nxt
        path = [end]
        while path[-1] != start:
            path.append(prev[path[-1]])
        out.append([*reversed(path), start])
    return sorted(out)


def describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    steps = [f"{MODULES[a].relative_to(ROOT)}:{graph[a][b]} imports {b}"
             for a, b in zip(cycle, cycle[1:])]
    return " -> ".join(cycle) + "\n    " + "\n    ".join(steps)


def test_no_private_name_crosses_a_module_boundary() -> None:
    trees = parsed()
    found = [hit for module, tree in trees.items() for hit in private_crossings(module, tree)]
    assert not found, ("private names imported across modules (give them a public name "
                       "where they are defined):\n" + "\n".join(found))


def test_no_import_circle_inside_engine() -> None:
    graph = import_graph(parsed())
    found = cycles(graph)
    assert not found, "import circles inside engine:\n" + "\n".join(describe(c, graph) for c in found)


def test_the_checks_see_what_they_must() -> None:
    """The two checks on a made-up module: a private import, a private attribute of an
    imported module, a function-level import closing a circle, a type-only import that
    does not."""
    tree = ast.parse(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from engine.scan import estimate\n"
        "from engine.scan.estimate import _encoded_bounds, range_bounds\n"
        "if TYPE_CHECKING:\n"
        "    from engine.policy.base import PlanGroup\n"
        "def f():\n"
        "    from engine.scan.window import WindowScans\n"
        "    return estimate._take, WindowScans\n")
    module = "engine.scan.endpoints"
    hits = private_crossings(module, tree)
    assert [h.split(": ", 1)[1] for h in hits] == [
        "from engine.scan.estimate import _encoded_bounds", "engine.scan.estimate._take"]
    graph = import_graph({module: tree})
    assert set(graph[module]) == {"engine.scan.estimate", "engine.scan.window"}
    graph["engine.scan.window"] = {module: 1}
    assert cycles(graph) == [["engine.scan.endpoints", "engine.scan.window", "engine.scan.endpoints"]]

"""The package's folders are its layers, and imports only go down.

The import graph is read from the source with :mod:`ast`, so every import counts: module-level,
function-level (lazy) and ``if TYPE_CHECKING:`` imports alike, absolute or relative, and
``importlib.import_module("reviewlab....")`` with a literal name.

Layers, bottom to top (a module may import its own layer and the layers below it):

- ``reviewlab.resources`` (-1): paths of the shipped files; imports nothing of reviewlab.
- ``reviewlab.core`` (0): deadlines, policy, narrowing, receipts, crediting, metrics, vocab.
- ``reviewlab.live`` (1): executor, episode loop, inspection tools, model adapters.
- ``reviewlab.recording`` (2), ``reviewlab.gateway`` (2.5: the MCP gateway, which bounds with
  ``live`` and records with ``recording``), ``reviewlab.engines`` (3), ``reviewlab.analysis``
  (4), ``reviewlab.ui`` (5).
- the top (6): ``reviewlab`` itself (``__init__``), ``__main__``, ``cli``, ``_cli_commands``,
  and ``reviewlab.testing`` (builders, strategies, the engine-conformance suite, which drives
  every engine and the CLI; the package never imports it).

Within one layer any import is allowed as long as no module takes part in a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import reviewlab

PACKAGE_DIR = Path(reviewlab.__file__).resolve().parent
"""The source of the package under test (the shipped data folder holds no package modules)."""

TOP = 6.0
"""The layer of the package's entry points: ``reviewlab/__init__``, ``__main__`` and the CLI."""

LAYERS: dict[str, float] = {
    "resources": -1.0,
    "core": 0.0,
    "live": 1.0,
    "testing": TOP,
    "recording": 2.0,
    "gateway": 2.5,
    "engines": 3.0,
    "analysis": 4.0,
    "ui": 5.0,
    "__main__": TOP,
    "cli": TOP,
}
"""The layer of each first-level name under the package (its ``__init__`` is :data:`TOP`)."""


@dataclass(frozen=True)
class Edge:
    """One import statement: ``importer`` imports ``imported`` at ``line`` of its file."""

    importer: str
    imported: str
    line: int


def module_files(package_dir: Path, package: str) -> dict[str, Path]:
    """Every module of the package by dotted name, skipping the shipped ``data`` folder."""
    found: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        relative = path.relative_to(package_dir)
        if relative.parts[0] == "data":
            continue
        parts = [package, *relative.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve_relative(importer: str, is_package: bool, level: int, module: str | None) -> str:
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def _targets(node: ast.AST, importer: str, is_package: bool) -> Iterator[tuple[str, list[str]]]:
    """The modules one AST node imports: (module, names imported from it)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name, []
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            module = _resolve_relative(importer, is_package, node.level, node.module)
        else:
            module = node.module or ""
        yield module, [alias.name for alias in node.names]
    elif isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("import_module", "__import__") and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value, []


def import_edges(package_dir: Path, package: str) -> list[Edge]:
    """Every import between modules of the package, wherever it stands in the file."""
    modules = module_files(package_dir, package)
    edges: list[Edge] = []
    for importer, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for module, names in _targets(node, importer, is_package):
                if module != package and not module.startswith(package + "."):
                    continue
                # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
                submodules = [f"{module}.{name}" for name in names if f"{module}.{name}" in modules]
                plain = [name for name in names if f"{module}.{name}" not in modules]
                targets = submodules + ([module] if plain or not names else [])
                for target in targets:
                    while target not in modules and "." in target:
                        target = target.rsplit(".", 1)[0]
                    edges.append(Edge(importer, target, getattr(node, "lineno", 0)))
    return edges


def layer_of(module: str, layers: dict[str, float] = LAYERS) -> float:
    """The layer of a dotted module name (the package itself is the top)."""
    parts = module.split(".")
    if len(parts) == 1:
        return TOP
    if parts[1] not in layers:
        raise AssertionError(f"{module} is in no layer: add {parts[1]!r} to LAYERS")
    return layers[parts[1]]


def upward_imports(edges: list[Edge], layers: dict[str, float] = LAYERS) -> list[str]:
    """``importer → imported`` for every import of a higher layer, with file line."""
    return sorted(
        f"{e.importer} (layer {layer_of(e.importer, layers):g}) → {e.imported} "
        f"(layer {layer_of(e.imported, layers):g}), line {e.line}"
        for e in edges
        if layer_of(e.imported, layers) > layer_of(e.importer, layers)
    )


def cycles(edges: list[Edge]) -> list[list[str]]:
    """One cycle (a closed path of modules) for every strongly connected group of modules."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.importer, set()).add(e.imported)
        graph.setdefault(e.imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            group: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph[node]:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_closed_path(graph, group) for group in groups]


def _closed_path(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for succ in sorted(graph[node] & group):
                if succ == start:
                    return [*paths[node], start]
                if succ not in paths:
                    paths[succ] = [*paths[node], succ]
                    nxt.append(succ)
        frontier = nxt
    raise AssertionError(f"no closed path in {sorted(group)}")


def test_every_module_has_a_layer() -> None:
    """Each module of the package belongs to one of the declared layers."""
    for module in module_files(PACKAGE_DIR, "reviewlab"):
        layer_of(module)


def test_no_module_takes_part_in_an_import_cycle() -> None:
    """The import graph of reviewlab, lazy and type-checking imports included, has no cycle."""
    found = cycles(import_edges(PACKAGE_DIR, "reviewlab"))
    assert not found, "import cycles:\n" + "\n".join(" → ".join(c) for c in found)


def test_imports_only_go_down_the_layers() -> None:
    """No module imports a module of a higher layer."""
    found = upward_imports(import_edges(PACKAGE_DIR, "reviewlab"))
    assert not found, "upward imports:\n" + "\n".join(found)


def test_resources_imports_nothing_of_the_package() -> None:
    """``reviewlab.resources`` is a leaf: any layer may ask it for a shipped path."""
    edges = [e for e in import_edges(PACKAGE_DIR, "reviewlab") if e.importer.endswith("resources")]
    assert edges == []


def test_core_imports_no_other_layer() -> None:
    """The decision core stands alone: it imports nothing of reviewlab outside ``core``."""
    edges = import_edges(PACKAGE_DIR, "reviewlab")
    outside = [
        e
        for e in edges
        if e.importer.startswith("reviewlab.core")
        and not e.imported.startswith("reviewlab.core")
        and e.imported != "reviewlab.resources"
    ]
    assert outside == []


@pytest.fixture
def toy_package(tmp_path: Path) -> Path:
    """A small package with a lazy upward import, a type-checking import and a relative cycle."""
    root = tmp_path / "toy"
    (root / "core").mkdir(parents=True)
    (root / "ui").mkdir()
    (root / "__init__.py").write_text("")
    (root / "core" / "__init__.py").write_text("")
    (root / "ui" / "__init__.py").write_text("")
    (root / "core" / "a.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from toy.ui.view import View\n"
        "def f():\n"
        "    from . import b\n"
    )
    (root / "core" / "b.py").write_text("import toy.core.a\n")
    (root / "ui" / "view.py").write_text(
        "def g():\n    import importlib\n    importlib.import_module('toy.core.b')\n"
    )
    return root


def test_the_graph_sees_lazy_relative_and_type_checking_imports(toy_package: Path) -> None:
    """The checker reports a function-level relative cycle and a ``TYPE_CHECKING`` upward import."""
    layers = {"core": 0.0, "ui": 5.0}
    edges = import_edges(toy_package, "toy")
    pairs = {(e.importer, e.imported) for e in edges}
    assert pairs == {
        ("toy.core.a", "toy.ui.view"),
        ("toy.core.a", "toy.core.b"),
        ("toy.core.b", "toy.core.a"),
        ("toy.ui.view", "toy.core.b"),
    }
    assert cycles(edges) == [["toy.core.a", "toy.core.b", "toy.core.a"]]
    assert upward_imports(edges, layers) == ["toy.core.a (layer 0) → toy.ui.view (layer 5), line 3"]


MAX_MODULE_LINES = 600
"""Style rule 1: a module holds one concept, roughly 100–400 lines; past 600 it is two."""


def test_no_module_is_over_600_lines() -> None:
    """Every module of the package stays within :data:`MAX_MODULE_LINES` lines."""
    long = [
        f"{module}: {count} lines"
        for module, path in module_files(PACKAGE_DIR, "reviewlab").items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert long == [], "split these modules:\n" + "\n".join(long)

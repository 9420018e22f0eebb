"""The public surface is honest: declared once, one home per name, docstrings everywhere.

- Only packages export: every module that is not a package's ``__init__`` (``__main__`` aside)
  is private (``_name``).
- Every public module of the package has an ``__all__``, sorted the way ``ruff`` (RUF022) sorts
  it: SCREAMING_CASE constants, then CamelCase classes and aliases, then the rest, each group in
  natural order. It lists only names the module really has. A private module (``_name``) has
  none: what it holds is public only where a public package exports it.
- At most :data:`MAX_PUBLIC_NAMES` distinct names are public (a ratchet: it only goes down).
- One home per name: a name exported by several modules is the same object everywhere, and a
  class or function defined in a public module is exported by it. No object is exported under
  two names (a duplicate alias), and a class or function is exported under its own name.
- Every public class and function (not ``_private``, in a module that is not ``_private``) has a
  docstring, and so has every public method, property and class method of a public class.
  Dunder methods are exempt: the language documents them.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import reviewlab

PACKAGE_DIR = Path(reviewlab.__file__).resolve().parent


def module_names() -> list[str]:
    """Every module of the package by dotted name (the shipped ``data`` folder holds none)."""
    names = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(PACKAGE_DIR)
        if relative.parts[0] == "data":
            continue
        parts = ["reviewlab", *relative.with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


MODULES = module_names()
MAX_PUBLIC_NAMES = 380
"""Today's count of distinct public names (issue 31 asked for at most 400), so the surface cannot
grow unnoticed: a new public name means raising this on purpose."""


def is_private(module: str) -> bool:
    """A module is private when one part of its dotted name starts with ``_`` (not a dunder)."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def ruff_all_key(name: str) -> tuple[int, list[Any]]:
    """The order of ruff's RUF022: SCREAMING_CASE, then CamelCase, then the rest; natural order."""
    if len(name) > 1 and name.upper() == name:
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    natural = [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
    return group, natural


def declared_all(module: str) -> list[str] | None:
    """The module's ``__all__`` as written in its source, or ``None`` when it has none."""
    path = module_path(module)
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            assert node.value is not None
            value = ast.literal_eval(node.value)
            assert isinstance(value, list | tuple), f"{module}: __all__ must be a literal list"
            return list(value)
    return None


def module_path(module: str) -> Path:
    """The source file of a dotted module name."""
    relative = Path(*module.split(".")[1:])
    package = PACKAGE_DIR / relative / "__init__.py"
    return package if package.exists() else (PACKAGE_DIR / relative).with_suffix(".py")


def load(module: str) -> ModuleType:
    """Import a module of the package."""
    return importlib.import_module(module)


def exports() -> list[tuple[str, str, Any]]:
    """``(module, name, object)`` for every name of every ``__all__``."""
    found = []
    for module in MODULES:
        names = declared_all(module) or []
        mod = load(module)
        for name in names:
            found.append((module, name, getattr(mod, name, _MISSING)))
    return found


_MISSING = object()


def defined_here(obj: Any) -> bool:
    """True for the classes and functions whose home a test can tell (``__module__``)."""
    return inspect.isclass(obj) or inspect.isfunction(obj)


@pytest.mark.parametrize("module", [m for m in MODULES if not is_private(m)])
def test_every_public_module_has_a_sorted_all_of_names_it_has(module: str) -> None:
    """``__all__`` exists, is sorted as RUF022 sorts it, has no repeats, lists only real names."""
    names = declared_all(module)
    assert names is not None, f"{module} has no __all__"
    assert names == sorted(names, key=ruff_all_key), f"{module}: __all__ is not sorted"
    assert len(set(names)) == len(names), f"{module}: __all__ repeats a name"
    mod = load(module)
    missing = [name for name in names if not hasattr(mod, name)]
    assert missing == [], f"{module}: __all__ lists names it does not have: {missing}"


def test_only_packages_export() -> None:
    """Only a package's ``__init__`` (and the ``__main__`` entry point) is a public module: every
    other module is private (``_name``), so what a package exports is what its ``__all__`` says."""
    public_files = [
        m for m in MODULES if not is_private(m) and module_path(m).name != "__init__.py"
    ]
    assert public_files == ["reviewlab.__main__"], "public modules that are not packages:\n" + (
        "\n".join(public_files)
    )


def test_no_private_module_declares_an_all() -> None:
    """A private module exports nothing: its names are public where a public package says so."""
    declaring = [m for m in MODULES if is_private(m) and declared_all(m) is not None]
    assert not declaring, "private modules with an __all__:\n" + "\n".join(declaring)


def test_the_public_surface_has_at_most_its_budget_of_names() -> None:
    """Every ``__all__`` together names at most MAX_PUBLIC_NAMES distinct names (lower it when
    names leave)."""
    names = {name for _, name, _ in exports()}
    assert len(names) <= MAX_PUBLIC_NAMES, f"{len(names)} public names, over {MAX_PUBLIC_NAMES}"


def test_a_name_exported_twice_is_one_object() -> None:
    """Every module exporting a name exports the very same object."""
    homes: dict[str, tuple[str, Any]] = {}
    clashes = []
    for module, name, obj in exports():
        if name in homes and homes[name][1] is not obj:
            clashes.append(f"{name}: {homes[name][0]} and {module} export different objects")
        homes.setdefault(name, (module, obj))
    assert not clashes, "\n".join(clashes)


def test_classes_and_functions_are_exported_by_their_home_under_their_own_name() -> None:
    """A re-exported class or function is also exported by the module defining it, by its name,
    unless that module is private (it exports nothing; a public module says what is public)."""
    listed = {(module, name) for module, name, _ in exports()}
    problems = []
    for module, name, obj in exports():
        if not defined_here(obj) or not obj.__module__.startswith("reviewlab"):
            continue
        if obj.__name__ != name:
            problems.append(f"{module}.{name} is an alias of {obj.__module__}.{obj.__name__}")
        elif not is_private(obj.__module__) and (obj.__module__, name) not in listed:
            problems.append(f"{module}.{name}: its home {obj.__module__} does not export it")
    assert not problems, "\n".join(problems)


def test_no_object_is_exported_under_two_names() -> None:
    """No duplicate aliases: each class, function or type alias has exactly one public name."""
    names: dict[int, set[str]] = {}
    objects: dict[int, Any] = {}  # keeps every object alive, so no id is reused
    for _module, name, obj in exports():
        if isinstance(obj, str | bytes | int | float | bool | tuple | frozenset) or obj is None:
            continue  # equal constants may share an object; their names are what matters
        if inspect.ismodule(obj):
            continue
        names.setdefault(id(obj), set()).add(name)
        objects[id(obj)] = obj
    duplicates = sorted(" = ".join(sorted(group)) for group in names.values() if len(group) > 1)
    assert not duplicates, "one object, several names:\n" + "\n".join(duplicates)


def public_definitions(source: str) -> list[tuple[str, ast.AST]]:
    """``(qualified name, node)`` of the public classes, functions and methods of a source."""
    tree = ast.parse(source)
    found: list[tuple[str, ast.AST]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            if node.name.startswith("_"):
                continue
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if any(d.endswith((".setter", ".deleter", "overload")) for d in decorators):
                continue  # the getter, or the implementation, carries the docstring
            found.append((prefix + node.name, node))
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


@pytest.mark.parametrize("module", [m for m in MODULES if not is_private(m)])
def test_every_public_class_function_and_method_has_a_docstring(module: str) -> None:
    """Public classes, functions, methods and properties state what they are for."""
    missing = [
        f"{module}.{name} (line {node.lineno})"  # type: ignore[attr-defined]
        for name, node in public_definitions(module_path(module).read_text(encoding="utf-8"))
        if ast.get_docstring(node) is None  # type: ignore[arg-type]
    ]
    assert not missing, "no docstring:\n" + "\n".join(missing)


def test_the_checks_see_what_they_must() -> None:
    """The sort key is ruff's; the docstring walk finds methods, skips dunders and setters."""
    names = ["load", "Episode", "SCHEMA_VERSION", "Call2", "Call10", "FRAME_COLUMNS"]
    assert sorted(names, key=ruff_all_key) == [
        "FRAME_COLUMNS",
        "SCHEMA_VERSION",
        "Call2",
        "Call10",
        "Episode",
        "load",
    ]
    assert is_private("reviewlab.live._confine") and not is_private("reviewlab.__main__")
    source = (
        "class A:\n"
        '    """doc"""\n'
        "    def __repr__(self): return ''\n"
        "    @property\n"
        "    def x(self): return 1\n"
        "    @x.setter\n"
        "    def x(self, v): pass\n"
        "    def _hidden(self): pass\n"
        "def f():\n"
        '    """doc"""\n'
    )
    found = public_definitions(source)
    assert [name for name, _ in found] == ["A", "A.x", "f"]
    assert [name for name, node in found if ast.get_docstring(node) is None] == ["A.x"]  # type: ignore[arg-type]
    path = PACKAGE_DIR / "core" / "_vocab.py"
    assert module_path("reviewlab.core._vocab") == path
    assert module_path("reviewlab.core") == PACKAGE_DIR / "core" / "__init__.py"


TOPICS = (
    "Policy",
    "Deadlines",
    "Run live",
    "Record",
    "Open and replay",
    "Analyse",
    "Test",
)
"""The topics of the top-level table of contents, in order."""


def table_of_contents(doc: str) -> dict[str, list[str]]:
    """The ``Topic:`` headings of a module docstring and the names indented under each."""
    groups: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in doc.splitlines():
        heading = re.fullmatch(r"([A-Z][A-Za-z ]*):", line.strip())
        if heading and not line.startswith(" "):
            current = groups.setdefault(heading.group(1), [])
        elif current is not None and line.startswith("    ") and line.strip():
            current.extend(name.strip() for name in line.split(",") if name.strip())
        elif not line.strip():
            current = None
    return groups


def test_the_top_level_is_a_table_of_contents_by_topic() -> None:
    """``reviewlab``'s docstring groups every exported name under exactly one topic, in order,
    and the topics hold the names a notebook user needs (SimPy's table-of-contents check)."""
    groups = table_of_contents(reviewlab.__doc__ or "")
    assert list(groups) == list(TOPICS)
    listed = [name for names in groups.values() for name in names]
    assert len(listed) == len(set(listed)), "a name is listed under two topics"
    assert sorted(listed) == sorted(reviewlab.__all__)
    for name, topic in {
        "Policy": "Policy",
        "open_corpus": "Open and replay",
        "replay": "Open and replay",
        "replay_bounds": "Open and replay",
        "sweep": "Analyse",
        "recommend": "Analyse",
        "longest_silences": "Analyse",
        "Recorder": "Record",
        "ToolCallLog": "Record",
        "bounded_tool": "Run live",
        "BoundedExecutor": "Run live",
        "AsyncBoundedExecutor": "Run live",
        "MCPServer": "Run live",
        "ReviewEpisode": "Run live",
    }.items():
        assert name in groups[topic], f"{name} belongs under {topic}"


def test_the_table_of_contents_reader_sees_groups() -> None:
    """The reader splits headings and comma lists, and a name outside a group is not counted."""
    doc = "Intro:\nnot a group line\n\nA:\n    x, y,\n    z\nB:\n    w\n\nloose, name\n"
    assert table_of_contents(doc) == {"Intro": [], "A": ["x", "y", "z"], "B": ["w"]}

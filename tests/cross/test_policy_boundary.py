"""Only ``Policy`` travels inside: a bare rule (with ``narrowing=``) becomes a ``Policy`` once, at
the public function the user called, and nowhere else.

Read with :mod:`ast` over every module of ``reviewlab/``: each call ``Policy.of(...)`` belongs to
the function that holds it (a nested function to the function around it). That function must be
public (exported by a package's ``__all__``, or a public method of an exported class), and it
converts at most once. Internal functions receive a ``Policy``.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections import Counter
from pathlib import Path

import reviewlab

PACKAGE_DIR = Path(reviewlab.__file__).resolve().parent

NOT_YET: set[str] = set()
"""Internal functions that still convert a bare rule, each to be given a ``Policy`` by its caller.
Only shrinks."""


def conversions(source: str) -> list[str]:
    """The qualified name of the outermost function or method around each ``Policy.of`` call
    (``Class.method``, ``function``; ``<module>`` at module level)."""
    found: list[str] = []

    def visit(node: ast.AST, owner: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            here = owner
            if isinstance(child, ast.ClassDef) and len(owner) == 0:
                here = [child.name]
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                is_method = len(owner) == 1 and isinstance(node, ast.ClassDef)
                top = len(owner) == 0
                if top or is_method:
                    here = [*owner, child.name]
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr == "of"
                and isinstance(child.func.value, ast.Name)
                and child.func.value.id == "Policy"
            ):
                found.append(".".join(owner) or "<module>")
            visit(child, here)

    visit(ast.parse(source), [])
    return found


def public_callables() -> set[str]:
    """``module::qualname`` of every function exported by a package and every public method of an
    exported class, at the module that defines it."""
    found: set[str] = set()
    for init in sorted(PACKAGE_DIR.rglob("__init__.py")):
        parts = init.parent.relative_to(PACKAGE_DIR.parent).parts
        if "data" in parts[1:2]:
            continue
        package = importlib.import_module(".".join(parts))
        for name in getattr(package, "__all__", []):
            obj = getattr(package, name)
            if inspect.isfunction(obj):
                found.add(f"{obj.__module__}::{obj.__qualname__}")
            elif inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    function = getattr(member, "__func__", member)
                    if inspect.isfunction(function):
                        found.add(f"{obj.__module__}::{obj.__qualname__}.{attr}")
    return found


def module_of(path: Path) -> str:
    """The dotted module name of a source file of the package."""
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def every_conversion() -> Counter[str]:
    """``module::function`` → how many ``Policy.of`` calls it makes, over the whole package."""
    counts: Counter[str] = Counter()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for owner in conversions(path.read_text(encoding="utf-8")):
            counts[f"{module_of(path)}::{owner}"] += 1
    return counts


def test_only_public_functions_convert_a_bare_rule() -> None:
    """Every ``Policy.of`` call is in a public function or method (internal code gets a Policy)."""
    public = public_callables()
    internal = sorted(
        site for site in every_conversion() if site not in public and site not in NOT_YET
    )
    assert internal == [], "internal functions converting a bare rule:\n" + "\n".join(internal)


def test_a_public_function_converts_at_most_once() -> None:
    """No public function converts twice: one conversion at the boundary, then a Policy."""
    twice = sorted(site for site, count in every_conversion().items() if count > 1)
    assert twice == [], "functions converting more than once:\n" + "\n".join(twice)


def test_the_not_yet_list_only_shrinks() -> None:
    """A listed function that no longer converts must leave :data:`NOT_YET`."""
    stale = sorted(NOT_YET - set(every_conversion()))
    assert stale == [], "remove from NOT_YET:\n" + "\n".join(stale)


def test_the_reader_sees_what_it_must() -> None:
    """The reader attributes calls to the outermost function or method, nested ones included."""
    source = (
        "x = Policy.of(None)\n"
        "def f():\n"
        "    def g():\n"
        "        return Policy.of(1)\n"
        "    return Policy.of(2)\n"
        "class C:\n"
        "    def m(self):\n"
        "        return Policy.of(3)\n"
        "def h():\n"
        "    return Policy(timeouts=1)\n"
    )
    assert conversions(source) == ["<module>", "f", "f", "C.m"]

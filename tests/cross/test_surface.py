"""The package's functions stay small: none longer than 100 lines, none taking more than 8
parameters except the documented entry points.

Measured with :mod:`ast` over every module of ``reviewlab/``: a function's length is its lines
from ``def`` to its last line (decorators not counted); its parameters are every name it
takes (positional-only, positional, ``*args``, keyword-only, ``**kwargs``), without the
``self`` or ``cls`` of a method. A function is named ``path::Qualified.name`` (a nested
function under the function that holds it; overloads share their name).

:data:`NOT_YET` lists the known offenders still to split, each with the room that owns it.
It may only shrink: a new offender fails, and so does a listed one that no longer offends
(remove it from the list).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import reviewlab

PACKAGE_DIR = Path(reviewlab.__file__).resolve().parent
ROOT = PACKAGE_DIR.parent

MAX_LINES = 100
"""The longest a function may be."""
MAX_PARAMETERS = 8
"""The most parameters a function may take, the entry points of :data:`ENTRY_POINTS` aside."""

ENTRY_POINTS: dict[str, str] = {
    "reviewlab/engines/_replay.py::replay": (
        "design.md §3: the one dispatch; takes a bare rule with narrowing= and every replay option"
    ),
    "reviewlab/analysis/sweep/_run.py::sweep": (
        "issue 31 item 2: a documented entry point, its replay options beside the grid"
    ),
    "reviewlab/analysis/_tune.py::recommend": (
        "issue 31 item 2: a documented entry point; its budgets, rules and search are keywords"
    ),
    "reviewlab/live/_episode.py::ReviewEpisode.__init__": (
        "design.md §3 promises this constructor's keywords (policy, narrowing, deadline_at, ...)"
    ),
    "reviewlab/recording/capture/_live.py::record_live": (
        "documented (docs/recording-format.md): a live run captured with ReviewEpisode's keywords"
    ),
    "reviewlab/engines/twin/_engine.py::simulate": (
        "exported by reviewlab.engines.twin and on its API page; its keywords are Twin's options"
    ),
    "reviewlab/live/mcp/_server.py::MCPServer.__init__": (
        "documented in docs/mcp.md and on its API page: users pass its keywords (url=, cwd=, ...)"
    ),
    "reviewlab/testing/_strategies.py::corpora": (
        "a public Hypothesis strategy of reviewlab.testing (docs/architecture.md, API page)"
    ),
}
"""Documented entry points allowed more than :data:`MAX_PARAMETERS` parameters, with why."""

NOT_YET: dict[tuple[str, str], str] = {}
"""Known offenders still to split: (function, rule broken) → the room that owns it. Only
shrinks."""


@dataclass(frozen=True)
class Measured:
    """One function's size: its name, first line, length in lines and parameter count."""

    name: str
    line: int
    lines: int
    parameters: int


def parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> int:
    """Every name a function takes, without a method's ``self`` or ``cls``."""
    args = node.args
    count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
    count += (args.vararg is not None) + (args.kwarg is not None)
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    positional = [*args.posonlyargs, *args.args]
    if in_class and not static and positional and positional[0].arg in ("self", "cls"):
        count -= 1
    return count


def measure(source: str, path: str) -> Iterator[Measured]:
    """Every function of a module's ``source``, named ``path::Qualified.name``."""

    def visit(node: ast.AST, prefix: str, in_class: bool) -> Iterator[Measured]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.", True)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                end = child.end_lineno if child.end_lineno is not None else child.lineno
                yield Measured(
                    f"{path}::{prefix}{child.name}",
                    child.lineno,
                    end - child.lineno + 1,
                    parameter_count(child, in_class),
                )
                yield from visit(child, f"{prefix}{child.name}.", False)
            else:
                yield from visit(child, prefix, in_class)

    yield from visit(ast.parse(source), "", False)


def package_functions() -> list[Measured]:
    """Every function of every module under ``reviewlab/``."""
    found: list[Measured] = []
    for module in sorted(PACKAGE_DIR.rglob("*.py")):
        path = module.relative_to(ROOT).as_posix()
        found.extend(measure(module.read_text(encoding="utf-8"), path))
    return found


FUNCTIONS = package_functions()


def offenders(rule: str) -> dict[str, Measured]:
    """The functions breaking ``rule`` (``"lines"`` or ``"parameters"``), by name."""
    if rule == "lines":
        return {f.name: f for f in FUNCTIONS if f.lines > MAX_LINES}
    return {f.name: f for f in FUNCTIONS if f.parameters > MAX_PARAMETERS}


def test_the_measure_counts_lines_and_parameters_as_defined() -> None:
    """A hand-written module measures as counted by hand: ``self`` dropped, ``*args``,
    keyword-only and ``**kwargs`` counted, a nested function named under its holder."""
    source = (
        "class A:\n"
        "    def m(self, a, /, b, *rest, c, **more):\n"
        "        def inner(x):\n"
        "            return x\n"
        "        return inner\n"
        "    @staticmethod\n"
        "    def s(self, y):\n"
        "        return y\n"
        "async def f(cls):\n"
        "    pass\n"
    )
    got = {m.name: (m.line, m.lines, m.parameters) for m in measure(source, "x.py")}
    assert got == {
        "x.py::A.m": (2, 4, 5),
        "x.py::A.m.inner": (3, 2, 1),
        "x.py::A.s": (7, 2, 2),
        "x.py::f": (9, 2, 1),
    }


def test_no_function_is_longer_than_100_lines() -> None:
    """Every function of the package is at most 100 lines, but the known ones still listed."""
    known = {name for name, rule in NOT_YET if rule == "lines"}
    new = [f for name, f in offenders("lines").items() if name not in known]
    assert not new, "functions longer than 100 lines (split them into steps):\n" + "\n".join(
        f"  {f.name} (line {f.line}): {f.lines} lines" for f in new
    )


def test_no_function_but_an_entry_point_takes_more_than_8_parameters() -> None:
    """Every function takes at most 8 parameters, but the documented entry points and the known
    ones still listed."""
    known = {name for name, rule in NOT_YET if rule == "parameters"}
    new = [
        f
        for name, f in offenders("parameters").items()
        if name not in known and name not in ENTRY_POINTS
    ]
    assert not new, (
        "functions taking more than 8 parameters (group related ones into a small frozen "
        "record, or pass an existing object):\n"
        + "\n".join(f"  {f.name} (line {f.line}): {f.parameters} parameters" for f in new)
    )


def test_the_not_yet_list_only_shrinks() -> None:
    """Every function still listed as a known offender exists and still breaks its rule: one that
    was fixed (or renamed) must leave the list."""
    fixed = [
        f"  {name} ({rule}, room {room})"
        for (name, rule), room in NOT_YET.items()
        if name not in offenders(rule)
    ]
    assert not fixed, "no longer offending: remove from NOT_YET:\n" + "\n".join(fixed)


def test_every_entry_point_allowed_exists() -> None:
    """Every allowed entry point names a function the package has, with a reason."""
    names = {f.name for f in FUNCTIONS}
    missing = [name for name in ENTRY_POINTS if name not in names]
    assert not missing, "allowed entry points that no longer exist: " + ", ".join(missing)
    assert all(reason.strip() for reason in ENTRY_POINTS.values())

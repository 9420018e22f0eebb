"""Docstrings stay true and short: every reference resolves, every cited docs section exists.

- Every dotted ``reviewlab.`` reference in a docstring or attribute docstring, in a Sphinx
  role (``:mod:``, ``:func:``, ``:class:``, ``:meth:``, ``:attr:``, ``:data:``, ``:obj:``,
  ``:exc:``; ``~`` allowed, a reference may wrap across lines), names something that exists.
- No docstring cites a "design §": the design notes are not in the repository; the long
  explanations live in ``docs/`` and the code cites them by section name, as
  ``docs/semantics.md, "What a replay assumes"`` — and each cited section is a heading there.
- A module docstring is at most :data:`MAX_MODULE_DOC_LINES` lines: purpose, lifecycle,
  invariants (style rule 15); the essays belong in ``docs/``.
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import reviewlab

PACKAGE_DIR = Path(reviewlab.__file__).resolve().parent
REPO = PACKAGE_DIR.parent

MAX_MODULE_DOC_LINES = 15
"""Style rule 15: a module head is a few lines of purpose and invariants."""

LONG_MODULE_DOCS: dict[str, str] = {
    "reviewlab/__init__.py": "the table of contents of the public names, grouped by topic "
    "(tests/test_exports.py reads it); it lists names, not prose",
}
"""Module docstrings allowed past the limit, each with its reason."""

ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|obj|exc):`~?([^`]+)`")
"""A Sphinx cross-reference; group 1 is its target (or ``title <target>``)."""

CITATION = re.compile(r"docs/([\w.-]+\.md),?\s+\"([^\"]+)\"")
"""A citation of a docs section by name: ``docs/semantics.md, "Section"``."""


def package_files() -> list[Path]:
    """Every source file of the package, without the shipped data folder."""
    return [
        path
        for path in sorted(PACKAGE_DIR.rglob("*.py"))
        if path.relative_to(PACKAGE_DIR).parts[0] != "data"
    ]


def relative(path: Path) -> str:
    """The path as the repository names it (as given when outside it)."""
    resolved = path.resolve()
    return resolved.relative_to(REPO).as_posix() if resolved.is_relative_to(REPO) else str(path)


def docstrings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of every docstring and attribute docstring: every string statement."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value


def role_targets(text: str) -> list[str]:
    """The targets of the roles in ``text``, with whitespace inside a wrapped target removed."""
    targets = []
    for raw in ROLE.findall(text):
        inner = re.search(r"<([^<>]+)>", raw)
        target = inner.group(1) if inner else raw
        targets.append("".join(target.split()))
    return targets


def resolves(name: str) -> bool:
    """True when ``name`` is a module, or an attribute (or a declared field) of one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for position, part in enumerate(parts[cut:], start=cut):
            if hasattr(obj, part):
                obj = getattr(obj, part)
                continue
            last = position == len(parts) - 1
            fields = {
                *getattr(obj, "__annotations__", {}),
                *getattr(obj, "__dataclass_fields__", {}),
                *getattr(obj, "model_fields", {}),
                *getattr(obj, "__slots__", ()),
            }
            return last and part in fields
        return True
    return False


def stale_references(path: Path) -> list[str]:
    """``file:line: reference`` for every role target that does not resolve."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for line, text in docstrings(tree):
        for target in role_targets(text):
            if target.startswith("reviewlab.") and not resolves(target):
                found.append(f"{relative(path)}:{line}: {target}")
    return found


def texts_with_citations(path: Path) -> Iterator[tuple[int, str]]:
    """Every string constant and every comment of a source file, with its line."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def heading_names(document: Path) -> set[str]:
    """The section names of a Markdown document: heading text without its number
    (``7.``, ``3a.``) or backticks, with and without a trailing parenthesis."""
    names = set()
    for line in document.read_text(encoding="utf-8").splitlines():
        match = re.match(r"#+\s+(.*)", line)
        if not match:
            continue
        name = re.sub(r"^\d+[a-z]?\.\s+", "", match.group(1).strip()).replace("`", "")
        names.add(" ".join(name.split()))
        names.add(" ".join(re.sub(r"\s+\([^()]*\)$", "", name).split()))
    return names


def missing_sections(path: Path) -> list[str]:
    """``file:line: docs/x.md, "Section"`` for every citation of a section that is not there."""
    found = []
    for line, text in texts_with_citations(path):
        for document, section in CITATION.findall(text):
            name = " ".join(section.split()).replace("`", "")
            target = REPO / "docs" / document
            if not target.exists() or name not in heading_names(target):
                found.append(f'{relative(path)}:{line}: docs/{document}, "{name}"')
    return found


def module_doc_lines(path: Path) -> int:
    """How many lines the module docstring spans (0 without one)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
    return len(doc.strip("\n").splitlines()) if doc else 0


FILES = package_files()


@pytest.mark.parametrize("path", FILES, ids=relative)
def test_every_dotted_reference_in_a_docstring_resolves(path: Path) -> None:
    """A ``:role:`reviewlab....``` reference names a module or an attribute that exists."""
    assert stale_references(path) == []


@pytest.mark.parametrize("path", FILES, ids=relative)
def test_every_cited_docs_section_is_a_heading_there(path: Path) -> None:
    """``docs/x.md, "Section"`` in a docstring or a comment names a heading of docs/x.md."""
    assert missing_sections(path) == []


def test_nothing_cites_a_design_section() -> None:
    """No docstring or comment of the package, the tests or the benchmarks says "design §"."""
    roots = [PACKAGE_DIR, REPO / "tests", REPO / "benchmarks"]
    found = [
        f"{relative(path)}:{number}"
        for root in roots
        for path in sorted(root.rglob("*.py"))
        if "node_modules" not in path.parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "design §" in line and path.name != "test_docstrings.py"
    ]
    assert found == []


@pytest.mark.parametrize("path", FILES, ids=relative)
def test_a_module_docstring_is_at_most_fifteen_lines(path: Path) -> None:
    """Purpose, lifecycle and invariants fit in :data:`MAX_MODULE_DOC_LINES` lines."""
    if relative(path) in LONG_MODULE_DOCS:
        return
    lines = module_doc_lines(path)
    assert lines <= MAX_MODULE_DOC_LINES, (
        f"{relative(path)}: a {lines}-line module docstring; keep purpose, lifecycle and "
        "invariants, move the rest to a docs/ section and cite it by name"
    )


def test_the_exceptions_to_the_docstring_limit_are_real() -> None:
    """Each listed exception exists and really is over the limit (else it must go)."""
    for name in LONG_MODULE_DOCS:
        assert module_doc_lines(REPO / name) > MAX_MODULE_DOC_LINES, name


def test_the_checks_see_what_they_must(tmp_path: Path) -> None:
    """Wrapped and titled roles are read, fields resolve, headings lose numbers and
    parentheses, and a stale name or a missing section is caught."""
    text = ":func:`~reviewlab.core.\n    _policy.resolve_bound` and :class:`the call <reviewlab.X>`"
    assert role_targets(text) == ["reviewlab.core._policy.resolve_bound", "reviewlab.X"]
    assert resolves("reviewlab.core._policy.resolve_bound")
    assert resolves("reviewlab.recording._schema.Call.duration_sec")  # a pydantic field
    assert not resolves("reviewlab.core._policy.no_such_name")
    assert not resolves("reviewlab.no_such_module.name")
    doc = tmp_path / "doc.md"
    doc.write_text("# Title\n## 7. What a replay assumes\n### The price (`cost.py`)\n")
    assert heading_names(doc) == {
        "Title",
        "What a replay assumes",
        "The price",
        "The price (cost.py)",
    }
    source = tmp_path / "mod.py"
    source.write_text('"""See docs/nowhere.md, "Gone"."""\n# docs/semantics.md, "The bound"\n')
    assert [m.split(": ", 1)[1] for m in missing_sections(source)] == ['docs/nowhere.md, "Gone"']

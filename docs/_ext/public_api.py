"""The ``public-api`` directive: one package's public names, from its ``__all__``, at build time.

A page of the API reference is one line, ```` ```{public-api} reviewlab.engines ```` ````; the
directive reads the package's ``__all__`` when the site is built, so a name added to or removed
from ``__all__`` is in or out of the reference without editing a page. Each public object is
documented once, at its home: the shortest package path that exports it (``reviewlab.Policy``
rather than ``reviewlab.engines.Policy``); every other package that re-exports it links there.
``check_pages`` fails the build when a package with a ``__all__`` has no page.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from functools import cache
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError, PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

ROOT = "reviewlab"
"""The top package; its sub-packages (folders with an ``__init__.py``) are walked."""


@cache
def packages() -> tuple[str, ...]:
    """Every package of reviewlab with a non-empty ``__all__``, by dotted name, sorted
    (the shipped data folder left out)."""
    top = Path(importlib.import_module(ROOT).__file__ or "").parent
    found = []
    for init in sorted(top.rglob("__init__.py")):
        parts = init.parent.relative_to(top.parent).parts
        if "data" in parts[1:2]:
            continue
        name = ".".join(parts)
        if getattr(importlib.import_module(name), "__all__", None):
            found.append(name)
    return tuple(found)


def _key(package: str, name: str) -> tuple[str, int]:
    """One public object: its exported name and its identity."""
    return name, id(getattr(importlib.import_module(package), name))


@cache
def homes() -> dict[tuple[str, int], str]:
    """Where each public object is documented: the exporting package with the fewest dots
    (ties: the first in alphabetical order)."""
    found: dict[tuple[str, int], str] = {}
    for package in sorted(packages(), key=lambda p: (p.count("."), p)):
        for name in importlib.import_module(package).__all__:
            found.setdefault(_key(package, name), package)
    return found


def _directive(obj: Any) -> str:
    """The autodoc directive for one object (data is written by ``_data``)."""
    if inspect.isclass(obj):
        return "autoexception" if issubclass(obj, BaseException) else "autoclass"
    if inspect.isroutine(obj):
        return "autofunction"
    return "automodule"


def _attribute_doc(package: str, name: str, obj: Any) -> list[str]:
    """The docstring written under a constant where it is defined (a string after the
    assignment, or ``#:`` comments), found in the package's modules. A constant's ``__doc__``
    is its type's (``dict``'s, ``str``'s), never its own."""
    for module_name, module in sorted(sys.modules.items()):
        if not module_name.startswith(package) or getattr(module, name, None) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
        except PycodeError:
            continue
        if ("", name) in docs:
            return list(docs[("", name)])
    return []


def _data(package: str, name: str, obj: Any) -> list[str]:
    """A constant or a type alias: its name, its value when short, and its own docstring."""
    lines = [f".. py:data:: {name}", f"   :module: {package}"]
    shown = repr(obj)
    if len(shown) <= 80 and "\n" not in shown:
        lines += [f"   :value: {shown}"]
    lines += [""]
    lines += [f"   {line}" if line else "" for line in _attribute_doc(package, name, obj)]
    return lines


def _summary(obj: Any) -> str:
    """The first sentence of an object's docstring, as plain text (for a re-export's line)."""
    doc = inspect.getdoc(obj) if inspect.isclass(obj) or inspect.isroutine(obj) else None
    first = (doc or "").strip().split("\n\n", 1)[0].replace("\n", " ")
    sentence = first.split(". ", 1)[0].rstrip(".")
    # A cut inside inline code or a role would leave reStructuredText unbalanced: no summary.
    unbalanced = sentence.count("``") % 2 or sentence.replace("``", "").count("`") % 2
    return "" if unbalanced else sentence


class PublicApi(SphinxDirective):
    """``{public-api} PACKAGE``: the package's docstring, then each name of its ``__all__``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        package = self.arguments[0]
        module = importlib.import_module(package)
        if package not in packages():
            raise self.error(f"public-api: {package} has no __all__ (or is not in {ROOT})")
        own, elsewhere = [], []
        for name in module.__all__:
            home = homes()[_key(package, name)]
            (own if home == package else elsewhere).append((name, home))
        lines = [f".. automodule:: {package}", "   :no-members:", ""]
        for name, _ in own:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)):
                lines += [*_data(package, name, obj), ""]
                continue
            lines += [f".. {_directive(obj)}:: {package}.{name}"]
            if inspect.isclass(obj):
                lines += ["   :members:", "   :show-inheritance:"]
            lines += [""]
        if elsewhere:
            lines += [".. rubric:: Also exported here, documented at their home", ""]
            for name, home in elsewhere:
                summary = _summary(getattr(module, name))
                tail = f" — {summary}" if summary else ""
                lines += [f"* :py:obj:`{name} <{home}.{name}>` ({home}){tail}"]
            lines += [""]
        # The page is MyST; autodoc's directives and the docstrings they bring are reStructuredText.
        block = ["```{eval-rst}", *lines, "```"]
        container = nodes.section()
        container.document = self.state.document
        nested_parse_with_titles(
            self.state, StringList(block, source=self.get_source_info()[0]), container
        )
        return container.children


def resolve_internal(app: Sphinx, env: Any, node: Any, contnode: nodes.Element) -> Any:
    """A reference to ``reviewlab.x.y`` that the reference does not document: linked to the
    object's home when it is public under another name, shown as plain code when the object
    exists but is private, and left unresolved (a warning, so a failed build) when no such
    object exists: a docstring that names a renamed or deleted object fails the build."""
    target = node.get("reftarget", "")
    if node.get("refdomain") != "py" or not target.startswith(ROOT + "."):
        return None
    obj = _lookup(target)
    if obj is _MISSING:
        return None
    name = target.rsplit(".", 1)[1]
    home = homes().get((name, id(obj)))
    if home is not None:
        found = env.get_domain("py").resolve_any_xref(
            env, node["refdoc"], app.builder, f"{home}.{name}", node, contnode
        )
        if found:
            return found[0][1]
    return contnode


_MISSING = object()


def _lookup(target: str) -> Any:
    """The object a dotted name names (a module, or an attribute path inside one), or
    ``_MISSING``. A module is found by its spec, without running it; an attribute path is
    looked up in its imported module, and a module that cannot be imported here (an optional
    dependency not installed) is taken at its word."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            continue
        if cut == len(parts):
            return spec
        try:
            obj: Any = importlib.import_module(name)
        except ImportError:
            return spec
        for attr in parts[cut:]:
            obj = getattr(obj, attr, _MISSING)
            if obj is _MISSING:
                return _MISSING
        return obj
    return _MISSING


def check_pages(app: Sphinx, env: Any, docnames: list[str]) -> None:
    """Fail the build when a package with a ``__all__`` has no page ``api/PACKAGE``."""
    missing = [p for p in packages() if f"api/{p}" not in env.found_docs]
    if missing:
        raise ExtensionError(f"no API page docs/api/PACKAGE.md for: {', '.join(missing)}")


def check_documented(app: Sphinx, env: Any) -> None:
    """Warn (so fail the strict build) for a public name the reference did not document at
    its home: every name of every ``__all__`` is in the reference, or the build says which."""
    documented = set(env.get_domain("py").objects)
    for (name, _), home in sorted(homes().items(), key=lambda item: (item[1], item[0][0])):
        if f"{home}.{name}" not in documented:
            logger.warning("public name %s.%s is not in the API reference", home, name)


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("public-api", PublicApi)
    app.connect("env-before-read-docs", check_pages)
    app.connect("missing-reference", resolve_internal)
    app.connect("env-check-consistency", check_documented)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

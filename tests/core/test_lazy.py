"""A package's names are imported from their homes on first use, once (core._lazy)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _package(root: Path) -> None:
    """A package ``toy`` exporting ``answer`` from ``toy._home``, which says when it is run."""
    (root / "toy").mkdir()
    (root / "toy" / "__init__.py").write_text(
        textwrap.dedent(
            """
            from reviewlab.core._lazy import lazy_names

            _HOMES = {"answer": "toy._home"}
            __all__ = ["answer"]
            __getattr__, __dir__ = lazy_names(__name__, _HOMES)
            """
        )
    )
    (root / "toy" / "_home.py").write_text(
        "import sys\nsys.stdout.write('home imported\\n')\nanswer = 42\n"
    )


def _run(root: Path, code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.splitlines()


def test_a_name_is_imported_on_first_read_and_kept(tmp_path):
    """Importing the package runs no home; the first read runs it once and keeps the value."""
    _package(tmp_path)
    lines = _run(
        tmp_path,
        """
        import sys, toy
        print("toy._home" in sys.modules)
        print(toy.answer)
        print("answer" in vars(toy))
        print(toy.answer)
        """,
    )
    assert lines == ["False", "home imported", "42", "True", "42"]


def test_an_unknown_name_is_pythons_attribute_error_and_dir_lists_the_names(tmp_path):
    """``toy.missing`` raises AttributeError worded as Python's; ``dir(toy)`` lists ``answer``
    before it was read, and importing by ``from toy import answer`` works too."""
    _package(tmp_path)
    lines = _run(
        tmp_path,
        """
        import toy
        try:
            toy.missing
        except AttributeError as exc:
            print(exc)
        print("answer" in dir(toy))
        from toy import answer
        print(answer)
        """,
    )
    assert lines == [
        "module 'toy' has no attribute 'missing'",
        "True",
        "home imported",
        "42",
    ]


@pytest.mark.parametrize("package", ["reviewlab", "reviewlab.core", "reviewlab.recording"])
def test_the_packages_names_resolve_through_it(package):
    """Every name of a lazy package's ``__all__`` resolves to its home's object."""
    import importlib

    module = importlib.import_module(package)
    homes = vars(module)["_HOMES"]
    for name in module.__all__:
        if name in homes:
            assert getattr(module, name) is getattr(importlib.import_module(homes[name]), name)

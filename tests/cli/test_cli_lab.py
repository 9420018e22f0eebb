"""``reviewlab lab`` and ``reviewlab dashboard`` without the ``lab`` extra: one line naming the
extra to install, before any copy, command or URL, and a non-zero exit.

The extra is made to look absent by hiding its modules from :func:`importlib.util.find_spec`
(the lookup the commands make); ``tests/test_wheel.py`` runs the same commands in a venv that
really lacks it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from reviewlab.cli import main
from reviewlab.cli._errors import EXIT_USER_ERROR
from reviewlab.cli._lab import LAB_EXTRA

LAB_MODULES = ("jupyterlab", "voila", "ipykernel")


@pytest.fixture()
def without(monkeypatch: pytest.MonkeyPatch):
    """A function hiding the named top-level modules from ``importlib.util.find_spec``."""

    def hide(*names: str) -> None:
        real = importlib.util.find_spec

        def find_spec(name: str, package: str | None = None):  # type: ignore[no-untyped-def]
            if name.partition(".")[0] in names:
                return None
            return real(name, package)

        monkeypatch.setattr(importlib.util, "find_spec", find_spec)

    return hide


@pytest.mark.parametrize(
    "argv, hidden, named",
    [
        (["lab"], ("jupyterlab",), ("jupyterlab",)),
        (["lab", "--dry-run"], ("ipykernel",), ("ipykernel",)),
        (["dashboard"], ("voila",), ("voila",)),
        (["dashboard", "--dry-run", "--no-browser"], LAB_MODULES, ("voila", "ipykernel")),
    ],
)
def test_a_missing_lab_extra_is_one_line_naming_the_pip_command(
    argv: list[str],
    hidden: tuple[str, ...],
    named: tuple[str, ...],
    without,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without the extra, the command prints exactly one stderr line with the pip command,
    nothing on stdout, copies nothing, and exits with the user-error status."""
    without(*hidden)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == EXIT_USER_ERROR
    out, err = capsys.readouterr()
    assert out == ""
    assert err.strip().splitlines() == [err.strip()]
    assert err.startswith("reviewlab: error: ") and LAB_EXTRA in err
    assert all(name in err for name in named)
    assert list(tmp_path.iterdir()) == []  # no notebooks copied


def test_with_the_extra_the_commands_get_past_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In this environment (the extra installed) the dry runs print their commands, not the hint."""
    assert main(["lab", "--notebooks", str(tmp_path), "--dry-run"]) == 0
    assert main(["dashboard", "--dry-run", "--no-browser"]) == 0
    out, err = capsys.readouterr()
    assert "jupyter lab" in out and "-m voila" in out and LAB_EXTRA not in out + err

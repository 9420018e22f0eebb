"""What a ``reviewlab`` command and a package import load before they do anything.

``reviewlab --help`` and a command's own ``--help`` import only the command line (each
command's options are added when that command runs), and importing a package of recorded
episodes, charts or sweeps imports none of its modules until a name is asked for (a lazy
``__init__``). Each check runs in a fresh interpreter, so what is loaded is what a user pays.
"""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reviewlab.cli import build_parser, main

HEAVY = ("matplotlib", "numpy", "pandas", "pyarrow", "pydantic")
"""Libraries that take tenths of a second to import, none of them needed to show help."""
LAZY_PACKAGES = (
    "reviewlab.recording",
    "reviewlab.recording.capture",
    "reviewlab.recording.columnar",
    "reviewlab.recording.interop",
    "reviewlab.recording.journal",
    "reviewlab.recording.jsonl",
    "reviewlab.recording.synth",
    "reviewlab.ui.charts",
    "reviewlab.analysis.sweep",
)
_PROBE = """\
import json, sys
{body}
sys.stdout.flush()
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_by(body: str, cwd: Path) -> tuple[str, set[str]]:
    """Run ``body`` in a fresh interpreter: its standard output and the modules loaded when it
    ended, with the top-level name of each (``numpy`` for ``numpy.linalg``)."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(body=body)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stderr.strip().splitlines()[-1])
    return done.stdout, {*modules, *(name.split(".")[0] for name in modules)}


@pytest.mark.parametrize(
    "words",
    [["--help"], ["replay", "--help"], ["presets", "--help"], ["record", "--help"]],
    ids=" ".join,
)
def test_help_imports_no_heavy_library(words: list[str], tmp_path: Path) -> None:
    """``reviewlab --help`` (and a command's help whose options read no library default) shows
    the help without importing pandas, numpy, matplotlib, pyarrow or pydantic."""
    out, loaded = loaded_by(
        f"from reviewlab.cli import main\nassert main({words!r}) == 0", tmp_path
    )
    assert out.startswith("usage: reviewlab"), out[:200]
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_running_a_command_adds_no_other_command_s_options(tmp_path: Path) -> None:
    """``reviewlab replay --help`` never builds ``policy``'s options, whose export targets need
    numpy, although ``policy export --help`` lists them."""
    _, loaded = loaded_by("from reviewlab.cli import main\nmain(['replay', '--help'])", tmp_path)
    assert "numpy" not in loaded
    out, loaded = loaded_by(
        "from reviewlab.cli import main\nmain(['policy', 'export', '--help'])", tmp_path
    )
    assert "--to TARGET" in out and "numpy" in loaded


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_importing_a_package_loads_no_heavy_library(package: str, tmp_path: Path) -> None:
    """Importing the package alone imports none of pandas, numpy, matplotlib, pyarrow or
    pydantic, nor the live layer: its names are imported from their homes when first used."""
    _, loaded = loaded_by(f"import {package}", tmp_path)
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert not [name for name in loaded if name.startswith("reviewlab.live")]
    privates = [name for name in loaded if name.startswith(f"{package}._")]
    assert privates == [], privates


def test_a_name_comes_from_its_home_on_first_use(tmp_path: Path) -> None:
    """``reviewlab.recording.load_episodes`` is the function of the module that defines it, and
    asking for it is what imports that module (and pandas)."""
    body = (
        "import reviewlab.recording as r\n"
        "assert 'reviewlab.recording._files' not in sys.modules\n"
        "from reviewlab.recording._files import load_episodes\n"
        "assert r.load_episodes is load_episodes\n"
    )
    _, loaded = loaded_by(body, tmp_path)
    assert "pandas" in loaded


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_an_unknown_name_is_an_attribute_error_naming_the_package(package: str) -> None:
    """A name the package does not export raises AttributeError naming the package and name."""
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=rf"module '{package}' has no attribute 'no_such'"):
        module.no_such  # noqa: B018


def _words_and_parsers() -> list[tuple[list[str], argparse.ArgumentParser]]:
    """Every command and mode of the full parser, by the words that run it."""
    found: list[tuple[list[str], argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append(([*words, *name.split()], sub))
                    walk(sub, [*words, *name.split()])

    walk(build_parser(), [])
    return found


def test_every_command_shows_the_help_of_the_full_parser(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Adding a command's options only when it runs changes no help: every command's and mode's
    ``--help`` through :func:`main` is what the parser with every option prints."""
    cases = _words_and_parsers()
    assert len(cases) >= 20
    for words, parser in cases:
        assert main([*words, "--help"]) == 0
        assert capsys.readouterr().out == parser.format_help(), " ".join(words)

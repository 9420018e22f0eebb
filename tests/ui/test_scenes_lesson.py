"""``reviewlab lesson`` and the page it serves: every scene, logic only in the package, a Voilà
command that never runs with a package folder on ``sys.path``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import nbformat
import pytest

import reviewlab
from reviewlab.cli import main
from reviewlab.ui import _lesson as lesson
from reviewlab.ui.scenes import FAILURE_SCENES, SEMANTICS_SCENES

PACKAGE_DIR = Path(reviewlab.__file__).resolve().parent


def test_dry_run_prints_the_voila_command_on_the_lesson_template(capsys):
    """``--dry-run`` prints Voilà on the shipped template, localhost, the default port 8867."""
    assert main(["lesson", "--dry-run", "--no-browser"]) == 0
    out = capsys.readouterr().out.strip()
    assert "-m voila" in out and str(lesson.LESSON_NOTEBOOK) in out
    assert "--port=8867" in out and "--Voila.ip=127.0.0.1" in out and "--no-browser" in out


@pytest.mark.parametrize("bad", ["0", "70000"])
def test_a_bad_port_is_one_line(bad, capsys):
    """A port outside 1-65535 is one error line naming ``--port``, before any server starts."""
    assert main(["lesson", "--port", bad, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("reviewlab: error: --port")


def test_the_library_refuses_a_bad_port_by_name():
    """``lesson_command`` names the port it refuses."""
    with pytest.raises(ValueError, match="port"):
        lesson.lesson_command(0)


def test_the_template_is_clean_and_only_calls_the_page():
    """The shipped notebook has no outputs, and its one code cell calls ``lesson_page``."""
    notebook = nbformat.read(lesson.LESSON_NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert len(code) == 1 and "lesson_page()" in code[0].source
    assert code[0].outputs == [] and code[0].execution_count is None


def test_serve_runs_voila_on_a_copy_outside_the_package(monkeypatch):
    """Voilà and its kernels start in a fresh folder holding only the template's copy, so no
    module of ``reviewlab/ui`` can shadow a standard one."""
    seen: dict[str, Any] = {}

    class FakePopen:
        def __init__(self, argv: list[str], cwd: str, **kwargs: Any) -> None:
            seen["argv"], seen["cwd"] = argv, Path(cwd)
            seen["files"] = sorted(p.name for p in Path(cwd).iterdir())

    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    lesson.serve_lesson(port=8999)
    assert not seen["cwd"].resolve().is_relative_to(PACKAGE_DIR)
    assert seen["files"] == ["lesson.ipynb"]
    assert str(seen["cwd"] / "lesson.ipynb") in seen["argv"] and "--port=8999" in seen["argv"]


def test_the_page_holds_every_scene_of_both_notebooks_in_order():
    """The page opens with the introduction, then part 1's scenes, then part 2's."""
    page = lesson.lesson_page()
    classes = [
        next((c for c in child._dom_classes if c.startswith("rl-scene-")), None)
        for child in page.children
    ]
    names = [name for name in classes if name is not None]
    expected = [f"rl-scene-{scene.name}" for scene in (*SEMANTICS_SCENES, *FAILURE_SCENES)]
    assert names == expected
    assert "rl-lesson" in page._dom_classes


def test_an_unknown_part_is_refused_by_name():
    """Asking for a part the page does not have names it."""
    with pytest.raises(ValueError, match="parts"):
        lesson.lesson_page(["semantics", "appendix"])

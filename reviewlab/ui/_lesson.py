"""The lesson page: every scene on one page, served by Voilà, for a classroom without Jupyter.

Lifecycle of ``reviewlab lesson``: :func:`serve_lesson` copies the small template notebook
``reviewlab/ui/_lesson.ipynb`` into a fresh temporary folder, starts ``python -m voila`` on the
copy, bound to localhost, and returns the running process; Voilà starts a kernel per visit, which
runs the template, which calls :func:`lesson_page` — so every line of logic lives here and in
:mod:`reviewlab.ui.scenes`, none in the notebook. :func:`run_lesson` is the blocking form for the
command line: it serves until interrupted, then stops Voilà and removes the folder.

Why a copy: ``python -m`` puts the working folder first on ``sys.path``, for Voilà and for its
kernels (which run in the notebook's folder). Served from inside the package, a module of
``reviewlab/ui`` named like a standard module (``numbers.py``) would shadow it and break both.

The page opens on the scenes of notebook 01 (the abandonment semantics), then those of notebook
07 (the four ways a tool call hangs); each scene is a live widget the reader moves.
"""

from __future__ import annotations

import html
import shutil
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reviewlab.core._errors import ParameterError
from reviewlab.ui._serving import start_server, supervise

LESSON_PORT = 8867
"""The lesson's default port (the dashboard's is 8866, so both can run side by side)."""
LESSON_NOTEBOOK = Path(__file__).with_name("_lesson.ipynb")
"""The Voilà template: one cell calling :func:`lesson_page`."""
PARTS = ("semantics", "failures")
"""The page's parts, in order: notebook 01's scenes, then notebook 07's."""

_INTRO = (
    "<p>An LLM reviewer calls tools: read a file, search the code. One tool call that never "
    "returns can keep a reviewer silent for hours. reviewlab bounds every call and "
    "<i>abandons</i> the ones that outlive their bound. Each scene below holds one idea: move "
    "its controls and watch the timeline and the receipts change. Part 1 is what abandoning a "
    "call means; part 2 is the four ways tool calls hang in real agent frameworks, each with "
    "the public issue that reported it.</p>"
)
_PART_TITLES = {
    "semantics": (
        "Part 1 — The abandonment semantics",
        "The bound, what happens to a call that outlives it, why nothing is credited after an "
        "abandonment, and what a replay must assume about a call the recording never saw end.",
    ),
    "failures": (
        "Part 2 — Four ways a tool call hangs",
        "Each scene replays one failure on the simulator twice: as the framework in the report "
        "had it (broken) and under reviewlab's policy. The toggle changes the policy and "
        "nothing else.",
    ),
}


def _port(port: int | None) -> int:
    port = LESSON_PORT if port is None else port
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ParameterError("port", f"expected an integer in 1..65535, got {port!r}")
    return port


def lesson_command(
    port: int | None = None, *, open_browser: bool = False, notebook: Path = LESSON_NOTEBOOK
) -> list[str]:
    """The Voilà argv serving the lesson on ``127.0.0.1:port`` (from ``notebook``: the template,
    or the copy :func:`serve_lesson` makes)."""
    argv = [
        sys.executable,
        "-m",
        "voila",
        str(notebook),
        f"--port={_port(port)}",
        "--Voila.ip=127.0.0.1",
        "--show_tracebacks=True",
    ]
    if not open_browser:
        argv.append("--no-browser")
    return argv


def serve_lesson(
    port: int | None = None, *, open_browser: bool = False, **popen: Any
) -> subprocess.Popen[bytes]:
    """Start Voilà serving the lesson on ``http://127.0.0.1:port/`` from a copy of the template in
    a fresh temporary folder; return its process (the caller stops it; the folder goes when the
    process object does)."""
    process, folder = _start(port, open_browser, popen)
    weakref.finalize(process, shutil.rmtree, folder, True)
    return process


def _start(
    port: int | None, open_browser: bool, popen: dict[str, Any]
) -> tuple[subprocess.Popen[bytes], Path]:
    folder = Path(tempfile.mkdtemp(prefix="reviewlab-lesson-"))
    page = folder / "lesson.ipynb"
    shutil.copyfile(LESSON_NOTEBOOK, page)
    argv = lesson_command(port, open_browser=open_browser, notebook=page)
    return start_server(argv, cwd=str(folder), **popen), folder


def run_lesson(port: int | None = None, *, open_browser: bool = True) -> int:
    """Serve until Voilà exits or this process is told to stop (SIGTERM, SIGHUP, Ctrl-C, its
    parent gone: Voilà and its kernels are stopped too); Voilà's exit status, 0 when stopped."""
    process, folder = _start(port, open_browser, {})
    print(f"reviewlab lesson: http://127.0.0.1:{_port(port)}/ (Ctrl-C stops it)", flush=True)
    try:
        return supervise(process)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def lesson_page(parts: Sequence[str] = PARTS) -> Any:
    """The page: an introduction, then each part's title, purpose and scenes (a ``VBox``).

    The scenes are built here, once per visit; the live ones run their episode as they are made.
    """
    import ipywidgets as w

    from reviewlab.ui.scenes import FAILURE_SCENES, SEMANTICS_SCENES

    unknown = [part for part in parts if part not in PARTS]
    if unknown:
        raise ParameterError(
            "parts", f"expected some of {', '.join(PARTS)}, got {', '.join(unknown)}"
        )
    scenes = {"semantics": SEMANTICS_SCENES, "failures": FAILURE_SCENES}
    children: list[Any] = [w.HTML(_INTRO)]
    for part in parts:
        title, purpose = _PART_TITLES[part]
        children.append(w.HTML(f"<h2>{html.escape(title)}</h2><p>{html.escape(purpose)}</p>"))
        children.extend(scene().widget for scene in scenes[part])
    page = w.VBox(children, layout=w.Layout(max_width="1300px"))
    page.add_class("rl-lesson")
    return page

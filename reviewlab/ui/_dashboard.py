"""The browser dashboard (the explorer served by Voilà) and the JupyterLab command.

Lifecycle of ``reviewlab dashboard``: :func:`serve` copies the small template notebook
``reviewlab/ui/_dashboard.ipynb`` into a fresh temporary folder (Voilà and its kernels run in
the notebook's folder, where ``reviewlab/ui``'s own modules — ``numbers``, ``tables`` — would
shadow the standard library's), starts ``python -m voila`` on the copy bound to localhost and
returns the running process (the folder goes with it); Voilà starts a kernel per visit,
which runs the template, which calls :func:`dashboard_explorer` — so every
line of logic lives here, none in the notebook. The corpus to explore (a file or a folder,
read on every visit) travels to the kernel in the environment variable :data:`CORPUS_ENV`
(the kernel inherits Voilà's); without it the bundled 1k corpus is used. :func:`main` is the
blocking form for the command line: it serves until Voilà exits or the command is told to stop,
then stops Voilà and its kernels (:mod:`reviewlab.ui._serving`).

:func:`lab_command` is the argv of ``make lab``: JupyterLab on ``notebooks/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reviewlab.core._errors import ParameterError
from reviewlab.resources import BUNDLED_CORPUS, data_path, notebooks_dir
from reviewlab.ui._serving import start_server, supervise

CORPUS_ENV = "REVIEWLAB_DASHBOARD_CORPUS"
DEFAULT_PORT = 8866
NOTEBOOK = Path(__file__).with_name("_dashboard.ipynb")


def default_corpus() -> Path:
    """The bundled 1,000-episode synthetic corpus."""
    return data_path(BUNDLED_CORPUS)


def _port(port: int | None) -> int:
    port = DEFAULT_PORT if port is None else port
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ParameterError("port", f"expected an integer in 1..65535, got {port!r}")
    return port


def dashboard_command(
    port: int | None = None,
    corpus: str | os.PathLike[str] | None = None,
    *,
    open_browser: bool = False,
    notebook: Path = NOTEBOOK,
) -> list[str]:
    """The Voilà argv serving the dashboard on ``127.0.0.1:port`` from ``notebook`` (the
    template, or the copy :func:`serve` makes; ``corpus`` goes by :func:`dashboard_env`)."""
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


def dashboard_env(
    corpus: str | os.PathLike[str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment Voilà (and so its kernels) runs in: ``base`` plus the corpus to explore."""
    env = dict(os.environ if base is None else base)
    if corpus is not None:
        path = Path(corpus).resolve()
        if not path.exists():  # a file, or a folder (Parquet partitions, a gateway's sessions)
            raise FileNotFoundError(f"{path}: no such corpus file or folder")
        env[CORPUS_ENV] = str(path)
    return env


def serve(
    port: int | None = None,
    corpus: str | os.PathLike[str] | None = None,
    *,
    open_browser: bool = False,
    **popen: Any,
) -> subprocess.Popen[bytes]:
    """Start Voilà serving the explorer on ``http://127.0.0.1:port/`` from a copy of the template
    in a fresh temporary folder; return its process (caller stops it; the folder goes when the
    process object does)."""
    import shutil
    import tempfile
    import weakref

    env = dashboard_env(corpus)  # a missing corpus is refused before anything is made
    folder = Path(tempfile.mkdtemp(prefix="reviewlab-dashboard-"))
    page = folder / "dashboard.ipynb"
    shutil.copyfile(NOTEBOOK, page)
    argv = dashboard_command(port, corpus, open_browser=open_browser, notebook=page)
    process = start_server(argv, env=env, cwd=str(folder), **popen)
    weakref.finalize(process, shutil.rmtree, folder, True)
    return process


def main(
    port: int | None = None,
    corpus: str | os.PathLike[str] | None = None,
    *,
    open_browser: bool = True,
) -> int:
    """Serve until Voilà exits or this process is told to stop (SIGTERM, SIGHUP, Ctrl-C, its
    parent gone: Voilà and its kernels are stopped too); Voilà's exit status, 0 when stopped."""
    process = serve(port, corpus, open_browser=open_browser)
    print(f"reviewlab dashboard: http://127.0.0.1:{_port(port)}/ (Ctrl-C stops it)", flush=True)
    return supervise(process)


def lab_command(
    notebooks: str | os.PathLike[str] | None = None, port: int | None = None
) -> list[str]:
    """The argv of ``make lab``: JupyterLab on ``notebooks`` (default: the shipped notebooks)."""
    folder = Path(notebooks) if notebooks is not None else notebooks_dir()
    argv = [sys.executable, "-m", "jupyter", "lab", f"--notebook-dir={folder}"]
    if port is not None:
        argv.append(f"--port={_port(port)}")
    return argv


def dashboard_explorer(corpus: str | os.PathLike[str] | None = None, **options: Any) -> Any:
    """What the dashboard page shows: :func:`reviewlab.ui._widgets.explore` over the corpus.

    ``corpus`` defaults to ``$REVIEWLAB_DASHBOARD_CORPUS``, else :func:`default_corpus`; it is
    opened with :func:`~reviewlab.engines._corpus.open_corpus`, so it is anything a replay
    reads (JSONL, JSONL.gz, a Parquet file or folder of partitions, a gateway's folder of
    sessions, a ``bundled:`` name). A corpus that cannot be read (missing, damaged, malformed,
    empty) gives a page that says so in one readable paragraph naming the file, line and field,
    never a traceback.
    """
    from reviewlab.engines._corpus import open_corpus
    from reviewlab.ui._widgets import explore

    source = corpus or os.environ.get(CORPUS_ENV) or default_corpus()
    try:
        handle = open_corpus(source)
        episodes = handle.episodes(reason="the explorer edits a policy over Episode objects")
    except (ValueError, OSError) as exc:  # EpisodeFormatError is a ValueError
        return corpus_problem(source, exc)
    if not episodes:
        return corpus_problem(source, ValueError(f"{handle.name}: holds no episodes"))
    return explore(handle, **options)


def corpus_problem(path: str | os.PathLike[str], error: BaseException) -> Any:
    """The page shown instead of the explorer when the corpus cannot be read: an HTML widget."""
    import html

    import ipywidgets

    if isinstance(error, OSError) and error.strerror:
        reason = f"{error.filename or path}: {error.strerror}"
    else:
        reason = " ".join(str(error).split()) or type(error).__name__
    return ipywidgets.HTML(
        '<div class="reviewlab-error" style="border:1px solid #c33;padding:1em;'
        'background:#fff4f4;max-width:60em">'
        f"<h3>reviewlab could not open the corpus {html.escape(str(path))}</h3>"
        f"<p>{html.escape(reason)}</p>"
        "<p>Fix the file (or pass another with <code>reviewlab dashboard --corpus FILE</code>; "
        "<code>--on-error skip</code> in <code>reviewlab replay</code> lists every bad line) "
        "and reload this page.</p></div>"
    )

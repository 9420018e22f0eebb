"""The notebooks run top to bottom the way Jupyter runs them, are committed clean, and say what
they cover.

The way Jupyter runs them: the kernel starts in the notebook's own folder with the checkout's
``notebooks`` link resolved (``reviewlab/notebooks``, where ``make lab`` and a kernel opened
through the link both land), with no ``REVIEWLAB_*`` variable in its environment and none set by
the test, so a notebook that finds a file through the working directory or an environment
variable fails here. Two run at once, each in its own kernel. ``tests/cross/test_wheel.py`` runs
them once more from an installed wheel in an empty folder.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS_DIR = (REPO / "notebooks").resolve()
"""The shipped notebooks, the link resolved (``reviewlab/notebooks``)."""
NOTEBOOKS = tuple(sorted(path.name for path in NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb")))
"""Every numbered notebook that exists (01–08 as they land)."""
KERNEL = "python3"


def kernel_env() -> dict[str, str]:
    """This process's environment without any ``REVIEWLAB_*`` variable or a matplotlib backend
    (a test runner's ``MPLBACKEND=Agg`` would hide the charts): what a user's kernel sees when
    they open the notebook in JupyterLab."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWLAB_", "MPLBACKEND"))}


def execute(notebook: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run every cell of ``notebook`` in a fresh ``python3`` kernel started in ``cwd``;
    nbclient raises on the first failing cell."""
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=180,
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute(env=kernel_env())
    return notebook


def outputs(notebook: nbformat.NotebookNode, kind: str) -> list[dict]:
    """The outputs of the code cells whose type is ``kind`` (``error``, ``display_data`` …)."""
    return [
        out
        for cell in notebook.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.get("output_type") == kind
    ]


def test_the_numbered_notebooks_are_all_found() -> None:
    """Notebooks 01–05 are among those the tests run, numbered without gaps from 01."""
    numbers = [int(name[:2]) for name in NOTEBOOKS]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 5, NOTEBOOKS


def test_the_kernel_is_this_virtualenvs_python_in_the_notebooks_folder(tmp_path: Path) -> None:
    """The ``python3`` kernel runs the interpreter running the tests, in the folder it is given,
    with no ``REVIEWLAB_*`` variable in its environment."""
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    # jupyter_client runs a spec's bare "python" as sys.executable; any other interpreter
    # would be wrong.
    assert spec.argv[0] in {"python", "python3", sys.executable}
    probe = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import os, sys\n"
                "print(sys.executable)\n"
                "print(os.getcwd())\n"
                "print(sorted(k for k in os.environ if k.startswith('REVIEWLAB_')))"
            )
        ]
    )
    executable, cwd, variables = (
        execute(probe, NOTEBOOKS_DIR).cells[0].outputs[0]["text"].split("\n")[:3]
    )
    assert os.path.realpath(executable) == os.path.realpath(sys.executable)
    assert Path(cwd) == NOTEBOOKS_DIR
    assert variables == "[]"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_committed_clean_and_opens_with_what_it_covers(name: str) -> None:
    """No outputs or execution counts are committed, and the first cell is a markdown overview."""
    notebook = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells[0].cell_type == "markdown"
    assert notebook.cells[0].source.startswith("# ")
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{name}: committed with outputs"
            )


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_finds_no_file_through_the_working_directory_or_the_environment(
    name: str,
) -> None:
    """No code cell builds a path from the working directory, a parent folder, a checkout-only
    folder (``tests/``, ``data/``) or ``REVIEWLAB_FIXTURES``: shipped files come through
    ``reviewlab.resources`` and ``bundled:`` names."""
    notebook = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    needles = ("REVIEWLAB_FIXTURES", "Path.cwd", "os.getcwd", "../", "tests/", '"data/', "'data/")
    for needle in needles:
        assert needle not in code, f"{name}: {needle}"


KERNELS_AT_ONCE = 2
"""Notebooks run at once, each in its own kernel process: the test process only waits on them,
so two keep a 2-core machine busy (55 s one after another, 44 s two at a time on a loaded one)."""


@pytest.fixture(scope="module")
def executed_notebooks() -> dict[str, nbformat.NotebookNode | Exception]:
    """Every numbered notebook executed as :func:`execute` runs it, :data:`KERNELS_AT_ONCE` at
    a time, the largest file first (the longest to run, so the two kernels end together); a
    notebook that failed answers its error."""

    def run(name: str) -> nbformat.NotebookNode:
        return execute(nbformat.read(NOTEBOOKS_DIR / name, as_version=4), NOTEBOOKS_DIR)

    longest_first = sorted(NOTEBOOKS, key=lambda n: -(NOTEBOOKS_DIR / n).stat().st_size)
    with ThreadPoolExecutor(KERNELS_AT_ONCE, thread_name_prefix="notebook") as pool:
        futures = {name: pool.submit(run, name) for name in longest_first}
        return {name: _answer(future) for name, future in futures.items()}


def _answer(future: Future) -> nbformat.NotebookNode | Exception:
    """A future's result, or the exception it raised."""
    failure = future.exception()
    return future.result() if failure is None else failure


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom_from_its_own_folder(
    executed_notebooks: dict[str, nbformat.NotebookNode | Exception], name: str
) -> None:
    """Every cell executes without an error in a kernel started in the notebook's own folder,
    with no environment variable set, and the notebook draws at least one chart."""
    executed = executed_notebooks[name]
    if isinstance(executed, Exception):
        raise executed
    assert outputs(executed, "error") == []
    images = [
        out
        for kind in ("display_data", "execute_result")
        for out in outputs(executed, kind)
        if "image/png" in out.get("data", {})
    ]
    assert images, f"{name}: drew no chart"


DISPLAYED = {
    "replay(episodes, Policy.uniform(5.0), engine='twin')": ["50 %", "assumes: censored=wedge"],
    "replay_bounds(episodes, Policy.uniform(5.0), engine='twin')": ["25 %", "50 %", "bounds"],
    "recommend('bundled:corpus')": ["every budget met", "budgets (rates)", "assumes: "],
    "Policy.uniform(5.0).with_tool_timeouts(read_file=2.5)": ["2.5 s", "narrowing: inherit"],
    "open_corpus(episodes)": ["2 episodes, 4 calls, 3 tools, 1 censored calls", "assumes: "],
    "sweep(episodes, make_grid(Policy.uniform(5.0), scales=[0.5, 1.0]))": [
        "Sweep of 2 policy points",
        "75 %",
        "50 %",
        "data:image/png;base64,",
    ],
}
"""What each displayed object's HTML must hold. The four calls under a 5 s bound: the 10 s
search is abandoned, and the query never seen returning is too (wedge), 2 of 4; only the search
when it returns at 2 s (observed), 1 of 4; at 2.5 s (scale 0.5) the 3 s read as well, 3 of 4."""


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_results_show_themselves_as_html_in_a_kernel() -> None:
    """In a real kernel, a replay, its bounds, a recommendation, a policy, a corpus and a sweep
    frame each display as text/html holding its figures and its assumptions."""
    setup = (
        "from reviewlab import (Policy, make_grid, open_corpus, recommend, replay,\n"
        "    replay_bounds, sweep)\n"
        "from reviewlab.testing._builders import call, episode\n"
        "episodes = [\n"
        "    episode('e1', [[call('read_file', 1.0)], [call('search_code', 10.0)]]),\n"
        "    episode('e2', [[call('query_code', 2.0, completed=False)],\n"
        "                   [call('read_file', 3.0)]]),\n"
        "]"
    )
    cells = [nbformat.v4.new_code_cell(setup)]
    cells += [nbformat.v4.new_code_cell(code) for code in DISPLAYED]
    executed = execute(nbformat.v4.new_notebook(cells=cells), NOTEBOOKS_DIR)
    assert outputs(executed, "error") == []
    for code, cell in zip(DISPLAYED, executed.cells[1:], strict=True):
        results = [out for out in cell.outputs if out.get("output_type") == "execute_result"]
        assert results, f"{code}: displayed nothing"
        page = results[0]["data"].get("text/html", "")
        for expected in DISPLAYED[code]:
            assert expected in page, f"{code}: no {expected!r} in its text/html"

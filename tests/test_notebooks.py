"""The six notebooks run top to bottom in smoke mode, are committed
clean, and say what they cover."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = (
    "01-abandonment-semantics.ipynb",
    "02-replay-recorded-episodes.ipynb",
    "03-tune-timeouts.ipynb",
    "04-incident-wedged-slot.ipynb",
    "05-hedge-break-or-abandon.ipynb",
    "06-why-a-timeout-is-a-bet.ipynb",
)
KERNEL = "python3"


def _execute(notebook: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=180,
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute()
    return notebook


@pytest.fixture()
def smoke(monkeypatch):
    """Kernels inherit this process's environment: smoke mode on."""
    monkeypatch.setenv("REVIEWLAB_SMOKE", "1")
    monkeypatch.setenv("REVIEWLAB_FIXTURES", str(Path(__file__).resolve().parent / "fixtures"))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")


def test_the_kernel_is_this_virtualenvs_python(smoke, tmp_path):
    """The ``python3`` kernel the notebooks run on is the interpreter running the tests."""
    spec = KernelSpecManager().get_kernel_spec(KERNEL)
    # jupyter_client runs a spec's bare "python" as sys.executable; any
    # other interpreter would be wrong.
    assert spec.argv[0] in {"python", "python3", sys.executable}
    probe = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import sys; print(sys.executable)")]
    )
    out = _execute(probe, tmp_path).cells[0].outputs[0]["text"].strip()
    assert os.path.realpath(out) == os.path.realpath(sys.executable)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_committed_clean_and_opens_with_what_it_covers(name):
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


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom_in_smoke_mode(name, smoke):
    """Every cell executes without an error (nbclient raises on the first failing cell)."""
    notebook = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    executed = _execute(notebook, NOTEBOOKS_DIR)
    errors = [
        out
        for cell in executed.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if out.get("output_type") == "error"
    ]
    assert errors == []
    images = [
        out
        for cell in executed.cells
        if cell.cell_type == "code"
        for out in cell.outputs
        if "image/png" in out.get("data", {})
    ]
    assert images, f"{name}: drew no chart"

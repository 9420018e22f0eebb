"""The wheel works on its own: built with ``python -m build``, installed in a fresh venv, it runs.

How the fresh venv gets its third-party packages without a download: the venv is made
``--without-pip`` and without system site-packages; a ``.pth`` file adds ONE folder holding links
to exactly the distributions the wheel declares (``Requires-Dist`` without extras) and what they
in turn require, taken from the interpreter running the tests. So an import of an undeclared
package fails there, and the source checkout is on no path: the commands run from an empty
temporary directory with ``PYTHONPATH`` unset, and ``reviewlab.__file__`` must lie in the venv.
reviewlab itself is installed from the wheel by pip (``--no-deps --no-index``), not editable.

Two venvs are made from the one wheel: one with the wheel's own requirements (``reviewlab lab``
and ``reviewlab dashboard`` there say in one line which extra to install), and one with the
``lab`` extra's too, in which the shipped notebooks run from an empty folder the way a user runs
them (``reviewlab lab`` copies them there; a kernel started in that folder, no ``REVIEWLAB_*``
variable) and the README's shell commands that name shipped files (``bundled:…``) run. Every
``--help`` example of every command runs in the first venv from an empty folder.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "reviewlab")
"""What the build reads; copied so the build writes nothing into the shared checkout."""
SHIPPED = (
    "reviewlab/data/episodes/synthetic-1k.jsonl.gz",
    "reviewlab/data/incidents/wedged-query-code.jsonl",
    "reviewlab/data/workspace/inventory/pricing.py",
    "reviewlab/notebooks/01-abandonment-semantics.ipynb",
    "reviewlab/notebooks/08-gateway-record-tune-enforce.ipynb",
    "reviewlab/py.typed",
)


def build_wheel(out_dir: Path, work: Path) -> Path:
    """``python -m build --wheel`` on a copy of the sources; the path of the one wheel made."""
    source = work / "source"
    source.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        else:
            shutil.copy2(REPO / name, source / name)
    # No isolation: the build backend (setuptools >= 77, from the test extra) is already here,
    # so the test needs no download.
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out_dir)],
        cwd=source,
        check=True,
        capture_output=True,
        text=True,
    )
    [wheel] = out_dir.glob("reviewlab-*.whl")
    return wheel


def declared_requirements(wheel: Path, extras: tuple[str, ...] = ()) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` entries that apply on this interpreter without extras, or
    with one of ``extras``."""
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(archive.read(name).decode())
    found = [Requirement(text) for text in meta.get_all("Requires-Dist") or []]
    return [
        r
        for r in found
        if r.marker is None or any(r.marker.evaluate({"extra": e}) for e in ("", *extras))
    ]


def dependency_closure(requirements: list[Requirement]) -> dict[str, metadata.Distribution]:
    """Every installed distribution the requirements need, transitively, by canonical name; a
    requirement's extras (``pyjwt[crypto]``) bring that distribution's requirements for them."""
    closure: dict[str, metadata.Distribution] = {}
    walked: set[tuple[str, str]] = set()
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        extras = {""} | set(requirement.extras)
        if all((name, extra) in walked for extra in extras):
            continue
        walked |= {(name, extra) for extra in extras}
        dist = closure.get(name) or metadata.distribution(requirement.name)
        assert requirement.specifier.contains(dist.version, prereleases=True), (
            f"{requirement}: this environment has {dist.version}"
        )
        closure[name] = dist
        for text in dist.requires or []:
            nested = Requirement(text)
            if nested.marker is None or any(nested.marker.evaluate({"extra": e}) for e in extras):
                todo.append(nested)
    return closure


def link_distributions(closure: dict[str, metadata.Distribution], folder: Path) -> None:
    """Link each distribution's top-level files and folders into ``folder`` (not its ``.pth``)."""
    folder.mkdir()
    for dist in closure.values():
        base = Path(str(dist.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in dist.files or []}
        for top in tops:
            target = base / top
            if top.endswith(".pth") or top in ("..", "__pycache__") or not target.exists():
                continue
            link = folder / top
            if not link.exists():
                link.symlink_to(target)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built once from a copy of the checkout's sources."""
    work = tmp_path_factory.mktemp("build")
    return build_wheel(work / "dist", work)


def make_venv(wheel: Path, work: Path, extras: tuple[str, ...] = ()) -> dict[str, Path]:
    """A fresh venv in ``work`` with ``wheel`` installed and the distributions it requires
    (with ``extras``) linked; its paths."""
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=False, system_site_packages=False, symlinks=True).create(env_dir)
    python = env_dir / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
            env=clean_env(),
        ).stdout.strip()
    )
    deps = work / "deps"
    link_distributions(dependency_closure(declared_requirements(wheel, extras)), deps)
    (site / "reviewlab-test-deps.pth").write_text(f"{deps}\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index"]
        + ["--quiet", str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    return {"wheel": wheel, "venv": env_dir, "python": python, "site": site, "work": work}


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A fresh venv with the wheel and its own requirements, no extra."""
    return make_venv(wheel, tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed_lab(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A fresh venv with the wheel installed as ``reviewlab[lab]``."""
    return make_venv(wheel, tmp_path_factory.mktemp("wheel-lab"), ("lab",))


def clean_env() -> dict[str, str]:
    """This process's environment without anything that would put the checkout on a path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["MPLBACKEND"] = "Agg"
    return env


def run(
    installed: dict[str, Path],
    argv: list[str],
    cwd: Path,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run a command of the fresh venv in ``cwd`` with a clean environment."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=clean_env() if env is None else env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_the_wheel_ships_the_data_and_the_notebooks(installed: dict[str, Path]) -> None:
    """The corpus, the incident day, the demo workspace, the notebooks and ``py.typed`` ship."""
    with zipfile.ZipFile(installed["wheel"]) as archive:
        names = set(archive.namelist())
    assert set(SHIPPED) <= names


def test_the_installed_package_is_the_wheels_copy(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    """Imported from an empty folder, ``reviewlab`` and its shipped files come from the venv."""
    code = (
        "import reviewlab, reviewlab.resources as r; "
        "print(reviewlab.__file__); print(r.corpus_path()); print(r.corpus_path().is_file())"
    )
    done = run(installed, [str(installed["python"]), "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    module, corpus, exists = done.stdout.split()
    assert Path(module).is_relative_to(installed["site"])
    assert Path(corpus).is_relative_to(installed["site"]) and exists == "True"
    assert not Path(module).is_relative_to(REPO)


def test_the_venv_sees_only_what_the_wheel_declares(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    """Packages of the test environment that the wheel does not require are not importable there."""
    names = ("openai", "pytest", "jupyterlab", "voila")
    code = f"import importlib.util as u; print([u.find_spec(n) is None for n in {names!r}])"
    done = run(installed, [str(installed["python"]), "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str([True] * len(names))


def test_reviewlab_demo_from_an_empty_directory_writes_the_report_and_its_charts(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    """``reviewlab demo`` (the venv's own script) writes out/report.html and the PNGs it shows,
    in a venv without dask (the ``cluster`` extra is not installed)."""
    absent = run(installed, [str(installed["python"]), "-c", "import dask"], tmp_path)
    assert absent.returncode != 0 and "No module named 'dask'" in absent.stderr
    done = run(installed, [str(installed["venv"] / "bin" / "reviewlab"), "demo"], tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    report = tmp_path / "out" / "report.html"
    assert report.is_file()
    pngs = sorted((tmp_path / "out").glob("*.png"))
    assert len(pngs) >= 3
    html = report.read_text(encoding="utf-8")
    for png in pngs:
        assert f'src="{png.name}"' in html
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("command", ["lab", "dashboard"])
def test_without_the_lab_extra_lab_and_dashboard_name_it_in_one_line(
    installed: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """Without the extra, ``reviewlab lab`` and ``reviewlab dashboard`` print one stderr line
    with the pip command, no URL and nothing on stdout, copy nothing, and exit non-zero."""
    done = run(installed, [str(installed["venv"] / "bin" / "reviewlab"), command], tmp_path)
    assert done.returncode != 0
    assert done.stdout == "" and "http" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "pip install 'reviewlab[lab]'" in done.stderr
    assert list(tmp_path.iterdir()) == []


def shipped_notebooks(wheel: Path) -> list[str]:
    """The names of the notebooks the wheel ships."""
    return sorted(
        Path(n).name
        for n in zipfile.ZipFile(wheel).namelist()
        if n.startswith("reviewlab/notebooks/") and n.endswith(".ipynb")
    )


@pytest.fixture(scope="module")
def lab_folder(installed_lab: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty folder in which ``reviewlab lab --dry-run`` copied the notebooks to
    ``notebooks/``; its path."""
    folder = tmp_path_factory.mktemp("user")
    reviewlab = str(installed_lab["venv"] / "bin" / "reviewlab")
    done = run(installed_lab, [reviewlab, "lab", "--dry-run"], folder)
    assert done.returncode == 0, done.stderr
    assert f"--notebook-dir={folder / 'notebooks'}" in done.stdout
    return folder


def test_reviewlab_lab_copies_the_notebooks_into_the_working_directory(
    installed_lab: dict[str, Path], lab_folder: Path
) -> None:
    """``reviewlab lab --dry-run`` in an empty folder copies every shipped notebook there."""
    copied = sorted(p.name for p in (lab_folder / "notebooks").glob("*.ipynb"))
    assert copied == shipped_notebooks(installed_lab["wheel"]) and len(copied) >= 5


RUN_NOTEBOOKS = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

folder = Path(sys.argv[1])
probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
    "import json, os, sys, reviewlab\\n"
    "print(json.dumps([sys.executable, reviewlab.__file__, os.getcwd()]))"
)])
where = {"metadata": {"path": str(folder)}}
NotebookClient(probe, kernel_name="python3", resources=where).execute()
print(probe.cells[0].outputs[0]["text"].strip(), flush=True)


def run(path):
    notebook = nbformat.read(path, as_version=4)
    try:
        NotebookClient(notebook, kernel_name="python3", timeout=300, resources=where).execute()
        error = ""
    except Exception as exc:  # every notebook runs; the test lists each one's failure
        error = str(exc)[-3000:]
    images = sum(
        "image/png" in out.get("data", {})
        for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs
    )
    return [path.name, images, error]


# Two kernels at once (this process only waits on them), the largest notebook first.
paths = sorted(folder.glob("[0-9][0-9]-*.ipynb"), key=lambda p: -p.stat().st_size)
with ThreadPoolExecutor(2) as pool:
    ran = dict(zip(paths, pool.map(run, paths)))
for path in sorted(paths):
    print(json.dumps(ran[path]), flush=True)
"""


@pytest.mark.timeout(900)
def test_the_notebooks_run_from_the_wheel_in_the_users_folder(
    installed_lab: dict[str, Path], lab_folder: Path, tmp_path: Path
) -> None:
    """Every copied notebook runs top to bottom in a kernel of the venv's own Python started in
    the copy's folder (two kernels at once), importing the wheel's reviewlab, with no
    ``REVIEWLAB_*`` or matplotlib variable set, and draws a chart."""
    notebooks = lab_folder / "notebooks"
    script = tmp_path / "run_notebooks.py"
    script.write_text(RUN_NOTEBOOKS)
    env = {k: v for k, v in clean_env().items() if not k.startswith(("REVIEWLAB_", "MPLBACKEND"))}
    done = run(
        installed_lab, [str(installed_lab["python"]), str(script), str(notebooks)], tmp_path, env
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-6000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("[")]
    (executable, module, cwd), *ran = lines
    assert Path(executable).parent == installed_lab["venv"] / "bin"
    assert Path(module).is_relative_to(installed_lab["site"])
    assert Path(cwd) == notebooks
    assert [name for name, _, _ in ran] == shipped_notebooks(installed_lab["wheel"])
    failed = {name: error for name, _, error in ran if error}
    assert not failed, "\n\n".join(f"{name}: {error}" for name, error in failed.items())
    assert all(images > 0 for _, images, _ in ran), ran


README_COMMAND = re.compile(r"^\s*(reviewlab\s.*\bbundled:.*)$")


def readme_commands() -> list[str]:
    """The README's shell commands (in ```sh blocks) that name a shipped file, comments cut."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```(?:sh|bash|shell|console)\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            found = README_COMMAND.match(line.removeprefix("$ "))
            if found:
                commands.append(re.split(r"\s+#\s", found.group(1))[0].strip())
    return commands


def test_the_readmes_commands_on_shipped_files_run_from_the_wheel(
    installed_lab: dict[str, Path], tmp_path: Path
) -> None:
    """Each README shell command naming a ``bundled:`` file runs from an empty folder, in the
    README's order, and exits 0."""
    commands = readme_commands()
    assert commands, "the README shows no shell command on a bundled: file"
    for command in commands:
        argv = shlex.split(command)
        argv[0] = str(installed_lab["venv"] / "bin" / "reviewlab")
        done = run(installed_lab, argv, tmp_path)
        assert done.returncode == 0, f"{command}\n{done.stdout[-1000:]}\n{done.stderr[-3000:]}"


RUN_EXAMPLES = r"""
import argparse, contextlib, io, json, os, shlex, sys, time
from pathlib import Path

from reviewlab.cli import build_parser, main

SERVING = {"dashboard", "gateway", "lab", "lesson", "record"}
NETWORK = ("--scheduler", "--base-url")
EXTRA = {"tune learned"}  # fits with lifelines: the survival extra, absent from this venv


def examples(help_text):
    _, _, tail = help_text.partition("\nexamples:\n")
    return [line.strip() for line in tail.replace("\\\n", " ").splitlines() if line.strip()]


root = Path(sys.argv[1])
share, shares = map(int, sys.argv[2].split("/"))  # this process runs every shares-th command
parser = build_parser()
[commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
for index, (name, sub) in enumerate(commands.choices.items()):
    if index % shares != share:
        continue
    folder = root / name
    folder.mkdir()
    os.chdir(folder)
    found = examples(sub.format_help())
    print(json.dumps({"command": name, "examples": len(found)}), flush=True)
    for line in found:
        argv = shlex.split(line, comments=True)
        parsed_only = name in SERVING | EXTRA or any(flag in argv for flag in NETWORK)
        began = time.perf_counter()
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            if parsed_only:
                try:
                    build_parser().parse_args(argv[1:])
                    status = 0
                except SystemExit as exc:
                    status = exc.code
            else:
                status = main(argv[1:])
        print(json.dumps({
            "command": name, "example": line, "argv": argv, "ran": not parsed_only,
            "status": status, "stderr": err.getvalue()[-2000:],
            "sec": round(time.perf_counter() - began, 2),
        }), flush=True)
"""
EXAMPLE_PROCESSES = 2
"""Processes the help examples are shared among (every other command each): the test process
only waits on them, so two keep a 2-core machine busy."""
CHECKOUT_PATH = re.compile(r"^(?:\./)?(?:data|reviewlab|notebooks|tests|docs|benchmarks)/")
"""A path into the source checkout: absent from a wheel install."""


@pytest.mark.timeout(600)
def test_every_help_example_runs_from_the_wheel_in_an_empty_folder(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    """Every example of every command's ``--help`` runs from an empty folder (one per command,
    the examples in their order, in a process of the venv's Python; :data:`EXAMPLE_PROCESSES`
    at once, each running every other command) and exits 0, naming only ``bundled:`` files or
    files an earlier example of that command created.

    The rule for what is only parsed, not run: the examples of commands that serve or talk to a
    network peer (``lab``, ``dashboard``, ``lesson``, ``gateway``, ``record``) and any example
    that connects to a Dask scheduler or a model URL (``--scheduler``, ``--base-url``), and the
    examples of a command that needs an extra the wheel's base install lacks (``tune learned``:
    lifelines); they must still parse, and name no checkout path."""
    script = tmp_path / "run_examples.py"
    script.write_text(RUN_EXAMPLES)
    folders = tmp_path / "runs"
    folders.mkdir()
    shares = [f"{share}/{EXAMPLE_PROCESSES}" for share in range(EXAMPLE_PROCESSES)]
    argv = [str(installed["python"]), str(script), str(folders)]
    with ThreadPoolExecutor(EXAMPLE_PROCESSES) as pool:
        runs = list(pool.map(lambda share: run(installed, [*argv, share], tmp_path), shares))
    records = []
    for done in runs:
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
        records += [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    counts = {r["command"]: r["examples"] for r in records if "examples" in r}
    ran = [r for r in records if "example" in r]
    assert len(counts) >= 18 and "check" in counts
    assert all(counts.values()), f"commands without an example: {counts}"
    for record in ran:
        assert record["argv"][0] == "reviewlab", record["example"]
        paths = [a for a in record["argv"][1:] if CHECKOUT_PATH.match(a.split("=")[-1])]
        assert not paths, f"{record['example']}: checkout paths {paths}"
    failed = [f"{r['example']}\n  -> {r['status']}: {r['stderr']}" for r in ran if r["status"]]
    assert not failed, "\n".join(failed)
    assert sum(r["ran"] for r in ran) >= 30

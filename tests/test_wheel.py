"""The wheel works on its own: built with ``python -m build``, installed in a fresh venv, it runs.

How the fresh venv gets its third-party packages without a download: the venv is made
``--without-pip`` and without system site-packages; a ``.pth`` file adds ONE folder holding links
to exactly the distributions the wheel declares (``Requires-Dist`` without extras) and what they
in turn require, taken from the interpreter running the tests. So an import of an undeclared
package fails there, and the source checkout is on no path: the commands run from an empty
temporary directory with ``PYTHONPATH`` unset, and ``reviewlab.__file__`` must lie in the venv.
reviewlab itself is installed from the wheel by pip (``--no-deps --no-index``), not editable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "reviewlab")
"""What the build reads; copied so the build writes nothing into the shared checkout."""
SHIPPED = (
    "reviewlab/data/episodes/synthetic-1k.jsonl.gz",
    "reviewlab/data/incidents/wedged-query-code.jsonl",
    "reviewlab/data/workspace/inventory/pricing.py",
    "reviewlab/notebooks/01-abandonment-semantics.ipynb",
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


def declared_requirements(wheel: Path) -> list[Requirement]:
    """The wheel's ``Requires-Dist`` entries that apply without extras on this interpreter."""
    with zipfile.ZipFile(wheel) as archive:
        [name] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        meta = Parser().parsestr(archive.read(name).decode())
    found = [Requirement(text) for text in meta.get_all("Requires-Dist") or []]
    return [r for r in found if r.marker is None or r.marker.evaluate({"extra": ""})]


def dependency_closure(requirements: list[Requirement]) -> dict[str, metadata.Distribution]:
    """Every installed distribution the requirements need, transitively, by canonical name."""
    closure: dict[str, metadata.Distribution] = {}
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in closure:
            continue
        dist = metadata.distribution(requirement.name)
        assert requirement.specifier.contains(dist.version, prereleases=True), (
            f"{requirement}: this environment has {dist.version}"
        )
        closure[name] = dist
        for text in dist.requires or []:
            nested = Requirement(text)
            if nested.marker is None or nested.marker.evaluate({"extra": ""}):
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
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A fresh venv with the wheel installed and its dependencies linked; its paths."""
    work = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(work / "dist", work)
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
    link_distributions(dependency_closure(declared_requirements(wheel)), deps)
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


def clean_env() -> dict[str, str]:
    """This process's environment without anything that would put the checkout on a path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["MPLBACKEND"] = "Agg"
    return env


def run(installed: dict[str, Path], argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run a command of the fresh venv in ``cwd`` with a clean environment."""
    return subprocess.run(
        argv, cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=600, check=False
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
    code = (
        "import importlib.util as u; print([u.find_spec(n) is None for n in ('openai', 'pytest')])"
    )
    done = run(installed, [str(installed["python"]), "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, True]"


def test_reviewlab_demo_from_an_empty_directory_writes_the_report_and_its_charts(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    """``reviewlab demo`` (the venv's own script) writes out/report.html and the PNGs it shows."""
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


def test_reviewlab_lab_copies_the_notebooks_into_the_working_directory(
    installed: dict[str, Path], tmp_path: Path
) -> None:
    """``reviewlab lab --dry-run`` in an empty folder copies the shipped notebooks there."""
    done = run(
        installed, [str(installed["venv"] / "bin" / "reviewlab"), "lab", "--dry-run"], tmp_path
    )
    assert done.returncode == 0, done.stderr
    copied = sorted(p.name for p in (tmp_path / "notebooks").glob("*.ipynb"))
    shipped = sorted(
        Path(n).name
        for n in zipfile.ZipFile(installed["wheel"]).namelist()
        if n.startswith("reviewlab/notebooks/") and n.endswith(".ipynb")
    )
    assert copied == shipped and len(copied) >= 4
    assert f"--notebook-dir={tmp_path / 'notebooks'}" in done.stdout

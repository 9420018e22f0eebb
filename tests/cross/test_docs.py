"""The docs under ``docs/`` stay in step with the code, the site's navigation reaches every page,
and the README (what a newcomer reads first, at most 150 lines) points at them."""

from __future__ import annotations

import importlib
import re
import shlex
from pathlib import Path

import pytest
from test_architecture import LAYERS, TOP

from reviewlab.core import _metrics as metrics
from reviewlab.core import _vocab as vocab
from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.core._receipts import tool_timeout_text
from reviewlab.recording._schema import Call, Episode, Extent, Round

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
BUILT = ("_build", "notebooks")
"""Folders of ``docs/`` that ``make docs`` writes (the site, its notebooks' copy): not pages."""


def pages() -> list[Path]:
    """Every Markdown page of ``docs/``, in sub-folders too, the built folders left out."""
    return sorted(
        path for path in DOCS.rglob("*.md") if path.relative_to(DOCS).parts[0] not in BUILT
    )


def words(name: str) -> set[str]:
    """The names a document shows as inline code (between backticks)."""
    return set(re.findall(r"`([^`\s]+)`", (DOCS / name).read_text(encoding="utf-8")))


@pytest.mark.parametrize("model", [Episode, Round, Call, Extent], ids=lambda m: m.__name__)
def test_every_field_of_the_recording_format_is_documented(model) -> None:
    """Each field of the schema's models is named in docs/recording-format.md (by its alias)."""
    shown = words("recording-format.md")
    fields = [info.alias or name for name, info in model.model_fields.items()]
    assert [f for f in fields if f not in shown] == []


def test_every_metric_key_and_column_is_documented() -> None:
    """The summary keys and the call and episode columns are all defined in docs/metrics.md."""
    shown = words("metrics.md")
    names = SUMMARY_KEYS + metrics.CALL_FRAME_COLUMNS + metrics.EPISODE_COLUMNS
    assert [n for n in names if n not in shown] == []


def test_the_semantics_name_every_value_of_their_vocabularies() -> None:
    """Outcomes, source gaps, bound_by, narrowing and censoring modes, reactions all appear."""
    shown = words("semantics.md")
    values = (
        vocab.OUTCOMES
        + vocab.SOURCE_GAPS
        + vocab.BOUND_BY
        + vocab.NARROWING_MODES
        + vocab.CENSORING_MODES
        + vocab.REACTIONS
    )
    assert [v for v in values if v not in shown] == []


def test_the_semantics_quote_the_host_text_the_code_sends() -> None:
    """The abandonment text in docs/semantics.md is exactly what ``tool_timeout_text`` builds."""
    text = (DOCS / "semantics.md").read_text(encoding="utf-8")
    assert tool_timeout_text("read_file", 0.3) in text


def test_the_architecture_lists_every_layer() -> None:
    """Every layer of the architecture test has a row in docs/architecture.md, with its number."""
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    for name, layer in LAYERS.items():
        if layer == TOP:
            path = f"{name}/" if (REPO / "reviewlab" / name).is_dir() else f"{name}.py"
        elif (REPO / "reviewlab" / name).is_dir():
            path = f"reviewlab/{name}/"
        else:
            path = f"reviewlab/{name}.py"
        number = f"{layer:g}".replace("-", "−")
        assert re.search(rf"^\| {re.escape(number)} \|[^\n]*`{re.escape(path)}`", text, re.M), (
            f"no row for layer {number} naming `{path}`"
        )


@pytest.mark.parametrize(
    "document",
    ["README.md", *(p.relative_to(REPO).as_posix() for p in pages())],
)
def test_relative_links_resolve_and_nothing_points_outside_the_repository(document: str) -> None:
    """Every relative Markdown link names a file of the checkout (a notebook page under
    ``docs/notebooks/``, the build's copy, names a shipped notebook); none leaves the repository."""
    path = REPO / document
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        resolved = (path.parent / target).resolve()
        if resolved.parent == (DOCS / "notebooks").resolve():
            resolved = (REPO / "notebooks" / resolved.name).resolve()
        assert resolved.is_relative_to(REPO) and resolved.exists(), f"{document}: {target}"


def test_the_readme_is_short_and_links_the_docs() -> None:
    """The README is at most 150 lines and links the docs' table of contents, the site's
    build, and each reference page at the top of docs/."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    assert "(docs/README.md)" in readme and "make docs" in readme
    for page in sorted(DOCS.glob("*.md")):
        if page.name not in {"README.md", "index.md"}:
            assert f"(docs/{page.name})" in readme, page.name


def test_the_docs_table_of_contents_links_every_page() -> None:
    """docs/README.md, the folder's contents for readers of the repository, links every page
    but the per-package API pages (which the API index reaches by its glob)."""
    contents = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {(DOCS / target).resolve() for target in re.findall(r"\]\(([^)#\s]+)", contents)}
    for page in pages():
        if page.name == "README.md" or page.parent == DOCS / "api" and page.name != "index.md":
            continue
        assert page.resolve() in linked, page.relative_to(DOCS)


TOCTREE = re.compile(r"```\{toctree\}\n(.*?)```", re.S)


def navigation(docnames: set[str]) -> set[str]:
    """The documents the site's navigation reaches: from ``index``, through every toctree block
    of every page reached, globs matched the way Sphinx does (``*`` stays in one folder)."""
    reached, todo = {"index"}, ["index"]
    while todo:
        doc = todo.pop()
        source = DOCS / f"{doc}.md"
        if not source.exists():
            continue
        folder = doc.rpartition("/")[0]
        for block in TOCTREE.findall(source.read_text(encoding="utf-8")):
            for line in block.splitlines():
                entry = line.strip()
                if not entry or entry.startswith(":"):
                    continue
                entry = entry[1:] if entry.startswith("/") else f"{folder}/{entry}".lstrip("/")
                pattern = re.compile(re.escape(entry).replace(r"\*", "[^/]*") + "$")
                matched = {name for name in docnames if pattern.match(name)} - reached
                reached |= matched
                todo.extend(matched)
    return reached


def test_every_page_and_notebook_is_in_the_site_navigation() -> None:
    """Every page of docs/ (docs/README.md aside: the site's contents is docs/index.md) and every
    shipped notebook is reached from the site's index through its toctrees."""
    docnames = {
        page.relative_to(DOCS).with_suffix("").as_posix()
        for page in pages()
        if page.name != "README.md" or page.parent != DOCS
    }
    docnames |= {f"notebooks/{nb.stem}" for nb in (REPO / "notebooks").glob("[0-9][0-9]-*.ipynb")}
    assert sorted(docnames - navigation(docnames)) == []
    assert len([d for d in docnames if d.startswith("notebooks/")]) >= 8


def test_every_public_package_has_an_api_page() -> None:
    """Each package with a ``__all__`` has a page under docs/api/ that generates its reference,
    and each such page names a package with a ``__all__``."""
    shown = {
        page.stem: page.read_text(encoding="utf-8") for page in (DOCS / "api").glob("reviewlab*.md")
    }
    folders = ["reviewlab/", *package_folders()]
    public = {
        name
        for name in (folder.rstrip("/").replace("/", ".") for folder in folders)
        if getattr(importlib.import_module(name), "__all__", None)
    }
    assert sorted(shown) == sorted(public)
    for name, text in shown.items():
        assert f"```{{public-api}} {name}\n```" in text, name


def test_the_readmes_tour_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The README's Python tour runs in a fresh folder: the pre-fix loop never ends on the
    bundled corpus (it holds calls that never returned), the bounded one does, and the
    recommendation it saves loads back as the same policy."""
    from reviewlab import Policy

    monkeypatch.chdir(tmp_path)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    scope: dict = {"__name__": "readme"}
    exec(compile(block, "README.md tour", "exec"), scope)
    before, after = capsys.readouterr().out.splitlines()[0].split()
    assert before == "inf" and float(after) < float("inf")
    assert Policy.load(tmp_path / "recommended.toml") == scope["rec"].policy


def package_folders() -> list[str]:
    """Every package of reviewlab (a folder with an ``__init__.py``) as ``reviewlab/x/y/``,
    the shipped data folder left out."""
    root = REPO / "reviewlab"
    return sorted(
        f"{init.parent.relative_to(REPO).as_posix()}/"
        for init in root.rglob("__init__.py")
        if init.parent != root and init.parent.relative_to(root).parts[0] != "data"
    )


def test_the_architecture_and_the_layout_page_show_every_package() -> None:
    """docs/architecture.md has a row per package and sub-package, and the layout block of
    docs/guide/layout.md (moved there from the README) a line for each: a newcomer finds every
    room from either."""
    architecture = (DOCS / "architecture.md").read_text(encoding="utf-8")
    guide = (DOCS / "guide" / "layout.md").read_text(encoding="utf-8")
    layout = guide.split("```", 2)[1]
    listed = {line.split()[0] for line in layout.splitlines() if line.strip()}
    for folder in package_folders():
        short = folder.removeprefix("reviewlab/")
        in_table = re.search(
            rf"^\| [^|]+ \| [^|]*`({re.escape(folder)}|{re.escape(short)})`", architecture, re.M
        )
        assert in_table, f"docs/architecture.md has no row for {folder}"
        assert folder in listed, f"docs/guide/layout.md does not list {folder}"


def test_the_getting_started_commands_run(tmp_path: Path, monkeypatch, capsys) -> None:
    """Every ``reviewlab`` command on a ``bundled:`` name in the getting-started pages exits 0
    in a fresh folder, in page order (tuning's replays read the policy its tune wrote)."""
    from reviewlab import Policy
    from reviewlab.cli import main

    monkeypatch.chdir(tmp_path)
    ran = []
    for page in sorted((DOCS / "start").glob("*.md")):
        for block in re.findall(r"```sh\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            for line in block.splitlines():
                if line.startswith("reviewlab ") and "bundled:" in line:
                    argv = shlex.split(line.split(" #", 1)[0])[1:]
                    assert main(argv) == 0, f"{page.name}: {line}"
                    ran.append(page.stem)
    capsys.readouterr()
    assert {"incident", "tuning"} <= set(ran)
    assert isinstance(Policy.load(tmp_path / "recommended.toml"), Policy)

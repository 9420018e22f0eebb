"""The docs under ``docs/`` stay in step with the code, and the README points at them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_architecture import LAYERS, TOP

from reviewlab.core import metrics, vocab
from reviewlab.core.receipts import tool_timeout_text
from reviewlab.recording.schema import Call, Episode, Extent, Round

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


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
    names = metrics.SUMMARY_KEYS + metrics.CALL_FRAME_COLUMNS + metrics.EPISODE_COLUMNS
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
    "document", ["README.md", *(f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")))]
)
def test_relative_links_resolve_and_nothing_points_outside_the_repository(document: str) -> None:
    """Every relative Markdown link names a file of the checkout; none leaves the repository."""
    path = REPO / document
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        resolved = (path.parent / target).resolve()
        assert resolved.is_relative_to(REPO) and resolved.exists(), f"{document}: {target}"


def test_the_readme_links_the_docs() -> None:
    """The README points readers at each document under docs/."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "README.md":
            assert f"(docs/{page.name})" in readme, page.name


def package_folders() -> list[str]:
    """Every package of reviewlab (a folder with an ``__init__.py``) as ``reviewlab/x/y/``,
    the shipped data folder left out."""
    root = REPO / "reviewlab"
    return sorted(
        f"{init.parent.relative_to(REPO).as_posix()}/"
        for init in root.rglob("__init__.py")
        if init.parent != root and init.parent.relative_to(root).parts[0] != "data"
    )


def test_the_architecture_and_the_readme_layout_show_every_package() -> None:
    """docs/architecture.md has a row per package and sub-package, and the README's layout
    block a line for each: a newcomer finds every room from either."""
    architecture = (DOCS / "architecture.md").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("```", 2)[1]
    listed = {line.split()[0] for line in layout.splitlines() if line.strip()}
    for folder in package_folders():
        short = folder.removeprefix("reviewlab/")
        in_table = re.search(
            rf"^\| [^|]+ \| [^|]*`({re.escape(folder)}|{re.escape(short)})`", architecture, re.M
        )
        assert in_table, f"docs/architecture.md has no row for {folder}"
        assert folder in listed, f"the README's layout does not list {folder}"

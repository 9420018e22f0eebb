"""Every column any output prints is defined in docs/metrics.md, and silence is defined once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reviewlab.cli import main
from reviewlab.ui._answers import incident_text
from reviewlab.ui._demo import run_demo
from reviewlab.ui._numbers import LABELS, SILENCE

DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def _documented() -> list[re.Pattern[str]]:
    """Every name docs/metrics.md shows as inline code; ``<objective>`` stands for any text."""
    names = set(re.findall(r"`([^`]+)`", DOCS.read_text(encoding="utf-8")))
    return [
        re.compile(
            "".join(
                ".+" if part.startswith("<") else re.escape(part)
                for part in re.split(r"(<[^>]+>)", name)
            )
            + "$"
        )
        for name in names
    ]


def _headers(text: str) -> list[str]:
    """The column names of every aligned table in ``text`` (the line above each rule line); a
    summary table's other columns are the runs it compares, named by their policies."""
    lines = text.splitlines()
    found = []
    for index, line in enumerate(lines):
        if index and re.fullmatch(r"-+(  +-+)*", line):
            columns = [c for c in re.split(r"\s{2,}", lines[index - 1].strip()) if c]
            found += columns[:1] if columns[:1] == ["metric"] else columns
    return found


def _undocumented(text: str) -> list[str]:
    patterns = _documented()
    labels = set(LABELS.values())
    return sorted(
        {
            column
            for column in _headers(text)
            if column not in labels and not any(p.match(column) for p in patterns)
        }
    )


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What the quick demo and the table-printing commands print, all together."""
    lines: list[str] = []
    run_demo(tmp_path_factory.mktemp("demo"), quick=True, echo=lambda t: lines.append(t))
    return "\n".join(lines)


def test_every_column_the_demo_prints_is_documented(printed: str) -> None:
    """Each column header of the demo's tables is a documented name or a summary label."""
    assert _headers(printed)
    assert _undocumented(printed) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "bundled:corpus"],
        ["replay", "bundled:incident", "--engine", "twin", "--slots", "6"],
        ["sweep", "bundled:corpus", "--tool", "read_file=5,30", "--breaker", "0,3"],
        ["tune", "bundled:corpus"],
        ["incident", "bundled:incident", "--top", "3"],
        ["presets"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_every_column_a_command_prints_is_documented(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Each column header a table-printing command prints is defined in docs/metrics.md."""
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert _headers(text)
    assert _undocumented(text) == []


def test_silence_has_one_definition(printed: str) -> None:
    """The docs, ``reviewlab incident`` and the code say the same sentence about silence."""
    docs = " ".join(DOCS.read_text(encoding="utf-8").split())
    sentence = SILENCE.removeprefix("silence: ")
    assert sentence in docs.replace("**Silence** is ", "")
    from reviewlab.analysis._incident import longest_silences

    assert SILENCE in incident_text(longest_silences("bundled:incident", top=2))

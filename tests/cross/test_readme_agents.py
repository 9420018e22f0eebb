"""The "Bring your own agent" examples (docs/guide/your-agent.md, moved there from the README)
run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "guide" / "your-agent.md"


def _section_blocks(language: str) -> list[str]:
    """The code blocks of one language on the "Bring your own agent" page."""
    text = PAGE.read_text(encoding="utf-8")
    assert text.startswith("# Bring your own agent\n")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def test_the_section_has_the_three_paths():
    """Three Python examples (traces in, spans out, bounded tools) and their commands."""
    assert len(_section_blocks("python")) == 3
    assert len(_section_blocks("sh")) == 2


@pytest.mark.parametrize("index", range(3))
def test_each_python_example_runs(index, tmp_path, monkeypatch, capsys):
    """Each Python block runs in a fresh folder and prints what its comments say."""
    monkeypatch.chdir(tmp_path)
    block = _section_blocks("python")[index]
    exec(compile(block, f"your-agent.md python block {index + 1}", "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out.splitlines()
    expected = [
        line.split("# ", 1)[1].split(" (")[0].split(":")[0].strip()
        for line in block.splitlines()
        if line.strip().startswith("print(") and "# " in line
    ]
    assert len(printed) == len(expected)
    for got, want in zip(printed, expected, strict=True):
        assert got.startswith(want.split(",")[0]), (got, want)


def test_the_command_examples_run(tmp_path, monkeypatch, capsys):
    """The shell lines of paths 1 and 2 run through the CLI on the files the examples wrote."""
    from reviewlab.cli import main

    monkeypatch.chdir(tmp_path)
    exec(
        compile(_section_blocks("python")[0], "your-agent.md python block 1", "exec"),
        {"__name__": "readme"},
    )
    for block in _section_blocks("sh"):
        for line in block.strip().splitlines():
            argv = line.split()[1:]
            argv = [str(REPO / a) if a.startswith("data/") else a for a in argv]
            assert main(argv) == 0, line
    capsys.readouterr()

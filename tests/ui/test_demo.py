"""``reviewlab demo``: the short form on the terminal, the full tables in the report, every table
with its assumptions (:mod:`reviewlab.ui._demo`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from reviewlab.ui._demo import MAX_LINES, run_demo


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """The ``--quick`` demo's stdout lines and its output folder (run once for the module)."""
    out = tmp_path_factory.mktemp("demo") / "out"
    lines: list[str] = []
    run_demo(out, quick=True, echo=lambda text: lines.extend(text.split("\n")))
    return lines, out


def _tables(html: str) -> list[str]:
    """Each table of the report with what follows it up to the next table or heading."""
    return re.findall(
        r"<table>.*?</table><div class=\"foot\">(?:<p class=\"(?:note|assumes)\">.*?</p>)*", html
    )


def test_the_quick_demo_prints_at_most_80_lines(quick) -> None:
    """The short form fits a screenful: at most MAX_LINES (80) lines on stdout."""
    lines, _ = quick
    assert MAX_LINES == 80
    assert len(lines) <= MAX_LINES, "\n".join(lines)


def test_every_printed_table_states_its_assumptions(quick) -> None:
    """After every table's rule line an ``assumes:`` line follows before the next table."""
    lines, _ = quick
    rules = [i for i, line in enumerate(lines) if re.fullmatch(r"-+(  -+)*", line)]
    assert len(rules) >= 5
    for start, end in zip(rules, [*rules[1:], len(lines)], strict=True):
        block = lines[start:end]
        assert any(line.startswith("assumes: ") for line in block), "\n".join(block)


def test_the_incident_call_reads_as_recorded_never_completed(quick) -> None:
    """The wedged query_code reads "never returned …; replayed as returning at 26,160 s", and no
    table says it completed."""
    lines, _ = quick
    text = "\n".join(lines)
    assert "never returned (watched 26,160 s); replayed as returning at 26,160 s" in text
    assert "completed" not in text.split("== 3.")[0]
    assert "longest silence: 26,160 s before the fix, 600 s after" in text


def test_headings_name_the_budget_and_the_front_its_objectives(quick) -> None:
    """The recommendation's heading names the budget applied; the front names its objectives;
    no number is in scientific notation."""
    lines, _ = quick
    text = "\n".join(lines)
    assert "within a budget of 1 % of read lines lost to timeouts" in text
    assert "Pareto front on coverage lost to timeouts, wall p95 (all minimised)" in text
    assert not re.search(r"\d\.\d+e-\d", text), "a number in scientific notation"


def test_saved_names_every_objective_that_changed(tmp_path: Path) -> None:
    """The saved and paid lines name every objective whose figure differs between ouroboros and
    the recommendation, and no other."""
    from reviewlab.ui._numbers import label_of
    from reviewlab.ui._tables import OBJECTIVE_ROWS

    lines: list[str] = []
    result = run_demo(tmp_path, quick=True, echo=lambda t: lines.extend(t.split("\n")))
    said = " ".join(line for line in lines if line.startswith(("saved (against", "paid: ")))
    before, after = result.summaries["ouroboros"], result.summaries["recommended"]
    for key in OBJECTIVE_ROWS:
        if key in before:
            changed = before[key] != after[key]
            assert (f"{label_of(key)} " in said) == changed, (key, said)


def test_numbers_follow_the_one_style(quick) -> None:
    """Rates print as percentages, counts as integers, ∞ alone (with one footnote per table)."""
    lines, _ = quick
    text = "\n".join(lines)
    assert "∞ (a censored call never returns)" not in text
    assert re.search(r"abandoned-call rate\s+0 %\s+0\.\d+ %", text)
    assert " 1000.0 " not in text and "6308.0" not in text


def test_the_report_holds_every_table_with_its_assumptions(quick) -> None:
    """Every table in report.html is followed by its assumptions line; the front is there in
    full (uncollapsed) under the same title as on the terminal."""
    lines, out = quick
    html = (out / "report.html").read_text(encoding="utf-8")
    tables = _tables(html)
    assert len(tables) == html.count("<table>") >= 8
    for table in tables:
        assert '<p class="assumes">assumes: ' in table, table[:300]
    heading = next(line for line in lines if line.startswith("Pareto front on "))
    title = heading.split(":")[0]
    assert f"<caption>{title}" in html
    calls = [t for t in tables if "<th>recorded</th>" in t]
    assert calls and "<th>completed</th>" not in "".join(calls)


def test_the_verbose_demo_prints_the_full_tables(tmp_path: Path) -> None:
    """``verbose`` prints the full front and every summary row (so more lines than the short
    form), still with the assumptions."""
    lines: list[str] = []
    run_demo(tmp_path, quick=True, verbose=True, echo=lambda t: lines.extend(t.split("\n")))
    text = "\n".join(lines)
    assert "coverage lost by failing reads" in text  # a row the short summary leaves out
    front = lines.index(next(line for line in lines if line.startswith("Pareto front on ")))
    assert "points" not in lines[front + 1].split()  # uncollapsed: no count column
    assert text.count("assumes: ") >= 6


@pytest.mark.timeout(240)
def test_the_full_default_demo_prints_at_most_80_lines(tmp_path: Path) -> None:
    """``reviewlab demo`` as ``make demo`` runs it (the full corpus and grid) prints at most 80
    lines on stdout and finishes well inside the CI's two minutes."""
    proc = subprocess.run(
        [sys.executable, "-m", "reviewlab", "demo", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.rstrip("\n").split("\n")
    assert len(lines) <= MAX_LINES, proc.stdout
    seconds = float(re.search(r"demo finished in ([\d.]+) s", proc.stdout).group(1))  # type: ignore[union-attr]
    assert seconds < 120


def test_top_and_verbose_are_one_or_the_other(tmp_path: Path) -> None:
    """``--top`` with ``--verbose`` would be ignored: the CLI refuses it in one line."""
    from reviewlab.cli import main

    assert main(["demo", "--verbose", "--top", "3", "--out", str(tmp_path)]) == 2

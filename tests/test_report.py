"""Text tables, table files and the HTML report (:mod:`reviewlab.ui.report`)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from reviewlab.ui.report import (
    INFINITE_TEXT,
    Report,
    format_value,
    receipts_table,
    summary_table,
    sweep_view,
    text_table,
    write_table,
)


def test_format_value_reads_like_a_person_writes() -> None:
    """Big numbers get separators, small ones 4 significant digits, missing values a dash."""
    assert format_value(26160.0) == "26,160"
    assert format_value(1234.5678) == "1,234.6"
    assert format_value(0.012345) == "0.01235"
    assert format_value(float("nan")) == "-"
    assert format_value(None) == "-"
    assert format_value(math.inf) == "∞ (a censored call never returns)" == INFINITE_TEXT
    assert format_value(3) == "3"


def test_text_table_aligns_numbers_right_and_text_left() -> None:
    """Every row has the same width per column; numbers end in the same place."""
    frame = pd.DataFrame({"tool": ["read_file", "query_code"], "calls": [5, 1200]})
    lines = text_table(frame).splitlines()
    assert lines[0].split() == ["tool", "calls"]
    assert lines[2].startswith("read_file ") and lines[2].endswith("    5")
    assert lines[3].endswith("1,200")


def test_text_table_of_no_rows_says_so() -> None:
    """An empty frame prints its header and ``(no rows)``."""
    assert text_table(pd.DataFrame({"a": []})).endswith("(no rows)")


def test_summary_table_puts_runs_side_by_side() -> None:
    """One row per metric (readable labels), one column per labelled run."""
    frame = summary_table(
        {
            "pre-fix": {"max_silence_sec": 26160.0, "calls": 3},
            "ouroboros": {"max_silence_sec": 600.0, "calls": 3},
        }
    )
    assert list(frame.columns) == ["pre-fix", "ouroboros"]
    assert frame.loc["longest silence (s)", "pre-fix"] == 26160.0
    assert "26,160" in text_table(frame)


def test_receipts_table_keeps_the_receipt_columns() -> None:
    """Receipt dicts become a frame in the documented column order; a missing gap is blank."""
    frame = receipts_table(
        [
            {
                "round": 1,
                "tool": "read_file",
                "outcome": "executed",
                "duration_sec": 0.01,
                "bound_sec": 0.6,
                "bound_by": "tool_timeout",
                "source_gap": None,
                "result_chars": 10,
                "extra": "x",
            }
        ]
    )
    assert list(frame.columns)[:3] == ["round", "tool", "outcome"]
    assert "extra" not in frame.columns
    assert frame.loc[0, "source_gap"] == ""


@pytest.mark.parametrize("name", ["t.csv", "t.parquet"])
def test_write_table_round_trips_by_extension(tmp_path: Path, name: str) -> None:
    """CSV or Parquet is chosen by the extension and reads back equal; no temporary file remains."""
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    path = write_table(frame, tmp_path / name)
    back = pd.read_csv(path) if name.endswith(".csv") else pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, frame)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_write_table_refuses_other_extensions(tmp_path: Path) -> None:
    """An unknown extension is a ValueError and writes nothing."""
    with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "t.xlsx")
    assert list(tmp_path.iterdir()) == []


def test_report_writes_html_with_png_beside_it(tmp_path: Path) -> None:
    """A report with a table and a figure writes report.html that shows the PNG saved next to it."""
    report = Report("A <demo>", tmp_path / "out")
    report.heading("Numbers")
    report.table(pd.DataFrame({"metric": ["silence"], "value": [26160.0]}), "caption & more")
    figure = Figure()
    figure.add_subplot().plot([0, 1], [1, 0])
    png = report.figure(figure, "line", "a line")
    path = report.write()
    text = path.read_text(encoding="utf-8")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert '<img src="line.png"' in text
    assert "A &lt;demo&gt;" in text and "26,160" in text and "caption &amp; more" in text
    assert "<script" not in text and "http" not in text


def test_sweep_view_keeps_varying_parameters_and_key_metrics() -> None:
    """Constant parameter columns are dropped, the metrics and the Pareto
    flag kept, rows sorted on demand."""
    frame = pd.DataFrame(
        {
            "policy_name": ["a", "b"],
            "scale": [1.0, 1.0],
            "timeout.read_file": [5.0, 30.0],
            "narrowing.mode": ["inherit", "inherit"],
            "narrowing.fraction": [1.0, 1.0],
            "abandoned_call_rate": [0.2, 0.1],
            "wall_p95_sec": [50.0, 40.0],
            "episodes": [9, 9],
            "pareto": [False, True],
        }
    )
    view = sweep_view(frame, sort_by="wall_p95_sec")
    assert list(view.columns) == [
        "timeout.read_file",
        "narrowing.mode",
        "abandoned_call_rate",
        "wall_p95_sec",
        "pareto",
    ]
    assert list(view["timeout.read_file"]) == [30.0, 5.0]

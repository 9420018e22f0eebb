"""Tables and the HTML report (:mod:`reviewlab.ui._report`, :mod:`reviewlab.ui._tables`,
:mod:`reviewlab.ui._calls`, :mod:`reviewlab.ui._sweeps`)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from reviewlab.core._policy import Policy
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.ui._calls import calls_table, per_tool_table, receipts_table
from reviewlab.ui._report import INFINITE_TEXT, Report, format_value, write_table
from reviewlab.ui._sweeps import collapse_points, front_table, no_effect_axes, sweep_view
from reviewlab.ui._tables import (
    as_table,
    changes_lines,
    common_assumptions,
    summary_table,
    text_table,
)

_T0 = "2025-06-12T09:00:00+00:00"


def _wedged_corpus() -> list[Episode]:
    """Two episodes: one with a read and a search_code that the recording never saw return."""
    return [
        Episode(
            id="w",
            source="synthetic",
            started_at=_T0,
            rounds=[
                Round(send_sec=1.0, calls=[Call(tool="read_file", duration_sec=0.5)]),
                Round(
                    send_sec=1.0,
                    calls=[Call(tool="search_code", duration_sec=900.0, completed=False)],
                ),
                Round(send_sec=1.0),
            ],
        ),
        Episode(
            id="ok",
            source="synthetic",
            started_at=_T0,
            rounds=[Round(send_sec=2.0, calls=[Call(tool="read_file", duration_sec=3.0)])],
        ),
    ]


def test_format_value_writes_a_value_in_the_style_of_its_kind() -> None:
    """A value is written as its kind (or its column's) says; ∞ is one character."""
    assert format_value(26160.0) == "26,160"
    assert format_value(26160.0, name="max_silence_sec") == "26,160 s"
    assert format_value(0.0166, "rate") == "1.66 %"
    assert format_value(float("nan")) == "–" and format_value(None) == "–"
    assert format_value(math.inf) == INFINITE_TEXT == "∞"


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


def test_infinity_is_written_once_per_table_with_one_footnote() -> None:
    """Every ∞ cell is the bare sign; the table carries one footnote saying why."""
    table = as_table(
        pd.DataFrame({"zombie_sec": [math.inf, math.inf, 3.0]}), assumptions={"censored": "wedge"}
    )
    text = table.text()
    assert text.count("∞: never ends") == 1
    assert [line.strip() for line in text.splitlines()[2:5]] == ["∞", "∞", "3 s"]
    assert text.splitlines()[-1].startswith("assumes: censored=wedge")


def test_summary_table_puts_runs_side_by_side_with_their_assumptions() -> None:
    """One row per metric (readable labels, numbers in their units), one column per run, and the
    runs' shared assumptions under it."""
    corpus = _wedged_corpus()
    runs = {
        "pre-fix (unbounded)": replay(corpus, Policy.unbounded(), engine="vectorized"),
        "ouroboros": replay(corpus, Policy.ouroboros(), engine="vectorized"),
    }
    table = summary_table(runs)
    assert list(table.columns) == ["pre-fix (unbounded)", "ouroboros"]
    assert table.loc["calls", "ouroboros"] == 2 + 1  # counts stay numbers to work on
    text = table.text()
    assert re.search(r"longest silence\s+∞\s+600 s", text)
    assert re.search(r"abandoned-call rate\s+0 %\s+33.3 %", text)
    assert "assumes: censored=wedge" in text and "engine=vectorized" in text


def test_a_table_never_mixes_two_censoring_assumptions() -> None:
    """Runs under different censoring are refused, unless each column's label names its own."""
    corpus = _wedged_corpus()
    wedge = replay(corpus, Policy.ouroboros(), engine="vectorized")
    observed = replay(corpus, Policy.ouroboros(), engine="vectorized", censored="observed")
    with pytest.raises(ValueError, match="one table never mixes two"):
        summary_table({"a": wedge, "b": observed})
    table = summary_table({"ouroboros, wedge": wedge, "ouroboros, observed": observed})
    assert table.assumptions["censored"] == "per column (wedge, observed)"
    with pytest.raises(ValueError, match="engine"):
        common_assumptions({"x": {"engine": "twin"}, "y": {"engine": "vectorized"}})


def test_a_hedging_or_breaking_policy_adds_its_rows_to_every_table() -> None:
    """Hedged calls and breaker-withheld calls show in the summary and the per-tool table."""
    corpus = _wedged_corpus()
    policy = Policy.ouroboros().with_hedge("read_file", after_sec=1.0, max_share=1.0)
    result = replay(corpus, policy.with_breaker(1), engine="twin")
    summary = summary_table({"hedged": result})
    assert {"hedged calls", "extra-call share (hedges)", "calls the breaker withheld"} <= set(
        summary.index
    )
    tools = per_tool_table(result)
    assert {"hedged_calls", "withheld_calls"} <= set(tools.columns)
    assert int(tools.set_index("tool").loc["read_file", "hedged_calls"]) == 1


def test_a_censored_call_reads_as_recorded_and_as_replayed() -> None:
    """The calls table never says ``completed True`` of a call the recording never saw return:
    it says what was recorded and what the replay assumed."""
    corpus = _wedged_corpus()
    observed = replay(corpus, Policy.unbounded(), engine="twin", censored="observed")
    table = calls_table({"pre-fix": observed}, episodes=corpus, episode_id="w")
    assert "completed" not in table.columns
    assert list(table["recorded"]) == [
        "returned after 0.5 s",
        "never returned (watched 900 s); replayed as returning at 900 s",
    ]
    wedge = replay(corpus, Policy.unbounded(), engine="twin")
    text = calls_table({"pre-fix": wedge}, tool="search_code").text()
    assert "replayed as never returning: waits forever" in text
    with pytest.raises(ValueError, match="episodes="):
        calls_table({"pre-fix": observed})


def test_changes_lines_name_every_objective_that_changed() -> None:
    """Saved lists every figure that went down, paid every one that went up, in their units."""
    before = {"wall_p95_sec": 54.99, "max_silence_sec": 600.0, "abandoned_call_rate": 0.0}
    after = {"wall_p95_sec": 54.99, "max_silence_sec": 230.0, "abandoned_call_rate": 0.001}
    assert changes_lines(before, after, against="ouroboros") == [
        "saved (against ouroboros): longest silence 600 s → 230 s",
        "paid: abandoned-call rate 0 % → 0.1 %",
    ]


def _points() -> pd.DataFrame:
    """A sweep of 2 read_file timeouts × 2 narrowing modes, the narrowing without effect."""
    rows = []
    for read in (5.0, 30.0):
        for mode in ("inherit", "none"):
            rows.append(
                {
                    "timeout.read_file": read,
                    "narrowing.mode": mode,
                    "timeout_coverage_loss_rate": 0.02 if read == 5.0 else 0.0,
                    "wall_p95_sec": 40.0 if read == 5.0 else 55.0,
                }
            )
    return pd.DataFrame(rows)


def test_an_axis_with_no_effect_is_named_once_and_identical_rows_collapse() -> None:
    """The narrowing changes nothing here: it is named in one note, dropped, and its points
    collapse into one row each with their count."""
    points = _points()
    metrics = ["timeout_coverage_loss_rate", "wall_p95_sec"]
    assert no_effect_axes(points, ["timeout.read_file", "narrowing.mode"], metrics) == [
        "narrowing.mode"
    ]
    collapsed = collapse_points(points, ["narrowing.mode"], metrics)
    assert list(collapsed["points"]) == [2, 2]
    table = front_table(points, ["timeout_coverage_loss_rate", "wall_p95_sec"], assumptions="x")
    assert "narrowing.mode" not in table.columns and list(table["points"]) == [2, 2]
    assert "no effect on the figures shown, dropped: narrowing.mode (inherit, none)" in table.notes
    assert table.title.startswith(
        "Pareto front on coverage lost to timeouts, wall p95 (all minimised): 4 of 4"
    )


def test_front_table_keeps_the_first_rows_and_says_how_many_more() -> None:
    """``top`` keeps the first rows; a note says how many rows of the front were left out."""
    points = pd.DataFrame(
        {
            "timeout.read_file": [1.0, 2.0, 3.0],
            "timeout_coverage_loss_rate": [0.0, 0.01, 0.02],
            "wall_p95_sec": [30.0, 20.0, 10.0],
        }
    )
    table = front_table(points, ["timeout_coverage_loss_rate", "wall_p95_sec"], top=2)
    assert len(table) == 2
    assert "1 more row(s) of the front not shown (--top, --verbose)" in table.notes


def test_receipts_table_keeps_the_receipt_columns_and_says_it_is_live() -> None:
    """Receipt dicts become a table in the documented column order; a missing gap is blank; a
    live run's assumptions are stated."""
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
                "start_line": 1.0,
                "extra": "x",
            }
        ]
    )
    assert list(frame.columns)[:3] == ["round", "tool", "outcome"]
    assert "extra" not in frame.columns
    assert frame.loc[0, "source_gap"] == ""
    text = frame.text()
    assert "assumes: a live run" in text and " 1.0" not in text


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
    """A report with a table and a figure writes report.html that shows the PNG saved next to it,
    the table's assumptions beside the table."""
    report = Report("A <demo>", tmp_path / "out")
    report.heading("Numbers")
    report.table(
        pd.DataFrame({"metric": ["silence"], "max_silence_sec": [26160.0]}),
        "caption & more",
        assumptions={"censored": "observed", "engine": "twin"},
    )
    figure = Figure()
    figure.add_subplot().plot([0, 1], [1, 0])
    png = report.figure(figure, "line", "a line")
    path = report.write()
    text = path.read_text(encoding="utf-8")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert '<img src="line.png"' in text
    assert "A &lt;demo&gt;" in text and "26,160 s" in text and "caption &amp; more" in text
    assert '<p class="assumes">assumes: censored=observed' in text
    assert "<script" not in text and "http" not in text


def test_a_report_refuses_a_table_without_assumptions(tmp_path: Path) -> None:
    """A table that states no assumptions cannot enter a report."""
    report = Report("r", tmp_path)
    with pytest.raises(ValueError, match="states no assumptions"):
        report.table(pd.DataFrame({"a": [1]}), "bare")


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


def test_an_assumption_without_a_value_is_left_out_of_the_footer():
    """A replay with no seed (None) says nothing about a seed: the footer names the censoring
    in words and the engine, and no ``seed=None``."""
    from reviewlab.ui._tables import assumptions_line

    line = assumptions_line({"censored": "wedge", "seed": None, "engine": "twin"})
    assert line == (
        "assumes: censored=wedge (a call the recording never saw return never returns), engine=twin"
    )

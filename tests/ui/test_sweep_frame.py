"""A sweep's frame is a DataFrame that keeps its assumptions through pandas operations
(reviewlab/analysis/sweep/_frame.py), and the display registry answers by kind
(reviewlab/core/_display.py)."""

from __future__ import annotations

import io
from functools import cache

import pandas as pd
import pytest

from reviewlab.analysis.sweep import SweepFrame, make_grid, pareto, sweep, tool_curves
from reviewlab.core import _display as display
from reviewlab.core._policy import Policy
from reviewlab.recording._files import load_episodes
from reviewlab.recording._schema import Episode
from reviewlab.resources import corpus_path


@cache
def _episodes() -> list[Episode]:
    return list(load_episodes(corpus_path()))[:40]


@cache
def _frame() -> SweepFrame:
    return sweep(_episodes(), make_grid(Policy.ouroboros(), scales=[0.01, 0.1, 1.0]), seed=3)


EXPECTED = {"censored": "wedge", "reaction": "as_recorded", "engine": "vectorized", "seed": 3}


def test_a_sweep_returns_a_frame_that_states_its_assumptions():
    """The frame a sweep returns is a SweepFrame (a DataFrame) naming the censoring, the
    reaction, the engine and the seed it was called with."""
    frame = _frame()
    assert isinstance(frame, SweepFrame) and isinstance(frame, pd.DataFrame)
    assert frame.assumptions == EXPECTED
    other = sweep(_episodes(), make_grid(Policy.ouroboros()), censored="observed", seed=1)
    assert other.assumptions == {**EXPECTED, "censored": "observed", "seed": 1}


@pytest.mark.parametrize(
    "operation",
    [
        lambda f: f[f["scale"] > 0.05],
        lambda f: f[["scale", "abandoned_call_rate"]],
        lambda f: f.sort_values("wall_p95_sec"),
        lambda f: f.head(2),
        lambda f: f.copy(),
        lambda f: f.reset_index(drop=True),
        lambda f: f.assign(pareto=pareto(f, ["timeout_coverage_loss_rate", "wall_p95_sec"])),
        lambda f: pd.concat([f, f], ignore_index=True),
        lambda f: f.iloc[1:],
        lambda f: f.loc[f.index[:1]],
    ],
    ids=["mask", "columns", "sort", "head", "copy", "reset", "assign", "concat", "iloc", "loc"],
)
def test_pandas_operations_keep_the_type_and_the_assumptions(operation):
    """Slicing, sorting, assigning and concatenating give a SweepFrame with the same
    assumptions, and the figures are the plain frame's."""
    frame = _frame()
    got = operation(frame)
    assert isinstance(got, SweepFrame)
    assert got.assumptions == EXPECTED
    plain = operation(pd.DataFrame(frame))
    assert type(plain) is pd.DataFrame
    pd.testing.assert_frame_equal(pd.DataFrame(got), plain)


def test_a_column_is_a_series_and_a_plain_frame_forgets():
    """A column is a plain Series; ``pd.DataFrame(frame)`` is a plain frame without attrs."""
    frame = _frame()
    assert type(frame["scale"]) is pd.Series
    plain = pd.DataFrame(frame)
    assert type(plain) is pd.DataFrame and plain.attrs == {}


def test_a_parquet_file_keeps_the_rows_and_the_assumptions():
    """Written as Parquet and read back, the rows are the same and the assumptions come back
    in attrs."""
    buffer = io.BytesIO()
    _frame().to_parquet(buffer, index=False)
    back = pd.read_parquet(io.BytesIO(buffer.getvalue()))
    pd.testing.assert_frame_equal(back, pd.DataFrame(_frame()), check_dtype=False)
    assert back.attrs.get("assumptions") == EXPECTED


def test_tool_curves_keep_the_sweeps_assumptions():
    """One-at-a-time curves (each tool's sweep concatenated) keep the assumptions they share."""
    curves = tool_curves(_episodes(), {"read_file": [1.0, 10.0], "search_code": [1.0]})
    assert isinstance(curves, SweepFrame)
    assert curves.assumptions == {**EXPECTED, "seed": 0}


def test_the_registry_answers_by_kind_and_refuses_an_unknown_kind(monkeypatch):
    """A registered renderer answers for its kind, none answers ``None``, and an unknown kind is
    refused by name."""
    monkeypatch.setattr(display, "_RENDERERS", {})
    assert display.html_of("policy", object()) is None
    assert Policy.ouroboros()._repr_html_() is None
    display.register_html("policy", lambda policy: f"<b>{policy.label}</b>")
    assert Policy.ouroboros()._repr_html_() == "<b>ouroboros</b>"
    with pytest.raises(ValueError, match="kind: expected one of"):
        display.register_html("chart", str)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="display: expected one of"):
        type("Odd", (display.RichDisplay,), {}, display="chart")


def test_a_frame_without_a_renderer_shows_its_rows(monkeypatch):
    """With no sweep renderer registered, a sweep frame shows pandas' own HTML of its rows."""
    monkeypatch.setattr(display, "_RENDERERS", {})
    frame = _frame()
    assert frame._repr_html_() == pd.DataFrame(frame)._repr_html_()


def test_the_front_table_states_the_frames_own_assumptions():
    """The front of a sweep frame, printed without assumptions given, ends with the frame's own
    (what the sweep was called with), not a guess."""
    from reviewlab.ui._sweeps import front_table

    table = front_table(_frame(), ["timeout_coverage_loss_rate", "wall_p95_sec"])
    assert table.assumptions == EXPECTED
    assert table.text().splitlines()[-1].endswith("engine=vectorized, seed=3")

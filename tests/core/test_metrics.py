"""The metric definitions (docs/metrics.md) on hand-made call and episode frames."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reviewlab.core import _metrics as metrics
from reviewlab.core._breakdown import per_slot, per_tool
from reviewlab.core._metric_names import SUMMARY_KEYS


def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two episodes: e1 abandons a read then reads again (uncredited); e2
    wedges under the pre-fix policy."""
    rows = [
        # episode, round, index, tool, dur, completed, bound, by, outcome,
        # gap, requested, credited, zombie
        ("e1", 1, 0, "read_file", 1.0, True, 10.0, "tool_timeout", "executed", "", 100, 100, 0.0),
        (
            "e1",
            1,
            1,
            "read_file",
            50.0,
            True,
            10.0,
            "tool_timeout",
            "error",
            "native_tool_abandoned",
            40,
            0,
            40.0,
        ),
        ("e1", 2, 2, "read_file", 2.0, True, 5.0, "deadline", "executed", "", 60, 0, 0.0),
        (
            "e1",
            2,
            3,
            "search_code",
            900.0,
            False,
            5.0,
            "deadline",
            "error",
            "native_tool_abandoned",
            0,
            0,
            math.inf,
        ),
        ("e2", 1, 0, "read_file", 3.0, True, math.nan, "unbounded", "executed", "", 100, 100, 0.0),
        (
            "e2",
            1,
            1,
            "query_code",
            26160.0,
            False,
            math.nan,
            "unbounded",
            "error",
            "native_tool_wedged",
            0,
            0,
            0.0,
        ),
        ("e2", 2, 2, "read_file", 1.0, True, math.nan, "unbounded", "withheld", "", 100, 0, 0.0),
    ]
    calls = pd.DataFrame(rows, columns=list(metrics.CALL_COLUMNS))
    base = pd.DataFrame(
        {
            "episode_id": ["e1", "e2", "e3"],
            "slot_id": ["s1", "s2", "s1"],
            "wall_sec": [30.0, 26170.0, 4.0],
            "max_silence_sec": [15.0, 26163.0, 0.0],
        }
    )
    return calls, base


def test_episode_rows_count_dispatched_calls_lines_and_loss():
    """Per episode: withheld calls are not dispatched, lines are summed, an
    episode without calls gets zeros."""
    calls, base = frames()
    episodes = metrics.episode_rows(calls, base)
    assert list(episodes.columns) == list(metrics.EPISODE_COLUMNS)
    e1, e2, e3 = (episodes.iloc[i] for i in range(3))
    assert (e1["calls"], e1["abandoned_calls"], e1["requested_lines"], e1["credited_lines"]) == (
        4,
        2,
        200,
        100,
    )
    assert e1["coverage_loss"] == pytest.approx(0.5)
    assert (e2["calls"], e2["abandoned_calls"], e2["requested_lines"], e2["credited_lines"]) == (
        2,
        0,
        200,
        100,
    )
    assert (e3["calls"], e3["requested_lines"], e3["coverage_loss"]) == (0, 0, 0.0)


def test_summary_definitions():
    """Rates over dispatched calls, coverage over requested lines, wedged zombies
    counted apart, deadline share."""
    calls, base = frames()
    episodes = metrics.episode_rows(calls, base)
    summary = metrics.summarize(calls, episodes, peak_loose_workers=2)
    assert list(summary) == list(SUMMARY_KEYS)
    assert summary["episodes"] == 3 and summary["calls"] == 7
    assert summary["abandoned_call_rate"] == pytest.approx(2 / 6)  # the withheld call never started
    assert summary["coverage_loss_rate"] == pytest.approx(1 - 200 / 400)
    # One zombie never returns: the total is infinite, the finite part and the count are apart.
    assert summary["zombie_sec"] == math.inf and summary["wedged_zombies"] == 1
    assert summary["zombie_finite_sec"] == 40.0
    # Timeout loss: e1's abandoned read (40) and its read withheld from credit after it (60);
    # inherent: e2's read withheld when the unbounded wedge ended its log (100).
    assert summary["timeout_coverage_loss_rate"] == pytest.approx(100 / 400)
    assert summary["inherent_coverage_loss_rate"] == pytest.approx(100 / 400)
    assert summary["deadline_bound_share"] == pytest.approx(
        2 / 4
    )  # unbounded calls are not bounded
    assert summary["wall_max_sec"] == 26170.0 and summary["max_silence_sec"] == 26163.0
    assert summary["wall_p50_sec"] == 30.0
    assert summary["wall_p95_sec"] == pytest.approx(float(np.quantile([4.0, 30.0, 26170.0], 0.95)))
    # p99 is its own order statistic (a p99 read as p95 is 1,300 s short here).
    assert summary["wall_p99_sec"] == pytest.approx(float(np.quantile([4.0, 30.0, 26170.0], 0.99)))
    assert summary["wall_p99_sec"] > summary["wall_p95_sec"] + 1000
    assert summary["peak_loose_workers"] == 2


HAND_COMPUTED = {
    "episodes": 3,
    "calls": 7,
    "abandoned_call_rate": 2 / 6,
    "coverage_loss_rate": 1 - 200 / 400,
    "zombie_sec": math.inf,
    "wedged_zombies": 1,
    "zombie_finite_sec": 40.0,
    "timeout_coverage_loss_rate": 100 / 400,
    "inherent_coverage_loss_rate": 100 / 400,
    "deadline_bound_share": 2 / 4,
    "wall_max_sec": 26170.0,
    "max_silence_sec": 26163.0,
    "wall_p50_sec": 30.0,
    "peak_loose_workers": 2,
}
"""The summary of :func:`frames`, worked out by hand (see test_summary_definitions)."""


def test_summarize_arrays_gives_the_hand_computed_summary():
    """The array form used by sweeps, fed the rows' arrays, gives the hand-computed figures."""
    calls, base = frames()
    episodes = metrics.episode_rows(calls, base)
    by = calls["bound_by"]
    arrays = metrics.summarize_arrays(
        metrics.SummaryArrays(
            dispatched=calls["outcome"].isin(["executed", "error"]).to_numpy(),
            abandoned=calls["source_gap"].eq("native_tool_abandoned").to_numpy(),
            zombie_sec=calls["zombie_sec"].to_numpy(),
            bounded=by.isin(["tool_timeout", "deadline"]).to_numpy(),
            by_deadline=by.eq("deadline").to_numpy(),
            requested_lines=calls["requested_lines"].to_numpy(),
            credited_lines=calls["credited_lines"].to_numpy(),
            timeout_lost_lines=np.array([0, 40, 60, 0, 0, 0, 0]),
            wall_sec=episodes["wall_sec"].to_numpy(),
            max_silence_sec=episodes["max_silence_sec"].to_numpy(),
            peak_loose_workers=2,
        )
    )
    assert list(arrays) == list(SUMMARY_KEYS)
    assert {key: arrays[key] for key in HAND_COMPUTED} == pytest.approx(HAND_COMPUTED)
    assert arrays["wall_p95_sec"] == pytest.approx(26170.0 - 0.1 * (26170.0 - 30.0))


def test_empty_frames_summarize_to_zeros():
    """No calls and no episodes: every rate and time is 0, nothing divides by zero."""
    calls = pd.DataFrame({c: [] for c in metrics.CALL_COLUMNS})
    base = pd.DataFrame({"episode_id": [], "slot_id": [], "wall_sec": [], "max_silence_sec": []})
    summary = metrics.summarize(calls, metrics.episode_rows(calls, base), peak_loose_workers=0)
    assert all(summary[key] == 0 for key in SUMMARY_KEYS)


def test_timeout_lost_lines_rule():
    """Lost lines count as the timeout's only for abandoned calls
    and executed-but-uncredited ones."""
    lost = metrics.timeout_lost_lines(
        np.array([10, 10, 10, 10, 10]),
        np.array([0, 0, 10, 0, 0]),
        np.array([True, False, False, False, False]),  # abandoned
        np.array([False, True, True, False, False]),  # executed
    )
    # abandoned 10; executed and withheld from credit 10; credited 0;
    # raised by itself 0; withheld 0.
    assert lost.tolist() == [10, 10, 0, 0, 0]


def test_quantiles_keep_infinity_and_match_numpy_otherwise():
    """A quantile that reaches an infinite value is inf (never NaN); finite data matches NumPy."""
    data = np.array([3.0, 1.0, 2.0, 10.0])
    assert metrics.quantiles(data, (0.5, 0.95, 0.99)) == tuple(
        float(q) for q in np.quantile(data, (0.5, 0.95, 0.99))
    )
    with_inf = np.array([1.0, 2.0, 3.0, math.inf])
    p50, p95, p100 = metrics.quantiles(with_inf, (0.5, 0.95, 1.0))
    assert p50 == float(np.quantile([1.0, 2.0, 3.0], 0.75)) and p95 == math.inf == p100
    assert metrics.quantiles(np.array([math.inf, math.inf]), (0.0,)) == (math.inf,)
    # The median of three lands exactly on 5: an infinite neighbour with weight 0 is not touched.
    assert metrics.quantiles(np.array([math.inf, 2.0, 5.0]), (0.5,)) == (5.0,)


def test_peak_overlap_half_open_intervals():
    """[a, b) and [b, c) do not overlap; an infinite interval stays open to the end."""
    assert metrics.peak_overlap([0.0, 1.0], [1.0, 2.0]) == 1
    assert metrics.peak_overlap([0.0, 0.5, 0.7], [1.0, math.inf, 0.8]) == 3
    assert metrics.peak_overlap([], []) == 0
    assert metrics.coverage_loss(0, 0) == 0.0 and metrics.coverage_loss(10, 4) == pytest.approx(0.6)


def test_per_tool_and_per_slot_breakdowns():
    """Per tool and per slot, the same definitions apply to the subset of calls."""
    calls, base = frames()
    tools = per_tool(calls).set_index("tool")
    assert tools.loc["read_file", "calls"] == 4  # one read was withheld
    assert tools.loc["read_file", "abandoned_calls"] == 1
    assert tools.loc["read_file", "coverage_loss_rate"] == pytest.approx(1 - 200 / 400)
    # The wedged zombie is infinite: never summed into the finite part, never hidden either.
    assert tools.loc["search_code", "zombie_finite_sec"] == 0.0
    assert tools.loc["search_code", "zombie_sec"] == math.inf
    assert tools.loc["search_code", "wedged_zombies"] == 1
    assert tools.loc["read_file", "timeout_coverage_loss_rate"] == pytest.approx(100 / 400)
    assert tools.loc["read_file", "inherent_coverage_loss_rate"] == pytest.approx(100 / 400)
    slots = per_slot(calls, metrics.episode_rows(calls, base)).set_index("slot_id")
    assert slots.loc["s1", "episodes"] == 2 and slots.loc["s2", "episodes"] == 1
    assert slots.loc["s1", "abandoned_call_rate"] == pytest.approx(2 / 4)
    assert slots.loc["s2", "max_silence_sec"] == 26163.0

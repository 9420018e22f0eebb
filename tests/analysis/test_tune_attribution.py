"""tune's per-tool figures are each tool's own effect: the base policy with that tool alone
changed, checked against independent twin replays (reviewlab/analysis/_attribution.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from reviewlab.analysis._tune import recommend
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines.twin import simulate
from reviewlab.recording._schema import Call, Episode, Extent, Round

START = datetime(2025, 3, 3, 8, 0, tzinfo=UTC)
BASE = Policy(timeouts=TimeoutPolicy.uniform(600.0))


def corpus() -> list[Episode]:
    """40 episodes: a ``query_code`` call (50 s in every eighth, else about 1 s), then a
    100-line read that is always fast. Abandoning the slow query withholds the read's credit."""
    episodes = []
    for index in range(40):
        query = 50.0 if index % 8 == 0 else 1.0 + index / 100
        rounds = [
            Round(send_sec=1.0, calls=[Call(tool="query_code", duration_sec=query)]),
            Round(
                send_sec=1.0,
                calls=[
                    Call(
                        tool="read_file",
                        duration_sec=0.05 + index / 1000,
                        extent=Extent(path=f"f{index}.py", start_line=1, end_line=100),
                    )
                ],
            ),
            Round(send_sec=1.0),
        ]
        episodes.append(
            Episode(id=f"e{index}", source="synthetic", slot="s", started_at=START, rounds=rounds)
        )
    return episodes


@pytest.fixture(scope="module")
def tuned():
    """The recommendation with the coverage and abandonment budgets opened wide."""
    episodes = corpus()
    rec = recommend(
        episodes,
        base=BASE,
        max_timeout_coverage_loss=1.0,
        max_added_abandoned_rate=None,
        max_tool_added_abandoned_rate=None,
        objective="wall_max",
    )
    return episodes, rec


def alone(tool: str, timeout: float) -> Policy:
    """The base with only ``tool`` at ``timeout``."""
    return BASE.replace(timeouts=BASE.timeouts.with_tool_timeouts(None, **{tool: timeout}))


def test_the_loss_of_withheld_reads_is_charged_to_the_tool_that_was_abandoned(tuned):
    """The tuned query_code abandons the slow queries and so withholds later reads: its row
    carries that loss, read_file's row carries none, and both equal twin replays of the base
    with that tool alone changed."""
    episodes, rec = tuned
    explain = rec.explain.set_index("tool")
    query_sec = explain.loc["query_code", "timeout_sec"]
    assert query_sec < 50.0  # the slow queries are abandoned
    base = simulate(episodes, BASE).summary
    for tool in ("query_code", "read_file"):
        own = simulate(episodes, alone(tool, explain.loc[tool, "timeout_sec"])).summary
        expected = own["timeout_coverage_loss_rate"] - base["timeout_coverage_loss_rate"]
        assert explain.loc[tool, "timeout_coverage_loss_rate"] == pytest.approx(expected)
        assert explain.loc[tool, "saved_wall_max_sec"] == pytest.approx(
            base["wall_max_sec"] - own["wall_max_sec"]
        )
    # By hand: every episode whose query outlives the timeout loses its 100-line read.
    slow = sum(ep.calls[0].duration_sec > query_sec for ep in episodes)
    assert slow >= 5
    assert explain.loc["query_code", "timeout_coverage_loss_rate"] == pytest.approx(slow / 40)
    assert explain.loc["read_file", "timeout_coverage_loss_rate"] == 0.0
    # The whole-policy breakdown by tool is what used to be shown, and blames read_file.
    whole = simulate(episodes, rec.policy).per_tool().set_index("tool")
    assert whole.loc["read_file", "timeout_coverage_loss_rate"] > 0


def test_own_abandonment_counts_match_a_replay_of_that_tool_alone(tuned):
    """completed_abandoned, added_abandoned_calls and abandoned_rate of each row are the
    twin's counts for the base with that tool alone changed."""
    episodes, rec = tuned
    explain = rec.explain.set_index("tool")
    base_calls = simulate(episodes, BASE).calls
    for tool, row in explain.iterrows():
        calls = simulate(episodes, alone(str(tool), row["timeout_sec"])).calls
        abandoned = calls["source_gap"] == "native_tool_abandoned"
        mine = calls["tool"] == tool
        assert row["completed_abandoned"] == int((abandoned & mine & calls["completed"]).sum())
        assert row["added_abandoned_calls"] == int(abandoned.sum()) - int(
            (base_calls["source_gap"] == "native_tool_abandoned").sum()
        )
        assert row["abandoned_rate"] == pytest.approx((abandoned & mine).sum() / mine.sum())


def test_no_change_between_two_infinite_figures_is_zero():
    """inf - inf (a wedge that waits forever before and after) is no change, 0, not NaN;
    finite figures subtract as usual and inf - 5 stays inf."""
    from reviewlab.analysis._attribution import difference

    assert difference(math.inf, math.inf) == 0.0
    assert difference(7.5, 5.0) == 2.5
    assert difference(math.inf, 5.0) == math.inf

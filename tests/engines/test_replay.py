"""The one replay entry point: engine dispatch, argument checks, and the shared result shape."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reviewlab.core._metric_names import SUMMARY_KEYS
from reviewlab.core._metrics import (
    CALL_COLUMNS,
    CALL_FRAME_COLUMNS,
    CALL_TIMING_COLUMNS,
    EPISODE_COLUMNS,
)
from reviewlab.core._policy import Narrowing, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Call, Episode, Extent, Round


def _corpus() -> list[Episode]:
    read = Call(
        tool="read_file",
        args={"path": "a.py"},
        duration_sec=0.5,
        extent=Extent(path="a.py", start_line=1, end_line=40),
    )
    slow = Call(tool="search_code", args={"pattern": "x"}, duration_sec=50.0)
    return [
        Episode(
            id="e1",
            source="synthetic",
            slot="s1",
            started_at=datetime(2026, 1, 1, tzinfo=UTC),
            rounds=[
                Round(send_sec=1.0, calls=[read, slow]),
                Round(send_sec=1.0, calls=[read]),
                Round(send_sec=2.0),
            ],
        ),
        Episode(
            id="e2",
            source="synthetic",
            slot="s2",
            started_at=datetime(2026, 1, 1, 0, 1, tzinfo=UTC),
            deadline_sec=3.0,
            rounds=[Round(send_sec=1.0, calls=[read, read]), Round(send_sec=1.0)],
        ),
    ]


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_every_engine_returns_the_shared_frames_and_summary(engine):
    """Both simulated engines return frames with the documented columns and every summary key."""
    result = replay(_corpus(), TimeoutPolicy.uniform(10.0), engine=engine)
    assert isinstance(result, ReplayResult) and result.engine == engine
    assert list(result.calls.columns[: len(CALL_COLUMNS)]) == list(CALL_COLUMNS)
    assert list(result.episodes.columns[: len(EPISODE_COLUMNS)]) == list(EPISODE_COLUMNS)
    assert set(SUMMARY_KEYS) <= set(result.summary)
    # The 50 s search is abandoned at 10 s; the later read in e1 is executed but credits nothing.
    e1 = result.calls[result.calls["episode_id"] == "e1"].reset_index(drop=True)
    assert list(e1["outcome"]) == ["executed", "error", "executed"]
    assert list(e1["credited_lines"]) == [40, 0, 0]
    assert result.summary["abandoned_call_rate"] == pytest.approx(1 / 5)
    assert set(result.per_tool()["tool"]) == {"read_file", "search_code"}
    assert set(result.per_slot()["slot_id"]) == {"s1", "s2"}


def test_the_default_policy_is_ouroboros_and_the_default_narrowing_inherits():
    """With no policy the 600 s ouroboros bound applies, narrowed by the inherited deadline."""
    result = replay(_corpus(), engine="twin")
    bounds = result.calls.set_index(["episode_id", "call_index"])["bound_sec"]
    assert bounds[("e1", 1)] == 600.0
    # e2 inherited 3 s: its first read dispatches after a 1 s send, with 2 s left.
    assert bounds[("e2", 0)] == pytest.approx(2.0)
    assert result.calls.set_index(["episode_id", "call_index"])["bound_by"][("e2", 0)] == "deadline"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"engine": "warp"}, "engine: expected one of twin, vectorized, real"),
        ({"censored": "guess"}, "censored: expected one of wedge, observed, impute"),
        (
            {"engine": "vectorized", "slots": 2},
            "slots: not an option of Vectorized",
        ),
    ],
)
def test_bad_arguments_are_refused_naming_the_parameter(kwargs, message):
    """An unknown engine or censoring mode, or a pool on an engine
    without pools, is a clear error."""
    with pytest.raises(ValueError, match=message):
        replay(_corpus(), **kwargs)


def test_the_pre_fix_mode_never_bounds_a_call():
    """Under Narrowing.unbounded() no call has a bound and none is abandoned."""
    result = replay(
        _corpus(), TimeoutPolicy.uniform(10.0), Narrowing.unbounded(), engine="vectorized"
    )
    assert result.calls["bound_sec"].isna().all()
    assert set(result.calls["bound_by"]) == {"unbounded"}
    assert result.summary["abandoned_call_rate"] == 0.0


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_every_simulated_engine_records_when_each_call_ran(engine):
    """start_sec counts from the arrival (a later arrival changes nothing) and
    wait_sec is what the episode waited."""
    result = replay(_corpus(), TimeoutPolicy.uniform(10.0), engine=engine)
    assert tuple(result.calls.columns) == CALL_FRAME_COLUMNS
    timing = result.calls.set_index(["episode_id", "call_index"])[list(CALL_TIMING_COLUMNS)]
    # e1: send 1 s, read 0.5 s, search abandoned at its 10 s bound, send 1 s, read.
    assert timing.loc["e1"].to_numpy().tolist() == [[1.0, 0.5], [1.5, 10.0], [12.5, 0.5]]
    # e2 arrives a minute later with a 3 s deadline: its reads start 1 s and
    # 1.5 s after its own arrival.
    assert timing.loc["e2"].to_numpy().tolist() == [[1.0, 0.5], [1.5, 0.5]]


def test_the_real_engine_measures_when_each_call_ran():
    """The real engine's start_sec and wait_sec are measured times over time_scale, in
    call order and past each send."""
    result = replay(_corpus(), TimeoutPolicy.uniform(10.0), engine="real", time_scale=0.01)
    assert tuple(result.calls.columns) == CALL_FRAME_COLUMNS
    slack = (
        0.05  # recorded seconds (0.5 ms real): wall-clock dispatch stamps against monotonic waits
    )
    for _, calls in result.calls.groupby("episode_id"):
        start, wait = calls["start_sec"].to_numpy(), calls["wait_sec"].to_numpy()
        assert start[0] >= 1.0 - slack  # after the 1 s model send
        assert (start[1:] >= start[:-1] + wait[:-1] - slack).all()  # one call after the other
    e1 = result.calls[result.calls["episode_id"] == "e1"]
    abandoned = e1[e1["source_gap"] == "native_tool_abandoned"]
    assert (
        len(abandoned) == 1 and abandoned["wait_sec"].iloc[0] >= 10.0 - slack
    )  # waited out the bound

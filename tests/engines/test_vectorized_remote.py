"""The vectorized engine replays what version 2 recordings add exactly as the twin does.

Idle timeouts fire from the recorded progress times (``bound_by="idle"``), and a server
recorded stopping ``cancel_honoured_sec`` after a cancel stops that long after the replay's
cancel (its zombie). Both engines are compared on every column of the frames, from
``Episode`` objects and from the Parquet columns; the one rule the vectorized engine
rewrites (asking the idle rule once, up to the return, then comparing with the bound) is
checked against the twin's form on its own.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reviewlab.core import _metrics as metrics
from reviewlab.core._idle import idle_fire_sec
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.engines.twin import simulate
from reviewlab.engines.vectorized import compile_corpus, replay_vectorized
from reviewlab.engines.vectorized._columns import compile_columns
from reviewlab.engines.vectorized._tables import with_idle
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round
from reviewlab.recording.columnar import episodes_table, write_columnar
from reviewlab.testing._strategies import corpora as shared_corpora

START = datetime(2026, 3, 3, 8, 0, tzinfo=UTC)
TOOLS = ("progress", "read_file", "ignore_cancel", "query_code")
SECONDS = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 30.0, 120.0]),
    st.floats(min_value=0.0, max_value=200.0, allow_nan=False, allow_infinity=False),
)
MOMENTS = st.lists(
    st.one_of(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]), st.floats(0.0, 60.0)), max_size=6
).map(sorted)


def corpora() -> st.SearchStrategy[list[Episode]]:
    """The shared strategy with remote calls (transports, cancels, progress) of this file's
    tools and durations."""
    return shared_corpora(
        tools=TOOLS, seconds=SECONDS, max_episodes=5, max_calls=4, progress=True, remote=True
    )


BASES = [
    TimeoutPolicy.uniform(30.0),
    TimeoutPolicy.uniform(2.0),
    TimeoutPolicy.ouroboros(),
    TimeoutPolicy(default_sec=60.0, clamp_tools=("progress",), clamp_reserve_sec=1.0),
]
POLICIES = st.builds(
    lambda timeouts, idle: Policy(timeouts=timeouts, idle_sec=idle),
    st.sampled_from(BASES),
    st.dictionaries(st.sampled_from(TOOLS), st.sampled_from([0.5, 1.0, 2.0, 7.5]), max_size=3),
)
NARROWINGS = st.sampled_from(
    [Narrowing(), Narrowing("none"), Narrowing("reserve", 1.0), Narrowing("fraction", 0.5)]
)


def assert_same(twin: Any, fast: Any) -> None:
    """Every column of both frames, to the bit (NaN and inf included), and the summary."""
    assert tuple(fast.calls.columns) == metrics.CALL_FRAME_COLUMNS
    pd.testing.assert_frame_equal(twin.calls, fast.calls, check_exact=True)
    for name in fast.calls.columns:
        left, right = twin.calls[name].to_numpy(), fast.calls[name].to_numpy()
        if left.dtype.kind == "f":
            assert np.array_equal(left, right, equal_nan=True), name
        else:
            assert left.tolist() == right.tolist(), name
    pd.testing.assert_frame_equal(twin.episodes, fast.episodes, check_exact=True)
    assert twin.summary == fast.summary


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    corpus=corpora(),
    policy=POLICIES,
    narrowing=NARROWINGS,
    censored=st.sampled_from(["wedge", "observed"]),
)
@pytest.mark.parametrize("via", ["episodes", "columns"])
def test_vectorized_equals_twin_with_idle_timeouts_and_late_stops(
    via, corpus, policy, narrowing, censored
):
    """Random version 2 corpora under idle policies, deadlines and narrowings: same frames."""
    policy = policy.replace(narrowing=narrowing)
    twin = simulate(corpus, policy, censored=censored)
    if via == "episodes":
        fast = compile_corpus(corpus, censored=censored)
    else:
        fast = compile_columns(episodes_table(corpus), censored=censored)
    assert_same(twin, replay_vectorized(fast, policy, censored=censored))


def progress_call(duration: float, progress: list[float], honoured: float | None = None) -> Call:
    return Call(
        tool="progress",
        duration_sec=duration,
        transport="mcp",
        progress_sec=progress,
        cancel_sent=honoured is not None,
        cancel_honoured_sec=honoured,
    )


def v2(id: str, *calls: Call, deadline: float | None = None) -> Episode:
    return Episode(
        schema=SCHEMA_VERSION_2,
        id=id,
        source="live",
        started_at=START,
        deadline_sec=deadline,
        rounds=[Round(send_sec=0.5, calls=list(calls)), Round(send_sec=0.25)],
    )


def test_an_idle_fire_and_a_late_stop_on_both_engines_by_hand():
    """Quiet after 1.5 s under a 1 s idle timeout: abandoned at 2.5 s; the server, seen
    stopping 0.4 s after a cancel, is a zombie for 0.4 s; the next call starts at 3.0 s."""
    corpus = [
        v2("a", progress_call(10.0, [0.5, 1.0, 1.5], 0.4), Call(tool="read_file", duration_sec=1.0))
    ]
    policy = Policy.uniform(30.0).with_idle(progress=1.0)
    for engine in ("twin", "vectorized"):
        calls = replay(corpus, policy, engine=engine).calls
        first, second = calls.iloc[0], calls.iloc[1]
        assert (first["bound_by"], first["bound_sec"], first["wait_sec"]) == ("idle", 2.5, 2.5)
        assert first["source_gap"] == "native_tool_abandoned"
        assert first["zombie_sec"] == (2.5 + 0.4) - 2.5  # stopped 0.4 s after the cancel
        assert second["start_sec"] == 0.5 + 2.5


def test_a_server_that_returns_before_its_late_stop_is_a_zombie_until_it_returns():
    """Recorded return at 3 s, cancel honoured 5 s late: the zombie ends at the return."""
    corpus = [v2("b", progress_call(3.0, [], 5.0))]
    policy = Policy.uniform(30.0).with_idle(progress=1.0)
    for engine in ("twin", "vectorized"):
        row = replay(corpus, policy, engine=engine).calls.iloc[0]
        assert (row["bound_by"], row["bound_sec"]) == ("idle", 1.0)
        assert row["zombie_sec"] == 3.0 - 1.0


def test_a_deadline_that_comes_first_is_what_fired_not_the_idle_timeout():
    """Deadline 2 s (1.5 s left after the send), idle fire at 2.5 s: the deadline cut it."""
    corpus = [v2("c", progress_call(10.0, [0.5, 1.0, 1.5]), deadline=2.0)]
    policy = Policy.uniform(30.0).with_idle(progress=1.0)
    rows = [replay(corpus, policy, engine=e).calls.iloc[0] for e in ("twin", "vectorized")]
    for row in rows:
        assert (row["bound_by"], row["bound_sec"]) == ("deadline", 1.5)


def test_a_parquet_corpus_keeps_what_the_idle_rule_needs(tmp_path):
    """Saved to Parquet and compiled from the file, the idle and late-stop answers hold."""
    corpus = [
        v2("d", progress_call(10.0, [0.5, 1.0, 1.5], 0.4), Call(tool="read_file", duration_sec=1.0))
    ]
    path = tmp_path / "remote.parquet"
    write_columnar(corpus, path)
    policy = Policy.uniform(30.0).with_idle(progress=1.0)
    fast = replay_vectorized(compile_columns(path), policy)
    assert_same(simulate(corpus, policy), fast)
    assert fast.calls["bound_by"].tolist() == ["idle", "tool_timeout"]


@settings(max_examples=400, deadline=None)
@given(
    progress=MOMENTS,
    idle=st.sampled_from([0.5, 1.0, 2.0, 7.5]),
    duration=SECONDS,
    completed=st.booleans(),
    bound=st.one_of(SECONDS, st.just(math.inf)),
)
def test_asking_the_idle_rule_up_to_the_return_then_comparing_is_the_twins_rule(
    progress, idle, duration, completed, bound
):
    """The twin asks ``idle_fire_sec(p, idle, min(return, bound))``; the vectorized engine
    asks once up to the return and keeps the fire only below the bound (:func:`with_idle`)."""
    returned = duration if completed else math.inf
    twin = idle_fire_sec(progress, idle, min(returned, bound))
    once = idle_fire_sec(progress, idle, returned)
    fire = np.array([math.nan if once is None else once])
    sec, by_deadline, by_idle = with_idle(np.array([bound]), np.array([True]), fire)
    if twin is None:
        assert not by_idle[0] and sec[0] == bound and by_deadline[0]
    else:
        assert by_idle[0] and sec[0] == twin and not by_deadline[0]

"""The real replay engine under its scaled clock: recorded seconds everywhere, the policy replayed
as it is (idle timeouts, ties, hedges by the static plan), and hand-computed cases the simulated
engines must give too.

Margins: a recorded second lasts ``time_scale`` real seconds; every case leaves at least 0.1 s
of real time between a call's fate-deciding moments, and the tolerances on measured times are
100 ms of real time or more, which a loaded 2-core machine keeps.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from test_hedge_engines import _wide_margin_corpus

from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.engines.real import replay_real
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Extent, Round

STARTED = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
SIMULATED = ("twin", "vectorized")


def episode(
    id: str, *calls: Call, deadline_sec: float | None = None, send_sec: float = 0.0
) -> Episode:
    """A version-2 episode: one send with ``calls``, then a final answer."""
    return Episode(
        schema=SCHEMA_VERSION_2,
        id=id,
        source="live",
        started_at=STARTED,
        deadline_sec=deadline_sec,
        rounds=[Round(send_sec=send_sec, calls=list(calls)), Round(send_sec=0.0)],
    )


def read(duration: float, progress: list[float] | None = None, **extra: Any) -> Call:
    """A 40-line read of ``a.py`` that took ``duration`` seconds, with recorded progress."""
    return Call(
        tool="read_file",
        args={"path": "a.py"},
        duration_sec=duration,
        extent=Extent(path="a.py", start_line=1, end_line=40),
        transport="thread" if progress is not None else None,
        progress_sec=progress,
        **extra,
    )


IDLE = Policy(timeouts=TimeoutPolicy.uniform(10.0), idle_sec={"read_file": 1.0})


def test_an_idle_timeout_abandons_the_read_at_2_2_s_in_every_engine():
    """Issue 21's case: a read reporting progress at 0.5, 1.2 and 2.6 s under a 10 s bound and a
    1 s idle timeout is abandoned at 1.2 + 1 = 2.2 s by ``idle`` (the gap to 2.6 is too long),
    and its worker runs on to its 4 s return: 1.8 zombie seconds."""
    corpus = [episode("idle", read(4.0, [0.5, 1.2, 2.6]))]
    for engine in SIMULATED:
        row = replay(corpus, IDLE, engine=engine).calls.iloc[0]
        assert (row["outcome"], row["source_gap"], row["bound_by"]) == (
            "error",
            "native_tool_abandoned",
            "idle",
        ), engine
        assert row["bound_sec"] == 2.2 and row["wait_sec"] == 2.2, engine
        assert row["zombie_sec"] == pytest.approx(1.8) and row["credited_lines"] == 0, engine
    real = replay(corpus, IDLE, engine="real", time_scale=0.2, settle_sec=30.0).calls.iloc[0]
    assert (real["outcome"], real["source_gap"], real["bound_by"]) == (
        "error",
        "native_tool_abandoned",
        "idle",
    )
    # Progress is reported at its recorded time or a hair later, never earlier.
    assert 2.2 - 1e-6 <= real["bound_sec"] < 2.2 + 0.5
    assert real["bound_sec"] - 1e-6 <= real["wait_sec"] < 2.2 + 0.5
    assert real["zombie_sec"] == pytest.approx(1.8, abs=0.5)
    assert real["credited_lines"] == 0


def test_a_read_without_recorded_progress_gets_no_idle_timeout_in_any_engine():
    """Progress not recorded (``progress_sec`` absent) means unknown, not silent: the idle
    timeout does not apply and the 4 s read returns inside its 10 s bound, in every engine."""
    corpus = [episode("unknown", read(4.0))]
    for engine in (*SIMULATED, "real"):
        options = {"time_scale": 0.05} if engine == "real" else {}
        row = replay(corpus, IDLE, engine=engine, **options).calls.iloc[0]
        assert (row["outcome"], row["bound_by"], row["credited_lines"]) == (
            "executed",
            "tool_timeout",
            40,
        ), engine


def test_the_real_engines_zombie_seconds_are_recorded_seconds_as_the_twins():
    """A 20 s search abandoned at its 1 s bound leaves a worker loose for 19 recorded seconds:
    the twin says 19 exactly; the real engine, at 0.05 real s per recorded second, measures
    19 give or take 3 (150 ms real), never 0.95 (the real seconds)."""
    corpus = [episode("zombie", Call(tool="search_code", args={"pattern": "x"}, duration_sec=20.0))]
    policy = Policy.uniform(1.0)
    twin = replay(corpus, policy).calls.iloc[0]
    assert twin["zombie_sec"] == 19.0 and twin["wait_sec"] == 1.0
    result = replay(corpus, policy, engine="real", time_scale=0.05, settle_sec=30.0)
    real = result.calls.iloc[0]
    assert real["source_gap"] == "native_tool_abandoned" and real["bound_sec"] == 1.0
    assert real["zombie_sec"] == pytest.approx(twin["zombie_sec"], abs=3.0)
    assert real["duration_sec"] == pytest.approx(20.0, abs=3.0)
    assert real["wait_sec"] == pytest.approx(1.0, abs=3.0)
    assert result.summary["zombie_sec"] == pytest.approx(19.0, abs=3.0)
    assert result.episodes["wall_sec"].iloc[0] == pytest.approx(1.0, abs=3.0)


def test_an_exact_deadline_tie_is_bound_by_the_tool_timeout_in_the_real_engine():
    """Tool timeout 5.0 s and an episode deadline of 5.0 s with nothing before the call: the
    twin sees exactly 5.0 s left and says ``tool_timeout``; the real clock sees a hair less, and
    the real engine reads a window within its stated tie tolerance (``tie_sec``, its clock's
    measured resolution) of the timeout as the tie it is. The rule is applied here on its own:
    a loaded machine may delay the call past the resolution measured at start, and then the
    window is the deadline's, said so."""
    corpus = [episode("tie", read(0.5), deadline_sec=5.0)]
    policy = Policy.uniform(5.0)
    twin = replay(corpus, policy).calls.iloc[0]
    assert twin["bound_by"] == "tool_timeout" and twin["bound_sec"] == 5.0
    result = replay(corpus, policy, engine="real", time_scale=0.5)
    real, tie_sec = result.calls.iloc[0], result.assumptions["tie_sec"]
    assert real["outcome"] == "executed" and 5.0 - 0.25 < real["bound_sec"] <= 5.0
    within = real["bound_sec"] >= 5.0 - tie_sec
    assert real["bound_by"] == ("tool_timeout" if within else "deadline")


def test_a_window_shorter_than_the_tool_timeout_by_more_than_the_tolerance_is_the_deadlines():
    """A 4.8 s window under a 5 s timeout (5.8 s deadline after a 1 s send): the twin says
    ``deadline`` exactly, and so does the real engine, whose tie tolerance is its clock's
    resolution in recorded seconds: the same real resolution at 0.5 and 1 real s per recorded
    second, so twice as many recorded seconds at the faster clock, and under the 0.2 s that
    tells the two apart (a loaded machine's resolution stays far below 100 ms)."""
    corpus = [episode("near", read(0.5), deadline_sec=5.8, send_sec=1.0)]
    policy = Policy.uniform(5.0)
    twin = replay(corpus, policy).calls.iloc[0]
    assert twin["bound_by"] == "deadline" and twin["bound_sec"] == pytest.approx(4.8, abs=1e-12)
    fast = replay(corpus, policy, engine="real", time_scale=0.5)
    slow = replay(corpus, policy, engine="real", time_scale=1.0)
    for result in (fast, slow):
        real = result.calls.iloc[0]
        assert real["bound_by"] == "deadline" and real["outcome"] == "executed"
        assert 4.8 - 0.25 < real["bound_sec"] <= 4.8
    assert fast.assumptions["tie_sec"] == pytest.approx(2 * slow.assumptions["tie_sec"])
    assert 0 < fast.assumptions["tie_sec"] < 0.2


def test_the_policy_sees_the_recorded_arguments_only():
    """A custom rule is asked with each call's recorded arguments: no replay bookkeeping in
    them, so a rule that reads its arguments decides as in the twin."""
    seen: list[dict[str, Any]] = []

    class Spy:
        """Every tool 30 s; remembers the arguments it was asked with."""

        name = "spy"

        def timeout_for(self, tools: Any, tool_name: str, tool_args: Any = None) -> float:
            seen.append(dict(tool_args or {}))
            return 30.0

    corpus = [
        episode(
            "args",
            read(0.2),
            Call(tool="search_code", args={"pattern": "y"}, duration_sec=0.2),
        )
    ]
    replay_real(corpus, Spy(), time_scale=0.05)
    assert seen == [{"path": "a.py"}, {"pattern": "y"}]


def test_a_replay_never_scales_the_policy_only_the_clock():
    """The result names the policy replayed, unchanged: same value, same label, no scaled copy
    of it, whatever the time scale."""
    corpus = [episode("label", read(0.2))]
    policy = Policy.uniform(3.0).replace(narrowing=Narrowing("reserve", reserve_sec=1.0))
    result = replay_real(corpus, policy, time_scale=0.05)
    assert result.policy == policy and result.policy.label == policy.label
    assert result.assumptions["time_scale"] == 0.05


def test_hedges_follow_the_recorded_plan_under_reissue_in_the_real_engine():
    """Under ``reaction="reissue"`` the real engine hedges the calls the plan made from the
    recorded corpus and never a re-issued copy, as the twin does: same hedged calls, fates and
    credits."""
    corpus = _wide_margin_corpus()
    policy = Policy.uniform(2.5).with_hedge("read_file", after_sec=1.0, max_share=1.0)
    twin = replay(corpus, policy, reaction="reissue").calls
    real = replay(corpus, policy, engine="real", reaction="reissue", time_scale=0.2).calls
    key = ["episode_id", "call_index"]
    t = twin.sort_values(key).reset_index(drop=True)
    r = real.sort_values(key).reset_index(drop=True)
    for column in ("call_index", "hedged", "outcome", "source_gap", "credited_lines"):
        assert t[column].tolist() == r[column].tolist(), column
    reissued = t["call_index"] >= 3  # each episode has 3 recorded calls
    assert reissued.any() and not t.loc[reissued, "hedged"].any()
    finite = np.isfinite(t["wait_sec"].to_numpy())
    np.testing.assert_allclose(r["wait_sec"][finite], t["wait_sec"][finite], atol=0.5)
    assert not math.isnan(r["bound_sec"].iloc[0])


@pytest.mark.parametrize(
    ("completed", "honoured", "zombie"),
    [
        (True, 3.0, 3.0),  # the server stopped 3 s after the cancel, long before its 20 s return
        (True, 30.0, 19.0),  # it would have stopped later than it returned: the return wins
        (False, 3.0, 3.0),  # a call that never returned stops 3 s after the cancel
    ],
)
def test_a_server_that_honours_a_cancel_stops_that_long_after_it_in_every_engine(
    completed: bool, honoured: float, zombie: float
) -> None:
    """A 20 s search abandoned at its 1 s bound whose server was recorded stopping ``honoured``
    seconds after a cancel: its worker stays loose until ``min(return, bound + honoured)``,
    in the twin and the vectorized engine exactly, in the real engine to 1 recorded second
    (100 ms real at time scale 0.1)."""
    call = Call(
        tool="search_code",
        args={"pattern": "x"},
        duration_sec=20.0,
        completed=completed,
        transport="mcp",
        cancel_sent=True,
        cancel_honoured_sec=honoured,
    )
    corpus = [episode("honours", call)]
    policy = Policy.uniform(1.0)
    for engine in SIMULATED:
        row = replay(corpus, policy, engine=engine).calls.iloc[0]
        assert row["source_gap"] == "native_tool_abandoned" and row["wait_sec"] == 1.0, engine
        assert row["zombie_sec"] == pytest.approx(zombie), engine
    result = replay(corpus, policy, engine="real", time_scale=0.1, settle_sec=30.0)
    real = result.calls.iloc[0]
    assert real["source_gap"] == "native_tool_abandoned" and real["bound_sec"] == 1.0
    assert real["zombie_sec"] == pytest.approx(zombie, abs=1.0)
    assert result.summary["zombie_sec"] == pytest.approx(zombie, abs=1.0)

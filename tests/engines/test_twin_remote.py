"""The twin replays what version 2 recordings add: idle timeouts and servers that stop late.

An idle timeout fires from the recorded progress times (one idle period after the last report
before the call's end), and a recorded server that answered ``cancel_honoured_sec`` after a
cancellation is modelled as stopping that long after the replay's own cancel.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

import pytest

from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live.mcp import MCPServer, demo_server_command
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round
from reviewlab.recording.capture import episode_from_result

STARTED = datetime(2026, 12, 1, 7, 0, tzinfo=UTC)


def v2(id: str, *calls: Call) -> Episode:
    return Episode(
        schema=SCHEMA_VERSION_2,
        id=id,
        source="live",
        started_at=STARTED,
        rounds=[Round(calls=list(calls)), Round(send_sec=0.0)],
    )


def progress_call(duration: float, progress: list[float], completed: bool = True) -> Call:
    return Call(
        tool="progress",
        duration_sec=duration,
        completed=completed,
        transport="mcp",
        progress_sec=progress,
    )


def test_an_idle_timeout_fires_one_period_after_the_last_progress():
    """A call that goes quiet after 1.5 s is abandoned at 2.5 s under a 1 s idle timeout."""
    episode = v2("quiet", progress_call(10.0, [0.5, 1.0, 1.5]))
    idle = replay([episode], Policy.uniform(30.0).with_idle(progress=1.0))
    row = idle.calls.iloc[0]
    assert (row["outcome"], row["source_gap"], row["bound_by"]) == (
        "error",
        "native_tool_abandoned",
        "idle",
    )
    assert row["bound_sec"] == 2.5 and row["wait_sec"] == 2.5
    plain = replay([episode], TimeoutPolicy.uniform(30.0)).calls.iloc[0]
    assert plain["outcome"] == "executed" and plain["wait_sec"] == 10.0


def test_steady_progress_until_the_return_keeps_the_call():
    """Progress never quiet for an idle period: the call returns as recorded."""
    reports = [0.5 * k for k in range(1, 20)]
    episode = v2("steady", progress_call(10.0, reports))
    row = replay([episode], Policy.uniform(30.0).with_idle(progress=1.0)).calls
    assert row.iloc[0]["outcome"] == "executed" and row.iloc[0]["bound_by"] == "tool_timeout"


def test_the_hard_bound_still_caps_an_idle_timeout():
    """When the hard bound comes before the idle fire, the tool timeout is what fired."""
    episode = v2("capped", progress_call(10.0, [0.5, 1.0, 1.5]))
    row = replay([episode], Policy.uniform(2.0).with_idle(progress=1.0)).calls
    assert row.iloc[0]["bound_by"] == "tool_timeout" and row.iloc[0]["bound_sec"] == 2.0


def test_a_server_that_honours_the_cancel_late_is_a_zombie_for_that_long():
    """A recorded server that stopped 0.4 s after the cancel stops 0.4 s after the replay's
    cancel."""
    call = Call(
        tool="ignore_cancel",
        duration_sec=0.3,
        completed=False,
        returned_after_sec=0.7,
        transport="mcp",
        progress_sec=[],
        cancel_sent=True,
        cancel_honoured_sec=0.4,
    )
    result = replay([v2("late", call)], TimeoutPolicy.uniform(0.2), censored="wedge")
    row = result.calls.iloc[0]
    assert row["source_gap"] == "native_tool_abandoned"
    assert row["zombie_sec"] == pytest.approx(0.4)
    silent = Call(**{**call.model_dump(), "cancel_honoured_sec": None, "returned_after_sec": None})
    never = replay([v2("never", silent)], TimeoutPolicy.uniform(0.2), censored="wedge").calls
    assert math.isinf(never.iloc[0]["zombie_sec"])


def test_the_twin_agrees_with_a_live_idle_abandonment(tmp_path):
    """A live MCP run abandoned by its idle timeout replays to the same fate in the twin."""
    policy = Policy.uniform(30.0).with_idle(progress=1.0)
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    tool_call("progress", {"steps": 4, "interval_sec": 0.05, "then": "wedge"})
                ]
            },
            {"content": "[]"},
        ]
    )
    with MCPServer(demo_server_command(tmp_path)) as server:
        live = ReviewEpisode(
            tmp_path, model, policy=policy, registry_factory=server.registry_factory
        ).execute()
    recorded = episode_from_result(live, id="live-idle")
    row = replay([recorded], policy).calls.iloc[0]
    receipt = live.receipts[0]
    assert (row["outcome"], row["source_gap"], row["bound_by"]) == (
        str(receipt.outcome),
        receipt.source_gap,
        receipt.bound_by,
    )
    progress = recorded.calls[0].progress_sec
    assert row["bound_sec"] == pytest.approx(progress[-1] + 1.0)
    assert row["bound_sec"] <= receipt.bound_sec
    assert time.monotonic() > 0


def test_the_vectorized_engine_replays_idle_timeouts_as_the_twin_does():
    """An idle policy on recorded progress: the vectorized engine fires it where the twin does
    (tests/test_vectorized_remote.py compares the engines on random corpora)."""
    episode = v2("quiet", progress_call(10.0, [0.5, 1.0, 1.5]))
    policy = Policy.uniform(30.0).with_idle(progress=1.0)
    fast = replay([episode], policy, engine="vectorized").calls
    twin = replay([episode], policy).calls
    assert fast["bound_by"].tolist() == twin["bound_by"].tolist() == ["idle"]
    assert fast["bound_sec"].tolist() == twin["bound_sec"].tolist() == [2.5]


def test_a_late_stopping_server_holds_its_worker_until_it_stops():
    """With one worker, the next call waits until the cancelled server stopped, not forever."""
    late = Call(
        tool="ignore_cancel",
        duration_sec=0.3,
        completed=False,
        transport="mcp",
        progress_sec=[],
        cancel_sent=True,
        cancel_honoured_sec=0.4,
    )
    plain = Call(tool="plain", duration_sec=0.1, transport="mcp", progress_sec=[])
    policy = TimeoutPolicy.uniform(0.2).with_tools(plain=5.0)
    episodes = [v2("late", late), v2("next", plain)]
    calls = replay(episodes, policy, censored="wedge", workers=1).calls.set_index("episode_id")
    # The server stops 0.4 s after the cancel at 0.2 s; the next call runs 0.6-0.7 s.
    assert calls.loc["late", "zombie_sec"] == pytest.approx(0.4)
    assert calls.loc["next", "outcome"] == "executed"
    assert calls.loc["next", "wait_sec"] == pytest.approx(0.7)
    silent = Call(**{**late.model_dump(), "cancel_honoured_sec": None})
    stuck = replay([v2("late", silent), v2("next", plain)], policy, censored="wedge", workers=1)
    assert stuck.calls.set_index("episode_id").loc["next", "source_gap"] == "native_tool_abandoned"

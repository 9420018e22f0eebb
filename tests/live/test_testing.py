"""The public test doubles: a manual clock, a wedged registry, the scripted model's home."""

from __future__ import annotations

import math
import threading

import pytest

import reviewlab
from reviewlab.core._deadline import deadline_remaining, execution_deadline_scope, monotonic_now
from reviewlab.core._policy import TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode
from reviewlab.live._inspection import demo_workspace
from reviewlab.testing import (
    ManualClock,
    ScriptedModel,
    WedgedRegistry,
    manual_clock,
    tool_call,
    wedged_factory,
)

WAIT = 30.0
"""Seconds an event may take on a loaded machine; only a failing test waits this long."""


def test_manual_clock_moves_only_when_told_and_drives_deadlines():
    """Inside ``manual_clock`` the monotonic clock is the manual one, and deadlines follow it."""
    with manual_clock(100.0) as clock:
        assert monotonic_now() == 100.0
        with execution_deadline_scope(110.0):
            assert deadline_remaining() == 10.0
            clock.advance(4.5)
            assert deadline_remaining() == 5.5
            clock.advance_to(120.0)
            assert deadline_remaining() == 0.0
    assert monotonic_now() != 120.0


@pytest.mark.parametrize(
    ("move", "error"),
    [
        (lambda c: c.advance(-1.0), "seconds"),
        (lambda c: c.advance(math.nan), "seconds"),
        (lambda c: c.advance_to(4.0), "at"),
        (lambda c: c.advance_to(math.inf), "at"),
    ],
)
def test_manual_clock_refuses_to_go_back_or_leave_the_reals(move, error):
    """Backward, NaN and infinite moves are errors naming the parameter; the time is unchanged."""
    clock = ManualClock(5.0)
    with pytest.raises(ValueError, match=error):
        move(clock)
    assert clock() == 5.0


def test_scripted_model_has_one_home():
    """``reviewlab.ScriptedModel`` and ``reviewlab.testing.ScriptedModel`` are one class."""
    assert reviewlab.ScriptedModel is ScriptedModel
    assert reviewlab.tool_call is tool_call


def test_wedged_registry_holds_only_its_tool_until_released():
    """Other tools pass through; the held tool signals ``entered``, waits, then ``returned``."""
    release = threading.Event()
    made: list[WedgedRegistry] = []
    factory = wedged_factory("search_code", release, made=made)
    registry, _ctx, schemas = factory(demo_workspace())
    assert made == [registry]
    assert {s["function"]["name"] for s in schemas} >= {"read_file", "search_code"}
    assert "pricing.py" in registry.execute("list_files", {"path": "inventory"})
    values: list[str] = []
    worker = threading.Thread(
        target=lambda: values.append(registry.execute("search_code", {"pattern": "discount"}))
    )
    worker.start()
    assert registry.entered.wait(WAIT)
    assert not registry.returned.is_set() and values == []
    release.set()
    assert registry.returned.wait(WAIT)
    worker.join(WAIT)
    assert "discount" in values[0]


def test_an_episode_abandons_the_wedged_tool_and_its_late_value_reaches_nobody():
    """A live episode over a wedged registry abandons the held call at its bound and carries on."""
    release = threading.Event()
    made: list[WedgedRegistry] = []
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("search_code", {"pattern": "discount"}, "c1")]},
            {"content": "[]"},
        ]
    )
    try:
        result = ReviewEpisode(
            demo_workspace(),
            model,
            policy=TimeoutPolicy.uniform(0.05),
            registry_factory=wedged_factory("search_code", release, made=made),
        ).execute()
    finally:
        release.set()
    assert result.end_reason == "final_answer"
    assert [r.abandoned for r in result.receipts] == [True]
    assert made[0].returned.wait(WAIT)
    told = [m["content"] for m in model.calls[1]["messages"] if m["role"] == "tool"]
    assert told[0].startswith("⚠️ TOOL_TIMEOUT (search_code)")

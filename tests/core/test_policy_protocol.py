"""The policy protocol says whether a policy reads the clock; every engine asks it the same way."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from reviewlab.core._policy import Narrowing, TimeoutPolicy, resolve_bound, timeout_at
from reviewlab.core._rules import is_clock_aware, reads_clock
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Round


class HalfTheTimeLeft:
    """A clock-aware policy that is not a TimeoutPolicy: ``search_code`` gets half the time left."""

    def timeout_for(
        self,
        tools: Any,
        tool_name: str,
        tool_args: Mapping[str, Any] | None = None,
        *,
        remaining_sec: float | None = None,
    ) -> float:
        """Half the time left for ``search_code`` (10 s without a deadline), else 10 s."""
        if tool_name == "search_code" and remaining_sec is not None:
            return remaining_sec / 2
        return 10.0

    def reads_clock(self, tools: Any, tool_name: str, tool_args: Any = None) -> bool:
        """Only ``search_code`` reads the time left."""
        return tool_name == "search_code"

    def reads_args(self, tool_name: str) -> bool:
        """No tool reads its arguments."""
        return False

    args_key = staticmethod(TimeoutPolicy.args_key)


class Plain:
    """A policy with only ``timeout_for``: 3 s for everything."""

    def timeout_for(self, tools: Any, tool_name: str, tool_args: Any = None) -> float:
        """Three seconds."""
        return 3.0


def test_the_protocol_tells_clock_aware_policies_from_plain_ones():
    """TimeoutPolicy and a custom policy say how they vary; a bare timeout_for says nothing."""
    ouroboros = TimeoutPolicy.ouroboros()
    assert is_clock_aware(ouroboros) and is_clock_aware(HalfTheTimeLeft())
    assert not is_clock_aware(Plain())
    assert reads_clock(ouroboros, None, "web_search") and not reads_clock(
        ouroboros, None, "read_file"
    )
    # The argument override skips the clamp, so such a call reads no clock.
    assert not reads_clock(ouroboros, None, "run_command", {"timeout_sec": 60})
    assert not reads_clock(Plain(), None, "web_search")
    assert timeout_at(HalfTheTimeLeft(), None, "search_code", {}, 8.0) == 4.0
    assert timeout_at(Plain(), None, "search_code", {}, 8.0) == 3.0
    assert ouroboros.default_base_sec() == 600.0  # the 600 s floor over the 360 s default


def test_resolve_bound_hands_the_time_left_to_a_clock_aware_policy():
    """The time left reaches the policy as an argument; the narrowing then takes the minimum."""
    bound = resolve_bound(HalfTheTimeLeft(), None, "search_code", {}, remaining_sec=8.0)
    assert (bound.sec, bound.by) == (4.0, "tool_timeout")
    plain = resolve_bound(Plain(), None, "search_code", {}, remaining_sec=2.0)
    assert (plain.sec, plain.by) == (2.0, "deadline")


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_engines_give_a_custom_clock_aware_policy_the_virtual_time_left(engine):
    """search_code's bound is half the time left at its virtual dispatch, in both engines."""
    calls = [Call(tool="search_code", args={}, duration_sec=1.0) for _ in range(3)]
    episode = Episode(
        id="e",
        source="synthetic",
        slot="s",
        started_at=datetime(2026, 1, 1, tzinfo=UTC),
        deadline_sec=20.0,
        rounds=[Round(send_sec=2.0, calls=calls), Round(send_sec=1.0)],
    )
    result = replay([episode], HalfTheTimeLeft(), Narrowing("none"), engine=engine)
    # Dispatched at 2, 3 and 4 s: 18, 17 and 16 s left.
    assert result.calls["bound_sec"].tolist() == [9.0, 8.5, 8.0]

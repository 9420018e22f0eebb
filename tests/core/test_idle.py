"""Idle timeouts: the policy's ``idle_sec`` part, its validation, and the rule on recorded
progress times."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewlab.core._idle import idle_fire_sec
from reviewlab.core._narrowing import PolicyError
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.live._executor_base import call_terms


def test_the_idle_part_keeps_the_hard_timeout_and_adds_idle_timeouts():
    """``timeout_for`` is the ``timeouts`` part's; ``idle_for`` answers only for the tools the
    ``idle_sec`` part names, and a policy without one gives none."""
    base = TimeoutPolicy.uniform(30.0)
    policy = Policy(timeouts=base, idle_sec={"progress": 2})
    assert policy.timeout_for(None, "progress") == 30.0 == base.timeout_for(None, "progress")
    assert policy.idle_for("progress") == 2.0 and policy.idle_for("read_file") is None
    assert Policy.of(base).idle_for("progress") is None
    assert policy.label == f"{base.name}+idle(progress=2s)"


def test_the_terms_of_a_call_carry_its_idle_timeout_only_when_it_is_bounded():
    """call_terms gives a bounded call the tool's idle timeout and the pre-fix policy none."""
    policy = Policy.uniform(30.0).with_idle(progress=2.0)
    terms = call_terms(policy, None, "progress", {})
    assert terms.bound.sec == 30.0 and terms.idle_sec == 2.0
    assert call_terms(policy, None, "read_file", {}).idle_sec is None
    unbounded = Policy.unbounded().with_idle(progress=2.0)
    assert call_terms(unbounded, None, "progress", {}).idle_sec is None


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "5", True])
def test_bad_idle_seconds_are_refused_naming_the_tool(bad):
    """Zero, negative, NaN, infinite or non-number idle seconds: one error naming the field."""
    with pytest.raises(PolicyError, match=r"idle_sec\.progress"):
        Policy(timeouts=TimeoutPolicy.uniform(30.0), idle_sec={"progress": bad})


def test_no_progress_fires_one_idle_period_after_dispatch():
    """Without progress the idle timeout fires at ``idle_sec``, if that is before the end."""
    assert idle_fire_sec([], 1.0, 5.0) == 1.0
    assert idle_fire_sec([], 1.0, 1.0) is None  # returning at that moment counts as in time
    assert idle_fire_sec([], None, 5.0) is None


def test_progress_pushes_the_fire_past_each_report():
    """Steady progress holds the timeout off; it fires one period after the last report."""
    assert idle_fire_sec([0.5, 1.0, 1.5], 1.0, 10.0) == 2.5
    assert idle_fire_sec([0.5, 1.0, 1.5], 1.0, 2.0) is None  # returned first
    assert idle_fire_sec([0.5, 2.0], 1.0, 10.0) == 1.5  # the gap after 0.5 s is too long


def _ticks(progress: list[int], idle: int, until: int) -> int | None:
    """The rule simulated tick by tick: the fire is checked before a report at the same tick."""
    last = 0
    reports = set(progress)
    for now in range(1, until):
        if now - last >= idle:
            return now
        if now in reports:
            last = now
    return None


@given(
    progress=st.lists(st.integers(1, 400), max_size=12).map(sorted),
    idle=st.integers(1, 120),
    until=st.integers(1, 500),
)
def test_the_rule_matches_a_tick_by_tick_simulation(progress, idle, until):
    """On integer ticks the closed form equals a tick-by-tick simulation.

    A tick is 1/1024 s, so every time and difference here is exact in binary floating point.
    """
    fire = idle_fire_sec([p / 1024 for p in progress], idle / 1024, until / 1024)
    expected = _ticks(progress, idle, until)
    if expected is None:
        assert fire is None
    else:
        assert fire is not None and fire * 1024 == expected


def test_an_idle_part_leaves_the_timeouts_as_they_are_clock_and_arguments_included():
    """Adding idle timeouts to ``ouroboros`` keeps its deadline clamp and argument override,
    call for call."""
    base = TimeoutPolicy.ouroboros()
    policy = Policy.of(base).with_idle(query_code=5.0)
    for tool, args in [("query_code", {}), ("run_command", {"timeout": 900}), ("read_file", None)]:
        for remaining in (None, 50.0, 5000.0):
            assert policy.timeout_for(None, tool, args, remaining_sec=remaining) == (
                base.timeout_for(None, tool, args, remaining_sec=remaining)
            )
            assert policy.bound(None, tool, args, remaining_sec=remaining) == (
                Policy.of(base).bound(None, tool, args, remaining_sec=remaining)
            )

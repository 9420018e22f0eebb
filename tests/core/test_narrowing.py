"""The tie rule of the narrowing (docs/semantics.md, "Ties on the real clock"): where time is
exact, a deadline window shorter than the tool timeout by any amount is the deadline's, in the
scalar rule (narrow_sec, narrow) and the array rule (narrow_array) alike, and in both simulated
engines; only a tolerance a caller passes (``tie_sec``, the real engine's measured clock
resolution) makes a shorter window a tie.

Every expectation here is written out by hand: the window one float below the tool timeout, at
it, past it, at 4.8 and 4.75 (the old quarter-second allowance), at 0, and with no deadline
(``None`` / NaN). Flipping a comparison or restoring an allowance moves one of these rows to the
other side.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from reviewlab.core._narrowing import CLAMP_JITTER_SEC
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines._replay import replay
from reviewlab.engines.vectorized import compile_corpus
from reviewlab.recording._schema import Call, Episode, Round

TOOL = 5.0
JUST_BELOW = math.nextafter(TOOL, 0.0)

# (window, expected bound_sec, expected by): by hand from the exact rule.
CASES = [
    (JUST_BELOW, JUST_BELOW, "deadline"),  # one float short is still the deadline's
    (4.9, 4.9, "deadline"),
    (4.8, 4.8, "deadline"),  # the case: a 4.8 s window under a 5 s timeout
    (TOOL - CLAMP_JITTER_SEC, 4.75, "deadline"),  # the clamp's allowance is no tie rule
    (4.5, 4.5, "deadline"),
    (0.0, 0.0, "deadline"),
    (TOOL, TOOL, "tool_timeout"),  # an exact tie goes to the tool timeout
    (7.0, TOOL, "tool_timeout"),
]

# Each bounded mode, and the time left that gives a window ``w``: exact float inverses.
MODES = [
    (Narrowing(), lambda w: w),
    (Narrowing("reserve", reserve_sec=1.0), lambda w: w + 1.0),
    (Narrowing("fraction", fraction=0.5), lambda w: w * 2.0),
]


@pytest.mark.parametrize(("narrowing", "left_for"), MODES, ids=lambda m: getattr(m, "label", ""))
@pytest.mark.parametrize(("window", "sec", "by"), CASES)
def test_the_scalar_rule_is_exact_without_a_tolerance(narrowing, left_for, window, sec, by):
    """narrow_sec and narrow: the hand-written bound and term for each window and mode."""
    remaining = left_for(window)
    assert narrowing.narrow_sec(TOOL, remaining) == (sec, by)
    bound = narrowing.narrow(TOOL, remaining)
    assert (bound.sec, bound.by, bound.tool_timeout_sec) == (sec, by, TOOL)


@pytest.mark.parametrize(("narrowing", "left_for"), MODES, ids=lambda m: getattr(m, "label", ""))
def test_the_array_rule_gives_the_same_hand_written_answers(narrowing, left_for):
    """narrow_array over the cases at once, with NaN for no deadline: the same bounds and the
    same deadline flags as written above."""
    remaining = np.array([left_for(w) for w, _, _ in CASES] + [math.nan])
    sec, by_deadline = narrowing.narrow_array(np.full(remaining.size, TOOL), remaining)
    assert sec.tolist() == [s for _, s, _ in CASES] + [TOOL]
    assert by_deadline.tolist() == [b == "deadline" for _, _, b in CASES] + [False]


@pytest.mark.parametrize(
    ("window", "tie_sec", "by"),
    [
        (4.99, 0.01, "tool_timeout"),  # exactly the tolerance short: a tie
        (4.98, 0.01, "deadline"),  # more than the tolerance short
        (4.8, 0.01, "deadline"),
        (4.8, 0.25, "tool_timeout"),  # a tolerance as coarse as a clock at time_scale 0.001
        (JUST_BELOW, 0.0, "deadline"),
        (TOOL, 0.0, "tool_timeout"),
    ],
)
def test_a_tolerance_passed_by_the_caller_makes_a_tie(window, tie_sec, by):
    """With ``tie_sec`` a window no more than that much short of the tool timeout is the tool
    timeout's, a shorter one still the deadline's; the bound stays the window."""
    assert Narrowing().narrow_sec(TOOL, window, tie_sec=tie_sec) == (window, by)
    assert Narrowing().narrow(TOOL, window, tie_sec=tie_sec).by == by


@pytest.mark.parametrize(("narrowing", "left_for"), MODES, ids=lambda m: getattr(m, "label", ""))
def test_no_deadline_is_the_tool_timeout_in_both_forms(narrowing, left_for):
    """None (scalar) and NaN (array) mean no inherited deadline: the tool timeout."""
    assert narrowing.narrow_sec(TOOL, None) == (TOOL, "tool_timeout")
    sec, by_deadline = narrowing.narrow_array(np.array([TOOL]), np.array([math.nan]))
    assert sec.tolist() == [TOOL] and by_deadline.tolist() == [False]


def test_none_and_unbounded_never_read_the_window():
    """none keeps the tool timeout and unbounded has no bound, even with a window far short."""
    assert Narrowing("none").narrow_sec(TOOL, 1.0) == (TOOL, "tool_timeout")
    assert Narrowing.unbounded().narrow_sec(TOOL, 1.0) == (None, "unbounded")
    sec, by = Narrowing("none").narrow_array(np.array([TOOL]), np.array([1.0]))
    assert sec.tolist() == [TOOL] and by.tolist() == [False]


WINDOWS = (4.75, 4.8, 4.9, 4.5, 0.0, TOOL)
"""Windows exact on an episode's clock after a 1-s send (``1 + w - 1 == w``)."""


def _tie_corpus() -> list[Episode]:
    """One episode per case: a read of 10 s dispatched after a 1-s send with ``1 + window``
    seconds left before its deadline, so the read's window is ``window`` exactly."""
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    return [
        Episode(
            id=f"w{i}",
            source="synthetic",
            started_at=start,
            deadline_sec=1.0 + window,
            rounds=[
                Round(send_sec=1.0, calls=[Call(tool="read_file", duration_sec=10.0)]),
                Round(send_sec=0.0),
            ],
        )
        for i, window in enumerate(WINDOWS)
    ]


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_both_engines_label_every_shorter_window_the_deadlines(engine):
    """A read whose window is 4.75, 4.8, 4.9, 4.5 or 0 s under a 5-s timeout is bound by the
    deadline at that window, at 5 s by the tool timeout; the summary's share counts 5 of 6 (the
    compiled corpus's summary too, which counts without building frames)."""
    corpus = _tie_corpus()
    policy = Policy.uniform(TOOL)
    calls = replay(corpus, policy, engine=engine).calls
    assert calls["bound_sec"].tolist() == list(WINDOWS)
    assert calls["bound_by"].tolist() == ["deadline"] * 5 + ["tool_timeout"]
    assert calls["bound_by"].eq("deadline").mean() == 5 / 6
    assert compile_corpus(corpus).summary(policy)["deadline_bound_share"] == 5 / 6


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_a_clamped_tool_is_labelled_exactly_after_its_clamp(engine):
    """read_file clamped with no reserve: with w left the tool timeout is floor(min(5, w) +
    0.25) (5, 5, 5, 4, 5 when nothing is left, 5: the clamp's own allowance), then narrowed
    exactly: 4.75, 4.8 and 4.9 are the deadline's, 4.5 exceeds the clamped 4 (the tool
    timeout's), 0 is the deadline's, 5 the tool timeout's."""
    corpus = _tie_corpus()
    clamped = TimeoutPolicy(default_sec=TOOL, clamp_tools=("read_file",), clamp_reserve_sec=0.0)
    policy = Policy(timeouts=clamped)
    calls = replay(corpus, policy, engine=engine).calls
    assert calls["bound_sec"].tolist() == [4.75, 4.8, 4.9, 4.0, 0.0, TOOL]
    assert calls["bound_by"].tolist() == [
        "deadline",
        "deadline",
        "deadline",
        "tool_timeout",
        "deadline",
        "tool_timeout",
    ]
    # The compiled corpus decides clamped keys call by call in its deadline pass.
    assert compile_corpus(corpus).summary(policy)["deadline_bound_share"] == 4 / 6

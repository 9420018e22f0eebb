"""The tie rule of the narrowing (docs/semantics.md, "The bound"): a deadline window within
CLAMP_JITTER_SEC below the tool timeout counts as the tool timeout, in the scalar rule
(narrow_sec, narrow) and the array rule (narrow_array) alike, and in both simulated engines.

Every expectation here is written out by hand: the window sits exactly at ``tool - 0.25``,
one float below and above it, inside the allowance, at the tool timeout, past it, at 0, and
with no deadline (``None`` / NaN). Flipping a comparison or dropping the jitter term moves one
of these rows to the other side.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from reviewlab.core.policy import CLAMP_JITTER_SEC, Narrowing, Policy, TimeoutPolicy
from reviewlab.engines.replay import replay
from reviewlab.engines.vectorized import compile_corpus
from reviewlab.recording.schema import Call, Episode, Round

TOOL = 5.0
TIE = TOOL - CLAMP_JITTER_SEC  # 4.75, exact in binary
BELOW = math.nextafter(TIE, 0.0)
ABOVE = math.nextafter(TIE, math.inf)

# (window, expected bound_sec, expected by): by hand from the rule.
CASES = [
    (TIE, TIE, "tool_timeout"),  # exactly the allowance short: a tie
    (BELOW, BELOW, "deadline"),  # one float more than the allowance short
    (ABOVE, ABOVE, "tool_timeout"),
    (4.9, 4.9, "tool_timeout"),  # inside the allowance: the jitter term decides
    (4.5, 4.5, "deadline"),
    (0.0, 0.0, "deadline"),
    (math.nextafter(TOOL, 0.0), math.nextafter(TOOL, 0.0), "tool_timeout"),
    (TOOL, TOOL, "tool_timeout"),
    (7.0, TOOL, "tool_timeout"),
]

# Each bounded mode, and the time left that gives a window ``w``: exact float inverses.
MODES = [
    (Narrowing(), lambda w: w),
    (Narrowing("reserve", reserve_sec=1.0), lambda w: w + 1.0),
    (Narrowing("fraction", fraction=0.5), lambda w: w * 2.0),
]


def test_the_allowance_is_the_clamps():
    """The tie allowance is the clamp's jitter allowance, a quarter second."""
    assert CLAMP_JITTER_SEC == 0.25
    assert TIE == 4.75 and BELOW < TIE < ABOVE


@pytest.mark.parametrize(("narrowing", "left_for"), MODES, ids=lambda m: getattr(m, "label", ""))
@pytest.mark.parametrize(("window", "sec", "by"), CASES)
def test_the_scalar_rule_counts_a_window_within_the_allowance_as_the_tool_timeout(
    narrowing, left_for, window, sec, by
):
    """narrow_sec and narrow: the hand-written bound and term for each window and mode."""
    remaining = left_for(window)
    assert narrowing.narrow_sec(TOOL, remaining) == (sec, by)
    bound = narrowing.narrow(TOOL, remaining)
    assert (bound.sec, bound.by, bound.tool_timeout_sec) == (sec, by, TOOL)


@pytest.mark.parametrize(("narrowing", "left_for"), MODES, ids=lambda m: getattr(m, "label", ""))
def test_the_array_rule_gives_the_same_hand_written_answers(narrowing, left_for):
    """narrow_array over every case at once, with NaN for no deadline: the same bounds and
    the same deadline flags as written above."""
    remaining = np.array([left_for(w) for w, _, _ in CASES] + [math.nan])
    sec, by_deadline = narrowing.narrow_array(np.full(remaining.size, TOOL), remaining)
    assert sec.tolist() == [s for _, s, _ in CASES] + [TOOL]
    assert by_deadline.tolist() == [b == "deadline" for _, _, b in CASES] + [False]


@pytest.mark.parametrize(("narrowing", "left_for"), MODES, ids=lambda m: getattr(m, "label", ""))
def test_no_deadline_is_the_tool_timeout_in_both_forms(narrowing, left_for):
    """None (scalar) and NaN (array) mean no inherited deadline: the tool timeout."""
    assert narrowing.narrow_sec(TOOL, None) == (TOOL, "tool_timeout")
    sec, by_deadline = narrowing.narrow_array(np.array([TOOL]), np.array([math.nan]))
    assert sec.tolist() == [TOOL] and by_deadline.tolist() == [False]


def test_none_and_unbounded_never_read_the_window():
    """none keeps the tool timeout and unbounded has no bound, even one float below the tie."""
    assert Narrowing("none").narrow_sec(TOOL, BELOW) == (TOOL, "tool_timeout")
    assert Narrowing.unbounded().narrow_sec(TOOL, BELOW) == (None, "unbounded")
    sec, by = Narrowing("none").narrow_array(np.array([TOOL]), np.array([BELOW]))
    assert sec.tolist() == [TOOL] and by.tolist() == [False]


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
        for i, (window, _, _) in enumerate(CASES)
        if window in (TIE, 4.9, 4.5, 0.0, TOOL)  # exact on the episode's clock (1 + w - 1)
    ]


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_both_engines_report_a_tie_as_the_tool_timeout(engine):
    """A read whose window is 4.75, 4.9 or 5 s under a 5-s timeout is bound by the tool
    timeout at that window; at 4.5 s and 0 by the deadline; the summary's share counts 2 of 5
    (the compiled corpus's summary too, which counts without building frames)."""
    corpus = _tie_corpus()
    policy = Policy.uniform(TOOL)
    calls = replay(corpus, policy, engine=engine).calls
    expected = {TIE: "tool_timeout", 4.9: "tool_timeout", 4.5: "deadline", 0.0: "deadline"}
    expected[TOOL] = "tool_timeout"
    assert calls["bound_sec"].tolist() == list(expected)
    assert calls["bound_by"].tolist() == list(expected.values())
    assert compile_corpus(corpus).summary(policy)["deadline_bound_share"] == 2 / 5


@pytest.mark.parametrize("engine", ["twin", "vectorized"])
def test_a_clamped_tool_meets_the_tie_rule_after_its_clamp(engine):
    """read_file clamped with no reserve: with w left the tool timeout is floor(min(5, w) +
    0.25) (5, 5, 4, 5 when nothing is left, 5), then narrowed: 4.75 and 4.9 are ties, 4.5
    exceeds the clamped 4 (tool timeout 4), only 0 is the deadline's."""
    corpus = _tie_corpus()
    clamped = TimeoutPolicy(default_sec=TOOL, clamp_tools=("read_file",), clamp_reserve_sec=0.0)
    policy = Policy(timeouts=clamped)
    calls = replay(corpus, policy, engine=engine).calls
    assert calls["bound_sec"].tolist() == [TIE, 4.9, 4.0, 0.0, TOOL]
    assert calls["bound_by"].tolist() == [
        "tool_timeout",
        "tool_timeout",
        "tool_timeout",
        "deadline",
        "tool_timeout",
    ]
    # The compiled corpus decides clamped keys call by call in its deadline pass.
    assert compile_corpus(corpus).summary(policy)["deadline_bound_share"] == 1 / 5

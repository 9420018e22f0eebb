"""Hedged calls: the rule, the fate of one call, the static budget, the running budget, and the
one hedge plan every engine replays (core/_hedge.py, engines/_censoring.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewlab.core._hedge import (
    HedgeRule,
    ShareBudget,
    hedge_fate,
    hedge_fate_array,
    plan_budget,
)
from reviewlab.core._narrowing import PolicyError
from reviewlab.core._policy import Policy
from reviewlab.engines._censoring import KaplanMeier, completion_times, hedge_plan
from reviewlab.recording._schema import Call, Episode, Round

INF = math.inf
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"after_sec": 0.0}, "after_sec"),
        ({"after_sec": -1.0}, "after_sec"),
        ({"after_sec": math.nan}, "after_sec"),
        ({"after_sec": math.inf}, "after_sec"),
        ({"after_sec": "2"}, "after_sec"),
        ({"after_sec": 1.0, "max_share": 0.0}, "max_share"),
        ({"after_sec": 1.0, "max_share": 1.01}, "max_share"),
        ({"after_sec": 1.0, "max_share": math.nan}, "max_share"),
    ],
)
def test_a_bad_rule_is_refused_naming_its_field(kwargs: dict, field: str) -> None:
    """after_sec must be positive and finite, max_share in (0, 1]; the error names the field."""
    with pytest.raises(PolicyError, match=field):
        HedgeRule(**kwargs)


def test_a_rule_round_trips_through_its_mapping_and_names_where_it_came_from() -> None:
    """to_dict/from_dict are inverse; a bad value names its place in the file."""
    rule = HedgeRule(1.5, 0.1)
    assert HedgeRule.from_dict(rule.to_dict()) == rule
    assert HedgeRule.from_dict({"after_sec": 2}) == HedgeRule(2.0, 0.05)
    with pytest.raises(PolicyError, match=r"hedges\.read_file\.after_sec"):
        HedgeRule.from_dict({"after_sec": 0}, where="hedges.read_file")
    with pytest.raises(PolicyError, match="unknown field"):
        HedgeRule.from_dict({"after_sec": 1, "share": 0.1})


def test_the_rule_of_a_tool_is_the_policys_hedges_part_and_a_bare_rule_hedges_nothing() -> None:
    """Policy.hedges maps a tool to its rule; a bare timeout rule converted by Policy.of has
    none."""
    policy = Policy.ouroboros().with_hedge("read_file", after_sec=2.0, max_share=0.1)
    assert policy.hedges == {"read_file": HedgeRule(2.0, 0.1)}
    assert policy.hedges.get("search_code") is None
    assert Policy.of(Policy.ouroboros().timeouts).hedges == {}


# -- the fate of one call ----------------------------------------------------------------------


def test_an_answer_before_the_delay_starts_no_second_attempt() -> None:
    """d1 <= after: nothing is hedged, the call waits d1, nobody is loose."""
    fate = hedge_fate(1.0, 0.1, after_sec=2.0, bound_sec=10.0)
    assert fate == (False, 1.0, False, 1.0, (0.0, 0.0))


def test_the_second_attempt_wins_and_the_first_runs_on_as_a_zombie() -> None:
    """d1 = 8, after 2, d2 = 1: the answer comes at 3; attempt 1 is loose from 3 to 8."""
    fate = hedge_fate(8.0, 1.0, after_sec=2.0, bound_sec=10.0)
    assert fate.hedged and not fate.abandoned
    assert fate.answer_sec == 3.0 and fate.wait_sec == 3.0
    assert fate.zombies_sec == (5.0, 0.0) and fate.zombie_sec == 5.0


def test_the_first_attempt_wins_and_the_second_runs_on() -> None:
    """d1 = 3, after 2, d2 = 4: the answer comes at 3; attempt 2 is loose from 3 to 6."""
    fate = hedge_fate(3.0, 4.0, after_sec=2.0, bound_sec=10.0)
    assert (fate.hedged, fate.answer_sec, fate.wait_sec, fate.zombies_sec) == (
        True,
        3.0,
        3.0,
        (0.0, 3.0),
    )


def test_a_hedge_rescues_a_wedge_and_the_wedge_stays_loose_forever() -> None:
    """A first attempt that never returns: the second answers, the first is a zombie forever."""
    fate = hedge_fate(INF, 0.5, after_sec=2.0, bound_sec=10.0)
    assert fate.answer_sec == 2.5 and not fate.abandoned
    assert fate.zombies_sec == (INF, 0.0)


def test_an_abandoned_hedged_call_leaves_both_attempts_loose_from_the_bound() -> None:
    """Neither attempt answers by the bound: abandoned at 5, both run on to their own ends."""
    fate = hedge_fate(9.0, 6.0, after_sec=2.0, bound_sec=5.0)
    assert fate.hedged and fate.abandoned and fate.wait_sec == 5.0
    assert fate.zombies_sec == (4.0, 3.0)
    never = hedge_fate(INF, INF, after_sec=2.0, bound_sec=5.0)
    assert never.abandoned and never.zombies_sec == (INF, INF)


def test_no_second_attempt_when_the_bound_comes_first() -> None:
    """b <= after: the call is abandoned (or answered) before a hedge could start."""
    fate = hedge_fate(9.0, 0.1, after_sec=2.0, bound_sec=2.0)
    assert not fate.hedged and fate.abandoned and fate.zombies_sec == (7.0, 0.0)


def test_a_return_exactly_at_the_bound_counts_as_inside_it() -> None:
    """The usual rule: an answer at the bound is not abandoned."""
    fate = hedge_fate(9.0, 3.0, after_sec=2.0, bound_sec=5.0)
    assert fate.answer_sec == 5.0 and not fate.abandoned


def test_unbounded_and_never_answered_waits_forever_with_nobody_loose() -> None:
    """The pre-fix policy: if neither attempt returns, the caller waits forever."""
    fate = hedge_fate(INF, INF, after_sec=2.0, bound_sec=None)
    assert fate.hedged and not fate.abandoned and fate.wait_sec == INF
    assert fate.zombies_sec == (0.0, 0.0)


_times = st.one_of(st.floats(0.0, 20.0), st.just(INF))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(_times, _times, st.floats(0.01, 10.0), st.one_of(st.none(), st.floats(0, 20))),
        min_size=1,
        max_size=20,
    )
)
def test_the_array_form_is_the_scalar_rule_element_wise(rows: list) -> None:
    """hedge_fate_array gives hedge_fate's answer for every call (NaN bound = unbounded)."""
    first, second, after, bound = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
    bound = np.where(np.equal(bound, None), np.nan, bound).astype(float)
    hedged, answer, abandoned, wait, z1, z2 = hedge_fate_array(first, second, after, bound)
    for i, (d1, d2, a, b) in enumerate(rows):
        fate = hedge_fate(d1, d2, a, b)
        assert (bool(hedged[i]), bool(abandoned[i])) == (fate.hedged, fate.abandoned)
        assert answer[i] == fate.answer_sec and wait[i] == fate.wait_sec
        assert (z1[i], z2[i]) == fate.zombies_sec
        assert fate.wait_sec <= d1 or fate.abandoned  # a hedge never waits longer than d1


def test_a_hedge_never_lengthens_a_wait() -> None:
    """For every d2, the hedged wait is at most the unhedged one, min(d1, b)."""
    for d1 in (0.5, 3.0, 9.0, INF):
        for d2 in (0.1, 1.0, 50.0, INF):
            for b in (1.0, 2.5, 10.0):
                plain = min(d1, b)
                assert hedge_fate(d1, d2, 2.0, b).wait_sec <= plain


# -- the budget --------------------------------------------------------------------------------


def test_the_static_budget_by_hand() -> None:
    """max_share 0.5: a slow call may hedge when hedged + 1 <= 0.5 x calls of its tool so far."""
    rules = {"read_file": HedgeRule(1.0, 0.5)}
    tools = ["read_file", "read_file", "search_code", "read_file", "read_file", "read_file"]
    first = [5.0, 5.0, 5.0, 0.5, 5.0, 5.0]
    # read_file calls 1..5: call 1 (0 + 1 > 0.5); call 2 (1 <= 1) hedges; call 3 fast;
    # call 4 (2 <= 2) hedges; call 5 (3 > 2.5) not.
    assert plan_budget(tools, first, rules).tolist() == [False, True, False, False, True, False]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["a", "b"]), _times), max_size=60),
    st.floats(0.01, 1.0),
)
def test_the_budget_never_exceeds_its_share_in_any_prefix(calls: list, share: float) -> None:
    """In every prefix of the corpus, hedges of a tool <= max_share x its calls; only calls whose
    first attempt is slower than the delay hedge."""
    rules = {"a": HedgeRule(1.0, share)}
    tools = [tool for tool, _ in calls]
    first = [d for _, d in calls]
    planned = plan_budget(tools, first, rules)
    n = hedges = 0
    for tool, d1, p in zip(tools, first, planned, strict=True):
        if tool != "a":
            assert not p
            continue
        n += 1
        hedges += int(p)
        assert hedges <= share * n + 1e-12
        assert not p or d1 > 1.0


def test_the_running_budget_admits_by_the_same_rule() -> None:
    """ShareBudget counts calls as they start and admits hedges within max_share."""
    budget = ShareBudget(
        Policy.ouroboros().with_hedge("read_file", after_sec=1, max_share=0.5).hedges
    )
    assert budget.rule_for("search_code") is None
    assert not budget.admit("search_code", (), {})
    budget.note_call("read_file", (), {})
    assert not budget.admit("read_file", (), {})  # 1 > 0.5 x 1
    budget.note_call("read_file", (), {})
    assert budget.admit("read_file", (), {})  # 1 <= 0.5 x 2
    assert not budget.admit("read_file", (), {})  # 2 > 1


# -- the Kaplan-Meier draw and the plan --------------------------------------------------------


def test_an_unconditional_draw_beyond_the_last_return_never_returns() -> None:
    """times 1, 2 (returned), 3 (censored): S(1) = 2/3, S(2) = 1/3; u < 1/3 never returns."""
    km = KaplanMeier([1.0, 2.0, 3.0], [True, True, False])
    assert km.draw(0.9) == 1.0
    assert km.draw(0.5) == 2.0
    assert km.draw(0.2) == INF
    assert KaplanMeier([4.0], [False]).draw(0.5) == INF
    with pytest.raises(ValueError, match="u"):
        km.draw(1.0)


def _call(tool: str, duration: float, completed: bool = True) -> Call:
    return Call(tool=tool, args={"path": "a.py"}, duration_sec=duration, completed=completed)


def _episode(name: str, calls: list[Call], offset: float = 0.0) -> Episode:
    return Episode(
        id=name,
        source="synthetic",
        slot="s1",
        started_at=T0 + timedelta(seconds=offset),
        rounds=[Round(send_sec=1.0, calls=calls), Round(send_sec=0.5)],
    )


def _corpus() -> list[Episode]:
    return [
        _episode(
            f"e{i}", [_call("read_file", 0.1 + 0.3 * (i % 4)), _call("read_file", 5.0, i != 3)]
        )
        for i in range(8)
    ]


def test_the_plan_is_seeded_and_follows_the_censoring_assumption() -> None:
    """Same seed, same plan; a wedge's first attempt never returns; observed returns when seen."""
    corpus = _corpus()
    policy = Policy.uniform(60).with_hedge("read_file", after_sec=0.5, max_share=1.0)
    wedge = hedge_plan(corpus, policy, completion_times(corpus, "wedge"), seed=3)
    again = hedge_plan(corpus, policy, completion_times(corpus, "wedge"), seed=3)
    observed = hedge_plan(corpus, policy, completion_times(corpus, "observed"), seed=3)
    assert wedge is not None and again is not None and observed is not None
    assert np.array_equal(wedge.second_sec, again.second_sec, equal_nan=True)
    censored_row = 2 * 3 + 1
    assert wedge.first_sec[censored_row] == INF and observed.first_sec[censored_row] == 5.0
    # Every slow call may hedge under max_share 1; fast ones never.
    assert wedge.planned.tolist() == [bool(d > 0.5) for d in wedge.first_sec]
    drawn = wedge.second_sec[wedge.planned]
    assert set(drawn[np.isfinite(drawn)]) <= {0.1, 0.4, 0.7, 1.0, 5.0}  # observed returns only
    assert np.isnan(wedge.second_sec[~wedge.planned]).all()
    assert hedge_plan(corpus, Policy.uniform(60), None) is None


def test_a_carried_plan_keeps_each_rows_origin_and_never_hedges_a_copy() -> None:
    """carried() reads every row from the row it comes from, re-draws nothing, and a row
    marked as a re-issued copy does not hedge even when its origin does."""
    corpus = _corpus()
    policy = Policy.uniform(60).with_hedge("read_file", after_sec=0.5, max_share=1.0)
    plan = hedge_plan(corpus, policy, None, seed=1)
    assert plan is not None
    planned = np.flatnonzero(plan.planned)
    rows = np.array([planned[0], 0, planned[0], planned[1]])
    carried = plan.carried(rows, np.array([True, True, False, True]))
    assert carried.planned.tolist() == [True, bool(plan.planned[0]), False, True]
    assert carried.second_sec[0] == plan.second_sec[planned[0]]
    assert carried.second_sec[3] == plan.second_sec[planned[1]]
    assert carried.after_sec[0] == 0.5 and math.isnan(carried.after_sec[2])
    assert math.isnan(carried.second_sec[2])
    assert carried.first_sec.tolist() == plan.first_sec[rows].tolist()

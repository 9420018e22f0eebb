"""The breaker rule and its state machine (reviewlab.core._breaker), on their own."""

from __future__ import annotations

import math

import pytest

from reviewlab.core._breaker import BreakerRule, BreakerState
from reviewlab.core._policy import Policy, PolicyError, TimeoutPolicy


def _trip(state: BreakerState, tool: str, times: int, round: int = 1, now: float = 0.0) -> bool:
    tripped = False
    for _ in range(times):
        tripped = state.record(tool, True, round, now)
    return tripped


# -- the rule ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"consecutive": 0}, "consecutive"),
        ({"consecutive": None}, "consecutive"),
        ({"consecutive": 2.5}, "consecutive"),
        ({"consecutive": True}, "consecutive"),
        ({"window": 2, "consecutive": 3}, "window"),
        ({"window": "5"}, "window"),
        ({"cooldown_rounds": 0}, "cooldown_rounds"),
        ({"cooldown_rounds": None, "cooldown_sec": 0.0}, "cooldown_sec"),
        ({"cooldown_rounds": None, "cooldown_sec": math.inf}, "cooldown_sec"),
        ({"cooldown_rounds": None, "cooldown_sec": math.nan}, "cooldown_sec"),
        ({"cooldown_rounds": None, "cooldown_sec": "3"}, "cooldown_sec"),
        ({"cooldown_sec": 5.0}, "cooldown_rounds, cooldown_sec"),
        ({"cooldown_rounds": None}, "cooldown_rounds, cooldown_sec"),
        ({"scope": "pool"}, "scope"),
    ],
)
def test_every_field_is_validated_and_named(fields, named):
    """A bad value of any field is one PolicyError that starts with the field's name."""
    with pytest.raises(PolicyError) as info:
        BreakerRule(**fields)
    assert str(info.value).startswith(f"{named}:")


def test_the_rule_round_trips_through_its_dict_and_names_unknown_keys():
    """to_dict/from_dict are inverse (unset fields left out); an unknown key names the table."""
    for rule in (
        BreakerRule(),
        BreakerRule(2, window=5, cooldown_rounds=None, cooldown_sec=1.5, scope="slot"),
    ):
        assert BreakerRule.from_dict(rule.to_dict()) == rule
        assert None not in rule.to_dict().values()
    assert BreakerRule.from_dict({"cooldown_sec": 4}).cooldown_rounds is None
    with pytest.raises(PolicyError, match=r"^policy\.breaker: unknown field\(s\) cooldown\b"):
        BreakerRule.from_dict({"cooldown": 3}, where="policy.breaker")
    with pytest.raises(PolicyError, match=r"^b\.window: must be at least 3"):
        BreakerRule.from_dict({"window": 1}, where="b")


def test_the_breaker_is_a_part_of_the_policy_kept_beside_its_idle_timeouts():
    """with_breaker sets the breaker part; adding idle timeouts keeps it; a bare rule has none."""
    policy = Policy.uniform(5).with_breaker(2)
    assert policy.breaker == BreakerRule(2)
    assert policy.with_idle(read_file=1.0).breaker == BreakerRule(2)
    assert policy.replace(breaker=None).timeouts == policy.timeouts
    assert Policy.of(TimeoutPolicy.uniform(5)).breaker is None


# -- the state machine -------------------------------------------------------


def test_consecutive_abandonments_trip_and_one_return_resets_the_count():
    """Three in a row trip a 3x breaker; a call that returned in between starts the count over."""
    state = BreakerState(BreakerRule(3))
    assert not state.record("read_file", True, 1, 0.0)
    assert not state.record("read_file", True, 1, 0.0)
    assert not state.record("read_file", False, 1, 0.0)
    assert not state.record("read_file", True, 2, 0.0)
    assert not state.record("read_file", True, 2, 0.0)
    assert not state.withheld("read_file", 2, 0.0)
    assert state.record("read_file", True, 2, 0.0)
    assert state.trips == 1
    assert state.withheld("read_file", 2, 0.0)


def test_tools_count_apart():
    """One tool's abandonments neither trip nor withhold another."""
    state = BreakerState(BreakerRule(2))
    state.record("read_file", True, 1, 0.0)
    assert not state.record("search_code", True, 1, 0.0)
    assert state.record("read_file", True, 1, 0.0)
    assert state.withheld("read_file", 1, 0.0)
    assert not state.withheld("search_code", 1, 0.0)


def test_a_window_trips_on_exactly_consecutive_abandonments_among_its_calls():
    """2 of the last 4: spread abandonments trip it; one fewer, or one pushed out, does not."""
    state = BreakerState(BreakerRule(2, window=4))
    assert not state.record("t", True, 1, 0.0)
    assert not state.record("t", False, 1, 0.0)
    assert not state.record("t", False, 1, 0.0)
    assert state.record("t", True, 1, 0.0)  # 2 among the last 4

    pushed_out = BreakerState(BreakerRule(2, window=4))
    for abandoned in (True, False, False, False, True):
        assert not pushed_out.record("t", abandoned, 1, 0.0)  # the first fell out of the window


def test_a_cooldown_in_rounds_covers_the_trip_round_and_exactly_k_more():
    """Tripped in round 3 with cooldown_rounds=2: withheld in rounds 3, 4, 5; back in round 6."""
    state = BreakerState(BreakerRule(1, cooldown_rounds=2))
    assert not state.withheld("t", 3, 0.0)
    assert state.record("t", True, 3, 0.0)
    assert [state.withheld("t", r, 0.0) for r in (3, 4, 5, 6, 7)] == [
        True,
        True,
        True,
        False,
        False,
    ]


def test_a_cooldown_in_seconds_ends_exactly_cooldown_sec_after_the_trip_settled():
    """Tripped at t=10 with 5 s: withheld at 10 and 14.999, not at 15; rounds play no part."""
    state = BreakerState(BreakerRule(1, cooldown_rounds=None, cooldown_sec=5.0))
    assert state.record("t", True, 1, 10.0)
    assert state.withheld("t", 1, 10.0)
    assert state.withheld("t", 9, 14.999)
    assert not state.withheld("t", 1, 15.0)
    assert not state.withheld("t", 2, 20.0)
    assert not state.withheld("t", 1, 9.999)  # dispatched before the trip (another episode)


def test_the_cooldown_in_words():
    """cooldown_label is what the host text says."""
    rule = BreakerRule(2, cooldown_rounds=None, cooldown_sec=4.0)
    assert rule.cooldown_label == "4.0s"
    assert BreakerRule(2, cooldown_rounds=3).cooldown_label == "3 model round(s)"


def test_the_count_starts_afresh_after_a_trip():
    """After the cool-down a 2x breaker needs two new abandonments, not one."""
    state = BreakerState(BreakerRule(2, cooldown_rounds=1))
    _trip(state, "t", 2, round=1)
    assert not state.withheld("t", 3, 0.0)
    assert not state.record("t", True, 3, 0.0)
    assert state.record("t", True, 3, 0.0)
    assert state.trips == 2


def test_a_slot_state_carries_the_round_count_across_episodes():
    """A cool-down of 3 rounds tripped in round 4 of a 5-round episode covers round 1 and 2 of
    the next episode of the slot, not round 3."""
    state = BreakerState(BreakerRule(1, cooldown_rounds=3, scope="slot"))
    state.start_episode()
    assert state.record("t", True, 4, 0.0)
    state.end_episode(5)
    state.start_episode()
    assert state.withheld("t", 1, 0.0)
    assert state.withheld("t", 2, 0.0)
    assert not state.withheld("t", 3, 0.0)
    state.end_episode(3)
    state.start_episode()
    assert not state.withheld("t", 1, 0.0)


def test_a_slot_state_counts_abandonments_across_episodes():
    """Two abandonments at the end of one episode and one at the start of the next trip 3x."""
    state = BreakerState(BreakerRule(3, scope="slot"))
    state.start_episode()
    _trip(state, "t", 2, round=2)
    state.end_episode(2)
    state.start_episode()
    assert state.record("t", True, 1, 0.0)
    assert state.withheld("t", 1, 0.0)


def test_the_state_wants_a_rule():
    """A BreakerState of anything but a BreakerRule is a TypeError naming the rule."""
    with pytest.raises(TypeError, match="rule"):
        BreakerState({"consecutive": 3})  # type: ignore[arg-type]

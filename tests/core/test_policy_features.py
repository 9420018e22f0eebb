"""A Policy's hedges, breaker and idempotent tools: builders, validation, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewlab.core._breaker import BreakerRule
from reviewlab.core._hedge import HedgeRule
from reviewlab.core._policy import (
    Narrowing,
    Policy,
    PolicyError,
    TimeoutPolicy,
)
from reviewlab.core._policy_document import IDEMPOTENT_TOOLS

OURO = Policy.ouroboros()


def test_the_defaults_are_off_and_the_reads_are_idempotent():
    """No hedges, no breaker; the inspection tools (query_code too) are idempotent by default."""
    assert dict(OURO.hedges) == {}
    assert OURO.breaker is None
    assert set(OURO.idempotent_tools) == {"read_file", "list_files", "search_code", "query_code"}
    assert OURO.idempotent_tools == IDEMPOTENT_TOOLS
    assert OURO.parts_in_use == ()


def test_a_policy_without_the_optional_parts_is_written_without_their_tables():
    """to_dict leaves out the hedge, breaker and idle tables and the default idempotent list."""
    document = OURO.to_dict()
    assert set(document) == {"policy", "narrowing"}
    assert "idempotent_tools" not in document["policy"]


def test_with_hedge_and_with_breaker_build_the_rules():
    """The issue's examples build the documented rules and keep every other part."""
    policy = OURO.with_hedge("read_file", after_sec=2.0, max_share=0.05).with_breaker(
        consecutive=3, cooldown_rounds=2, scope="slot"
    )
    assert policy.hedges == {"read_file": HedgeRule(2.0, 0.05)}
    assert policy.breaker == BreakerRule(3, None, 2, None, "slot")
    assert policy.timeouts is OURO.timeouts and policy.narrowing == OURO.narrowing
    assert policy.label.startswith("ouroboros+")
    assert OURO.with_breaker(cooldown_sec=30).breaker == BreakerRule(3, None, None, 30.0)
    assert policy.replace(breaker=None).breaker is None
    # Replacing the timeouts part keeps both.
    scaled = policy.replace(timeouts=policy.timeouts.scaled(2.0))
    assert scaled.hedges == policy.hedges and scaled.breaker == policy.breaker


def test_hedging_a_tool_not_marked_idempotent_is_refused_by_name():
    """run_command is not idempotent: hedging it names it, until with_idempotent marks it."""
    with pytest.raises(PolicyError, match=r"^hedges\.run_command: run_command is not marked"):
        OURO.with_hedge("run_command", after_sec=1.0)
    marked = OURO.with_idempotent("run_command").with_hedge("run_command", after_sec=1.0)
    assert "run_command" in marked.idempotent_tools
    with pytest.raises(PolicyError, match=r"^policy: hedges\.x: x is not marked idempotent"):
        Policy.from_dict({"hedges": {"x": {"after_sec": 1}}}, where="policy")


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"hedges": {"read_file": {"after_sec": -1}}}, "hedges.read_file.after_sec"),
        ({"hedges": {"read_file": {"max_share": 0.1}}}, "hedges.read_file.after_sec"),
        ({"hedges": {"read_file": {"after_sec": 1, "share": 1}}}, "hedges.read_file"),
        ({"hedges": {"read_file": 2.0}}, "hedges.read_file"),
        ({"hedges": ["read_file"]}, "hedges"),
        ({"breaker": {"consecutive": 0}}, "breaker.consecutive"),
        ({"breaker": {"scope": "pool"}}, "breaker.scope"),
        ({"breaker": {"cooldown_sec": -3}}, "breaker.cooldown_sec"),
        ({"breaker": 3}, "breaker"),
        ({"policy": {"idempotent_tools": "read_file"}}, "idempotent_tools"),
        ({"policy": {"idempotent_tools": ["bad name"]}}, "idempotent_tools"),
    ],
)
def test_bad_parts_are_named(data, named):
    """A bad hedge, breaker or idempotent list is one PolicyError naming the file and path."""
    with pytest.raises(PolicyError) as info:
        Policy.from_dict(data, where="p.toml")
    assert str(info.value).startswith(f"p.toml: {named}"), str(info.value)


def test_with_breaker_errors_name_the_breaker_field():
    """A bad argument to with_breaker names breaker.<field>."""
    with pytest.raises(PolicyError, match=r"^breaker\.window:"):
        OURO.with_breaker(3, window=2)


_tools = st.sampled_from(["read_file", "list_files", "search_code", "query_code", "mcp.fetch"])
_seconds = st.floats(min_value=1e-3, max_value=1e5, allow_nan=False, allow_infinity=False)


@st.composite
def _breakers(draw: st.DrawFn) -> BreakerRule | None:
    if draw(st.booleans()):
        return None
    consecutive = draw(st.integers(1, 6))
    window = draw(st.none() | st.integers(consecutive, 12))
    in_rounds = draw(st.booleans())
    return BreakerRule(
        consecutive,
        window,
        draw(st.integers(1, 9)) if in_rounds else None,
        None if in_rounds else draw(_seconds),
        draw(st.sampled_from(["episode", "slot"])),
    )


@st.composite
def _policies(draw: st.DrawFn) -> Policy:
    base = draw(st.sampled_from([OURO, Policy.uniform(30.0)]))
    extra = draw(st.lists(_tools, max_size=2))
    policy = base.with_idempotent(*extra) if extra else base
    for tool in draw(st.lists(st.sampled_from(list(policy.idempotent_tools)), max_size=3)):
        share = draw(st.floats(min_value=1e-4, max_value=1.0, exclude_min=False))
        policy = policy.with_hedge(tool, after_sec=draw(_seconds), max_share=share)
    narrowing = draw(
        st.sampled_from([Narrowing(), Narrowing("reserve", reserve_sec=5.0), Narrowing("none")])
    )
    return policy.replace(breaker=draw(_breakers()), narrowing=narrowing)


@settings(max_examples=60, deadline=None)
@given(_policies())
def test_every_part_round_trips_through_dict_and_toml(policy):
    """dict and TOML give back an equal policy with an equal hash, every part included."""
    for back in (Policy.from_dict(policy.to_dict()), Policy.from_toml(policy.to_toml())):
        assert back == policy
        assert hash(back) == hash(policy)
        assert back.hedges == policy.hedges
        assert back.breaker == policy.breaker
        assert back.idempotent_tools == policy.idempotent_tools
        assert back.narrowing == policy.narrowing


@settings(max_examples=20, deadline=None)
@given(_policies())
def test_policy_files_carry_every_part(tmp_path_factory, policy):
    """Policy.save then Policy.load returns the same policy, hedges and breaker included."""
    path = tmp_path_factory.mktemp("policy") / "p.toml"
    policy.save(path)
    assert Policy.load(path) == policy


def test_policies_that_differ_only_in_one_part_differ_in_equality_and_hash():
    """A breaker, a hedge or an idempotent mark each makes a policy unequal to the plain one."""
    variants = [
        OURO,
        OURO.with_breaker(3),
        OURO.with_breaker(3, scope="slot"),
        OURO.with_hedge("read_file", after_sec=2.0),
        OURO.with_hedge("read_file", after_sec=2.5),
        OURO.with_idempotent("run_command"),
    ]
    assert len(set(variants)) == len(variants)
    assert len({policy.to_toml() for policy in variants}) == len(variants)


def test_an_idempotent_list_is_kept_sorted_and_without_repeats():
    """Marking a tool twice, in any order, gives the same policy."""
    a = OURO.with_idempotent("run_command", "read_file")
    b = OURO.with_idempotent("run_command").with_idempotent("run_command")
    assert a == b and hash(a) == hash(b)
    assert a.idempotent_tools == tuple(sorted(a.idempotent_tools))


def test_a_bare_timeouts_part_carries_no_optional_part():
    """Policy.of of a TimeoutPolicy has no hedges, breaker or idle timeouts."""
    assert Policy.of(TimeoutPolicy.uniform(3)).parts_in_use == ()

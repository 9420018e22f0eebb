"""TimeoutPolicy's hedges, breaker and idempotent tools: builders, validation, round trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewlab.core.breaker import BreakerRule
from reviewlab.core.hedge import HedgeRule
from reviewlab.core.policy import (
    IDEMPOTENT_TOOLS,
    Narrowing,
    PolicyError,
    TimeoutPolicy,
    load_policy_file,
    save_policy_file,
)

OURO = TimeoutPolicy.ouroboros()


def test_the_defaults_are_off_and_the_reads_are_idempotent():
    """No hedges, no breaker; the inspection tools (query_code too) are idempotent by default."""
    assert dict(OURO.hedges) == {}
    assert OURO.breaker is None
    assert set(OURO.idempotent_tools) == {"read_file", "list_files", "search_code", "query_code"}
    assert OURO.idempotent_tools == IDEMPOTENT_TOOLS


def test_a_policy_without_the_new_fields_is_written_as_before():
    """to_dict leaves out the new fields at their defaults (older files and hashes stay valid)."""
    assert not {"hedges", "breaker", "idempotent_tools"} & set(OURO.to_dict())


def test_with_hedge_and_with_breaker_build_the_rules():
    """The issue's examples build the documented rules and keep every other field."""
    policy = OURO.with_hedge("read_file", after_sec=2.0, max_share=0.05).with_breaker(
        consecutive=3, cooldown_rounds=2, scope="slot"
    )
    assert policy.hedges == {"read_file": HedgeRule(2.0, 0.05)}
    assert policy.breaker == BreakerRule(3, None, 2, None, "slot")
    assert policy.timeout_for(None, "read_file") == OURO.timeout_for(None, "read_file")
    assert policy.name == "ouroboros"
    assert OURO.with_breaker(cooldown_sec=30).breaker == BreakerRule(3, None, None, 30.0)
    assert policy.without_breaker().breaker is None
    # Copies made by the other builders keep both.
    scaled = policy.scaled(2.0)
    assert scaled.hedges == policy.hedges and scaled.breaker == policy.breaker


def test_hedging_a_tool_not_marked_idempotent_is_refused_by_name():
    """run_command is not idempotent: hedging it names it, until with_idempotent marks it."""
    with pytest.raises(PolicyError, match=r"^hedges\.run_command: run_command is not marked"):
        OURO.with_hedge("run_command", after_sec=1.0)
    marked = OURO.with_idempotent("run_command").with_hedge("run_command", after_sec=1.0)
    assert "run_command" in marked.idempotent_tools
    with pytest.raises(PolicyError, match=r"^policy\.hedges\.x: x is not marked idempotent"):
        TimeoutPolicy.from_dict({"hedges": {"x": {"after_sec": 1}}})


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({"hedges": {"read_file": {"after_sec": -1}}}, "policy.hedges.read_file.after_sec"),
        ({"hedges": {"read_file": {"max_share": 0.1}}}, "policy.hedges.read_file.after_sec"),
        ({"hedges": {"read_file": {"after_sec": 1, "share": 1}}}, "policy.hedges.read_file"),
        ({"hedges": {"read_file": 2.0}}, "policy.hedges.read_file"),
        ({"hedges": ["read_file"]}, "policy.hedges"),
        ({"breaker": {"consecutive": 0}}, "policy.breaker.consecutive"),
        ({"breaker": {"scope": "pool"}}, "policy.breaker.scope"),
        ({"breaker": {"cooldown_sec": -3}}, "policy.breaker.cooldown_sec"),
        ({"breaker": 3}, "policy.breaker"),
        ({"idempotent_tools": "read_file"}, "policy.idempotent_tools"),
        ({"idempotent_tools": ["bad name"]}, "policy.idempotent_tools"),
    ],
)
def test_bad_new_fields_are_named(data, named):
    """A bad hedge, breaker or idempotent list is one PolicyError starting with its path."""
    with pytest.raises(PolicyError) as info:
        TimeoutPolicy.from_dict(data)
    assert str(info.value).startswith(f"{named}"), str(info.value)


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
def _policies(draw: st.DrawFn) -> TimeoutPolicy:
    base = draw(st.sampled_from([OURO, TimeoutPolicy.uniform(30.0)]))
    extra = draw(st.lists(_tools, max_size=2))
    policy = base.with_idempotent(*extra) if extra else base
    for tool in draw(st.lists(st.sampled_from(list(policy.idempotent_tools)), max_size=3)):
        share = draw(st.floats(min_value=1e-4, max_value=1.0, exclude_min=False))
        policy = policy.with_hedge(tool, after_sec=draw(_seconds), max_share=share)
    rule = draw(_breakers())
    if rule is not None:
        policy = TimeoutPolicy(**{**policy.to_dict(), "breaker": rule})
    return policy


@settings(max_examples=60, deadline=None)
@given(_policies())
def test_every_new_field_round_trips_through_dict_json_and_toml(policy):
    """dict, JSON and TOML give back an equal policy with an equal hash, new fields included."""
    for back in (
        TimeoutPolicy.from_dict(policy.to_dict()),
        TimeoutPolicy.from_json(policy.to_json()),
        TimeoutPolicy.from_toml(policy.to_toml()),
    ):
        assert back == policy
        assert hash(back) == hash(policy)
        assert back.hedges == policy.hedges
        assert back.breaker == policy.breaker
        assert back.idempotent_tools == policy.idempotent_tools


@settings(max_examples=20, deadline=None)
@given(_policies())
def test_policy_files_carry_every_new_field(tmp_path_factory, policy):
    """save_policy_file then load_policy_file returns the same policy, hedges and breaker
    included."""
    path = tmp_path_factory.mktemp("policy") / "p.toml"
    save_policy_file(path, policy, Narrowing(mode="reserve", reserve_sec=5.0))
    assert load_policy_file(path) == (policy, Narrowing(mode="reserve", reserve_sec=5.0))


def test_policies_that_differ_only_in_a_new_field_differ_in_equality_and_hash():
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
    assert len({policy.to_json() for policy in variants}) == len(variants)


def test_an_idempotent_list_is_kept_sorted_and_without_repeats():
    """Marking a tool twice, in any order, gives the same policy."""
    a = OURO.with_idempotent("run_command", "read_file")
    b = OURO.with_idempotent("run_command").with_idempotent("run_command")
    assert a == b and hash(a) == hash(b)
    assert a.idempotent_tools == tuple(sorted(a.idempotent_tools))

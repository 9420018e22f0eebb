"""The Policy value: one frozen value with named parts, one conversion, one file format."""

from __future__ import annotations

import pytest

from reviewlab.core._breaker import BreakerRule
from reviewlab.core._hedge import HedgeRule
from reviewlab.core._policy import (
    PRE_FIX_LABEL,
    Narrowing,
    Policy,
    PolicyError,
    TimeoutPolicy,
    resolve_bound,
)


class _Rule:
    """A custom timeout rule: 7 s for every tool."""

    name = "seven"

    def timeout_for(self, tools, tool_name, tool_args=None):
        return 7.0


def _full() -> Policy:
    return (
        Policy.uniform(1)
        .with_hedge("read_file", after_sec=0.4, max_share=0.5)
        .with_breaker(consecutive=2, cooldown_rounds=1)
        .with_idle(read_file=1.0)
        .replace(narrowing=Narrowing("reserve", reserve_sec=2.0))
    )


def test_of_wraps_a_bare_rule_with_its_separate_narrowing():
    """Policy.of turns a TimeoutPolicy and a separate narrowing into one Policy holding both."""
    timeouts = TimeoutPolicy.uniform(3)
    narrowing = Narrowing("fraction", fraction=0.5)
    policy = Policy.of(timeouts, narrowing)
    assert policy.timeouts is timeouts
    assert policy.narrowing == narrowing
    assert Policy.of(None).timeouts == TimeoutPolicy.ouroboros()
    assert Policy.of(None).narrowing == Narrowing()


def test_of_returns_a_policy_itself_and_refuses_a_contradicting_narrowing():
    """A Policy passes through Policy.of unchanged; a second, different narrowing is an error."""
    policy = _full()
    assert Policy.of(policy) is policy
    assert Policy.of(policy, policy.narrowing) is policy
    with pytest.raises(PolicyError, match="narrowing: given twice"):
        Policy.of(policy, Narrowing())


def test_a_custom_rule_is_a_timeouts_part():
    """Any object with timeout_for is accepted as the timeouts part and resolved by it."""
    policy = Policy.of(_Rule())
    bound = resolve_bound(policy, None, "anything", remaining_sec=None)
    assert (bound.sec, bound.by) == (7.0, "tool_timeout")
    with pytest.raises(PolicyError, match="timeouts: expected"):
        Policy(timeouts=object())
    with pytest.raises(PolicyError, match="got a Policy"):
        Policy(timeouts=Policy.uniform(1))


def test_toml_round_trip_keeps_every_part():
    """A policy with idle timeouts, hedges, a breaker and a narrowing is read back equal."""
    policy = _full()
    text = policy.to_toml()
    for table in ("[policy]", "[narrowing]", "[idle]", "[hedges.read_file]", "[breaker]"):
        assert table in text
    back = Policy.from_toml(text)
    assert back == policy
    assert back.idle_sec == {"read_file": 1.0}
    assert back.hedges == {"read_file": HedgeRule(0.4, 0.5)}
    assert back.breaker == BreakerRule(2, None, 1, None, "episode")
    assert back.label == policy.label


def test_a_named_policy_keeps_its_name_through_a_file(tmp_path):
    """Policy.save then Policy.load keeps a user-given name apart from the timeouts' name."""
    policy = Policy.uniform(5).replace(name="mine", idle_sec={"query_code": 3.0})
    path = tmp_path / "p.toml"
    policy.save(path)
    back = Policy.load(path)
    assert back == policy
    assert back.label == "mine"
    assert back.timeouts.name == "uniform-5s"


def test_an_idle_policy_can_be_written_in_toml():
    """An [idle] table in a file sets the idle_sec part (it had no file form before)."""
    policy = Policy.from_toml("[policy]\ndefault_sec = 10\n[idle]\nread_file = 1.5\n")
    assert policy.idle_for("read_file") == 1.5
    assert policy.idle_for("list_files") is None
    assert policy.timeouts.default_sec == 10.0


def test_files_from_before_the_split_still_load():
    """A [policy] table that holds hedges and breaker (the old layout) loads into the parts."""
    text = (
        "[policy]\ndefault_sec = 2\n"
        "[policy.hedges.read_file]\nafter_sec = 0.5\nmax_share = 0.1\n"
        "[policy.breaker]\nconsecutive = 3\ncooldown_rounds = 2\n"
    )
    policy = Policy.from_toml(text)
    assert policy.hedges["read_file"] == HedgeRule(0.5, 0.1)
    assert policy.breaker is not None and policy.breaker.consecutive == 3
    assert isinstance(policy.timeouts, TimeoutPolicy)
    assert policy.timeouts.default_sec == 2.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty policy"),
        ("[policy]\n", "empty policy"),
        ("[polcy]\ndefault_sec = 1\n", "unknown table(s) polcy"),
        ("[policy]\ndefault_sec = -1\n", "default_sec: must be positive"),
        ("[policy]\ndefault_sec = 1\n[idle]\nread_file = 0\n", "idle_sec.read_file"),
        ("[policy]\ndefault_sec = 1\n[hedges.run_command]\nafter_sec = 1\n", "not marked"),
        ("[policy]\ndefault_sec = 1\n[narrowing]\nmode = 'sideways'\n", "narrowing.mode"),
        ("[policy]\ndefault_sec = [\n", "not valid TOML"),
    ],
)
def test_bad_files_are_refused_naming_the_file_and_the_field(tmp_path, text, message):
    """Every refusal of a policy file names the file and what is wrong in it."""
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as caught:
        Policy.load(path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_a_missing_file_and_a_custom_rule_are_refused_by_name(tmp_path):
    """Loading a missing file names it; saving a custom rule says it cannot be written."""
    with pytest.raises(PolicyError, match="no such policy file"):
        Policy.load(tmp_path / "none.toml")
    with pytest.raises(PolicyError, match="custom rule"):
        Policy.of(_Rule()).to_toml()


def test_label_is_the_one_spelling_of_each_policy():
    """The pre-fix label is the shared constant; other labels name every part in use."""
    assert Policy.unbounded().label == PRE_FIX_LABEL == "pre-fix (unbounded)"
    assert Policy.ouroboros().label == "ouroboros"
    label = _full().label
    for piece in (
        "uniform-1s",
        "reserve-2s",
        "idle(read_file=1s)",
        "hedge(read_file@0.4s,0.5)",
        "breaker(",
    ):
        assert piece in label
    assert Policy.uniform(3).replace(name="x").label == "x"
    assert Policy.of(_Rule()).label == "seven"


def test_replace_refuses_unknown_parts_and_validates_the_new_value():
    """replace() names an unknown part, and a replaced part is validated like a new one."""
    with pytest.raises(PolicyError, match="unknown policy part"):
        Policy.uniform(1).replace(idle=3)
    with pytest.raises(PolicyError, match="idle_sec.read_file"):
        Policy.uniform(1).replace(idle_sec={"read_file": float("nan")})


def test_refuse_names_the_first_part_in_use():
    """A consumer that cannot honour a part refuses it by name; unused parts pass."""
    Policy.uniform(1).refuse("engine", "hedges", "breaker", "idle_sec")
    with pytest.raises(PolicyError, match="engine: the policy's breaker"):
        _full().refuse("engine", "breaker")
    with pytest.raises(PolicyError, match="the policy's idle_sec"):
        Policy.uniform(1).with_idle(read_file=1).refuse("engine", "hedges", "idle_sec")


def test_hedges_need_idempotent_tools():
    """A hedge on a tool that is not idempotent is refused until the tool is marked so."""
    with pytest.raises(PolicyError, match="hedges.edit: edit is not marked idempotent"):
        Policy.uniform(1).with_hedge("edit", after_sec=1)
    policy = Policy.uniform(1).with_idempotent("edit").with_hedge("edit", after_sec=1)
    assert "edit" in policy.idempotent_tools
    assert Policy.from_toml(policy.to_toml()) == policy


def test_a_typo_in_a_hedged_tool_says_which_tool_was_meant():
    """``[hedges.read_fille]`` is refused naming the idempotent tool it is close to; a name
    close to none gets no guess."""
    text = "[policy]\ndefault_sec = 30.0\n\n[hedges.read_fille]\nafter_sec = 2.0\n"
    with pytest.raises(PolicyError, match=r"read_fille .*\(did you mean read_file\?\)"):
        Policy.from_toml(text)
    with pytest.raises(PolicyError) as refused:
        Policy.uniform(1).with_hedge("deploy", after_sec=1)
    assert "did you mean" not in str(refused.value)


def test_policies_are_hashable_and_equal_by_value():
    """Two policies built the same way are equal and hash alike (grids dedupe by value)."""
    assert _full() == _full()
    assert hash(_full()) == hash(_full())
    assert _full() != _full().replace(idle_sec={})


def test_an_old_file_with_both_hedge_tables_keeps_the_hedges_table():
    """A file from before the parts were separate, with a hedge in ``[policy]`` (1 s, share
    0.5) and another in ``[hedges.read_file]`` (2 s, share 0.25) for the same tool: the
    ``[hedges]`` table, the newer home, wins."""
    text = (
        "[policy]\ndefault_sec = 30.0\n"
        "hedges = { read_file = { after_sec = 1.0, max_share = 0.5 } }\n\n"
        "[hedges.read_file]\nafter_sec = 2.0\nmax_share = 0.25\n"
    )
    assert Policy.from_toml(text).hedges == {"read_file": HedgeRule(after_sec=2.0, max_share=0.25)}

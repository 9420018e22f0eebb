"""TimeoutPolicy, Narrowing and resolve_bound: every ouroboros rule with
its numbers, each narrowing mode,
serialisation round trips and validation errors that name the field."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from reviewlab.core._deadline import clock_scope, execution_deadline_scope
from reviewlab.core._narrowing import CLAMP_JITTER_SEC
from reviewlab.core._policy import (
    Bound,
    Narrowing,
    Policy,
    PolicyError,
    TimeoutPolicy,
    resolve_bound,
)

OURO = TimeoutPolicy.ouroboros()


class Registry:
    """A registry that declares its own per-tool timeouts."""

    def __init__(self, **declared: float) -> None:
        self.declared_timeouts = declared


# -- ouroboros(): reference/ouroboros-semantics.md §1 -------------------------------------------
def test_global_600s_is_a_floor_for_every_tool():
    """Rule 3: base = max(600, per-tool), so reader tools, query_code (120)
    and unknown tools (360) get 600."""
    assert OURO.timeout_for(None, "read_file") == 600.0
    assert OURO.timeout_for(None, "query_code") == 600.0
    assert OURO.timeout_for(None, "never_heard_of_it") == 600.0
    assert OURO.base_for(None, "query_code") == 600.0


def test_the_per_tool_table_and_unknown_default_without_the_floor():
    """Rule 2: query_code declares 120, unknown names get 360
    (visible once the floor is removed)."""
    assert OURO.tools_sec["query_code"] == 120.0 and OURO.default_sec == 360.0
    no_floor = OURO.with_tool_timeouts()
    assert no_floor.floor_sec is None
    assert no_floor.timeout_for(None, "read_file") == 600.0  # the floor folded into the default
    unfloored = TimeoutPolicy(**{**OURO.to_dict(), "floor_sec": None})
    assert unfloored.timeout_for(None, "query_code") == 120.0
    assert unfloored.timeout_for(None, "unknown") == 360.0


def test_a_tools_own_value_can_raise_the_floor():
    """Rule 3: a registry-declared 900 s beats the 600 s floor; a declared 30 s does not."""
    assert OURO.timeout_for(Registry(slow_tool=900.0), "slow_tool") == 900.0
    assert OURO.timeout_for(Registry(read_file=30.0), "read_file") == 600.0
    assert OURO.with_tools(read_file=1200.0).timeout_for(None, "read_file") == 1200.0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"timeout_sec": 100}, 630.0),  # min(max(600, 100), 1800) + 30
        ({"timeout_sec": 1000}, 1030.0),  # the override raises the base
        ({"timeout_sec": 5000}, 1830.0),  # capped at the 1800 s ceiling, then + 30
        ({"timeout": 1000}, 1030.0),  # alias
        ({"timeout_sec": 0}, 600.0),  # not positive: ignored
        ({"timeout_sec": -5}, 600.0),
        ({"timeout_sec": True}, 600.0),  # a bool is not an int here
        ({"timeout_sec": 100.0}, 600.0),  # only ints count
        ({"timeout_sec": "900"}, 600.0),
        ({}, 600.0),
    ],
)
def test_argument_override_for_run_command_with_ceiling_and_settlement_margin(args, expected):
    """Rule 5: run_command/run_script honour an int timeout_sec, capped
    at 1800 s, plus the 30 s margin."""
    assert OURO.timeout_for(None, "run_command", args) == expected
    assert OURO.timeout_for(None, "run_script", args) == expected


def test_the_override_applies_only_to_its_tools():
    """Rule 5 is limited to run_command and run_script."""
    assert OURO.timeout_for(None, "read_file", {"timeout_sec": 1000}) == 600.0


@pytest.mark.parametrize(
    ("remaining", "expected"),
    [
        (None, 600.0),  # no deadline: base
        (0.0, 600.0),  # rem <= 0: base
        (-3.0, 600.0),
        (10_000.0, 600.0),  # w = 9880 >= base: base
        (720.0, 600.0),  # w = 600 exactly: base
        (300.0, 180.0),  # w = 180 < base: int(max(1, min(600, 180)))
        (300.7, 180.0),  # truncated to whole seconds
        (300.8, 181.0),  # 0.2 s short of 181: within the jitter allowance, counts as 181
        (300.749, 180.0),  # 0.251 s short of 181: outside it, truncated
        (299.9999, 180.0),  # a real clock's microseconds short of 180 do not cost a second
        (100.0, 1.0),  # w = -20: at least 1
    ],
)
def test_deadline_clamp_on_the_clamp_list_with_a_120s_reserve(remaining, expected):
    """Rule 6: clamp-list tools get int(max(1, min(base, rem - 120))) when that is below base."""
    assert OURO.timeout_for(None, "web_search", remaining_sec=remaining) == expected
    assert OURO.timeout_for(None, "wait_task", remaining_sec=remaining) == expected


def test_clamp_array_follows_the_scalar_clamp_on_every_edge():
    """The array form used by the vectorized engine gives the
    scalar rule's value, edges included."""
    remaining = np.array([np.nan, 0.0, -3.0, 720.0, 300.0, 300.8, 300.749, 299.9999, 100.0])
    expected = [600.0, 600.0, 600.0, 600.0, 180.0, 181.0, 180.0, 180.0, 1.0]
    got = OURO.clamp_array(np.full(remaining.size, 600.0), remaining)
    assert got.tolist() == expected
    assert CLAMP_JITTER_SEC == 0.25


def test_the_clamp_list_and_what_it_skips():
    """Rule 6 covers only the listed tools; rule 7: everything else
    returns base whatever the deadline."""
    assert set(OURO.clamp_tools) >= {
        "web_search",
        "browse_page",
        "browser_action",
        "youtube_transcript",
        "wait_task",
        "wait_tasks",
        "plan_task",
        "task_acceptance_review",
        "analyze_screenshot",
        "vlm_query",
        "await_messages",
    }
    assert OURO.timeout_for(None, "read_file", remaining_sec=130.0) == 600.0
    assert OURO.clamp_reserve_sec == 120.0


def test_the_clamp_reads_the_inherited_deadline_by_default():
    """Without remaining_sec the clamp uses deadline_remaining()
    (here 300 s on an injected clock)."""
    with clock_scope(lambda: 0.0), execution_deadline_scope(300.0):
        assert OURO.timeout_for(None, "web_search") == 180.0


def test_uniform_gives_every_tool_the_same_bound():
    """uniform(s): no floor, override or clamp."""
    policy = TimeoutPolicy.uniform(5)
    assert policy.timeout_for(None, "read_file") == 5.0
    assert policy.timeout_for(None, "run_command", {"timeout_sec": 1000}) == 5.0
    assert policy.timeout_for(None, "web_search", remaining_sec=2.0) == 5.0
    assert policy.name == "uniform-5s"


def test_scaled_multiplies_default_floor_and_table():
    """scaled(f) scales the default, the floor and every per-tool value."""
    policy = OURO.scaled(0.001)
    assert policy.floor_sec == pytest.approx(0.6) and policy.default_sec == pytest.approx(0.36)
    assert policy.tools_sec["query_code"] == pytest.approx(0.12)


# -- Narrowing -----------------------------------------------------------------------------
def test_inherit_takes_the_minimum_with_no_floor():
    """inherit: min(tool, max(0, remaining)); `deadline` only when strictly shorter."""
    inherit = Narrowing()
    assert inherit.narrow(600.0, 1.0) == Bound(1.0, "deadline", 600.0, 1.0)
    assert inherit.narrow(600.0, 0.001).sec == 0.001
    assert inherit.narrow(600.0, -5.0) == Bound(0.0, "deadline", 600.0, -5.0)
    assert inherit.narrow(600.0, 600.0).by == "tool_timeout"
    assert inherit.narrow(600.0, None) == Bound(600.0, "tool_timeout", 600.0, None)


def test_none_ignores_the_deadline():
    """none: the tool timeout alone bounds the call."""
    assert Narrowing(mode="none").narrow(600.0, 1.0) == Bound(600.0, "tool_timeout", 600.0, 1.0)


def test_reserve_keeps_time_to_finish():
    """reserve: min(tool, max(0, remaining - reserve))."""
    reserve = Narrowing(mode="reserve", reserve_sec=30.0)
    assert reserve.narrow(600.0, 100.0) == Bound(70.0, "deadline", 600.0, 100.0)
    assert reserve.narrow(600.0, 10.0).sec == 0.0
    assert reserve.narrow(600.0, 1000.0).by == "tool_timeout"
    assert reserve.label == "reserve-30s"


def test_fraction_takes_a_share_of_the_remaining_time():
    """fraction: min(tool, max(0, remaining * fraction))."""
    fraction = Narrowing(mode="fraction", fraction=0.5)
    assert fraction.narrow(600.0, 100.0) == Bound(50.0, "deadline", 600.0, 100.0)
    assert fraction.narrow(600.0, 2000.0).by == "tool_timeout"


def test_unbounded_is_the_pre_fix_behaviour():
    """unbounded: no bound at all, whatever the tool or the deadline."""
    bound = Narrowing.unbounded().narrow(600.0, 1.0)
    assert bound.sec is None and bound.by == "unbounded" and not bound.bounded


# -- resolve_bound ---------------------------------------------------------------------------
def test_resolve_bound_reads_the_inherited_deadline_and_defaults_to_ouroboros():
    """policy=None is ouroboros; remaining defaults to
    deadline_remaining() on the clock in force."""
    with clock_scope(lambda: 50.0):
        assert resolve_bound(None, None, "read_file") == Bound(600.0, "tool_timeout", 600.0, None)
        with execution_deadline_scope(51.0):
            assert resolve_bound(None, None, "read_file") == Bound(1.0, "deadline", 600.0, 1.0)
        with execution_deadline_scope(49.0):
            assert resolve_bound(None, None, "read_file").sec == 0.0
    assert resolve_bound(OURO, None, "read_file", remaining_sec=3.0).sec == 3.0
    assert (
        resolve_bound(OURO, None, "x", narrowing=Narrowing.unbounded(), remaining_sec=3.0).sec
        is None
    )


def test_resolve_bound_accepts_any_object_with_timeout_for_and_validates_its_answer():
    """A duck-typed policy is called with (tools, name, args); a bad
    number is an error naming the tool."""
    calls = []

    class Custom:
        def timeout_for(self, tools, tool_name, tool_args=None):
            calls.append((tools, tool_name, tool_args))
            return 7 if tool_name == "ok" else math.nan

    registry = object()
    assert resolve_bound(Custom(), registry, "ok", {"a": 1}, remaining_sec=None).sec == 7.0
    assert calls == [(registry, "ok", {"a": 1})]
    with pytest.raises(PolicyError, match="timeout_for\\('bad'\\)"):
        resolve_bound(Custom(), registry, "bad", remaining_sec=None)


# -- serialisation and validation --------------------------------------------------------------
def test_dict_and_toml_round_trips():
    """to_dict/from_dict give back an equal rule, and a Policy's TOML (the one serialisation)
    gives back its timeouts; TimeoutPolicy has no TOML or JSON of its own."""
    for policy in (
        OURO,
        TimeoutPolicy.uniform(12.5),
        OURO.with_tools(read_file=30.0, name="fast-reads"),
    ):
        assert TimeoutPolicy.from_dict(policy.to_dict()) == policy
        assert Policy.from_toml(Policy(timeouts=policy).to_toml()).timeouts == policy
        assert hash(TimeoutPolicy.from_dict(policy.to_dict())) == hash(policy)
    for method in ("to_json", "from_json", "to_toml", "from_toml"):
        assert not hasattr(TimeoutPolicy, method)
    narrowing = Narrowing(mode="reserve", reserve_sec=15.0)
    assert Narrowing.from_dict(narrowing.to_dict()) == narrowing


def test_policy_files_round_trip_with_their_narrowing(tmp_path):
    """Policy.save then Policy.load returns the same timeouts and narrowing; a bare
    TimeoutPolicy file is read as its timeouts part with the default narrowing."""
    path = tmp_path / "policy.toml"
    Policy(timeouts=OURO, narrowing=Narrowing(mode="fraction", fraction=0.25)).save(path)
    loaded = Policy.load(path)
    assert (loaded.timeouts, loaded.narrowing) == (OURO, Narrowing(mode="fraction", fraction=0.25))
    bare = tmp_path / "bare.toml"
    bare.write_text('default_sec = 3.0\nname = "uniform-3s"\n', encoding="utf-8")
    loaded = Policy.load(bare)
    assert (loaded.timeouts, loaded.narrowing) == (TimeoutPolicy.uniform(3), Narrowing())


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"default_sec": -1}, "default_sec"),
        ({"default_sec": 0}, "default_sec"),
        ({"default_sec": math.inf}, "default_sec"),
        ({"default_sec": "600"}, "default_sec"),
        ({"tools_sec": {"read_file": math.nan}}, "tools_sec.read_file"),
        ({"tools_sec": {"": 5}}, "tools_sec"),
        ({"floor_sec": 0}, "floor_sec"),
        ({"override_tools": "run_command"}, "override_tools"),
        ({"clamp_tools": ["ok", 3]}, "clamp_tools\\[1\\]"),
        ({"settlement_margin_sec": -1}, "settlement_margin_sec"),
    ],
)
def test_validation_errors_name_the_field(fields, named):
    """Invalid values are PolicyErrors whose message names the offending field."""
    with pytest.raises(PolicyError, match=named):
        TimeoutPolicy(**fields)


def test_unknown_fields_and_bad_narrowings_are_named():
    """Unknown keys, modes and out-of-range fractions are reported by name."""
    with pytest.raises(PolicyError, match="unknown field.*floor_secs"):
        TimeoutPolicy.from_dict({"floor_secs": 600})
    with pytest.raises(PolicyError, match="policy.default_sec"):
        TimeoutPolicy.from_dict({"default_sec": -2})
    with pytest.raises(PolicyError, match="narrowing.mode"):
        Narrowing(mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match="narrowing.fraction"):
        Narrowing(mode="fraction", fraction=1.5)
    with pytest.raises(PolicyError, match="narrowing.reserve_sec"):
        Narrowing(mode="reserve", reserve_sec=-1)


def test_policy_file_errors_name_the_file(tmp_path):
    """A missing file, bad TOML, an unknown table or a bad field names the file."""
    missing = tmp_path / "missing.toml"
    with pytest.raises(PolicyError, match="missing.toml"):
        Policy.load(missing)
    broken = tmp_path / "broken.toml"
    broken.write_text("[policy\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="broken.toml.*TOML"):
        Policy.load(broken)
    extra = tmp_path / "extra.toml"
    extra.write_text("[policy]\n[other]\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="extra.toml.*other"):
        Policy.load(extra)
    bad = tmp_path / "bad.toml"
    bad.write_text("[policy]\ndefault_sec = -1\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="bad.toml.*default_sec"):
        Policy.load(bad)


def test_policies_are_frozen():
    """A policy cannot be changed in place; copies are made with with_tools/scaled."""
    with pytest.raises(dataclasses.FrozenInstanceError):
        OURO.default_sec = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        OURO.tools_sec["read_file"] = 1.0  # type: ignore[index]


@pytest.mark.parametrize("text", ["", "\n# only a comment\n", "[policy]\n"])
def test_an_empty_policy_file_is_an_error_not_the_default(tmp_path, text):
    """An empty file (or an empty [policy] table) is refused naming the
    file, never read as ouroboros."""
    path = tmp_path / "empty.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError, match="empty.toml: empty policy"):
        Policy.load(path)


@pytest.mark.parametrize("key", ["read file", "", "read_file()", "x" * 65, "tool/with/slash"])
def test_a_tools_sec_key_must_look_like_a_tool_name(tmp_path, key):
    """A tools_sec key that cannot be a tool name is refused naming the key; unknown names pass."""
    path = tmp_path / "keys.toml"
    path.write_text(f'[policy.tools_sec]\n"{key}" = 5\n', encoding="utf-8")
    with pytest.raises(PolicyError, match="keys.toml: policy.tools_sec"):
        Policy.load(path)
    path.write_text('[policy.tools_sec]\n"not_in_any_registry" = 5\n', encoding="utf-8")
    policy = Policy.load(path)
    assert policy.timeout_for(None, "not_in_any_registry", remaining_sec=None) == 5.0

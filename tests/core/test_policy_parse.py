"""Policy.parse and the one preset registry (reviewlab/core/_presets.py): every spelling a user
types for a policy reads to the policy it names, and what names nothing is an error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewlab.analysis._presets import preset_policy
from reviewlab.core._policy import Narrowing, Policy, PolicyError, TimeoutPolicy
from reviewlab.core._presets import BUILTIN_PRESETS, SHELL_TOOLS, load_presets, preset_names
from reviewlab.ui._editor import default_presets


def test_builtin_presets_are_the_policies_they_name() -> None:
    """ouroboros, unbounded (and its pre-fix alias) and uniform:SEC read as the classmethods."""
    assert Policy.parse("ouroboros") == Policy.ouroboros()
    assert Policy.parse("unbounded") == Policy.unbounded()
    assert Policy.parse("pre-fix").narrowing == Narrowing.unbounded()
    uniform = Policy.parse(" uniform:2.5 ")
    assert uniform == Policy.uniform(2.5)
    assert uniform.timeout_for(None, "read_file", remaining_sec=None) == 2.5


def test_a_framework_preset_bounds_tools_and_shell_commands_as_its_table_says() -> None:
    """codex-cli (tool_sec 60, shell_sec 10 in presets.toml): every shell tool gets 10 s, any
    other tool 60 s, with no corpus needed, as preset_policy gives it for a corpus's tools."""
    policy = Policy.parse("codex-cli")
    for tool in SHELL_TOOLS:
        assert policy.timeout_for(None, tool, remaining_sec=None) == 10.0
    assert policy.timeout_for(None, "read_file", remaining_sec=None) == 60.0
    for_corpus = preset_policy(load_presets()["codex-cli"], ["run_command", "read_file"])
    assert for_corpus.timeout_for(None, "run_command", remaining_sec=None) == 10.0
    assert policy.name == "codex-cli"


def test_an_unbounded_framework_preset_is_the_pre_fix_policy() -> None:
    """mcp-python-sdk sets no bound at all, so it reads as the unbounded policy."""
    assert Policy.parse("mcp-python-sdk").narrowing == Narrowing.unbounded()


def test_a_file_reads_as_its_toml_by_name_or_path(tmp_path: Path) -> None:
    """FILE.toml reads through Policy.load, from a string or a PathLike."""
    policy = Policy(timeouts=TimeoutPolicy(default_sec=7.0, tools_sec={"read_file": 3.0}))
    path = tmp_path / "mine.toml"
    policy.save(path)
    assert Policy.parse(str(path)) == policy
    assert Policy.parse(path) == policy


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("uniform:fast", "expected a number"),
        ("uniform:-1", "positive"),
        ("codx-cli", "did you mean codex-cli"),
        ("nonsense", "no such policy file"),
        ("missing.toml", "no such policy file"),
    ],
)
def test_what_names_no_policy_is_an_error_naming_the_spec(spec: str, needle: str) -> None:
    """A bad number, a typo'd preset and a missing file are ValueErrors naming the spec."""
    with pytest.raises(ValueError) as caught:
        Policy.parse(spec)
    assert isinstance(caught.value, PolicyError)
    assert spec in str(caught.value) and needle in str(caught.value)


def test_the_registry_lists_builtins_then_every_shipped_framework() -> None:
    """preset_names is the builtins, then presets.toml's tables in file order."""
    assert preset_names() == (*BUILTIN_PRESETS, *load_presets())
    assert "codex-cli" in preset_names()


def test_the_editor_offers_policies_from_the_registry() -> None:
    """The editor's presets are the registry's policies (uniform 30 s is uniform:30)."""
    presets = default_presets()
    assert presets["uniform 30 s"] == Policy.parse("uniform:30")
    assert presets["ouroboros"] == Policy.parse("ouroboros")

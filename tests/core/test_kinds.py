"""Tool kinds, the policy's ``tool_kinds`` part: defaults, overrides, TOML and errors
(reviewlab/core/_kinds.py, reviewlab/core/_policy.py)."""

from __future__ import annotations

import pytest

from reviewlab.core._kinds import DEFAULT_TOOL_KINDS, UNKNOWN_KIND
from reviewlab.core._policy import Policy, PolicyError
from reviewlab.core._vocab import TOOL_KINDS


def test_the_defaults_know_the_bundled_registry_and_the_importers_tools():
    """Reads of the bundled registry are read-only; commands, editors, submitting and browser
    actions that the importers produce are side-effecting; anything else is unknown."""
    policy = Policy.ouroboros()
    for tool in ("read_file", "list_files", "search_code", "query_code"):
        assert policy.kind_of(tool) == "read_only"
    for tool in ("run_command", "edit", "create", "submit", "str_replace_editor"):
        assert policy.kind_of(tool) == "side_effect"
    assert policy.kind_of("web_browser_click") == "side_effect"
    assert policy.kind_of("take_sum") == UNKNOWN_KIND
    assert set(DEFAULT_TOOL_KINDS.values()) <= set(TOOL_KINDS)


def test_overrides_lay_over_the_defaults_and_round_trip_through_toml(tmp_path):
    """A policy lists only its differences from the defaults in [kinds], and reads back equal."""
    policy = Policy.uniform(30.0).with_kinds(take_sum="read_only", read_file="side_effect")
    text = policy.to_toml()
    assert "[kinds]" in text
    assert 'take_sum = "read_only"' in text and 'read_file = "side_effect"' in text
    assert "run_command" not in text.split("[kinds]", 1)[1]  # a default is not repeated
    path = tmp_path / "p.toml"
    policy.save(path)
    loaded = Policy.load(path)
    assert loaded == policy and hash(loaded) == hash(policy)
    assert loaded.kind_of("run_command") == "side_effect"  # the defaults stay underneath
    assert "[kinds]" not in Policy.uniform(30.0).to_toml()


def test_bad_kinds_are_errors_naming_the_file_and_the_entry(tmp_path):
    """An unknown kind or a malformed tool name is refused with the entry's name."""
    with pytest.raises(PolicyError, match=r"tool_kinds\.edit: expected one of read_only"):
        Policy.ouroboros().with_kinds(edit="writes")  # type: ignore[arg-type]
    path = tmp_path / "bad.toml"
    path.write_text('[policy]\ndefault_sec = 5.0\n\n[kinds]\nedit = "rw"\n', encoding="utf-8")
    with pytest.raises(PolicyError, match=rf"^{path}: kinds\.edit: expected one of"):
        Policy.load(path)
    with pytest.raises(PolicyError, match="is not a tool name"):
        Policy(tool_kinds={"bad name": "read_only"})

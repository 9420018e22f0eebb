"""Tool kinds: which tools only observe and which change the world, the ``tool_kinds`` part.

A :class:`~reviewlab.core._policy.Policy` carries a table ``tool -> kind``
(:data:`~reviewlab.core._vocab.TOOL_KINDS`): :data:`DEFAULT_TOOL_KINDS` for the bundled
inspection registry, the reference system's tools and the names the importers produce
(OpenHands, Inspect AI, SWE-agent), with the user's entries laid over it (TOML ``[kinds]``,
``reviewlab tune --kind TOOL=KIND``). A tool in neither is *unknown* (:data:`UNKNOWN_KIND`),
and the tuner protects it like a side-effecting one: guessing "read-only" for a tool that
deletes files would be the dangerous mistake.

Invariants: a table always holds the defaults (entries are overridden, never dropped), so a
policy file lists only its differences from them and reads back equal; every key is a tool
name and every value one of :data:`~reviewlab.core._vocab.TOOL_KINDS`, else a
:class:`~reviewlab.core._narrowing.PolicyError` naming the entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from reviewlab.core._narrowing import PolicyError
from reviewlab.core._timeouts import check_tool_name
from reviewlab.core._vocab import TOOL_KINDS, ToolKind

UNKNOWN_KIND: Final = "unknown"
"""The kind of a tool the table does not name (treated as side-effecting by the tuner)."""

_READ_ONLY = (
    # the bundled inspection registry and the reference system's code index
    "list_files",
    "query_code",
    "read_file",
    "search_code",
    # tools the importers keep under their own names that only observe
    "find_file",
    "search_dir",
    "search_file",
    "think",
    "web_search",
    "browse_page",
    "youtube_transcript",
)
_SIDE_EFFECT = (
    # shell commands the importers do not classify as reads, and the reference's runners
    "run_command",
    "run_script",
    "bash",
    "python",
    "execute_bash",
    "execute_ipython_cell",
    # editors (SWE-agent, OpenHands, Inspect's text_editor outside "view")
    "create",
    "edit",
    "insert",
    "str_replace_editor",
    "text_editor",
    "undo_edit",
    # ending or handing in the task
    "finish",
    "submit",
    # a browser session's page is state: clicking, typing, navigating change it
    "browser_action",
    "web_browser_back",
    "web_browser_click",
    "web_browser_forward",
    "web_browser_go",
    "web_browser_refresh",
    "web_browser_scroll_down",
    "web_browser_scroll_up",
    "web_browser_type",
    "web_browser_type_submit",
)

DEFAULT_TOOL_KINDS: Final[Mapping[str, ToolKind]] = MappingProxyType(
    dict(
        sorted(
            [(tool, "read_only") for tool in _READ_ONLY]
            + [(tool, "side_effect") for tool in _SIDE_EFFECT]
        )
    )
)
"""The kinds every policy starts from (bundled registry, reference system, importers)."""


def kinds_table(value: Any, *, where: str = "tool_kinds") -> Mapping[str, ToolKind]:
    """``value`` (tool -> kind) laid over :data:`DEFAULT_TOOL_KINDS`, validated and sorted."""
    if not isinstance(value, Mapping):
        raise PolicyError(where, f"expected a table of tool name -> kind, got {value!r}")
    table: dict[str, ToolKind] = dict(DEFAULT_TOOL_KINDS)
    for tool, kind in value.items():
        check_tool_name(where, tool)
        if kind not in TOOL_KINDS:
            raise PolicyError(
                f"{where}.{tool}", f"expected one of {', '.join(TOOL_KINDS)}, got {kind!r}"
            )
        table[tool] = kind
    return MappingProxyType(dict(sorted(table.items())))


def kinds_overrides(table: Mapping[str, ToolKind]) -> dict[str, ToolKind]:
    """The entries of ``table`` that differ from :data:`DEFAULT_TOOL_KINDS` (what a file lists)."""
    return {tool: kind for tool, kind in table.items() if DEFAULT_TOOL_KINDS.get(tool) != kind}


def kind_of(table: Mapping[str, ToolKind], tool: str) -> str:
    """``tool``'s kind in ``table``, or :data:`UNKNOWN_KIND`."""
    return table.get(tool, UNKNOWN_KIND)

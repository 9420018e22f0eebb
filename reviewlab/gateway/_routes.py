"""Which upstream serves a name the host sees, and the kind each tool gets from its annotations.

With one upstream every name is the upstream's own. With several, a tool or prompt name that
two servers share is shown as ``SERVER__NAME`` (each server's own spelling stays reachable only
under the prefix), and a name only one server has stays as it is. Resources are routed by the
URI the listing showed for each server. A tool's kind comes from its MCP annotations
(``readOnlyHint`` true: ``read_only``; ``readOnlyHint`` false or ``destructiveHint`` true:
``side_effect``), its idempotence from ``idempotentHint``; the policy's ``[kinds]`` and
``idempotent_tools`` win over both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reviewlab.core._kinds import kinds_overrides
from reviewlab.core._policy import Policy

SEPARATOR = "__"
"""Between a server's name and its tool's or prompt's when two servers share the name."""


@dataclass(frozen=True)
class Route:
    """One host-visible name: the upstream that serves it and the name the upstream knows."""

    upstream: str
    name: str
    entry: Mapping[str, Any]


def host_names(listings: Mapping[str, Iterable[Mapping[str, Any]]]) -> dict[str, Route]:
    """Host name -> route, for the entries (tools or prompts) each upstream listed, in order."""
    counts = Counter(
        str(entry.get("name", "")) for entries in listings.values() for entry in entries
    )
    shared = len(listings) > 1
    routes: dict[str, Route] = {}
    for upstream, entries in listings.items():
        for entry in entries:
            name = str(entry.get("name", ""))
            shown = f"{upstream}{SEPARATOR}{name}" if shared and counts[name] > 1 else name
            routes[shown] = Route(upstream, name, entry)
    return routes


def shown_entry(shown: str, route: Route) -> dict[str, Any]:
    """The entry as the host sees it: the upstream's, under the host's name."""
    entry = dict(route.entry)
    entry["name"] = shown
    return entry


def annotated_kind(tool: Mapping[str, Any]) -> str | None:
    """The kind a tool's MCP annotations give it, or ``None`` when they say nothing."""
    notes = tool.get("annotations") or {}
    if not isinstance(notes, Mapping):
        return None
    if notes.get("readOnlyHint") is True:
        return "read_only"
    if notes.get("readOnlyHint") is False or notes.get("destructiveHint") is True:
        return "side_effect"
    return None


def effective_policy(policy: Policy, tools: Mapping[str, Route]) -> Policy:
    """``policy`` with the annotations' kinds and idempotence laid under the policy's own.

    The policy's ``[kinds]`` entries (its differences from the default table) win; annotations
    fill in the rest. A tool is idempotent when the policy or its ``idempotentHint`` says so.
    """
    own = kinds_overrides(policy.tool_kinds)
    kinds: dict[str, Any] = dict(policy.tool_kinds)
    idempotent = set(policy.idempotent_tools)
    for shown, route in tools.items():
        kind = annotated_kind(route.entry)
        if kind is not None and shown not in own:
            kinds[shown] = kind
        notes = route.entry.get("annotations") or {}
        if isinstance(notes, Mapping) and notes.get("idempotentHint") is True:
            idempotent.add(shown)
    return policy.replace(tool_kinds=kinds, idempotent_tools=tuple(sorted(idempotent)))

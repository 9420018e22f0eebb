"""Tool kinds a recording carries: what the MCP servers' annotations said when it was made.

The gateway writes, in each host session's header meta, the kinds its upstreams' annotations
give (``tool_kinds``: a JSON object ``{tool: "read_only" | "side_effect"}``) and the tools they
mark idempotent (``idempotent_tools``: a JSON list). :func:`with_recorded_kinds` lays them under
a policy's own (its ``[kinds]`` entries win), so tuning a gateway's recording knows a
destructive tool from a read without being told twice.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from reviewlab.core._kinds import kinds_overrides
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import TOOL_KINDS

KINDS_META_KEY = "tool_kinds"
"""The episode meta key holding the annotations' kinds (JSON object)."""
IDEMPOTENT_META_KEY = "idempotent_tools"
"""The episode meta key holding the tools annotated idempotent (JSON list)."""


def kinds_meta(kinds: Mapping[str, str], idempotent: Iterable[str]) -> dict[str, str]:
    """The two meta entries for ``kinds`` and ``idempotent`` (sorted, so they compare)."""
    return {
        KINDS_META_KEY: json.dumps(dict(sorted(kinds.items())), separators=(",", ":")),
        IDEMPOTENT_META_KEY: json.dumps(sorted(set(idempotent)), separators=(",", ":")),
    }


def recorded_kinds(episodes: Iterable[Any]) -> tuple[dict[str, str], set[str]]:
    """The kinds and idempotent tools the episodes' meta carry (later episodes win a tie);
    an entry that is not such JSON is ignored, as if the recording said nothing."""
    kinds: dict[str, str] = {}
    idempotent: set[str] = set()
    for episode in episodes:
        meta = getattr(episode, "meta", {}) or {}
        try:
            found = json.loads(meta.get(KINDS_META_KEY, "{}"))
            marked = json.loads(meta.get(IDEMPOTENT_META_KEY, "[]"))
        except json.JSONDecodeError:
            continue
        if isinstance(found, dict):
            kinds.update(
                {str(k): v for k, v in found.items() if isinstance(v, str) and v in TOOL_KINDS}
            )
        if isinstance(marked, list):
            idempotent.update(str(tool) for tool in marked)
    return kinds, idempotent


def with_recorded_kinds(policy: Policy, source: Any) -> Policy:
    """``policy`` with the kinds ``source`` recorded laid under its own ``[kinds]`` entries.

    ``source`` is what a corpus-reading function takes; only a gateway's folder of sessions,
    a loaded corpus or a list of episodes can carry kinds (anything else: ``policy`` as is).
    """
    episodes = _episodes_of(source)
    if not episodes:
        return policy
    kinds, idempotent = recorded_kinds(episodes)
    if not kinds and not idempotent:
        return policy
    own = kinds_overrides(policy.tool_kinds)
    table: dict[str, Any] = dict(policy.tool_kinds)
    table.update({tool: kind for tool, kind in kinds.items() if tool not in own})
    marked = tuple(sorted(set(policy.idempotent_tools) | idempotent))
    return policy.replace(tool_kinds=table, idempotent_tools=marked)


def _episodes_of(source: Any) -> list[Any]:
    if isinstance(source, str | os.PathLike):
        from reviewlab.recording.journal import is_session_folder

        if not is_session_folder(source):
            return []
        from reviewlab.recording._files import load_episodes

        return list(load_episodes(source))
    if isinstance(source, list):
        return source
    if getattr(source, "loaded", False):
        return list(source.episodes())
    return []

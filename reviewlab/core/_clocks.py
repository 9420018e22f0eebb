"""Which clocks apply to a call, and which one ended it.

A call may be ended by several clocks at once: its tool timeout, the inherited deadline's
remainder, an idle timeout re-armed by progress, a total cap, a transport's own timeout (the
MCP SDK's Streamable HTTP read timeout), a host's ceiling (a preset's). The bound of
:func:`~reviewlab.core._policy.resolve_bound` already says which of the first ones fired
(``bound_by``); :func:`call_clocks` lists every clock that applied, in seconds after dispatch,
and :func:`ended_by` names the one that ended the call (``returned`` when none did), so a
receipt, a recording and a replay frame can always say which clock fired (docs/mcp.md, "Which
clock fired").
"""

from __future__ import annotations

import math
from typing import Any

from reviewlab.core._vocab import ClockName


def call_clocks(
    bound: Any, idle_sec: float | None = None, transport_sec: float | None = None
) -> dict[str, float]:
    """Every clock that applied to one call, by name, in seconds after dispatch.

    ``bound`` is the call's hard :class:`~reviewlab.core._policy.Bound` as dispatched (``None``:
    refused before it ran). ``total_cap`` is the hard bound (the tool timeout narrowed by the
    deadline): the cap reviewlab holds whatever progress comes. An unbounded call has no clock
    but the transport's.
    """
    clocks: dict[str, float] = {}
    if bound is not None and bound.sec is not None:
        tool_sec = bound.tool_timeout_sec
        if tool_sec is not None and math.isfinite(tool_sec):
            clocks["tool_timeout"] = float(tool_sec)
        remaining = bound.remaining_sec
        if remaining is not None:
            clocks["deadline"] = float(remaining)
        if idle_sec is not None:
            clocks["idle"] = float(idle_sec)
        clocks["total_cap"] = float(bound.sec)
    if transport_sec is not None:
        clocks["transport"] = float(transport_sec)
    return clocks


def ended_by(abandoned: bool, bound_by: str) -> ClockName:
    """What ended a call: ``returned`` unless it was abandoned, else the term of its bound."""
    if not abandoned:
        return "returned"
    if bound_by in ("tool_timeout", "deadline", "idle"):
        return bound_by  # type: ignore[return-value]
    return "total_cap"

"""Idle timeouts: a call that shows no progress for ``idle_sec`` is abandoned, whatever its bound.

A tool that reports progress (an MCP server's ``notifications/progress``) may be given an
idle timeout on top of its bound: every progress report resets the idle clock, and the bound
(the policy's tool timeout, narrowed by the inherited deadline as usual) stays the hard
maximum. Which term fired is recorded as ``bound_by``: ``"idle"``, ``"tool_timeout"`` or
``"deadline"``.

The rule on recorded progress times (the replay's form, :func:`idle_fire_sec`): the idle
timeout fires at the first gap between consecutive activity times (dispatch, then each
progress report) that reaches ``idle_sec``, i.e. ``activity + idle_sec``; it fires only when
that moment comes before the call returned and before its hard bound.

A policy's idle timeouts are its ``idle_sec`` part (:class:`~reviewlab.core._policy.Policy`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def idle_fire_sec(
    progress_sec: Sequence[float], idle_sec: float | None, until_sec: float
) -> float | None:
    """When an idle timeout fires on recorded progress times, or
    ``None`` if not before ``until_sec``.

    ``progress_sec`` are seconds after dispatch; ``until_sec`` is when the call ended
    otherwise (it returned, or its hard bound passed). A fire exactly at ``until_sec`` does
    not count: the other end came first (a return at the bound counts as inside it).
    """
    if idle_sec is None or math.isnan(idle_sec):
        return None
    last = 0.0
    for moment in sorted(progress_sec):
        if moment > until_sec:
            break
        if moment - last >= idle_sec:
            break
        last = moment
    fire = last + idle_sec
    return fire if fire < until_sec else None

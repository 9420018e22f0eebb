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

Any policy with an ``idle_for(tools, tool_name, tool_args=None) -> float | None`` method
gives idle timeouts; :class:`IdleTimeouts` adds them to any other policy and otherwise
answers exactly as the policy it wraps (clock and argument reads included).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewlab.core.narrowing import check_seconds
from reviewlab.core.policy import SupportsTimeoutFor, is_clock_aware, reads_clock, timeout_at

__all__ = ["IdleTimeouts", "idle_fire_sec", "resolve_idle"]


@dataclass(frozen=True)
class IdleTimeouts:
    """``policy`` with per-tool idle timeouts ``idle_sec`` (seconds without progress)."""

    policy: SupportsTimeoutFor
    idle_sec: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        checked = {
            str(tool): check_seconds(f"idle_sec.{tool}", seconds)
            for tool, seconds in dict(self.idle_sec).items()
        }
        object.__setattr__(self, "idle_sec", checked)

    @property
    def name(self) -> str:
        """The wrapped policy's name with an ``+idle`` suffix."""
        return f"{getattr(self.policy, 'name', type(self.policy).__name__)}+idle"

    def timeout_for(
        self,
        tools: Any,
        tool_name: str,
        tool_args: Mapping[str, Any] | None = None,
        *,
        remaining_sec: float | None = None,
    ) -> float:
        """The hard maximum: the wrapped policy's timeout (with
        ``remaining_sec`` when it reads it)."""
        return timeout_at(self.policy, tools, tool_name, tool_args, remaining_sec)

    def reads_clock(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether the wrapped policy's timeout for this call depends on the time left."""
        return reads_clock(self.policy, tools, tool_name, tool_args)

    def reads_args(self, tool_name: str) -> bool:
        """Whether arguments can change the timeout (always, for a policy that does not say)."""
        policy: Any = self.policy
        return bool(policy.reads_args(tool_name)) if is_clock_aware(policy) else True

    def args_key(self, tool_args: Mapping[str, Any] | None) -> tuple[Any, ...]:
        """The wrapped policy's key, or every argument for a policy that does not say."""
        policy: Any = self.policy
        if is_clock_aware(policy):
            return tuple(policy.args_key(tool_args))
        return (repr(sorted((tool_args or {}).items())),)

    def idle_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float | None:
        """Seconds without progress after which a call of ``tool_name`` is abandoned."""
        return self.idle_sec.get(tool_name)


def resolve_idle(
    policy: Any, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
) -> float | None:
    """The idle timeout of one call (``None``: the policy gives none), validated."""
    idle_for = getattr(policy, "idle_for", None)
    if idle_for is None:
        return None
    value = idle_for(tools, tool_name, tool_args)
    return None if value is None else check_seconds(f"idle_for({tool_name!r})", value)


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

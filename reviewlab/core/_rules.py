"""What any timeout rule is, and the one way every engine asks it.

A rule is anything with ``timeout_for(tools, tool_name, tool_args=None) -> float``
(:class:`SupportsTimeoutFor`). A rule that also says how its timeouts vary
(:class:`ClockAwarePolicy`: whether a call reads the clock or its arguments, and which part of
the arguments) is asked with the time left before the deadline passed in
(:func:`timeout_at`), so the twin's virtual time and the real replay's scaled time reach it the
same way; any other rule is asked without it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class SupportsTimeoutFor(Protocol):
    """Anything with ``timeout_for(tools, tool_name, tool_args=None) -> float`` is a policy."""

    def timeout_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float:
        """Seconds this call of ``tool_name`` may run on this registry with these arguments."""
        ...


@runtime_checkable
class ClockAwarePolicy(Protocol):
    """A policy that says how its timeouts vary, so every engine can ask it the same way.

    * ``reads_clock(tools, name, args)``: whether this call's timeout depends on the time left
      before the inherited deadline. When it does, engines pass that time explicitly as
      ``timeout_for(..., remaining_sec=...)`` — the virtual time in the twin, the scaled real
      time in the real replay — instead of the policy reading a clock of its own.
    * ``reads_args(name)``: whether any call's arguments can change this tool's timeout.
    * ``args_key(args)``: the part of the arguments it reads; calls of one tool with equal keys
      that do not read the clock get equal timeouts, so replays resolve them once.

    :class:`TimeoutPolicy` is one. Any other object with only ``timeout_for`` is a policy too:
    engines then resolve every call on its own and give it no time left (it may still read
    :func:`~reviewlab.core._deadline.deadline_remaining` itself when run live).
    """

    def timeout_for(
        self,
        tools: Any,
        tool_name: str,
        tool_args: Mapping[str, Any] | None = None,
        *,
        remaining_sec: float | None = ...,
    ) -> float:
        """Seconds this call may run, with ``remaining_sec`` left before the deadline."""
        ...

    def reads_clock(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> bool:
        """Whether this call's timeout depends on the time left before the deadline."""
        ...

    def reads_args(self, tool_name: str) -> bool:
        """Whether a call's arguments can change this tool's timeout."""
        ...

    def args_key(self, tool_args: Mapping[str, Any] | None) -> tuple[Any, ...]:
        """The part of a call's arguments the timeout depends on, hashable."""
        ...


_CLOCK_AWARE_MEMBERS = tuple(name for name in vars(ClockAwarePolicy) if not name.startswith("_"))
_CLOCK_AWARE_TYPES: set[type] = set()
"""Classes that define every :class:`ClockAwarePolicy` member themselves: all their instances
are clock-aware (a runtime protocol check costs tens of microseconds, and engines ask per
replay)."""


def is_clock_aware(rule: object) -> bool:
    """Whether ``rule`` states how its timeouts vary (:class:`ClockAwarePolicy`)."""
    kind = type(rule)
    if kind in _CLOCK_AWARE_TYPES:
        return True
    aware = isinstance(rule, ClockAwarePolicy)
    if aware and all(callable(getattr(kind, name, None)) for name in _CLOCK_AWARE_MEMBERS):
        _CLOCK_AWARE_TYPES.add(kind)
    return aware


def reads_clock(
    rule: SupportsTimeoutFor, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
) -> bool:
    """Whether ``rule``'s timeout for this call depends on the time left (False when it never
    says)."""
    return is_clock_aware(rule) and bool(rule.reads_clock(tools, tool_name, tool_args))  # type: ignore[attr-defined]


def timeout_at(
    policy: SupportsTimeoutFor,
    tools: Any,
    tool_name: str,
    tool_args: Mapping[str, Any] | None,
    remaining_sec: float | None,
) -> float:
    """``policy``'s timeout for a call with ``remaining_sec`` left: the one way every engine
    asks."""
    if is_clock_aware(policy):
        return policy.timeout_for(tools, tool_name, tool_args, remaining_sec=remaining_sec)  # type: ignore[call-arg]
    return policy.timeout_for(tools, tool_name, tool_args)

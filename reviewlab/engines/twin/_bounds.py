"""Per-call bounds for the twin: the shared :func:`~reviewlab.core._policy.resolve_bound`, cached
only where provably identical.

Every bound the twin uses is the value ``resolve_bound(policy, None, tool, args,
remaining_sec=rem)`` would return at the call's virtual dispatch time. :class:`BoundResolver`
keeps one validated tool timeout per *bound key*: a call that reads the clock has no key; a
tool that reads its arguments is keyed by ``(tool, args_key(args))``; any other by its name; a
policy that does not say how its timeouts vary has no keys at all. The narrowing is applied by
the shared :meth:`~reviewlab.core._policy.Narrowing.narrow` or
:meth:`~reviewlab.core._policy.Narrowing.narrow_sec` (the hot loop), never re-implemented.
Why the cache is exact: docs/architecture.md, "The twin's bound cache".
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from reviewlab.core._policy import Bound, Policy, resolve_bound
from reviewlab.core._rules import is_clock_aware

_NO_KEY = None


class BoundResolver:
    """Resolves one simulated call's :class:`~reviewlab.core._policy.Bound` for a fixed policy
    (its ``timeouts`` and ``narrowing`` parts)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.narrowing = narrowing = policy.narrowing
        self.timeouts: Any = policy.timeouts
        self.exact_policy = is_clock_aware(self.timeouts)
        """Whether the timeouts part says how it varies (else every call is resolved afresh)."""
        # Unbounded narrowing never consults the policy; resolve_bound is already trivial there.
        self._unbounded = narrowing.mode == "unbounded"
        self._narrow_sec = narrowing.narrow_sec
        self._tool_sec: dict[Hashable, float] = {}
        """Validated tool timeout per bound key (what ``resolve_bound`` gives with no deadline)."""
        self._by_tool: dict[str, float] = {}
        """Fast path: the same for tools keyed by their name alone (neither clamped nor
        overridden)."""
        self.no_deadline: dict[str, tuple[float | None, str]] = {}
        """``bound_sec(tool, args, None)`` of each name-keyed tool asked so far: a hot loop may look
        a call
        with no inherited deadline up here (a dict read) and call :meth:`bound_sec` only on a
        miss."""
        self.resolved = 0
        """How many times the policy itself was consulted (for tests of the cache)."""

    def key(self, tool: str, args: Mapping[str, Any]) -> Hashable | None:
        """The bound key of a call, or ``None`` when every call must be resolved afresh."""
        if self._unbounded or not self.exact_policy:
            return _NO_KEY
        timeouts = self.timeouts
        if timeouts.reads_clock(None, tool, args):
            return _NO_KEY
        if timeouts.reads_args(tool):
            key = timeouts.args_key(args)
            try:
                hash(key)
            except TypeError:
                return _NO_KEY
            return (tool, key)
        return tool

    def _keyed_sec(self, tool: str, args: Mapping[str, Any]) -> float | None:
        """The cached tool timeout of a keyed call (resolved on first use), or ``None`` for a call
        with no key."""
        key = self.key(tool, args)
        if key is _NO_KEY:
            return None
        tool_sec = self._tool_sec.get(key)
        if tool_sec is None:
            self.resolved += 1
            static = resolve_bound(self.policy, None, tool, args, remaining_sec=None)
            assert (
                static.tool_timeout_sec is not None
            )  # only unbounded narrowing has none, and it has no keys
            tool_sec = self._tool_sec[key] = static.tool_timeout_sec
            if key == tool:
                self._by_tool[tool] = tool_sec
        return tool_sec

    def bound(self, tool: str, args: Mapping[str, Any], remaining_sec: float | None) -> Bound:
        """The call's bound with ``remaining_sec`` left before the inherited deadline (``None``: no
        deadline)."""
        tool_sec = self._by_tool.get(tool)
        if tool_sec is None:
            tool_sec = self._keyed_sec(tool, args)
            if tool_sec is None:
                self.resolved += 1
                return resolve_bound(self.policy, None, tool, args, remaining_sec=remaining_sec)
        return self.narrowing.narrow(tool_sec, remaining_sec)

    def bound_sec(
        self, tool: str, args: Mapping[str, Any], remaining_sec: float | None
    ) -> tuple[float | None, str]:
        """:meth:`bound` as ``(bound_sec, by)``, allocating no :class:`~reviewlab.Bound`
        for a keyed call.

        The twin's hot loop uses this: the pair comes from the shared
        :meth:`~reviewlab.core._policy.Narrowing.narrow_sec`, the very rule
        :meth:`~reviewlab.core._policy.Narrowing.narrow` wraps.
        """
        tool_sec = self._by_tool.get(tool)
        if tool_sec is None:
            tool_sec = self._keyed_sec(tool, args)
            if tool_sec is None:
                self.resolved += 1
                bound = resolve_bound(self.policy, None, tool, args, remaining_sec=remaining_sec)
                return bound.sec, bound.by
        pair = self._narrow_sec(tool_sec, remaining_sec)
        if remaining_sec is None and tool in self._by_tool:
            self.no_deadline[tool] = pair  # narrow_sec is pure: the same pair for every such call
        return pair

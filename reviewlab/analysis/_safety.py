"""What :func:`reviewlab.analysis._tune.recommend` may tighten: the rules that keep its answer
safe to act on (docs/metrics.md, "What tune may tighten").

Rarely seen tools keep the base timeout (fewer than :data:`DEFAULT_MIN_CALLS` calls); a
side-effecting or unknown tool is never given a timeout below its slowest completed call
(unless named in ``allow_abandoning``); and the calls a recommendation abandons beyond what the
loosest timeouts abandon stay within :data:`DEFAULT_MAX_ADDED_ABANDONED_RATE` of all calls and
:data:`DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE` of each tool's, at the upper bound over episodes
and in the tail model's prediction. Every rule is stated in the output
(:meth:`SafetyRules.describe`) and applied per tool (:func:`standings`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from reviewlab.analysis._budgets import BudgetPoint
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy

DEFAULT_MIN_CALLS: Final = 20
"""Fewer recorded calls than this and a tool keeps the base timeout."""
DEFAULT_MAX_ADDED_ABANDONED_RATE: Final = 0.01
"""Default budget: abandoned calls added over the loosest timeouts, share of dispatched calls."""
DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE: Final = 0.05
"""Default budget: the same, per tool, as a share of that tool's calls."""

STATUSES: Final = ("tunable", "kept_rare", "protected", "opted_in")
"""A tool's standing: read-only and tuned freely; kept at the base (too few calls);
side-effecting or unknown, held at or above its slowest completed call; side-effecting but
opted in by name."""


def _rate(name: str, value: object) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
    ):
        raise ParameterError(name, f"expected a rate in [0, 1], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SafetyRules:
    """The tuner's safety rules (see the module docstring); validated on construction."""

    min_calls: int = DEFAULT_MIN_CALLS
    allow_abandoning: tuple[str, ...] = field(default=())
    max_added_abandoned_rate: float | None = DEFAULT_MAX_ADDED_ABANDONED_RATE
    max_tool_added_abandoned_rate: float | None = DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE

    def __post_init__(self) -> None:
        calls = self.min_calls
        if isinstance(calls, bool) or not isinstance(calls, int) or calls < 1:
            raise ParameterError(
                "min_calls", f"expected a whole number of calls >= 1, got {calls!r}"
            )
        allow = self.allow_abandoning
        if isinstance(allow, str) or not all(isinstance(tool, str) for tool in allow):
            raise ParameterError(
                "allow_abandoning", f"expected a list of tool names, got {allow!r}"
            )
        object.__setattr__(self, "allow_abandoning", tuple(sorted(set(allow))))
        for name in ("max_added_abandoned_rate", "max_tool_added_abandoned_rate"):
            object.__setattr__(self, name, _rate(name, getattr(self, name)))

    def allows(self, point: BudgetPoint) -> bool:
        """Whether ``point``'s added abandonment keeps both budgets (upper bound and
        prediction)."""
        overall = self.max_added_abandoned_rate
        if overall is not None and max(point.added_abandoned[1:]) > overall + 1e-12:
            return False
        per_tool = self.max_tool_added_abandoned_rate
        return per_tool is None or all(
            max(figures[1:]) <= per_tool + 1e-12 for figures in point.tool_added_abandoned.values()
        )

    def describe(self, confidence: float) -> str:
        """The rules in words, as the output states them."""
        opted = ", ".join(self.allow_abandoning)
        overall = self.max_added_abandoned_rate
        per_tool = self.max_tool_added_abandoned_rate
        budget = (
            "no budget on added abandoned calls"
            if overall is None and per_tool is None
            else "abandoned calls added beyond the loosest timeouts' stay within "
            + " and ".join(
                part
                for part in (
                    f"{overall:.2%} of all dispatched calls" if overall is not None else "",
                    f"{per_tool:.2%} of each tool's calls" if per_tool is not None else "",
                )
                if part
            )
            + f" ({confidence:.0%} upper bound over episodes and tail prediction)"
        )
        return (
            f"a tool with fewer than {self.min_calls} recorded calls keeps the base timeout; "
            "a side-effecting tool, or one of unknown kind, is never tightened below its "
            "slowest completed call"
            + (f" (opted in to abandoning: {opted})" if opted else "")
            + f"; {budget}"
        )


class Standing(NamedTuple):
    """One tool under the rules: its kind, what was seen, and where its ladder is cut."""

    tool: str
    kind: str
    """``read_only``, ``side_effect`` or ``unknown`` (:meth:`Policy.kind_of`)."""
    calls: int
    slowest_completed_sec: float
    """The tool's slowest call that returned (0 when none did)."""
    status: str
    """One of :data:`STATUSES`."""
    floor_sec: float
    """No candidate below this (0: none; the tool's slowest completed call when protected)."""

    def reason(self, min_calls: int, base_sec: float) -> str:
        """The status in words, for the per-tool table."""
        if self.status == "kept_rare":
            return f"kept base {base_sec:g} s: {self.calls} call(s) < min_calls {min_calls}"
        if self.status == "protected":
            return (
                f"{self.kind.replace('_', '-')}: not below its slowest completed call "
                f"({self.slowest_completed_sec:.4g} s)"
            )
        if self.status == "opted_in":
            return f"{self.kind.replace('_', '-')}: opted in to abandoning completed calls"
        return "read-only: tuned"


def check_opted_in(allow_abandoning: Iterable[str], tools: Iterable[str]) -> None:
    """Refuse a name in ``allow_abandoning`` that the corpus never calls (a typo would protect
    nothing and say nothing): one line naming it and the closest tool names."""
    known = sorted(set(tools))
    for tool in allow_abandoning:
        if tool not in known:
            close = difflib.get_close_matches(tool, known, n=3, cutoff=0.6)
            hint = f" (did you mean {' or '.join(close)}?)" if close else ""
            raise ParameterError(
                "allow_abandoning",
                f"the corpus never calls {tool}{hint}; it calls {', '.join(known) or 'no tool'}",
            )


def standings(
    policy: Policy,
    calls: Mapping[str, int],
    slowest_completed: Mapping[str, float],
    rules: SafetyRules,
) -> dict[str, Standing]:
    """Each tool's :class:`Standing` under ``rules`` (kinds from ``policy``)."""
    result = {}
    for tool, count in calls.items():
        kind = policy.kind_of(tool)
        slowest = float(slowest_completed.get(tool, 0.0))
        if count < rules.min_calls:
            status, floor = "kept_rare", 0.0
        elif kind == "read_only":
            status, floor = "tunable", 0.0
        elif tool in rules.allow_abandoning:
            status, floor = "opted_in", 0.0
        else:
            status, floor = "protected", slowest
        result[tool] = Standing(tool, kind, int(count), slowest, status, floor)
    return result


def restrict_ladder(ladder: Sequence[float], standing: Standing, base_sec: float) -> list[float]:
    """The rungs of ``ladder`` the rules leave to ``standing``'s tool: only the base when it is
    rarely seen, else every rung at or above its floor (the loosest rung always stays)."""
    if standing.status == "kept_rare":
        return [base_sec]
    kept = [rung for rung in ladder if rung >= standing.floor_sec]
    return kept or [max(ladder)]

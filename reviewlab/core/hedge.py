"""Hedged calls: a second attempt of an idempotent tool after a delay.

A :class:`HedgeRule` says, for one tool, how long a call may go unanswered
before a second attempt starts (``after_sec``) and which share of that tool's
calls may be hedged at most (``max_share``). A policy carries its rules in a
``hedges`` mapping (tool name -> rule); :func:`hedge_rule` is the one way
engines ask for the rule of a tool, so a policy without hedges (or any
policy-like object) simply has none.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviewlab.core.narrowing import PolicyError

__all__ = ["HedgeRule", "hedge_rule"]


def _positive_finite(field_name: str, value: Any) -> float:
    """``value`` as a positive finite float, or a :class:`PolicyError` naming ``field_name``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyError(f"{field_name}: expected a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise PolicyError(f"{field_name}: must be finite, got {value!r}")
    if number <= 0:
        raise PolicyError(f"{field_name}: must be positive, got {value!r}")
    return number


@dataclass(frozen=True)
class HedgeRule:
    """When a call of one tool is hedged, and how often at most.

    ``after_sec`` (positive, finite): seconds without an answer after which a
    second attempt starts. ``max_share`` (in (0, 1]): the largest share of the
    tool's calls that may be hedged.
    """

    after_sec: float
    max_share: float = 0.05

    def __post_init__(self) -> None:
        object.__setattr__(self, "after_sec", _positive_finite("after_sec", self.after_sec))
        share = _positive_finite("max_share", self.max_share)
        if share > 1.0:
            raise PolicyError(f"max_share: must be at most 1, got {self.max_share!r}")
        object.__setattr__(self, "max_share", share)

    def to_dict(self) -> dict[str, float]:
        """The rule as a plain mapping (``after_sec``, ``max_share``)."""
        return {"after_sec": self.after_sec, "max_share": self.max_share}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "hedge") -> HedgeRule:
        """A rule from a mapping; unknown keys and bad values name ``where``."""
        if not isinstance(data, Mapping):
            raise PolicyError(f"{where}: expected a table, got {data!r}")
        unknown = sorted(set(data) - {"after_sec", "max_share"})
        if unknown:
            raise PolicyError(f"{where}: unknown field(s) {', '.join(unknown)}")
        if "after_sec" not in data:
            raise PolicyError(f"{where}.after_sec: missing")
        try:
            return cls(data["after_sec"], data.get("max_share", 0.05))
        except PolicyError as error:
            raise PolicyError(f"{where}.{error}") from None


def hedge_rule(policy: Any, tool: str) -> HedgeRule | None:
    """The hedge rule of ``tool`` under ``policy``, or ``None`` (not hedged).

    Reads ``policy.hedges`` (a mapping tool -> :class:`HedgeRule`); a policy
    without that attribute hedges nothing.
    """
    hedges = getattr(policy, "hedges", None) or {}
    rule = hedges.get(tool)
    if rule is None:
        return None
    if not isinstance(rule, HedgeRule):
        raise PolicyError(f"hedges.{tool}: expected a HedgeRule, got {rule!r}")
    return rule

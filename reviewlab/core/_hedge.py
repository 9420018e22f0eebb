"""Hedged calls: a second attempt of an idempotent tool after a delay.

A :class:`HedgeRule` says, for one tool, how long a call may go unanswered before a second
attempt starts (``after_sec``) and which share of that tool's calls may be hedged at most
(``max_share``); a policy carries its rules in its ``hedges`` part.

Lifecycle of a hedged call: dispatched at ``t`` with bound ``b``; if attempt 1 has not answered
by ``after_sec`` and the call is still waited on, attempt 2 starts at ``t + after_sec``; the
answer comes at ``w = min(d1, after_sec + d2)``, abandoned iff ``w`` is past the bound; the
losing attempt is a loose worker. :func:`hedge_fate` (one call) and :func:`hedge_fate_array`
(many) are that rule, every engine calls one of them. Which calls may hedge is planned once
per replay in corpus order (:func:`plan_budget`); live runs use the running form
(:class:`ShareBudget`). The rule in full: docs/semantics.md, "Hedged calls".
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np

from reviewlab.core._crediting import abandons, abandons_array
from reviewlab.core._narrowing import PolicyError


def _positive_finite(field_name: str, value: Any) -> float:
    """``value`` as a positive finite float, or a :class:`PolicyError` naming ``field_name``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyError(field_name, f"expected a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise PolicyError(field_name, f"must be finite, got {value!r}")
    if number <= 0:
        raise PolicyError(field_name, f"must be positive, got {value!r}")
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
            raise PolicyError("max_share", f"must be at most 1, got {self.max_share!r}")
        object.__setattr__(self, "max_share", share)

    def to_dict(self) -> dict[str, float]:
        """The rule as a plain mapping (``after_sec``, ``max_share``)."""
        return {"after_sec": self.after_sec, "max_share": self.max_share}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "hedge") -> HedgeRule:
        """A rule from a mapping; unknown keys and bad values name ``where``."""
        if not isinstance(data, Mapping):
            raise PolicyError(where, f"expected a table, got {data!r}")
        unknown = sorted(set(data) - {"after_sec", "max_share"})
        if unknown:
            raise PolicyError(where, f"unknown field(s) {', '.join(unknown)}")
        if "after_sec" not in data:
            raise PolicyError(f"{where}.after_sec", "missing")
        try:
            return cls(data["after_sec"], data.get("max_share", 0.05))
        except PolicyError as error:
            raise error.within(where) from None


def plan_budget(
    tools: Sequence[str], first_sec: Sequence[float] | np.ndarray, rules: Mapping[str, HedgeRule]
) -> np.ndarray:
    """Which calls may hedge, decided statically in the given (corpus) order.

    ``tools[i]`` is call ``i``'s tool and ``first_sec[i]`` when its first attempt
    answers (``inf``: never). Per tool with a rule, calls are counted in order;
    call ``i`` may hedge when its first attempt would not answer by
    ``after_sec`` and ``hedged so far + 1 <= max_share x calls so far`` (call
    ``i`` counted). A planned hedge uses its share of the budget even if its
    bound later leaves no time for it. Every engine uses this one plan, so
    the budget cannot depend on the engine or on timing.
    """
    first = np.asarray(first_sec, dtype=float)
    if len(tools) != first.size:
        raise ValueError("plan_budget: tools and first_sec must have the same length")
    planned = np.zeros(first.size, dtype=bool)
    if not rules:
        return planned
    seen: dict[str, int] = {}
    hedged: dict[str, int] = {}
    for index, tool in enumerate(tools):
        rule = rules.get(tool)
        if rule is None:
            continue
        calls = seen[tool] = seen.get(tool, 0) + 1
        if not first[index] > rule.after_sec:
            continue
        taken = hedged.get(tool, 0)
        if taken + 1 <= rule.max_share * calls:
            hedged[tool] = taken + 1
            planned[index] = True
    return planned


class HedgeFate(NamedTuple):
    """What happens to one call that may hedge (times in seconds from its dispatch).

    ``hedged``: the second attempt started. ``answer_sec``: when the first
    answer came (``inf``: never). ``abandoned``: the bound passed first.
    ``wait_sec``: how long the caller waited (the bound when abandoned).
    ``zombies_sec``: how long each attempt ran on after control came back (0
    for the winner or an attempt never started, ``inf`` for one that never
    returns); each loose interval starts at ``wait_sec``.
    """

    hedged: bool
    answer_sec: float
    abandoned: bool
    wait_sec: float
    zombies_sec: tuple[float, float]

    @property
    def zombie_sec(self) -> float:
        """The loose seconds of both attempts together (``inf`` if one never returns)."""
        return self.zombies_sec[0] + self.zombies_sec[1]


def hedge_fate(
    first_sec: float, second_sec: float, after_sec: float, bound_sec: float | None
) -> HedgeFate:
    """The fate of one call that may hedge.

    Attempt 1 would answer after ``first_sec``; attempt 2, if started at
    ``after_sec``, ``second_sec`` later (either ``inf``: never). ``bound_sec``
    ``None`` is unbounded. The second attempt starts only if the first has not
    answered by ``after_sec`` (``first_sec > after_sec``) and the call is still
    waited on then (unbounded, or ``bound_sec > after_sec``).
    """
    hedged = first_sec > after_sec and (bound_sec is None or bound_sec > after_sec)
    second_end = after_sec + second_sec if hedged else math.nan
    answer = min(first_sec, second_end) if hedged else first_sec
    answered = math.isfinite(answer)
    if abandons(answer, answered, bound_sec):
        assert bound_sec is not None
        z1 = first_sec - bound_sec
        z2 = second_end - bound_sec if hedged else 0.0
        return HedgeFate(hedged, answer, True, bound_sec, (z1, z2))
    if not answered:
        # Unbounded and nothing ever answers: the caller waits forever, nobody is loose.
        return HedgeFate(hedged, answer, False, math.inf, (0.0, 0.0))
    if not hedged:
        return HedgeFate(False, answer, False, answer, (0.0, 0.0))
    # The loser runs on from the answer to its own end; a tie goes to the first attempt.
    if first_sec <= second_end:
        return HedgeFate(True, answer, False, answer, (0.0, second_end - answer))
    return HedgeFate(True, answer, False, answer, (first_sec - answer, 0.0))


def hedge_fate_array(
    first_sec: np.ndarray, second_sec: np.ndarray, after_sec: np.ndarray, bound_sec: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`hedge_fate` element-wise: ``(hedged, answer_sec, abandoned, wait_sec, zombie1_sec,
    zombie2_sec)``; a NaN ``bound_sec`` is unbounded, a NaN ``after_sec`` is a call that may not
    hedge."""
    first = np.asarray(first_sec, dtype=float)
    second = np.asarray(second_sec, dtype=float)
    after = np.asarray(after_sec, dtype=float)
    bound = np.asarray(bound_sec, dtype=float)
    unbounded = np.isnan(bound)
    # NaN comparisons are False: a call without a rule (NaN after) never hedges.
    hedged = (first > after) & (unbounded | (bound > after))
    with np.errstate(invalid="ignore"):
        second_end = np.where(hedged, after + second, np.nan)
    answer = np.where(hedged, np.minimum(first, second_end), first)
    answered = np.isfinite(answer)
    abandoned = abandons_array(answer, answered, bound)
    wait = np.where(abandoned, bound, np.where(answered, answer, np.inf))
    with np.errstate(invalid="ignore"):
        first_wins = first <= second_end
        z1 = np.where(abandoned, first - bound, np.where(hedged & ~first_wins, first - answer, 0.0))
        z2 = np.where(
            abandoned & hedged,
            second_end - bound,
            np.where(hedged & first_wins, second_end - answer, 0.0),
        )
    idle = ~answered & ~abandoned
    z1 = np.where(idle, 0.0, z1)
    z2 = np.where(idle, 0.0, z2)
    return hedged, answer, abandoned, wait, z1, z2


class HedgeAdmission(Protocol):
    """What the real executor asks about hedging (:class:`ShareBudget` for live runs; the real
    replay engine injects its static plan).

    ``args``/``kwargs`` are those of the tool call, so a plan can tell calls apart.
    """

    def rule_for(self, tool: str) -> HedgeRule | None:
        """The hedge rule of ``tool``, or ``None`` (never hedged)."""
        ...

    def note_call(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        """A call of a hedged ``tool`` was dispatched."""
        ...

    def admit(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
        """The call went ``after_sec`` unanswered and is still waited on: may it hedge now?"""
        ...


class ShareBudget:
    """The running form of the hedge budget, for live runs (which cannot plan ahead).

    :meth:`note_call` counts every dispatched call of a hedged tool; :meth:`admit`
    is asked once the call has gone ``after_sec`` without an answer and says yes
    when ``hedged so far + 1 <= max_share x calls so far``. Thread-safe.
    """

    def __init__(self, rules: Mapping[str, HedgeRule]) -> None:
        self.rules = dict(rules)
        self.calls: dict[str, int] = {}
        self.hedges: dict[str, int] = {}
        self._lock = threading.Lock()

    def rule_for(self, tool: str) -> HedgeRule | None:
        """The hedge rule of ``tool`` (``None``: never hedged)."""
        return self.rules.get(tool)

    def note_call(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        """Count one dispatched call of ``tool``."""
        if tool in self.rules:
            with self._lock:
                self.calls[tool] = self.calls.get(tool, 0) + 1

    def admit(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
        """Whether a call of ``tool`` that has gone ``after_sec`` unanswered may hedge now."""
        rule = self.rules.get(tool)
        if rule is None:
            return False
        with self._lock:
            taken = self.hedges.get(tool, 0)
            if taken + 1 <= rule.max_share * self.calls.get(tool, 0):
                self.hedges[tool] = taken + 1
                return True
            return False

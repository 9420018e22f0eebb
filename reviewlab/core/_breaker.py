"""The breaker: a tool that keeps being abandoned is withheld for a cool-down.

A :class:`BreakerRule` says when a tool's breaker trips and for how long the tool is then
withheld; a :class:`BreakerState` applies it to one run of calls (one episode, or one reviewer
slot), and is the one piece of decision code every engine asks.

Lifecycle of one tool: closed ──(``consecutive`` abandonments among its last ``window``
dispatched calls)──> open ──(``cooldown_rounds`` more model rounds, or ``cooldown_sec``
seconds)──> closed. Withheld calls neither count nor reset the count; a trip clears the
tool's history. Rounds and times are the caller's (``round``: the episode's 1-based model
round; ``now``: seconds on one clock); a slot-scoped state carries its round count across the
slot's episodes (:meth:`BreakerState.start_episode`, :meth:`BreakerState.end_episode`).
The rule in full: docs/semantics.md, "The breaker".
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviewlab.core._narrowing import PolicyError
from reviewlab.core._vocab import BREAKER_SCOPES, BreakerScope

BREAKER_FIELDS = ("consecutive", "window", "cooldown_rounds", "cooldown_sec", "scope")
"""The fields of a :class:`BreakerRule`, in the order they are written."""


def _count(field_name: str, value: Any, *, minimum: int) -> int:
    """``value`` as an int of at least ``minimum``, or a :class:`PolicyError` naming the field."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyError(field_name, f"expected a whole number, got {value!r}")
    if value < minimum:
        raise PolicyError(field_name, f"must be at least {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class BreakerRule:
    """When a tool's breaker trips, how long it stays open, and where its state lives.

    ``consecutive`` (>= 1): abandonments that trip it; with ``window`` (>=
    ``consecutive``) they may be spread over the tool's last ``window``
    dispatched calls, else they must be in a row. Exactly one of
    ``cooldown_rounds`` (>= 1 model rounds) and ``cooldown_sec`` (positive,
    finite seconds) says how long the tool is withheld; give
    ``cooldown_rounds=None`` with ``cooldown_sec``. ``scope``: ``"episode"``
    (each episode starts closed) or ``"slot"`` (count and cool-down carry
    across a reviewer slot's episodes in start order).
    """

    consecutive: int | None = 3
    window: int | None = None
    cooldown_rounds: int | None = 2
    cooldown_sec: float | None = None
    scope: BreakerScope = "episode"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.consecutive is None:
            raise PolicyError("consecutive", "required (the abandonments that trip the breaker)")
        set_(self, "consecutive", _count("consecutive", self.consecutive, minimum=1))
        if self.window is not None:
            set_(self, "window", _count("window", self.window, minimum=self.consecutive))
        if (self.cooldown_rounds is None) == (self.cooldown_sec is None):
            raise PolicyError(
                "cooldown_rounds, cooldown_sec",
                "give exactly one (cooldown_rounds=None "
                f"with cooldown_sec), got {self.cooldown_rounds!r} and {self.cooldown_sec!r}",
            )
        if self.cooldown_rounds is not None:
            set_(
                self, "cooldown_rounds", _count("cooldown_rounds", self.cooldown_rounds, minimum=1)
            )
        else:
            set_(self, "cooldown_sec", _cooldown_sec(self.cooldown_sec))
        if self.scope not in BREAKER_SCOPES:
            raise PolicyError(
                "scope", f"expected one of {', '.join(BREAKER_SCOPES)}, got {self.scope!r}"
            )

    @property
    def span(self) -> int:
        """How many of a tool's last dispatched calls the trip condition looks at."""
        assert self.consecutive is not None
        return self.window if self.window is not None else self.consecutive

    @property
    def label(self) -> str:
        """A short human name, e.g. ``3x/2r/slot`` or ``3of10/30s/episode``."""
        count = (
            f"{self.consecutive}x" if self.window is None else f"{self.consecutive}of{self.window}"
        )
        cool = (
            f"{self.cooldown_rounds}r"
            if self.cooldown_rounds is not None
            else f"{self.cooldown_sec:g}s"
        )
        return f"{count}/{cool}/{self.scope}"

    @property
    def cooldown_label(self) -> str:
        """The cool-down in words, as the host text says it: ``2 model round(s)`` or ``30.0s``."""
        if self.cooldown_rounds is not None:
            return f"{self.cooldown_rounds} model round(s)"
        return f"{self.cooldown_sec}s"

    def to_dict(self) -> dict[str, Any]:
        """The rule as a plain mapping (TOML-ready: unset fields are left out)."""
        data = {name: getattr(self, name) for name in BREAKER_FIELDS}
        return {name: value for name, value in data.items() if value is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "breaker") -> BreakerRule:
        """A rule from :meth:`to_dict` output; unknown keys and bad values name ``where``.

        A missing ``cooldown_rounds`` is ``None`` when ``cooldown_sec`` is given (else 2).
        """
        if not isinstance(data, Mapping):
            raise PolicyError(where, f"expected a table, got {data!r}")
        unknown = sorted(set(data) - set(BREAKER_FIELDS))
        if unknown:
            raise PolicyError(
                where, f"unknown field(s) {', '.join(unknown)}; known: {', '.join(BREAKER_FIELDS)}"
            )
        fields = dict(data)
        if "cooldown_sec" in fields and "cooldown_rounds" not in fields:
            fields["cooldown_rounds"] = None
        try:
            return cls(**fields)
        except PolicyError as error:
            raise error.within(where) from None


def _cooldown_sec(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyError("cooldown_sec", f"expected a number of seconds, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise PolicyError("cooldown_sec", f"must be positive and finite, got {value!r}")
    return number


class BreakerState:
    """One breaker's state over a run of calls: an episode, or a slot's episodes in start order.

    Engines ask :meth:`withheld` before dispatching a call and tell :meth:`record` how each
    dispatched call ended; see the module docstring for the lifecycle. ``trips`` counts the
    times a breaker opened. A state is not locked: one episode at a time uses it (a slot runs
    its episodes one after another).
    """

    def __init__(self, rule: BreakerRule) -> None:
        if not isinstance(rule, BreakerRule):
            raise TypeError(f"rule: expected a BreakerRule, got {rule!r}")
        self.rule = rule
        self.trips = 0
        self._history: dict[str, deque[bool]] = {}
        self._open_through_round: dict[str, int] = {}
        self._open_sec: dict[str, tuple[float, float]] = {}
        self._base_round = 0
        self._slot_rounds = 0

    def start_episode(self) -> None:
        """A new episode begins: its round 1 is the round after the slot's last one."""
        self._base_round = self._slot_rounds

    def end_episode(self, rounds: int) -> None:
        """The episode just run used ``rounds`` model rounds (its sends, the last one included)."""
        self._slot_rounds = self._base_round + max(0, int(rounds))

    def withheld(self, tool: str, round: int, now: float) -> bool:
        """Whether a call of ``tool`` dispatched in episode round ``round`` at ``now`` is
        withheld."""
        through = self._open_through_round.get(tool)
        if through is not None and self._base_round + round <= through:
            return True
        window = self._open_sec.get(tool)
        return window is not None and window[0] <= now < window[1]

    def record(self, tool: str, abandoned: bool, round: int, now: float) -> bool:
        """Count a dispatched call of ``tool`` that settled at ``now``; True when it tripped."""
        rule = self.rule
        history = self._history.get(tool)
        if history is None:
            history = self._history[tool] = deque(maxlen=rule.span)
        history.append(bool(abandoned))
        assert rule.consecutive is not None
        if sum(history) < rule.consecutive:
            return False
        history.clear()
        self.trips += 1
        if rule.cooldown_rounds is not None:
            self._open_through_round[tool] = self._base_round + round + rule.cooldown_rounds
        else:
            assert rule.cooldown_sec is not None
            self._open_sec[tool] = (now, now + rule.cooldown_sec)
        return True

"""Deadline narrowing and the bound of one call.

:class:`Narrowing` says how the deadline a reviewer inherited narrows a tool's
own timeout; :meth:`Narrowing.narrow_sec` is that rule on scalars and
:meth:`Narrowing.narrow` returns it as the :class:`Bound` of one call,
which remembers which term fired (``tool_timeout``, ``deadline`` or, under the
pre-fix behaviour, ``unbounded``). :meth:`Narrowing.narrow_array` is the same
rule element-wise, for the vectorized replay. :class:`PolicyError` is the error
for any invalid policy or narrowing value; its message names the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from reviewlab.core._errors import ParameterError
from reviewlab.core._vocab import NARROWING_MODES, BoundBy, NarrowingMode

CLAMP_JITTER_SEC = 0.25
"""The clamp's allowance, in the policy's seconds: a clamp window this close below a whole second
counts as that second (docs/semantics.md, "Ties on the real clock"). It is not a tie rule for
labels: where time is exact a window shorter than the tool timeout is the deadline's."""


class PolicyError(ParameterError):
    """A policy or narrowing value is invalid; ``parameter`` names the field (a dotted path
    inside a table: ``narrowing.fraction``, ``breaker.cooldown_sec``) or the file it was read
    from."""


def check_seconds(field_name: str, value: Any, *, allow_zero: bool = False) -> float:
    """Validate a number of seconds, naming ``field_name`` in the error."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyError(field_name, f"expected a number of seconds, got {value!r}")
    number = float(value)
    if math.isnan(number) or math.isinf(number):
        raise PolicyError(field_name, f"must be finite, got {value!r}")
    if number < 0 or (number == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise PolicyError(field_name, f"must be {kind}, got {value!r}")
    return number


@dataclass(frozen=True)
class Bound:
    """The bound of one dispatched call and the term that set it.

    ``sec`` is ``None`` only under :meth:`Narrowing.unbounded` (``by ==
    "unbounded"``). ``by`` is ``"deadline"`` exactly when the narrowed deadline is
    shorter than the tool timeout (by more than a tie tolerance, which only the real engine
    passes: its clock's measured resolution; ``sec`` is still the window).
    """

    sec: float | None
    by: BoundBy
    tool_timeout_sec: float | None
    remaining_sec: float | None = None

    @property
    def bounded(self) -> bool:
        """Whether the call has a bound at all (false only under the pre-fix policy)."""
        return self.sec is not None


@dataclass(frozen=True)
class Narrowing:
    """How the inherited deadline narrows a tool's timeout.

    * ``inherit`` (default): ``min(tool, max(0, remaining))``, no floor.
    * ``none``: the deadline is ignored; the tool timeout alone bounds the call.
    * ``reserve``: ``min(tool, max(0, remaining - reserve_sec))``, keeping time to finish.
    * ``fraction``: ``min(tool, max(0, remaining * fraction))``.
    * ``unbounded``: the pre-fix behaviour; no bound at all, the clock is looked
      at only before a model send.
    """

    mode: NarrowingMode = "inherit"
    reserve_sec: float = 0.0
    fraction: float = 1.0

    def __post_init__(self) -> None:
        if self.mode not in NARROWING_MODES:
            raise PolicyError(
                "narrowing.mode", f"expected one of {', '.join(NARROWING_MODES)}, got {self.mode!r}"
            )
        object.__setattr__(
            self,
            "reserve_sec",
            check_seconds("narrowing.reserve_sec", self.reserve_sec, allow_zero=True),
        )
        fraction = check_seconds("narrowing.fraction", self.fraction)
        if fraction > 1.0:
            raise PolicyError("narrowing.fraction", f"must be in (0, 1], got {self.fraction!r}")
        object.__setattr__(self, "fraction", fraction)

    @classmethod
    def unbounded(cls) -> Narrowing:
        """The pre-fix behaviour: calls are never bounded."""
        return cls(mode="unbounded")

    @property
    def label(self) -> str:
        """A short name for tables and charts: ``inherit``, ``reserve-30s``, ``fraction-0.5``…"""
        if self.mode == "reserve":
            return f"reserve-{self.reserve_sec:g}s"
        if self.mode == "fraction":
            return f"fraction-{self.fraction:g}"
        return self.mode

    def narrow_sec(
        self, tool_timeout_sec: float, remaining_sec: float | None, *, tie_sec: float = 0.0
    ) -> tuple[float | None, BoundBy]:
        """THE narrowing rule, as scalars: ``(bound_sec, by)`` for a call (``None`` seconds:
        unbounded).

        ``by`` is ``"deadline"`` when the window is shorter than the tool timeout by more than
        ``tie_sec``: 0 (exact) wherever time is exact; the real engine alone reads a window
        within its clock's resolution as a tie (docs/semantics.md, "Ties on the real clock").
        :meth:`narrow` wraps this in a :class:`Bound`; hot loops (the twin) call
        it directly to skip allocating one object per call.
        """
        mode = self.mode
        if mode == "unbounded":
            return None, "unbounded"
        if remaining_sec is None or mode == "none":
            return tool_timeout_sec, "tool_timeout"
        if mode == "reserve":
            window = max(0.0, remaining_sec - self.reserve_sec)
        elif mode == "fraction":
            window = max(0.0, remaining_sec * self.fraction)
        else:
            window = max(0.0, remaining_sec)
        if window >= tool_timeout_sec:
            return tool_timeout_sec, "tool_timeout"
        # Only a tolerance the caller measured makes a shorter window a tie.
        tie = window >= tool_timeout_sec - tie_sec
        return window, "tool_timeout" if tie else "deadline"

    def narrow(
        self, tool_timeout_sec: float, remaining_sec: float | None, *, tie_sec: float = 0.0
    ) -> Bound:
        """Fold the time remaining before the inherited deadline into a tool timeout
        (:meth:`narrow_sec`)."""
        sec, by = self.narrow_sec(tool_timeout_sec, remaining_sec, tie_sec=tie_sec)
        return Bound(sec, by, None if by == "unbounded" else tool_timeout_sec, remaining_sec)

    def narrow_array(
        self, tool_timeout_sec: np.ndarray, remaining_sec: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`narrow` element-wise, where time is exact: ``(bound_sec, by_deadline)``.

        A NaN in ``remaining_sec`` stands for ``None`` (no inherited deadline).
        Under ``unbounded`` every bound is NaN (``None``) and ``by_deadline`` is
        all False; otherwise ``by_deadline`` marks the bounds the deadline set.
        """
        tool = np.asarray(tool_timeout_sec, dtype=float)
        rem = np.asarray(remaining_sec, dtype=float)
        if self.mode == "unbounded":
            return np.full(tool.shape, np.nan), np.zeros(tool.shape, dtype=bool)
        if self.mode == "none":
            return tool.copy(), np.zeros(tool.shape, dtype=bool)
        if self.mode == "reserve":
            window = np.maximum(0.0, rem - self.reserve_sec)
        elif self.mode == "fraction":
            window = np.maximum(0.0, rem * self.fraction)
        else:
            window = np.maximum(0.0, rem)
        shorter = window < tool  # NaN (no deadline) is never shorter
        return np.where(shorter, window, tool), shorter

    def to_dict(self) -> dict[str, Any]:
        """The ``[narrowing]`` table of a policy file."""
        return {"mode": self.mode, "reserve_sec": self.reserve_sec, "fraction": self.fraction}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "narrowing") -> Narrowing:
        """A narrowing from a ``[narrowing]`` table; an error names ``where`` and the bad field."""
        if not isinstance(data, Mapping):
            raise PolicyError(where, f"expected a table, got {data!r}")
        unknown = sorted(set(data) - {"mode", "reserve_sec", "fraction"})
        if unknown:
            raise PolicyError(
                where, f"unknown field(s) {', '.join(unknown)}; known: fraction, mode, reserve_sec"
            )
        return cls(**dict(data))

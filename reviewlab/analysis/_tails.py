"""What a timeout would cost on episodes the corpus does not hold: per-tool tails and exposure.

A timeout just above a tool's slowest recorded call costs nothing on the recording, yet the
next corpus will hold a slower call. :class:`LossModel` predicts the cost for a corpus like
the recorded one from, per tool, a survival estimate (Kaplan–Meier up to the slowest calls,
then the larger of it and a Pareto tail fitted by Hill's estimator) and an exposure (the lines
a call's abandonment would cost: its own and every later read's of its episode).

Invariants: calls that never returned keep the survival above their share; the predictions are
expectations that err on the side of caution; calls lost under every bound are in every
prediction, so the tuner uses the difference between two policies'. The formulas:
docs/metrics.md, "The tail model".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple, Protocol

import numpy as np

from reviewlab.engines._corpus import CallObservations, open_corpus
from reviewlab.recording._schema import Episode

_MIN_TAIL = 10
_TAIL_SHARE = 0.05
_MIN_FIT = 20


class Survival(Protocol):
    """A survival function ``S(t) = P(T > t)``."""

    def survival(self, t: float) -> float:
        """The share of calls lasting longer than ``t`` seconds."""
        ...


@dataclass(frozen=True)
class ToolTail:
    """One tool's survival model and exposure (see the module docstring)."""

    estimate: Survival
    """The Kaplan–Meier estimate of the tool's durations (censoring-aware; in the tuner, its
    values at the profiled points, :class:`~reviewlab.analysis._profiles.SurvivalAt`)."""
    threshold_sec: float
    """``u``: beyond it the Pareto tail applies (``inf``: no fitted tail)."""
    alpha: float
    """The Hill estimate of the tail index (``nan`` without a fitted tail)."""
    slowest_sec: float
    """The tool's slowest completed call (0 when none completed)."""
    calls: int
    """How many calls of the tool the corpus holds."""
    exposure_lines: float
    """Lines the abandonment of each of its calls would cost, summed over its calls."""

    def survival(self, t: float) -> float:
        """``S(t)``: the modelled share of the tool's calls that last longer than ``t`` seconds."""
        km = self.estimate.survival(t)
        if t <= self.threshold_sec:
            if math.isinf(self.threshold_sec) and t >= self.slowest_sec:
                return max(km, 1.0 / (self.calls + 1))
            return km
        tail = self.estimate.survival(self.threshold_sec) * (t / self.threshold_sec) ** (
            -self.alpha
        )
        return max(km, tail)


class LossModel:
    """Per-tool tails and exposures of one corpus (episodes, or the recorded observations of a
    :class:`~reviewlab.engines._corpus.Corpus`); predicts a policy's losses on unseen episodes."""

    def __init__(
        self, episodes: Sequence[Episode] | CallObservations, *, confidence: float = 0.95
    ) -> None:
        observed = (
            episodes
            if isinstance(episodes, CallObservations)
            else open_corpus(episodes).observations()
        )
        estimates, _ = observed.estimates_by_tool()
        exposure = observed.exposure_lines()
        self.requested_lines = int(observed.requested_lines.sum())
        self.calls = int(observed.tool_code.size)
        z = NormalDist().inv_cdf(confidence) if confidence > 0.5 else 0.0
        self.tools: dict[str, ToolTail] = {}
        for tool, estimate in estimates.items():
            mine = observed.of_tool(tool)
            completed = observed.duration_sec[mine][observed.completed[mine]]
            # Exposure: each call's own lines plus every later read's (exact integer sums).
            lines = float(exposure[mine].sum())
            self.tools[tool] = tail_of(estimate, hill(completed), int(mine.size), lines, z)

    @classmethod
    def of_tails(cls, tails: Mapping[str, ToolTail], requested_lines: int, calls: int) -> LossModel:
        """A model from tails fitted elsewhere (the tuner's profiles, in-process or on a
        cluster's workers): ``requested_lines`` and ``calls`` are the corpus's totals."""
        model = cls.__new__(cls)
        model.requested_lines = int(requested_lines)
        model.calls = int(calls)
        model.tools = dict(tails)
        return model

    def timeout_coverage_loss(self, timeouts: Mapping[str, float]) -> float:
        """Predicted timeout coverage-loss rate of per-tool
        ``timeouts`` (tools absent: unbounded)."""
        if self.requested_lines <= 0:
            return 0.0
        lost = sum(
            self.tools[tool].survival(t) * self.tools[tool].exposure_lines
            for tool, t in timeouts.items()
            if tool in self.tools
        )
        return lost / self.requested_lines

    def abandoned_rate(self, timeouts: Mapping[str, float]) -> float:
        """Predicted abandoned-call rate of per-tool ``timeouts`` (tools absent: unbounded)."""
        if self.calls <= 0:
            return 0.0
        abandoned = sum(
            self.tools[tool].survival(t) * self.tools[tool].calls
            for tool, t in timeouts.items()
            if tool in self.tools
        )
        return abandoned / self.calls


class Hill(NamedTuple):
    """What Hill's estimator reads of one tool's completed durations."""

    slowest_sec: float
    """The slowest completed call (0 when none completed)."""
    threshold_sec: float
    """``u``, the ``(m+1)``-th slowest (``inf``: too few calls, or no spread, to fit a tail)."""
    m: int
    """How many of the slowest calls the fit reads."""
    spread: float
    """``Σ log(x_i / u)`` over those ``m`` calls."""


def hill(completed: Sequence[float] | np.ndarray) -> Hill:
    """The Hill statistics of the slowest completed calls (none below :data:`_MIN_FIT` calls);
    a pure function of the multiset of durations."""
    durations = np.sort(np.asarray(completed, dtype=float))[::-1]
    slowest = float(durations[0]) if durations.size else 0.0
    m = max(_MIN_TAIL, math.ceil(_TAIL_SHARE * durations.size))
    if durations.size < _MIN_FIT or durations.size <= m:
        return Hill(slowest, math.inf, m, math.nan)
    threshold = float(durations[m])
    logs = np.log(durations[:m] / threshold) if threshold > 0 else np.zeros(m)
    spread = float(logs.sum())
    if threshold <= 0 or spread <= 0:
        return Hill(slowest, math.inf, m, math.nan)
    return Hill(slowest, threshold, m, spread)


def tail_of(estimate: Survival, fit: Hill, calls: int, exposure: float, z: float) -> ToolTail:
    """The :class:`ToolTail` of a Hill fit.

    The index is the lower confidence limit of the Hill estimate, ``α̂·(1 − z/√m)``
    (its standard error is ``α̂/√m``), so the tail errs on the heavy side; never
    below a quarter of ``α̂``.
    """
    if math.isinf(fit.threshold_sec):
        return ToolTail(estimate, math.inf, math.nan, fit.slowest_sec, calls, exposure)
    alpha = fit.m / fit.spread
    return ToolTail(
        estimate,
        fit.threshold_sec,
        alpha * max(0.25, 1.0 - z / math.sqrt(fit.m)),
        fit.slowest_sec,
        calls,
        exposure,
    )

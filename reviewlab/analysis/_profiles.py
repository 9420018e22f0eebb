"""What the tuner knows of one tool's recorded durations: a fixed-size :class:`DurationProfile`.

:func:`profile_tool` reduces a tool's recorded calls (durations, completed flags, exposure) to
what :func:`~reviewlab.analysis._tune.recommend` reads: counts, the Kaplan–Meier quantiles its
ladder and its explanation show, the ladder of candidate timeouts, the survival at every rung
(:class:`SurvivalAt`), the Pareto tail and, under a guarantee, the certificate. In-process the
tuner profiles each tool from the corpus's observations; on a cluster one worker profiles each
tool from that tool's columns, so the client receives only profiles, whatever the corpus's
size (docs/cluster.md, "Tuning on a cluster").

Invariant: a profile is a pure function of the tool's multiset of observations (the estimate
and the fit sort what they read), so both places give the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from reviewlab.analysis._certify import Certificate, certify
from reviewlab.analysis._tails import ToolTail, hill, tail_of
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines._censoring import KaplanMeier

LADDER_QUANTILES = (0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995)
"""The survival quantiles each tool's candidate timeouts are read from."""
EXPLAIN_QUANTILES = (0.5, 0.9, 0.95, 0.99, 0.995, 0.999)
"""The duration quantiles the tuner's per-tool table shows."""
_SERIES = tuple(m * 10.0**e for e in range(-1, 5) for m in (1.0, 2.0, 5.0))
"""Round timeouts (0.1 s … 50,000 s) that fill a ladder between its quantile rungs and the top."""


@dataclass(frozen=True)
class SurvivalAt:
    """A survival function known at a fixed set of points (what a profile carries in place of
    the whole estimate). Asking for another point is a ``ValueError`` naming it."""

    tool: str
    points: Mapping[float, float]

    def survival(self, t: float) -> float:
        """``S(t)`` at one of the profiled points."""
        try:
            return self.points[float(t)]
        except KeyError:
            raise ValueError(
                f"{self.tool}: the survival at {t!r} s was not profiled (profiled: the ladder's "
                "rungs and the tail's threshold)"
            ) from None


def km_quantile(estimate: KaplanMeier, q: float) -> float:
    """The ``q``-quantile of a Kaplan–Meier estimate: the first event time with ``S(t) <= 1 - q``.

    ``inf`` when censoring leaves the estimate above ``1 - q`` (the quantile lies
    beyond what was observed).
    """
    if not 0.0 < q < 1.0:
        raise ParameterError("q", f"expected a probability in (0, 1), got {q!r}")
    hit = int(np.searchsorted(-estimate.survival_after, -(1.0 - q), side="left"))
    return float(estimate.event_times[hit]) if hit < estimate.event_times.size else math.inf


def nice(seconds: float) -> float:
    """Round a candidate timeout up to two significant digits (0.1 s at least)."""
    if seconds <= 0.1:
        return 0.1
    step = 10.0 ** (math.floor(math.log10(seconds)) - 1)
    return float(round(math.ceil(seconds / step - 1e-9) * step, 6))


def ladder(
    quantiles: Mapping[float, float], longest_completed: float, base_sec: float
) -> list[float]:
    """A tool's candidate timeouts, ascending; the last is the loosest.

    The rungs at :data:`LADDER_QUANTILES` (``quantiles``), the tool's slowest completed call
    rounded up, and the round values of :data:`_SERIES` between the median and the loosest rung
    (so a step looser than the slowest call seen never jumps straight to the base).
    """
    slowest = nice(longest_completed * 1.01) if longest_completed > 0 else 0.1
    loosest = max(base_sec, slowest)
    rungs = {loosest, slowest}
    for q in LADDER_QUANTILES:
        quantile = quantiles[q]
        if math.isfinite(quantile) and nice(quantile) < loosest:
            rungs.add(nice(quantile))
    median = min(rungs)
    rungs.update(value for value in _SERIES if median < value < loosest)
    if base_sec < loosest:
        rungs.add(base_sec)
    return sorted(rungs)


@dataclass(frozen=True)
class DurationProfile:
    """One tool's recorded durations as the tuner reads them (see the module docstring)."""

    tool: str
    observations: int
    """Recorded calls of the tool."""
    events: int
    """Of them, calls that returned."""
    longest_completed_sec: float
    """Its slowest call that returned (0 when none did)."""
    quantiles: Mapping[float, float]
    """Kaplan–Meier quantiles at :data:`LADDER_QUANTILES` and :data:`EXPLAIN_QUANTILES`."""
    ladder: tuple[float, ...]
    """Its candidate timeouts, ascending (:func:`ladder`; the base's loosest last)."""
    survival: SurvivalAt
    """The Kaplan–Meier survival at every rung, the certified rung and the tail threshold."""
    tail: ToolTail
    """Its survival model for unseen episodes (the Hill fit of its slowest calls, its exposure),
    reading :attr:`survival`."""
    certificate: Certificate | None
    """Under a guarantee, its certificate (``None`` otherwise)."""


@dataclass(frozen=True)
class ProfileSettings:
    """How one tool is profiled: the top of its ladder, the tail's confidence factor and, under
    a guarantee, the share to certify and its confidence."""

    base_sec: float
    """The tool's timeout under the base policy (the ladder's top)."""
    z: float
    """The tail index's confidence factor (:func:`~reviewlab.analysis._tails.tail_of`)."""
    guarantee: float | None = None
    """The share of the tool's calls the certified timeout must let return (``None``: none)."""
    guarantee_confidence: float | None = None
    """The confidence of that certificate (required with ``guarantee``)."""
    extra_points: tuple[float, ...] = ()
    """More times to know the survival at."""


def profile_tool(
    tool: str,
    durations: np.ndarray,
    completed: np.ndarray,
    exposure_lines: float,
    settings: ProfileSettings,
) -> DurationProfile:
    """The profile of ``tool`` from its recorded calls, in any order (a pure function of the
    multiset; see the module docstring). ``exposure_lines``: the lines its calls' abandonment
    would cost, summed."""
    base_sec, z = settings.base_sec, settings.z
    guarantee, guarantee_confidence = settings.guarantee, settings.guarantee_confidence
    durations = np.asarray(durations, dtype=float)
    completed = np.asarray(completed, dtype=bool)
    estimate = KaplanMeier(durations, completed)
    done = durations[completed]
    longest = float(done.max()) if done.size else 0.0
    quantiles = {q: km_quantile(estimate, q) for q in (*LADDER_QUANTILES, *EXPLAIN_QUANTILES)}
    rungs = ladder(quantiles, longest, base_sec)
    certificate = None
    points = {*rungs, float(base_sec), *map(float, settings.extra_points)}
    if guarantee is not None:
        assert guarantee_confidence is not None
        certificate = certify(durations, completed, guarantee, guarantee_confidence)
        if certificate.certified:
            points.add(nice(certificate.timeout_sec))
    fit = hill(done)
    if math.isfinite(fit.threshold_sec):
        points.add(fit.threshold_sec)
    survival = SurvivalAt(tool, {t: estimate.survival(t) for t in sorted(points)})
    return DurationProfile(
        tool=tool,
        observations=int(durations.size),
        events=int(completed.sum()),
        longest_completed_sec=longest,
        quantiles=quantiles,
        ladder=tuple(rungs),
        survival=survival,
        tail=tail_of(survival, fit, int(durations.size), float(exposure_lines), z),
        certificate=certificate,
    )


def base_seconds(spine: Policy, tools: Iterable[str]) -> dict[str, float]:
    """Each tool's timeout under the base policy's table (the top of its ladder)."""
    timeouts = spine.timeouts
    if not isinstance(timeouts, TimeoutPolicy):
        raise ParameterError("base", "the tuner tunes a TimeoutPolicy's per-tool table")
    return {tool: timeouts.timeout_for(None, tool, remaining_sec=None) for tool in tools}

"""Why a timeout is a bet: the completed-only spiral, restart cutoffs, redundant requests.

Three results notebook 06 shows on data, each computed here: the completed-only spiral
(:func:`completed_only_spiral`: a timeout set from the calls that completed under the previous
one falls round after round, where a censoring-aware estimate cannot); restart cutoffs (Luby,
Sinclair and Zuckerman: :func:`restart_expectation`, :func:`optimal_cutoff`, which chooses on a
quarter of the calls and reports on the rest; restarting helps only where the hazard falls);
redundant requests with uncancelled losers, replayed in the twin
(Shah, Lee and Ramchandran: :func:`redundancy_latency`; helps at low load, hurts at high).
The three arguments: docs/metrics.md, "Why a timeout is a bet".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd

from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy
from reviewlab.engines._censoring import KaplanMeier
from reviewlab.engines._engine import Twin
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Round


def completed_only_spiral(
    durations: Sequence[float] | np.ndarray,
    *,
    start_sec: float,
    q: float = 0.99,
    factor: float = 1.5,
    rounds: int = 8,
) -> pd.DataFrame:
    """Round by round, the timeout the completed-only rule sets when the calls' true durations
    are ``durations`` and each round is observed under the previous round's timeout (a call
    longer than it is cut: censored at the timeout). Columns: ``round``, ``timeout_sec``,
    ``censored_share``, ``completed_only_next`` (the rule's next timeout), ``km_quantile`` (the
    censoring-aware ``q``-quantile under this timeout; ``inf``: beyond it), ``true_quantile``."""
    true = np.asarray(durations, dtype=float)
    if not true.size or not 0 < q < 1 or factor <= 0 or start_sec <= 0 or rounds < 1:
        raise ValueError("completed_only_spiral: expected durations, 0 < q < 1, factor > 0, "
                         "start_sec > 0 and rounds >= 1")  # fmt: skip
    truth = float(np.quantile(true, q))
    timeout = float(start_sec)
    rows = []
    for index in range(rounds):
        done = true <= timeout
        seen = np.minimum(true, timeout)
        nxt = factor * float(np.quantile(seen[done], q)) if done.any() else timeout
        rows.append(
            {
                "round": index,
                "timeout_sec": timeout,
                "censored_share": float(1 - done.mean()),
                "completed_only_next": nxt,
                "km_quantile": KaplanMeier(seen, done).quantile(q),
                "true_quantile": truth,
            }
        )
        timeout = nxt
    return pd.DataFrame(rows)


def restart_expectation(estimate: KaplanMeier, cutoff: float) -> float:
    """``E[min(T, t)] / F(t)``: the expected time until an answer when each attempt is
    abandoned at ``t`` and restarted afresh (``inf`` when no attempt answers by ``t``)."""
    answered = 1.0 - estimate.survival(cutoff)
    if answered <= 0:
        return math.inf
    return _mean_until(estimate, cutoff) / answered


def _mean_until(estimate: KaplanMeier, cutoff: float) -> float:
    """``E[min(T, t)] = ∫_0^t S(u) du`` of the step estimate."""
    edges = np.concatenate(([0.0], estimate.event_times[estimate.event_times < cutoff], [cutoff]))
    levels = np.concatenate(([1.0], estimate.survival_after))[: edges.size - 1]
    return float(np.sum(levels * np.diff(edges)))


MIN_EVENTS = 10
"""The fewest completed calls at or below a cutoff for it to be considered: below that the
empirical ``F(t)`` rests on a handful of events and the restart expectation ``E[min(T, t)] /
F(t)``, a ratio over it, is mostly noise (its relative error is about ``1 / sqrt(events)``;
docs/metrics.md, "Restart cutoffs, honestly")."""
CHOOSE_SHARE = 0.25
"""The share of calls (drawn at random, seeded) the cutoff is chosen on; the other three
quarters report its expectation, so the reported figure rests on most of the data."""
PESSIMISM_Z = 2.0
"""Candidates are scored ``z`` standard errors of ``F(t)`` pessimistic: a cutoff resting on few
events must beat one resting on many by more than its noise, and the reported figure stays
precise where the curve is flat."""


class RestartCutoff(NamedTuple):
    """A restart cutoff chosen on one part of the calls and its expectation reported on the other.

    ``expected_sec`` and its interval come from calls the choice never saw, so the minimum of a
    noisy curve does not report itself (docs/metrics.md, "Restart cutoffs, honestly").
    """

    cutoff_sec: float
    """``t*``: each attempt is abandoned at this and re-issued (the last event time: a restart
    never pays)."""
    expected_sec: float
    """``E[min(T, t*)] / F(t*)`` on the held-out calls (``inf``: none of them answered by t*)."""
    low_sec: float
    """The lower end of the ``confidence`` interval of ``expected_sec`` (held-out calls)."""
    high_sec: float
    """The upper end (``inf`` when none of the held-out calls answered by ``t*``)."""
    without_sec: float
    """The mean time to an answer without restarts, on every call (``inf``: some never return)."""
    chosen_on: int
    """Calls the cutoff was chosen on."""
    reported_on: int
    """Held-out calls the expectation is reported on."""
    events_below: int
    """Held-out calls that answered by ``t*``: the figure's relative error is about
    ``1 / sqrt(events_below)``."""


def optimal_cutoff(
    durations: Sequence[float] | np.ndarray,
    completed: Sequence[bool] | np.ndarray,
    *,
    min_events: int = MIN_EVENTS,
    confidence: float = 0.9,
    seed: int = 0,
) -> RestartCutoff:
    """The restart cutoff of one tool's calls (``completed`` False: seen running for
    ``durations``, never back), chosen on a quarter of them and reported on the rest.

    The quarter (drawn with ``seed``) scores the event times with ``min_events · 2^j`` events
    at or below them (a coarse ladder: fewer candidates, less room to pick noise) by
    ``E[min(T, t)] / F_low(t)``, ``F_low`` being ``PESSIMISM_Z`` standard errors below its
    estimate, and takes the lowest. The other calls report ``E`` at that cutoff with a
    ``confidence`` interval (delta method for the ratio). A refusal names the counts when the
    quarter holds fewer than ``min_events`` completed calls.
    """
    seen = np.asarray(durations, dtype=float)
    done = np.asarray(completed, dtype=bool)
    if seen.shape != done.shape or seen.ndim != 1:
        raise ValueError("optimal_cutoff: durations and completed must be 1-D and of equal length")
    if isinstance(min_events, bool) or not isinstance(min_events, int) or min_events < 1:
        raise ParameterError("min_events", f"expected a whole number >= 1, got {min_events!r}")
    if not 0.0 < confidence < 1.0:
        raise ParameterError("confidence", f"expected a probability in (0, 1), got {confidence!r}")
    order = np.random.default_rng(seed).permutation(seen.size)
    cut = int(round(seen.size * CHOOSE_SHARE))
    chooser, reporter = order[:cut], order[cut:]
    if int(done[chooser].sum()) < min_events or not reporter.size:
        raise ValueError(
            f"optimal_cutoff: {int(done.sum())} of {seen.size} call(s) completed; the quarter "
            f"a cutoff is chosen on needs at least min_events={min_events} of them"
        )
    cutoff = _choose(seen[chooser], done[chooser], min_events)
    expected, low, high, events = _held_out(seen[reporter], done[reporter], cutoff, confidence)
    return RestartCutoff(
        cutoff_sec=cutoff,
        expected_sec=expected,
        low_sec=low,
        high_sec=high,
        without_sec=float(seen.mean()) if done.all() else math.inf,
        chosen_on=int(chooser.size),
        reported_on=int(reporter.size),
        events_below=events,
    )


def _choose(seen: np.ndarray, done: np.ndarray, min_events: int) -> float:
    """The candidate cutoff of these calls with the lowest pessimistic expectation (see
    :func:`optimal_cutoff`); the last event time when none beats it."""
    estimate = KaplanMeier(seen, done)
    times = estimate.event_times
    answered = 1.0 - estimate.survival_after
    events = np.searchsorted(np.sort(seen[done]), times, side="right")
    best, best_score = float(times[-1]), math.inf
    rung = min_events
    for t, share, count in zip(times, answered, events, strict=True):
        last = t == times[-1]
        if count < rung and not last:
            continue
        while rung <= count:
            rung *= 2  # the next candidate is the first event time past twice as many events
        score = _mean_until(estimate, float(t)) / _pessimistic(float(share), int(count))
        if score < best_score:
            best, best_score = float(t), score
    return best


def _pessimistic(share: float, events: int) -> float:
    """``share`` lowered by ``PESSIMISM_Z`` of its binomial standard errors (``n`` is
    ``events / share``, which also holds for a Kaplan–Meier share); at least a hair above 0."""
    n = events / share
    return max(share - PESSIMISM_Z * math.sqrt(share * (1.0 - share) / n), 1e-12)


def _held_out(
    seen: np.ndarray, done: np.ndarray, cutoff: float, confidence: float
) -> tuple[float, float, float, int]:
    """``E`` at ``cutoff`` on these calls, its ``confidence`` interval and the events under it.

    ``E`` is the Kaplan–Meier ``E[min(T, t)] / F(t)``; its standard error is the ratio
    estimator's, ``sqrt(Σ r²) / k`` with ``r = min(T, t) − E · 1{answered by t}`` and ``k`` the
    calls answered by ``t``.
    """
    estimate = KaplanMeier(seen, done)
    answered = done & (seen <= cutoff)
    events = int(answered.sum())
    share = 1.0 - estimate.survival(cutoff)
    if events == 0 or share <= 0:
        # No event: F is under 3 / n (the rule of three), so E is at least mean / (3 / n).
        return math.inf, _mean_until(estimate, cutoff) * seen.size / 3.0, math.inf, events
    expected = _mean_until(estimate, cutoff) / share
    residual = np.minimum(seen, cutoff) - expected * answered
    error = math.sqrt(float(np.sum(residual * residual))) / events
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return expected, max(expected - z * error, 0.0), expected + z * error, events


def redundancy_latency(
    service_sec: Sequence[float] | np.ndarray,
    *,
    arrival_rate: float,
    slots: int,
    copies: int,
    seed: int = 0,
) -> dict[str, float]:
    """Mean and p95 latency of jobs whose service times are ``service_sec``, arriving as a
    Poisson stream of ``arrival_rate`` per second at ``slots`` reviewer slots, each sent to
    ``copies`` slots at once and answered by the first copy to finish; the other copies run to
    their end (never cancelled). Replayed by the twin: one episode per copy, one call each."""
    if copies < 1 or slots < 1 or arrival_rate <= 0:
        raise ValueError("redundancy_latency: expected copies >= 1, slots >= 1, arrival_rate > 0")
    rng = np.random.default_rng(seed)
    service = np.asarray(service_sec, dtype=float)
    arrivals = np.cumsum(rng.exponential(1.0 / arrival_rate, service.size))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    episodes = []
    for job, (at, seconds) in enumerate(zip(arrivals, service, strict=True)):
        for copy in range(copies):
            # Each copy runs its own attempt: the same distribution, an independent draw.
            duration = float(seconds if copy == 0 else rng.choice(service))
            rounds = [Round(send_sec=0.0, calls=[Call(tool="review", duration_sec=duration)])]
            episodes.append(
                Episode(
                    id=f"job{job}-copy{copy}",
                    source="synthetic",
                    started_at=start + timedelta(seconds=float(at)),
                    rounds=[*rounds, Round(send_sec=0.0)],
                )
            )
    result = replay(episodes, Policy.uniform(1e9), engine=Twin(slots=slots))
    walls = result.episodes["wall_sec"]
    latency = walls.to_numpy(float).reshape(service.size, copies).min(axis=1)
    return {
        "mean_sec": float(latency.mean()),
        "p95_sec": float(np.quantile(latency, 0.95)),
        "load": arrival_rate * copies * float(service.mean()) / slots,
    }

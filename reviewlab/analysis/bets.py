"""Why a timeout is a bet: the completed-only spiral, restart cutoffs, redundant requests.

Three results notebook 06 shows on data, each computed here: the completed-only spiral
(:func:`completed_only_spiral`: a timeout set from the calls that completed under the previous
one falls round after round, where a censoring-aware estimate cannot); restart cutoffs (Luby,
Sinclair and Zuckerman: :func:`restart_expectation`, :func:`optimal_cutoff`; restarting helps
only where the hazard falls); redundant requests with uncancelled losers, replayed in the twin
(Shah, Lee and Ramchandran: :func:`redundancy_latency`; helps at low load, hurts at high).
The three arguments: docs/metrics.md, "Why a timeout is a bet".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from reviewlab.core.policy import Policy
from reviewlab.engines.censoring import KaplanMeier
from reviewlab.engines.twin import simulate
from reviewlab.recording.schema import Call, Episode, Round

__all__ = [
    "completed_only_spiral",
    "optimal_cutoff",
    "redundancy_latency",
    "restart_expectation",
]


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


def optimal_cutoff(estimate: KaplanMeier) -> tuple[float, float, float]:
    """``(t*, E with restarts at t*, E without restarts)`` over the estimate's event times.
    Without restarts the mean is ``inf`` when some calls never return (the estimate ends above
    0); with a rising hazard ``t*`` is the last event time and both are equal."""
    times = estimate.event_times
    if not times.size:
        return math.inf, math.inf, math.inf
    expectations = np.array([restart_expectation(estimate, t) for t in times])
    best = int(np.argmin(expectations))
    tail = float(estimate.survival_after[-1])
    without = math.inf if tail > 0 else _mean_until(estimate, float(times[-1]))
    return float(times[best]), float(expectations[best]), without


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
    walls = simulate(episodes, Policy.uniform(1e9), slots=slots).episodes["wall_sec"]
    latency = walls.to_numpy(float).reshape(service.size, copies).min(axis=1)
    return {
        "mean_sec": float(latency.mean()),
        "p95_sec": float(np.quantile(latency, 0.95)),
        "load": arrival_rate * copies * float(service.mean()) / slots,
    }

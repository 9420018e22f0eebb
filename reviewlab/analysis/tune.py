"""Timeout tuning: recommend per-tool timeouts that minimise an objective under coverage and abandonment budgets.

Lifecycle of :func:`recommend`:

1. Estimate each tool's duration distribution with censoring taken into
   account (:class:`reviewlab.engines.censoring.KaplanMeier`, the estimator the
   imputation shares) and read candidate timeouts off its quantiles.
2. Start from ``base`` with every tool's timeout made explicit
   (:meth:`TimeoutPolicy.with_tool_timeouts`, so the base's floor no longer
   hides per-tool values) and replay with the vectorized engine.
3. Coordinate descent: tool by tool (most-called first), try every candidate
   with the others held, keep the one with the best objective among those that
   honour the budgets; repeat for ``passes`` rounds or until nothing changes.
4. Explain each choice against ``base``: the quantiles, the rate of the tool's
   calls it gives up, the coverage it costs and the objective it saves.

The budgets count what the *timeouts* cost. A call that never returns is
abandoned under every bounded policy, and the deadline narrowing cuts calls
whatever the per-tool values; that loss is unavoidable by tuning. So coverage
loss and abandoned-call rate are measured as the excess over the *reference*:
the same replay with every tool's timeout beyond the longest observed call.

Invariants: the recommended policy never does worse than ``base`` on the
objective on the tuning corpus, and honours the budgets there whenever ``base``
does. The budgets bound a one-sided upper confidence limit of the excess (a
ratio estimate over episodes with its delta-method standard error), so that
they still hold on episodes the tuning never saw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from reviewlab.core.policy import Narrowing, TimeoutPolicy
from reviewlab.engines.censoring import KaplanMeier, estimates_by_tool
from reviewlab.engines.vectorized import CompiledCorpus, compile_corpus
from reviewlab.recording.schema import Episode

__all__ = ["OBJECTIVES", "QUANTILES", "Recommendation", "excess", "km_quantile", "recommend"]

OBJECTIVES = {
    "p50_wall": "wall_p50_sec",
    "p95_wall": "wall_p95_sec",
    "p99_wall": "wall_p99_sec",
    "max_wall": "wall_max_sec",
    "max_silence": "max_silence_sec",
    "zombie": "zombie_sec",
}
"""Objective names and the summary key each minimises (a summary key itself is accepted too)."""
QUANTILES = (0.5, 0.9, 0.95, 0.99, 0.995, 0.999)
_CANDIDATE_QUANTILES = (0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995)
_HEADROOM = (1.0, 1.5, 2.0)


class Recommendation(NamedTuple):
    """What :func:`recommend` returns; unpacks as ``policy, explain``-first tuple."""

    policy: TimeoutPolicy
    """The recommended per-tool policy (no floor; every tool of the corpus explicit)."""
    explain: pd.DataFrame
    """One row per tool: quantiles, base and chosen timeout, abandoned rate, coverage loss, objective saved."""
    narrowing: Narrowing
    """The narrowing the recommendation was tuned under."""
    summary: dict[str, Any]
    """Summary of the tuning corpus under the recommended policy."""
    baseline: dict[str, Any]
    """Summary of the tuning corpus under ``base``."""
    reference: dict[str, Any]
    """Summary under the reference (every timeout beyond the longest call): the unavoidable losses."""


def km_quantile(estimate: KaplanMeier, q: float) -> float:
    """The ``q``-quantile of a Kaplan–Meier estimate: the first event time with ``S(t) <= 1 - q``.

    ``inf`` when censoring leaves the estimate above ``1 - q`` (the quantile lies
    beyond what was observed).
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"q: expected a probability in (0, 1), got {q!r}")
    hit = int(np.searchsorted(-estimate.survival_after, -(1.0 - q), side="left"))
    return float(estimate.event_times[hit]) if hit < estimate.event_times.size else math.inf


def _objective_key(objective: str) -> str:
    if objective in OBJECTIVES:
        return OBJECTIVES[objective]
    if objective in OBJECTIVES.values():
        return objective
    raise ValueError(
        f"objective: expected one of {', '.join([*OBJECTIVES, *OBJECTIVES.values()])}, got {objective!r}"
    )


def _nice(seconds: float) -> float:
    """Round a candidate timeout up to two significant digits (0.1 s at least)."""
    if seconds <= 0.1:
        return 0.1
    step = 10.0 ** (math.floor(math.log10(seconds)) - 1)
    return float(round(math.ceil(seconds / step - 1e-9) * step, 6))


def _candidates(estimate: KaplanMeier, base_sec: float) -> list[float]:
    values = {base_sec}
    for q in _CANDIDATE_QUANTILES:
        quantile = km_quantile(estimate, q)
        if math.isfinite(quantile):
            values.update(_nice(quantile * h) for h in _HEADROOM)
    return sorted(values)


def excess(summary: dict[str, Any], reference: dict[str, Any]) -> tuple[float, float]:
    """``(coverage loss, abandoned-call rate)`` of ``summary`` beyond the ``reference`` replay's."""
    return (
        summary["coverage_loss_rate"] - reference["coverage_loss_rate"],
        summary["abandoned_call_rate"] - reference["abandoned_call_rate"],
    )


class _Point(NamedTuple):
    """One evaluated policy: its summary and the per-episode counts the confidence bound needs."""

    summary: dict[str, Any]
    credited: np.ndarray
    abandoned: np.ndarray
    dispatched: np.ndarray


def _evaluate(corpus: CompiledCorpus, policy: TimeoutPolicy, narrowing: Narrowing) -> _Point:
    ev = corpus.evaluate(policy, narrowing)
    n = len(corpus.episode_ids)
    per_episode = corpus.episode_index
    return _Point(
        corpus.summarize(ev),
        np.bincount(per_episode, weights=ev.credited_lines, minlength=n),
        np.bincount(per_episode, weights=(ev.gap == 1), minlength=n),
        np.bincount(per_episode, weights=(ev.outcome != 2), minlength=n),
    )


def _ratio_upper(numerator: np.ndarray, denominator: np.ndarray, z: float) -> float:
    """Upper confidence bound of ``sum(numerator) / sum(denominator)`` over episodes (delta method)."""
    total = float(denominator.sum())
    if total <= 0:
        return 0.0
    ratio = float(numerator.sum()) / total
    residual = numerator - ratio * denominator
    se = (
        math.sqrt(residual.size * float(np.dot(residual, residual))) / total
        if residual.size > 1
        else 0.0
    )
    return ratio + z * se


class _Budget:
    """The constraints on the excess over the reference, as upper confidence bounds over episodes.

    Episodes are the sampling unit: one abandonment uncredits every later read of
    its episode, so the loss is lumpy and a point estimate on the tuning corpus
    would promise too much for episodes it never saw.
    """

    def __init__(
        self,
        corpus: CompiledCorpus,
        reference: _Point,
        max_coverage_loss: float,
        max_abandoned_rate: float | None,
        confidence: float,
    ) -> None:
        self.reference = reference
        self.requested = np.bincount(
            corpus.episode_index, weights=corpus.requested_lines, minlength=len(corpus.episode_ids)
        )
        self.coverage = max_coverage_loss
        self.abandoned = math.inf if max_abandoned_rate is None else max_abandoned_rate
        self.z = NormalDist().inv_cdf(confidence) if confidence > 0.5 else 0.0

    def violation(self, point: _Point) -> float:
        """How far ``point``'s upper bounds are over the budgets (0 when it honours them)."""
        coverage = _ratio_upper(self.reference.credited - point.credited, self.requested, self.z)
        over = max(0.0, coverage - self.coverage)
        if math.isfinite(self.abandoned):
            abandoned = _ratio_upper(
                point.abandoned - self.reference.abandoned, point.dispatched, self.z
            )
            over += max(0.0, abandoned - self.abandoned)
        return over


def recommend(
    episodes: Sequence[Episode] | CompiledCorpus,
    *,
    max_coverage_loss: float = 0.01,
    max_abandoned_rate: float | None = None,
    objective: str = "p95_wall",
    base: TimeoutPolicy | None = None,
    narrowing: Narrowing | None = None,
    censored: str = "wedge",
    confidence: float = 0.95,
    passes: int = 3,
) -> Recommendation:
    """Per-tool timeouts minimising ``objective`` with coverage loss ≤ ``max_coverage_loss`` (and abandoned-call
    rate ≤ ``max_abandoned_rate`` when given), replayed under ``narrowing`` (default ``Narrowing()``).

    ``objective``: one of :data:`OBJECTIVES` or a summary key. The budgets hold
    for the excess over the reference (see the module docstring) at the
    one-sided ``confidence`` level over episodes (0.5 or less: point estimates).
    """
    if not 0.0 <= max_coverage_loss <= 1.0:
        raise ValueError(f"max_coverage_loss: expected a rate in [0, 1], got {max_coverage_loss!r}")
    if max_abandoned_rate is not None and not 0.0 <= max_abandoned_rate <= 1.0:
        raise ValueError(
            f"max_abandoned_rate: expected a rate in [0, 1], got {max_abandoned_rate!r}"
        )
    if not 0.0 <= confidence < 1.0:
        raise ValueError(f"confidence: expected a probability in [0, 1), got {confidence!r}")
    key = _objective_key(objective)
    base = base or TimeoutPolicy.ouroboros()
    narrowing = narrowing or Narrowing()
    if narrowing.mode == "unbounded":
        raise ValueError("narrowing: an unbounded narrowing has no timeouts to tune")
    if isinstance(episodes, CompiledCorpus):
        raise TypeError(
            "recommend: pass the episodes (their durations are estimated), not a compiled corpus"
        )
    episodes = list(episodes)
    if not episodes:
        raise ValueError("recommend: no episodes to tune on")
    corpus = compile_corpus(episodes, censored=censored)
    estimates, _ = estimates_by_tool(episodes)
    tools = sorted(estimates, key=lambda t: (-estimates[t].observations, t))
    base_sec = {tool: base.timeout_for(None, tool, remaining_sec=None) for tool in tools}
    baseline = corpus.summary(base, narrowing)
    unlimited = _nice(2.0 * float(corpus.duration_sec.max(initial=0.0)) + 1.0)
    reference = _evaluate(
        corpus, base.with_tool_timeouts(None, **{tool: unlimited for tool in tools}), narrowing
    )
    budget = _Budget(corpus, reference, max_coverage_loss, max_abandoned_rate, confidence)
    chosen = dict(base_sec)
    current = _evaluate(corpus, base.with_tool_timeouts(None, **chosen), narrowing)
    candidates = {tool: _candidates(estimates[tool], base_sec[tool]) for tool in tools}
    for _ in range(passes):
        changed = False
        for tool in tools:
            best_value, best = chosen[tool], current
            best_rank = (budget.violation(best), best.summary[key], -best_value)
            for value in candidates[tool]:
                if value == chosen[tool]:
                    continue
                point = _evaluate(
                    corpus, base.with_tool_timeouts(None, **{**chosen, tool: value}), narrowing
                )
                # Within budget first (or closer to it, should the base already be over), then the objective;
                # on a tie the longer timeout, which gives up fewer calls.
                rank = (budget.violation(point), point.summary[key], -value)
                if rank < best_rank:
                    best_value, best, best_rank = value, point, rank
            if best_value != chosen[tool]:
                chosen[tool], current, changed = best_value, best, True
        if not changed:
            break
    policy = base.with_tool_timeouts(name="recommended", **chosen)
    explain = _explain(
        corpus, estimates, tools, base, base_sec, chosen, policy, narrowing, baseline, key
    )
    return Recommendation(
        policy, explain, narrowing, corpus.summary(policy, narrowing), baseline, reference.summary
    )


def _explain(
    corpus: CompiledCorpus,
    estimates: dict[str, KaplanMeier],
    tools: list[str],
    base: TimeoutPolicy,
    base_sec: dict[str, float],
    chosen: dict[str, float],
    policy: TimeoutPolicy,
    narrowing: Narrowing,
    baseline: dict[str, Any],
    key: str,
) -> pd.DataFrame:
    """Per tool: what its duration looks like, what was chosen, and what that choice alone costs and saves."""
    per_tool = corpus.result(policy, narrowing).per_tool().set_index("tool")
    rows = []
    for tool in tools:
        estimate = estimates[tool]
        alone = corpus.summary(base.with_tool_timeouts(None, **{tool: chosen[tool]}), narrowing)
        row: dict[str, Any] = {
            "tool": tool,
            "calls": estimate.observations,
            "censored": estimate.observations - estimate.events,
        }
        row.update({f"duration_p{q * 100:g}_sec": km_quantile(estimate, q) for q in QUANTILES})
        row["base_timeout_sec"] = base_sec[tool]
        row["timeout_sec"] = chosen[tool]
        row["abandoned_rate"] = (
            float(per_tool.loc[tool, "abandoned_call_rate"]) if tool in per_tool.index else 0.0
        )
        row["coverage_loss"] = alone["coverage_loss_rate"] - baseline["coverage_loss_rate"]
        row[f"saved_{key}"] = baseline[key] - alone[key]
        rows.append(row)
    return pd.DataFrame(rows)

"""The budgets of :mod:`reviewlab.analysis.tune`: per policy, each budgeted rate measured on the
corpus (with its upper confidence bound over episodes) and predicted for unseen episodes.

:class:`BudgetEvaluator` replays a policy with the vectorized engine on one
compiled corpus and measures, per episode, the lines lost because of
abandonment (:func:`reviewlab.core.metrics.timeout_lost_lines`), the abandoned
and the dispatched calls. :func:`ratio_upper` turns per-episode sums into a
ratio estimate and its one-sided upper confidence limit (delta method;
episodes are the sampling unit because one abandonment withholds the credit of
every later read of its episode). The prediction for unseen episodes anchors at
the loosest timeouts (what no timeout avoids, as replayed) and adds what
:class:`reviewlab.analysis.tails.LossModel` says the tighter timeouts add.
Lifecycle: construct, :meth:`BudgetEvaluator.start` at the loosest timeouts,
then :meth:`BudgetEvaluator.point` per candidate (cached by its timeouts).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from reviewlab.analysis.tails import LossModel
from reviewlab.core import metrics
from reviewlab.core.policy import Policy, TimeoutPolicy
from reviewlab.engines.vectorized import CompiledCorpus
from reviewlab.engines.vectorized.evaluation import EXECUTED, WITHHELD

__all__ = ["BudgetEvaluator", "BudgetPoint", "budget_table", "ratio_upper"]


class BudgetPoint(NamedTuple):
    """One evaluated policy: its summary, and for each budgeted rate its upper bound on the
    corpus and its predicted value on unseen episodes."""

    summary: dict[str, Any]
    timeout_loss_upper: float
    abandoned_upper: float
    timeout_loss_predicted: float
    abandoned_predicted: float


def ratio_upper(numerator: np.ndarray, denominator: np.ndarray, z: float) -> tuple[float, float]:
    """``(estimate, upper bound)`` of ``sum(numerator) /
    sum(denominator)`` over episodes (delta method)."""
    total = float(denominator.sum())
    if total <= 0:
        return 0.0, 0.0
    ratio = float(numerator.sum()) / total
    residual = numerator - ratio * denominator
    n = residual.size
    se = math.sqrt(n / (n - 1) * float(np.dot(residual, residual))) / total if n > 1 else 0.0
    return ratio, ratio + z * se


class BudgetEvaluator:
    """Replays policies on one compiled corpus and measures the budgeted rates per episode."""

    def __init__(self, corpus: CompiledCorpus, base: Policy, z: float, model: LossModel) -> None:
        if not isinstance(base.timeouts, TimeoutPolicy):
            raise ValueError("base: the tuner tunes a TimeoutPolicy's per-tool table")
        self.corpus = corpus
        self.model = model
        self.base = base
        self._timeouts: TimeoutPolicy = base.timeouts
        self.z = z
        n = len(corpus.episode_ids)
        self.requested = np.bincount(
            corpus.episode_index, weights=corpus.requested_lines, minlength=n
        )
        self.cache: dict[tuple[tuple[str, float], ...], BudgetPoint] = {}
        self.loosest: dict[str, float] = {}
        self.floor = (0.0, 0.0)

    def policy(self, chosen: dict[str, float]) -> Policy:
        """The base policy with the per-tool timeouts ``chosen`` (set exactly)."""
        return self.base.replace(timeouts=self._timeouts.with_tool_timeouts(None, **chosen))

    def start(self, loosest: dict[str, float]) -> None:
        """Anchor the predictions at the loosest rungs: what no timeout avoids, as replayed."""
        rates = self.rates(loosest)
        self.loosest = dict(loosest)
        self.floor = (rates["timeout_coverage_loss_rate"][0], rates["abandoned_call_rate"][0])
        self.cache.clear()

    def predicted(self, chosen: dict[str, float]) -> tuple[float, float]:
        """Timeout coverage loss and abandoned rate predicted for unseen episodes: the replayed
        figures at the loosest rungs, plus what the tail model says the tighter rungs add."""
        model = self.model
        coverage = model.timeout_coverage_loss(chosen) - model.timeout_coverage_loss(self.loosest)
        abandoned = model.abandoned_rate(chosen) - model.abandoned_rate(self.loosest)
        return self.floor[0] + max(coverage, 0.0), self.floor[1] + max(abandoned, 0.0)

    def rates(self, chosen: dict[str, float]) -> dict[str, tuple[float, float]]:
        """``budget → (estimate, upper bound)`` with the per-tool timeouts ``chosen``: timeout
        coverage loss and abandoned-call rate."""
        c = self.corpus
        ev = c.evaluate(self.policy(chosen))
        outcome = ev.outcome
        lost = metrics.timeout_lost_lines(
            c.requested_lines, ev.credited_lines, ev.abandoned, outcome == EXECUTED
        )
        n = len(c.episode_ids)
        per_episode_lost = np.bincount(c.episode_index, weights=lost, minlength=n)
        abandoned = np.bincount(c.episode_index, weights=ev.abandoned, minlength=n)
        dispatched = np.bincount(c.episode_index, weights=outcome != WITHHELD, minlength=n)
        return {
            "timeout_coverage_loss_rate": ratio_upper(per_episode_lost, self.requested, self.z),
            "abandoned_call_rate": ratio_upper(abandoned, dispatched, self.z),
        }

    def point(self, chosen: dict[str, float]) -> BudgetPoint:
        """The base with the per-tool timeouts ``chosen``: its summary, bounds and predictions."""
        key = tuple(sorted(chosen.items()))
        if key not in self.cache:
            rates = self.rates(chosen)
            coverage, abandoned = self.predicted(chosen)
            self.cache[key] = BudgetPoint(
                self.corpus.summary(self.policy(chosen)),
                rates["timeout_coverage_loss_rate"][1],
                rates["abandoned_call_rate"][1],
                coverage,
                abandoned,
            )
        return self.cache[key]


def budget_table(
    rates: dict[str, tuple[float, float]],
    predicted: dict[str, float],
    max_timeout_coverage_loss: float,
    max_abandoned_rate: float | None,
    confidence: float,
) -> pd.DataFrame:
    """The budget table: each budgeted rate's limit, estimate, upper bound and verdict."""
    rows = []
    for budget, limit in (
        ("timeout_coverage_loss_rate", max_timeout_coverage_loss),
        ("abandoned_call_rate", max_abandoned_rate),
    ):
        estimate, upper = rates[budget]
        worst = max(upper, predicted[budget])
        rows.append(
            {
                "budget": budget,
                "limit": math.inf if limit is None else limit,
                "estimate": estimate,
                f"upper_{confidence:.0%}": upper,
                "predicted_unseen": predicted[budget],
                "met": limit is None or worst <= limit + 1e-12,
            }
        )
    return pd.DataFrame(rows)

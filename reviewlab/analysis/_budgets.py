"""The budgets of :mod:`reviewlab.analysis._tune`: what a point is, how a rate is bounded, what
the tail model predicts, and the table of verdicts.

Lifecycle: an :class:`Evaluator` (in-process:
:class:`~reviewlab.analysis._budget_evaluator.BudgetEvaluator`; on a cluster:
:class:`~reviewlab.analysis._cluster_tune.ClusterBudgetEvaluator`) answers one
:class:`BudgetPoint` per candidate. :func:`ratio_upper` turns per-episode sums into a ratio and
its one-sided upper confidence limit (delta method, episodes the sampling unit);
:func:`sparse_ratio_upper` does so from the episodes a sparse replay changed. The prediction for
unseen episodes (:class:`Predictions`) anchors at the loosest timeouts and adds what
:class:`reviewlab.analysis._tails.LossModel` says tighter timeouts add; :func:`budget_table`
gives each budget its verdict. In full: docs/metrics.md, "Budgets".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np
import pandas as pd

from reviewlab.analysis._tails import LossModel
from reviewlab.core._policy import Policy


class BudgetPoint(NamedTuple):
    """One evaluated policy: its summary, and for each budgeted rate its upper bound on the
    corpus and its predicted value on unseen episodes."""

    summary: dict[str, Any]
    timeout_loss_upper: float
    abandoned_upper: float
    timeout_loss_predicted: float
    abandoned_predicted: float
    added_abandoned: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Calls abandoned that the loosest timeouts do not abandon, over dispatched calls:
    ``(estimate, upper bound over episodes, prediction for unseen episodes)``."""
    tool_added_abandoned: Mapping[str, tuple[float, float, float]] = {}
    """Per tool whose timeout is below its loosest: the same three figures for the share of
    ITS calls abandoned beyond the loosest timeouts'."""


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


class Denominator(NamedTuple):
    """A per-episode denominator with the sums :func:`sparse_ratio_upper` reads."""

    values: np.ndarray
    total: float
    squares: float

    @classmethod
    def of(cls, values: np.ndarray) -> Denominator:
        """The denominator ``values`` (per episode) with its sum and sum of squares."""
        values = np.asarray(values, dtype=float)
        return cls(values, float(values.sum()), float(np.dot(values, values)))


def sparse_ratio_upper(
    rows: np.ndarray, numerator: np.ndarray, denominator: Denominator, z: float
) -> tuple[float, float]:
    """:func:`ratio_upper` of a per-episode numerator that is ``numerator`` at the episodes
    ``rows`` (distinct) and 0 elsewhere: elsewhere each residual is ``-ratio * denominator``,
    so their squares sum to ``ratio² * (squares - squares at rows)``."""
    total = denominator.total
    if total <= 0:
        return 0.0, 0.0
    ratio = float(numerator.sum()) / total
    at = denominator.values[rows]
    residual = numerator - ratio * at
    n = denominator.values.size
    elsewhere = max(denominator.squares - float(np.dot(at, at)), 0.0)
    squares = float(np.dot(residual, residual)) + ratio * ratio * elsewhere
    se = math.sqrt(n / (n - 1) * squares) / total if n > 1 else 0.0
    return ratio, ratio + z * se


class AbandonedCounts(NamedTuple):
    """The calls one replay abandons: in all, per tool, and per tool among the calls that
    returned when recorded (what the tuner's per-tool table reads)."""

    total: int
    by_tool: Mapping[str, int]
    completed_by_tool: Mapping[str, int]


class Evaluator(Protocol):
    """What the tuner's search reads of a corpus:
    :class:`~reviewlab.analysis._budget_evaluator.BudgetEvaluator` in-process, or
    :class:`~reviewlab.analysis._cluster_tune.ClusterBudgetEvaluator` on a cluster's workers."""

    model: LossModel
    loosest: dict[str, float]

    def start(self, loosest: dict[str, float]) -> None:
        """Anchor the predictions at the loosest rungs."""

    def point(self, chosen: dict[str, float]) -> BudgetPoint:
        """The base with the per-tool timeouts ``chosen``: its summary, bounds and predictions."""

    def prefetch(self, candidates: list[dict[str, float]]) -> None:
        """Evaluate these points ahead (one step's candidates), so :meth:`point` reads them."""

    def foreseen(self, chosen: dict[str, float]) -> tuple[float, float, float]:
        """The point's predicted coverage loss, abandoned and added abandoned rates (no
        replay: :meth:`Predictions.foreseen`)."""

    def rates(self, chosen: dict[str, float]) -> dict[str, tuple[float, float]]:
        """``budget → (estimate, upper bound)`` with the per-tool timeouts ``chosen``."""

    def summary(self, policy: Policy) -> dict[str, Any]:
        """The corpus's summary under ``policy``."""

    def abandoned_counts(self, chosen: dict[str, float]) -> AbandonedCounts:
        """The calls the base with the per-tool timeouts ``chosen`` abandons."""


class Predictions:
    """What the tail model predicts for unseen episodes, anchored at the loosest rungs (every
    evaluator's; the replayed floor is set by ``start``)."""

    def __init__(self, model: LossModel) -> None:
        self.model = model
        self.loosest: dict[str, float] = {}
        self.floor = (0.0, 0.0)

    def predicted(self, chosen: dict[str, float]) -> tuple[float, float]:
        """Timeout coverage loss and abandoned rate predicted for unseen episodes: the replayed
        figures at the loosest rungs, plus what the tail model says the tighter rungs add."""
        model = self.model
        coverage = model.timeout_coverage_loss(chosen) - model.timeout_coverage_loss(self.loosest)
        abandoned = model.abandoned_rate(chosen) - model.abandoned_rate(self.loosest)
        return self.floor[0] + max(coverage, 0.0), self.floor[1] + max(abandoned, 0.0)

    def foreseen(self, chosen: dict[str, float]) -> tuple[float, float, float]:
        """What a point's budgets read of the tail model alone, without its replay: the
        predicted timeout coverage loss, abandoned-call rate and added abandoned-call rate
        (:attr:`BudgetPoint.timeout_loss_predicted`, ``abandoned_predicted`` and
        ``added_abandoned[2]`` of the point of ``chosen``)."""
        coverage, abandoned = self.predicted(chosen)
        return coverage, abandoned, self.tightened(chosen)[1]

    def tightened(self, chosen: dict[str, float]) -> tuple[dict[str, float], float]:
        """The tools ``chosen`` tightens below their loosest rung, and the tail model's
        prediction of the abandoned-call rate they add."""
        model = self.model
        tightened = {tool: t for tool, t in chosen.items() if t < self.loosest.get(tool, math.inf)}
        predicted = max(
            model.abandoned_rate(tightened)
            - model.abandoned_rate({tool: self.loosest[tool] for tool in tightened}),
            0.0,
        )
        return tightened, predicted

    def tool_predicted(self, tool: str, t: float) -> float:
        """The share of ``tool``'s calls the tail model predicts ``t`` abandons beyond its
        loosest rung."""
        tail = self.model.tools[tool]
        return max(tail.survival(t) - tail.survival(self.loosest[tool]), 0.0)


def budget_table(
    rates: dict[str, tuple[float, float]],
    predicted: dict[str, float],
    max_timeout_coverage_loss: float,
    max_abandoned_rate: float | None,
    confidence: float,
    added: Mapping[str, tuple[tuple[float, float, float], float | None]] | None = None,
) -> pd.DataFrame:
    """The budget table: each budgeted rate's limit, estimate, upper bound and verdict.

    ``added``: further rows ``budget -> ((estimate, upper bound, prediction), limit)`` (the
    added abandonment, overall and per tool)."""
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
    for budget, ((estimate, upper, forecast), limit) in (added or {}).items():
        rows.append(
            {
                "budget": budget,
                "limit": math.inf if limit is None else limit,
                "estimate": estimate,
                f"upper_{confidence:.0%}": upper,
                "predicted_unseen": forecast,
                "met": limit is None or max(upper, forecast) <= limit + 1e-12,
            }
        )
    return pd.DataFrame(rows)

"""The budgets of :mod:`reviewlab.analysis._tune`: per policy, each budgeted rate measured on the
corpus (with its upper confidence bound over episodes) and predicted for unseen episodes.

Lifecycle: construct a :class:`BudgetEvaluator` on one compiled corpus,
:meth:`BudgetEvaluator.start` at the loosest timeouts, then :meth:`BudgetEvaluator.point` per
candidate (one vectorized replay each, cached by its timeouts). :func:`ratio_upper` turns
per-episode sums into a ratio and its one-sided upper confidence limit (delta method, episodes
the sampling unit); the prediction for unseen episodes anchors at the loosest timeouts and adds
what :class:`reviewlab.analysis._tails.LossModel` says tighter timeouts add.

Invariant: a point's per-episode figures are read off the episodes a sparse replay changed
(:func:`sparse_ratio_upper`), with no corpus-sized pass per candidate. In full:
docs/metrics.md, "Budgets".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np
import pandas as pd

from reviewlab.analysis._tails import LossModel
from reviewlab.core import _metrics as metrics
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines.vectorized import CompiledCorpus
from reviewlab.engines.vectorized._evaluation import EXECUTED, WITHHELD, Evaluation


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


def _counts(episodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``episodes`` and how often each appears (as floats)."""
    rows, counts = np.unique(episodes, return_counts=True)
    return rows, counts.astype(float)


class AbandonedCounts(NamedTuple):
    """The calls one replay abandons: in all, per tool, and per tool among the calls that
    returned when recorded (what the tuner's per-tool table reads)."""

    total: int
    by_tool: Mapping[str, int]
    completed_by_tool: Mapping[str, int]


class Evaluator(Protocol):
    """What the tuner's search reads of a corpus: :class:`BudgetEvaluator` in-process, or
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


class BudgetEvaluator(Predictions):
    """Replays policies on one compiled corpus and measures the budgeted rates per episode."""

    def __init__(
        self,
        corpus: CompiledCorpus,
        base: Policy,
        z: float,
        model: LossModel,
        *,
        recorded_completed: np.ndarray | None = None,
    ) -> None:
        if not isinstance(base.timeouts, TimeoutPolicy):
            raise ParameterError("base", "the tuner tunes a TimeoutPolicy's per-tool table")
        super().__init__(model)
        self.corpus = corpus
        self.recorded_completed = np.asarray(
            corpus.completed if recorded_completed is None else recorded_completed, dtype=bool
        )
        self.base = base
        self._timeouts: TimeoutPolicy = base.timeouts
        self.z = z
        n = len(corpus.episode_ids)
        self.requested = np.bincount(
            corpus.episode_index, weights=corpus.requested_lines, minlength=n
        )
        self.cache: dict[tuple[tuple[str, float], ...], BudgetPoint] = {}
        self.loosest_abandoned = np.zeros(corpus.calls, dtype=bool)
        self.tool_code = {name: code for code, name in enumerate(corpus.tools)}
        # What the sparse path reads: the static denominators, and the timeout-lost lines of the
        # static replay (none abandoned), per episode where they are not 0.
        self._requested = Denominator.of(self.requested)
        self._calls = Denominator.of(np.bincount(corpus.episode_index, minlength=n))
        self._tool_calls: dict[int, Denominator] = {}
        self._loosest_hit = np.zeros(0, dtype=np.intp)
        static_lost = metrics.timeout_lost_lines(
            corpus.read_requested,
            corpus.static_credited,
            np.zeros(corpus.read_calls.size, dtype=bool),
            ~corpus.read_error,
        )
        self._static_lost_episodes = np.unique(corpus.read_episode[static_lost != 0])
        # What a point's replay also answers, kept so no figure asks for its replay twice.
        self._rates: dict[tuple[tuple[str, float], ...], dict[str, tuple[float, float]]] = {}
        self._counts: dict[tuple[tuple[str, float], ...], AbandonedCounts] = {}
        self._last: tuple[tuple[tuple[str, float], ...], Evaluation] | None = None

    def policy(self, chosen: dict[str, float]) -> Policy:
        """The base policy with the per-tool timeouts ``chosen`` (set exactly)."""
        return self.base.replace(timeouts=self._timeouts.with_tool_timeouts(None, **chosen))

    def start(self, loosest: dict[str, float]) -> None:
        """Anchor the predictions at the loosest rungs: what no timeout avoids, as replayed."""
        ev = self.evaluation(loosest)  # kept: the search's first point reads it again
        rates = self.rates_of(ev)
        self.loosest = dict(loosest)
        self.floor = (rates["timeout_coverage_loss_rate"][0], rates["abandoned_call_rate"][0])
        self.loosest_abandoned = np.asarray(ev.abandoned, dtype=bool).copy()
        self._loosest_hit = np.flatnonzero(self.loosest_abandoned)
        self.cache.clear()
        self._rates.clear()
        self._counts.clear()

    def evaluation(self, chosen: dict[str, float]) -> Evaluation:
        """The vectorized replay of the base with the per-tool timeouts ``chosen`` (the last one
        is kept: asked twice in a row, it is replayed once)."""
        key = _key(chosen)
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        ev = self.corpus.evaluate(self.policy(chosen))
        self._last = (key, ev)
        return ev

    def rates(self, chosen: dict[str, float]) -> dict[str, tuple[float, float]]:
        """``budget → (estimate, upper bound)`` with the per-tool timeouts ``chosen``: timeout
        coverage loss and abandoned-call rate (those of an evaluated point without a replay)."""
        kept = self._rates.get(_key(chosen))
        return kept if kept is not None else self.rates_of(self.evaluation(chosen))

    def rates_of(self, ev: Evaluation) -> dict[str, tuple[float, float]]:
        """:meth:`rates` of one replay."""
        if ev.parts is not None:  # a sparse replay: only the episodes it changed
            return self._sparse_rates(ev)
        c = self.corpus
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

    def _sparse_rates(self, ev: Evaluation) -> dict[str, tuple[float, float]]:
        """:meth:`rates_of` a sparse replay, read off the episodes it changed."""
        c, p = self.corpus, ev.parts
        assert p is not None
        hit = p.hit
        touched = np.union1d(
            np.union1d(c.episode_index[hit], c.read_episode[p.reads]), self._static_lost_episodes
        ).astype(np.intp)
        first, last = c.read_first[touched], c.read_first[touched + 1]
        sizes = last - first
        reads = np.repeat(first - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
        calls = c.read_calls[reads]
        at = np.searchsorted(hit, calls)
        abandoned = (at < hit.size) & (hit[np.minimum(at, max(hit.size - 1, 0))] == calls)
        lost = metrics.timeout_lost_lines(
            c.read_requested[reads],
            ev.credited_read[reads],
            abandoned,
            ~abandoned & ~c.read_error[reads],
        )
        owner = np.repeat(np.arange(touched.size), sizes)
        lost_per_episode = np.bincount(owner, weights=lost, minlength=touched.size)
        rows, counts = _counts(c.episode_index[hit])
        return {
            "timeout_coverage_loss_rate": sparse_ratio_upper(
                touched, lost_per_episode, self._requested, self.z
            ),
            "abandoned_call_rate": sparse_ratio_upper(rows, counts, self._calls, self.z),
        }

    def cached(self, chosen: dict[str, float]) -> bool:
        """Whether :meth:`point` has already evaluated ``chosen``."""
        return _key(chosen) in self.cache

    def prefetch(self, candidates: list[dict[str, float]]) -> None:
        """Nothing ahead: in-process, each point is replayed when the search asks for it, one
        after another (a busy machine has no second core for a thread to replay on; the search
        replays fewer points instead)."""

    def summary(self, policy: Policy) -> dict[str, Any]:
        """The corpus's summary under ``policy``."""
        return self.corpus.summary(policy)

    def abandoned_counts(self, chosen: dict[str, float]) -> AbandonedCounts:
        """The calls the base with the per-tool timeouts ``chosen`` abandons, in all and per
        tool (and per tool among those that returned when recorded); those of an evaluated
        point without a replay."""
        kept = self._counts.get(_key(chosen))
        return kept if kept is not None else self.counts_of(self.evaluation(chosen))

    def counts_of(self, ev: Evaluation) -> AbandonedCounts:
        """:meth:`abandoned_counts` of one replay (read off its abandoned calls alone)."""
        hit = ev.parts.hit if ev.parts is not None else np.flatnonzero(ev.abandoned)
        codes = np.asarray(self.corpus.tool_code)[hit]
        tools = len(self.corpus.tools)
        by_tool = np.bincount(codes, minlength=tools)
        completed = np.bincount(codes[self.recorded_completed[hit]], minlength=tools)
        return AbandonedCounts(
            int(hit.size),
            {tool: int(by_tool[code]) for code, tool in enumerate(self.corpus.tools)},
            {tool: int(completed[code]) for code, tool in enumerate(self.corpus.tools)},
        )

    def point(self, chosen: dict[str, float]) -> BudgetPoint:
        """The base with the per-tool timeouts ``chosen``: its summary, bounds and predictions."""
        key = _key(chosen)
        if key not in self.cache:
            ev = self.evaluation(chosen)
            rates = self._rates[key] = self.rates_of(ev)
            self._counts[key] = self.counts_of(ev)
            coverage, abandoned = self.predicted(chosen)
            added, per_tool = self.added_abandoned(chosen, ev)
            self.cache[key] = BudgetPoint(
                ev.summary(),
                rates["timeout_coverage_loss_rate"][1],
                rates["abandoned_call_rate"][1],
                coverage,
                abandoned,
                added,
                per_tool,
            )
        return self.cache[key]

    def added_abandoned(
        self, chosen: dict[str, float], ev: Evaluation
    ) -> tuple[tuple[float, float, float], dict[str, tuple[float, float, float]]]:
        """The abandonment ``chosen`` adds to the loosest timeouts' (see the module docstring):
        ``(estimate, upper bound, prediction)`` over all dispatched calls, and per tightened
        tool over its calls."""
        if ev.parts is not None:  # a sparse replay: only the calls it abandoned
            return self._sparse_added(chosen, ev)
        c = self.corpus
        n = len(c.episode_ids)
        added = np.asarray(ev.abandoned, dtype=bool) & ~self.loosest_abandoned
        dispatched = np.bincount(c.episode_index, weights=ev.outcome != WITHHELD, minlength=n)
        per_episode = np.bincount(c.episode_index, weights=added, minlength=n)
        estimate, upper = ratio_upper(per_episode, dispatched, self.z)
        model = self.model
        tightened, predicted = self.tightened(chosen)
        per_tool: dict[str, tuple[float, float, float]] = {}
        for tool, t in tightened.items():
            code = self.tool_code.get(tool)
            tail = model.tools.get(tool)
            if code is None or tail is None:
                continue
            mine = np.asarray(c.tool_code) == code
            episodes = c.episode_index[mine]
            own = np.bincount(episodes, weights=added[mine], minlength=n)
            calls = np.bincount(episodes, minlength=n).astype(float)
            per_tool[tool] = (*ratio_upper(own, calls, self.z), self.tool_predicted(tool, t))
        return (estimate, upper, predicted), per_tool

    def _sparse_added(
        self, chosen: dict[str, float], ev: Evaluation
    ) -> tuple[tuple[float, float, float], dict[str, tuple[float, float, float]]]:
        """:meth:`added_abandoned` of a sparse replay (every call dispatched; the added calls
        are the abandoned ones the loosest timeouts do not abandon)."""
        c, p = self.corpus, ev.parts
        assert p is not None
        added = np.setdiff1d(p.hit, self._loosest_hit, assume_unique=True)
        rows, counts = _counts(c.episode_index[added])
        estimate, upper = sparse_ratio_upper(rows, counts, self._calls, self.z)
        tightened, predicted = self.tightened(chosen)
        codes = np.asarray(c.tool_code)[added]
        per_tool: dict[str, tuple[float, float, float]] = {}
        for tool, t in tightened.items():
            code = self.tool_code.get(tool)
            tail = self.model.tools.get(tool)
            if code is None or tail is None:
                continue
            calls = self._tool_calls.get(code)
            if calls is None:
                mine = c.episode_index[np.asarray(c.tool_code) == code]
                calls = self._tool_calls[code] = Denominator.of(
                    np.bincount(mine, minlength=len(c.episode_ids))
                )
            rows, counts = _counts(c.episode_index[added[codes == code]])
            per_tool[tool] = (
                *sparse_ratio_upper(rows, counts, calls, self.z),
                self.tool_predicted(tool, t),
            )
        return (estimate, upper, predicted), per_tool


def _key(chosen: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
    """A point's key in the caches: its per-tool timeouts, sorted by tool."""
    return tuple(sorted(chosen.items()))


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

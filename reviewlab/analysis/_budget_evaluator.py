"""The tuner's in-process evaluator: replays on one compiled corpus, each point's budgeted rates.

Lifecycle: construct a :class:`BudgetEvaluator` on one compiled corpus,
:meth:`BudgetEvaluator.start` at the loosest timeouts, then :meth:`BudgetEvaluator.point` per
candidate (one vectorized replay each, cached by its timeouts). A sparse replay (only the calls
a tighter timeout changes) is read off the episodes it changed, with no corpus-sized pass per
candidate; a full replay per episode. The statistics and the contract it answers:
:mod:`reviewlab.analysis._budgets`.

Invariants: every figure of a point comes from one replay (its rates and counts are kept, so no
figure asks for it twice); the sparse and the full reading agree (tests/analysis/test_budgets.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from reviewlab.analysis._budgets import (
    AbandonedCounts,
    BudgetPoint,
    Denominator,
    Predictions,
    ratio_upper,
    sparse_ratio_upper,
)
from reviewlab.analysis._tails import LossModel
from reviewlab.core import _metrics as metrics
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines.vectorized import CompiledCorpus
from reviewlab.engines.vectorized._evaluation import EXECUTED, WITHHELD, Evaluation


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


def _counts(episodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``episodes`` and how often each appears (as floats)."""
    rows, counts = np.unique(episodes, return_counts=True)
    return rows, counts.astype(float)

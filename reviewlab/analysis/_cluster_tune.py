"""``recommend(corpus, client=...)``: the tuner's search on a Dask cluster, fed fixed-size partials.

Lifecycle (:func:`tuning_on_cluster`): the partitions are compiled on the workers and their
recorded observations stay there (:mod:`reviewlab.analysis._cluster_partials`, the workers'
side) → per tool, one worker gathers the tool's durations from every partition and profiles
them (:func:`~reviewlab.analysis._profiles.profile_tool`) → the search runs on the client as
in-process, each step's points replayed on the workers, which answer with the summary's
partials and a budget partial (moments of every budgeted ratio, abandonment counts) that
:class:`ClusterBudgetEvaluator` merges.

Invariants: no episode, call or per-episode array reaches the client; profiles, summaries and
counts are the in-process tuner's to the bit; the upper bounds merge the partitions' moments
(:func:`~reviewlab.analysis._cluster_partials.merge_ratio`), equal to the in-process figures
to rounding. In full: docs/cluster.md, "Tuning on a cluster".
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from reviewlab.analysis._budgets import AbandonedCounts, BudgetPoint, Predictions
from reviewlab.analysis._cluster_partials import (
    BudgetPartial,
    PartitionHead,
    budget_partial,
    head_of,
    merge_ratio,
    observe_partition,
    profile_slices,
    slice_tool,
    with_loosest,
)
from reviewlab.analysis._profiles import DurationProfile, ProfileSettings, base_seconds
from reviewlab.analysis._tails import LossModel
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._vocab import DEFAULT_CENSORING
from reviewlab.engines.cluster import ClusterCorpus, connect


class _Merged(NamedTuple):
    point: BudgetPoint
    rates: dict[str, tuple[float, float]]
    counts: AbandonedCounts


class ClusterBudgetEvaluator(Predictions):
    """The tuner's :class:`~reviewlab.analysis._budgets.Evaluator` on a cluster: each point
    replayed on the workers, its summary and budgets merged from their partials."""

    def __init__(
        self,
        corpus: ClusterCorpus,
        states: list[Any],
        compiled: list[Any],
        base: Policy,
        z: float,
        model: LossModel,
    ) -> None:
        if not isinstance(base.timeouts, TimeoutPolicy):
            raise ParameterError("base", "the tuner tunes a TimeoutPolicy's per-tool table")
        super().__init__(model)
        self.corpus = corpus
        self.states = states
        self.compiled = compiled
        self.base = base
        self._timeouts: TimeoutPolicy = base.timeouts
        self.z = z
        self.cache: dict[tuple[tuple[str, float], ...], _Merged] = {}

    def policy(self, chosen: dict[str, float]) -> Policy:
        """The base policy with the per-tool timeouts ``chosen`` (set exactly)."""
        return self.base.replace(timeouts=self._timeouts.with_tool_timeouts(None, **chosen))

    def start(self, loosest: dict[str, float]) -> None:
        """Anchor at the loosest rungs: the workers note which calls they abandon, and the
        replayed rates there are the predictions' floor."""
        policy = self.policy(loosest)
        c = self.corpus.client
        self.states = [
            c.submit(with_loosest, compiled, state, policy, priority=1)
            for compiled, state in zip(self.compiled, self.states, strict=True)
        ]
        self.loosest = dict(loosest)
        rates = self._merge(
            loosest,
            *self.corpus.evaluate([policy], extra=budget_partial, extra_args=self.states)[0],
        ).rates
        self.floor = (rates["timeout_coverage_loss_rate"][0], rates["abandoned_call_rate"][0])
        self.cache.clear()

    def prefetch(self, candidates: list[dict[str, float]]) -> None:
        """Replay every candidate not yet evaluated in one round on the workers."""
        fresh: dict[tuple[tuple[str, float], ...], dict[str, float]] = {}
        for chosen in candidates:
            key = tuple(sorted(chosen.items()))
            if key not in self.cache:
                fresh.setdefault(key, chosen)
        if not fresh:
            return
        answers = self.corpus.evaluate(
            [self.policy(chosen) for chosen in fresh.values()],
            extra=budget_partial,
            extra_args=self.states,
        )
        for (key, chosen), (summary, partials) in zip(fresh.items(), answers, strict=True):
            self.cache[key] = self._merge(chosen, summary, partials)

    def _merged(self, chosen: dict[str, float]) -> _Merged:
        key = tuple(sorted(chosen.items()))
        if key not in self.cache:
            self.prefetch([chosen])
        return self.cache[key]

    def point(self, chosen: dict[str, float]) -> BudgetPoint:
        """The base with the per-tool timeouts ``chosen``: its summary, bounds and predictions."""
        return self._merged(chosen).point

    def rates(self, chosen: dict[str, float]) -> dict[str, tuple[float, float]]:
        """``budget → (estimate, upper bound)`` with the per-tool timeouts ``chosen``."""
        return self._merged(chosen).rates

    def abandoned_counts(self, chosen: dict[str, float]) -> AbandonedCounts:
        """The calls the base with the per-tool timeouts ``chosen`` abandons."""
        return self._merged(chosen).counts

    def summary(self, policy: Policy) -> dict[str, Any]:
        """The corpus's summary under ``policy``."""
        return self.corpus.summaries([policy])[0]

    def _merge(
        self, chosen: dict[str, float], summary: dict[str, Any], partials: list[BudgetPartial]
    ) -> _Merged:
        z = self.z
        rates = {
            "timeout_coverage_loss_rate": merge_ratio([p.coverage for p in partials], z),
            "abandoned_call_rate": merge_ratio([p.abandoned for p in partials], z),
        }
        coverage, abandoned = self.predicted(chosen)
        tightened, predicted = self.tightened(chosen)
        per_tool: dict[str, tuple[float, float, float]] = {}
        for tool, t in tightened.items():
            parts = [p.tool_added[tool] for p in partials if tool in p.tool_added]
            if not parts or tool not in self.model.tools:
                continue
            per_tool[tool] = (*merge_ratio(parts, z), self.tool_predicted(tool, t))
        added = (*merge_ratio([p.added for p in partials], z), predicted)
        tools = sorted({tool for p in partials for tool in p.tool_abandoned})
        counts = AbandonedCounts(
            sum(p.abandoned_calls for p in partials),
            {tool: sum(p.tool_abandoned.get(tool, 0) for p in partials) for tool in tools},
            {
                tool: sum(p.tool_completed_abandoned.get(tool, 0) for p in partials)
                for tool in tools
            },
        )
        point = BudgetPoint(
            summary,
            rates["timeout_coverage_loss_rate"][1],
            rates["abandoned_call_rate"][1],
            coverage,
            abandoned,
            added,
            per_tool,
        )
        return _Merged(point, rates, counts)


@dataclass
class ClusterTuning:
    """What :func:`tuning_on_cluster` hands the search."""

    profiles: dict[str, DurationProfile]
    evaluator: ClusterBudgetEvaluator
    assumptions: dict[str, Any]


@contextlib.contextmanager
def tuning_on_cluster(
    source: Any,
    client: Any,
    spine: Policy,
    z: float,
    *,
    censored: str = DEFAULT_CENSORING,
    guarantee: float | None = None,
    guarantee_confidence: float | None = None,
) -> Iterator[ClusterTuning]:
    """Open ``source``'s partitions on ``client``'s cluster and profile its tools there; yields
    the profiles and the evaluator the search reads (see the module docstring)."""
    connected, owned = connect(client)
    try:
        with ClusterCorpus.open(source, connected, censored=censored) as corpus:
            states = corpus.on_partitions(observe_partition, stage="observe", wedge=True)
            heads: list[PartitionHead] = corpus.results(
                [connected.submit(head_of, s) for s in states]
            )
            episodes = sum(h.episodes for h in heads)
            if not episodes:
                raise ValueError("recommend: no episodes to tune on")
            tools = sorted({tool for h in heads for tool in h.tools})
            base_sec = base_seconds(spine, tools)
            profiles = {}
            futures = []
            for tool in tools:
                slices = [connected.submit(slice_tool, s, tool) for s in states]
                settings = ProfileSettings(base_sec[tool], z, guarantee, guarantee_confidence)
                futures.append(connected.submit(profile_slices, tool, settings, *slices))
            for tool, profile in zip(tools, corpus.results(futures), strict=True):
                profiles[tool] = profile
            model = LossModel.of_tails(
                {tool: profile.tail for tool, profile in profiles.items()},
                requested_lines=sum(h.requested_lines for h in heads),
                calls=sum(h.calls for h in heads),
            )
            evaluator = ClusterBudgetEvaluator(
                corpus, states, list(corpus.compiled_partitions), spine, z, model
            )
            yield ClusterTuning(
                profiles,
                evaluator,
                {"cluster": corpus.address, "partitions": len(corpus.partitions)},
            )
    finally:
        if owned:
            connected.close()

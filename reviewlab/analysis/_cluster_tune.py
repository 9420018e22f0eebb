"""``recommend(corpus, client=...)``: the tuner's search on a Dask cluster, fed fixed-size partials.

Lifecycle (:func:`tuning_on_cluster`): the partitions are compiled on the workers and their
recorded observations stay there (:class:`PartitionTuning`) → per tool, one worker gathers the
tool's durations from every partition and profiles them
(:func:`~reviewlab.analysis._profiles.profile_tool`) → the search runs on the client as
in-process, each step's points replayed on the workers, which answer with the summary's
partials and a :class:`BudgetPartial` (moments of every budgeted ratio, abandonment counts).

Invariants: no episode, call or per-episode array reaches the client; profiles, summaries and
counts are the in-process tuner's to the bit; the upper bounds merge the partitions' moments
(:func:`merge_ratio`), equal to the in-process figures to rounding. In full: docs/cluster.md,
"Tuning on a cluster".
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from reviewlab.analysis._budgets import AbandonedCounts, BudgetPoint, Predictions
from reviewlab.analysis._profiles import (
    DurationProfile,
    ProfileSettings,
    base_seconds,
    profile_tool,
)
from reviewlab.analysis._tails import LossModel
from reviewlab.core import _metrics as metrics
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.engines.cluster import ClusterCorpus, connect
from reviewlab.engines.cluster._session import register_sizes
from reviewlab.engines.vectorized._evaluation import EXECUTED, WITHHELD


class Moments(NamedTuple):
    """One partition's sums for a ratio ``Σx / Σd`` over episodes: ``n`` episodes, ``Σx``,
    ``Σd``, and about the partition's own ratio ``r_p``: ``Σ(x − r_p·d)²``, ``Σ(x − r_p·d)·d``
    and ``Σd²``."""

    n: int
    x: float
    d: float
    residual_squares: float
    residual_cross: float
    d_squares: float

    @classmethod
    def of(cls, x: np.ndarray, d: np.ndarray) -> Moments:
        """The moments of per-episode numerators ``x`` and denominators ``d``."""
        x = np.asarray(x, dtype=float)
        d = np.asarray(d, dtype=float)
        total_x, total_d = float(x.sum()), float(d.sum())
        r = total_x / total_d if total_d > 0 else 0.0
        residual = x - r * d
        return cls(
            int(x.size),
            total_x,
            total_d,
            float(np.dot(residual, residual)),
            float(np.dot(residual, d)),
            float(np.dot(d, d)),
        )


def merge_ratio(parts: Sequence[Moments], z: float) -> tuple[float, float]:
    """``(ratio, upper bound)`` over every partition's episodes, as
    :func:`~reviewlab.analysis._budgets.ratio_upper` gives it over the whole corpus: each
    partition's residuals about its own ratio are moved to the corpus's ratio exactly
    (``x − r·d = (x − r_p·d) + (r_p − r)·d``)."""
    total = sum(p.d for p in parts)
    if total <= 0:
        return 0.0, 0.0
    ratio = sum(p.x for p in parts) / total
    n = sum(p.n for p in parts)
    squares = 0.0
    for p in parts:
        shift = (p.x / p.d if p.d > 0 else 0.0) - ratio
        squares += p.residual_squares + 2.0 * shift * p.residual_cross + shift * shift * p.d_squares
    squares = max(squares, 0.0)
    se = math.sqrt(n / (n - 1) * squares) / total if n > 1 else 0.0
    return ratio, ratio + z * se


@dataclass(frozen=True)
class PartitionTuning:
    """One partition's recorded observations, kept on its worker for the tuner."""

    episodes: int
    requested_lines: int
    tools: tuple[str, ...]
    """The partition's tools, by their code in :attr:`tool_code`."""
    tool_code: np.ndarray
    duration_sec: np.ndarray
    completed: np.ndarray
    exposure_lines: np.ndarray
    loosest_abandoned: np.ndarray | None = None
    """Calls the loosest timeouts abandon (set by :meth:`ClusterBudgetEvaluator.start`)."""


class PartitionHead(NamedTuple):
    """What the client learns of a partition's observations: counts only."""

    episodes: int
    calls: int
    requested_lines: int
    tools: tuple[str, ...]


def observe_partition(wedge: Any) -> PartitionTuning:
    """A partition's :class:`PartitionTuning` from its ``wedge`` compile (a worker task)."""
    from reviewlab.engines._corpus import CallObservations

    register_sizes(PartitionTuning)
    observed = CallObservations.of(wedge)
    return PartitionTuning(
        episodes=observed.episodes,
        requested_lines=int(np.sum(observed.requested_lines, dtype=np.int64)),
        tools=observed.tools,
        tool_code=observed.tool_code,
        duration_sec=observed.duration_sec,
        completed=observed.completed,
        exposure_lines=observed.exposure_lines(),
    )


def head_of(state: PartitionTuning) -> PartitionHead:
    """A partition's :class:`PartitionHead` (a worker task)."""
    return PartitionHead(
        state.episodes, int(state.tool_code.size), state.requested_lines, state.tools
    )


class ToolSlice(NamedTuple):
    """One tool's calls in one partition: what its profile reads."""

    duration_sec: np.ndarray
    completed: np.ndarray
    exposure_lines: int


def slice_tool(state: PartitionTuning, tool: str) -> ToolSlice:
    """``tool``'s calls in one partition (a worker task)."""
    if tool not in state.tools:
        return ToolSlice(np.zeros(0), np.zeros(0, dtype=bool), 0)
    mine = state.tool_code == state.tools.index(tool)
    return ToolSlice(
        state.duration_sec[mine],
        state.completed[mine],
        int(np.sum(state.exposure_lines[mine], dtype=np.int64)),
    )


def profile_slices(tool: str, settings: ProfileSettings, *slices: ToolSlice) -> DurationProfile:
    """One tool's profile from its slices of every partition (a worker task)."""
    return profile_tool(
        tool,
        np.concatenate([s.duration_sec for s in slices]),
        np.concatenate([s.completed for s in slices]),
        float(sum(s.exposure_lines for s in slices)),
        settings,
    )


def with_loosest(compiled: Any, state: PartitionTuning, policy: Policy) -> PartitionTuning:
    """``state`` knowing which calls ``policy`` (the loosest timeouts) abandons (a worker
    task)."""
    ev = compiled.evaluate(policy)
    register_sizes(PartitionTuning)
    return replace(state, loosest_abandoned=np.asarray(ev.abandoned, dtype=bool).copy())


@dataclass(frozen=True)
class BudgetPartial:
    """One partition's share of one point's budgets (fixed size: a few numbers per tool)."""

    coverage: Moments
    """Timeout-lost lines over requested lines, per episode."""
    abandoned: Moments
    """Abandoned calls over dispatched calls, per episode."""
    added: Moments
    """Calls abandoned that the loosest timeouts do not abandon, over dispatched calls."""
    tool_added: Mapping[str, Moments]
    """Per tool: its added abandoned calls over its calls, per episode."""
    abandoned_calls: int
    tool_abandoned: Mapping[str, int]
    tool_completed_abandoned: Mapping[str, int]


def budget_partial(c: Any, ev: Any, state: PartitionTuning) -> BudgetPartial:
    """The :class:`BudgetPartial` of the replay ``ev`` of the compiled partition ``c`` (a
    worker task's ``extra``)."""
    n = len(c.episode_ids)
    episode = np.asarray(c.episode_index)
    outcome = ev.outcome
    abandoned = np.asarray(ev.abandoned, dtype=bool)
    lost = metrics.timeout_lost_lines(
        c.requested_lines, ev.credited_lines, abandoned, outcome == EXECUTED
    )
    dispatched = np.bincount(episode, weights=outcome != WITHHELD, minlength=n)
    requested = np.bincount(episode, weights=c.requested_lines, minlength=n)
    loosest = state.loosest_abandoned
    added = abandoned & ~loosest if loosest is not None else np.zeros_like(abandoned)
    codes = np.asarray(c.tool_code)
    tool_added: dict[str, Moments] = {}
    tool_abandoned: dict[str, int] = {}
    tool_completed: dict[str, int] = {}
    for code, tool in enumerate(c.tools):
        mine = codes == code
        if not mine.any():
            continue
        tool_added[tool] = Moments.of(
            np.bincount(episode[mine], weights=added[mine], minlength=n),
            np.bincount(episode[mine], minlength=n),
        )
        tool_abandoned[tool] = int(np.count_nonzero(abandoned & mine))
        tool_completed[tool] = int(np.count_nonzero(abandoned & mine & state.completed))
    return BudgetPartial(
        coverage=Moments.of(np.bincount(episode, weights=lost, minlength=n), requested),
        abandoned=Moments.of(np.bincount(episode, weights=abandoned, minlength=n), dispatched),
        added=Moments.of(np.bincount(episode, weights=added, minlength=n), dispatched),
        tool_added=tool_added,
        abandoned_calls=int(np.count_nonzero(abandoned)),
        tool_abandoned=tool_abandoned,
        tool_completed_abandoned=tool_completed,
    )


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
    censored: str = "wedge",
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

"""Where the tuner's figures come from: each tool's duration profile and the evaluator that
replays the points the search asks for, in-process or on a Dask cluster.

Invariants: both routes fit the profiles and the tail model to the same recorded observations
and answer the same :class:`~reviewlab.analysis._budgets.Evaluator` questions, so the search
makes the same choices on either; in-process, no ``Episode`` object is built unless prices read
their token counts. The cluster route is :mod:`reviewlab.analysis._cluster_tune`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from reviewlab.analysis._budget_evaluator import BudgetEvaluator
from reviewlab.analysis._budgets import BudgetPoint, Evaluator
from reviewlab.analysis._cost import PricedCorpus
from reviewlab.analysis._profiles import (
    DurationProfile,
    ProfileSettings,
    base_seconds,
    profile_tool,
)
from reviewlab.analysis._tails import LossModel
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy
from reviewlab.core._prices import PriceTable
from reviewlab.core._vocab import CensoringMode
from reviewlab.engines._corpus import CallObservations, CorpusSource, open_corpus
from reviewlab.engines._engine import Cluster, Vectorized
from reviewlab.engines.vectorized import CompiledCorpus


class Figures(NamedTuple):
    """What the search reads: the tools' profiles, the evaluator of its points, and what the
    route adds to the recommendation's assumptions."""

    profiles: dict[str, DurationProfile]
    evaluator: Evaluator
    assumptions: dict[str, Any]


@contextmanager
def tuning_figures(
    episodes: CorpusSource,
    engine: Vectorized | Cluster,
    spine: Policy,
    z: float,
    *,
    censored: CensoringMode,
    prices: PriceTable | None,
    guarantee: float | None,
    guarantee_confidence: float,
) -> Iterator[Figures]:
    """The figures of ``episodes`` under ``spine`` on ``engine``, held open while the search
    runs (a cluster's partitions stay loaded on its workers until it ends)."""
    if not isinstance(engine, Cluster):
        yield in_process(
            episodes,
            spine,
            z,
            censored=censored,
            prices=prices,
            guarantee=guarantee,
            guarantee_confidence=guarantee_confidence,
        )
        return
    if prices is not None:
        raise ParameterError(
            "prices",
            "the cost objective reads every episode's token counts, which a cluster "
            "tune never gathers; tune with prices in-process",
        )
    from reviewlab.analysis._cluster_tune import tuning_on_cluster

    with tuning_on_cluster(
        episodes,
        engine.client,
        spine,
        z,
        censored=censored,
        guarantee=guarantee,
        guarantee_confidence=guarantee_confidence,
    ) as cluster:
        yield Figures(cluster.profiles, cluster.evaluator, cluster.assumptions)


def in_process(
    episodes: CorpusSource,
    spine: Policy,
    z: float,
    *,
    censored: CensoringMode,
    prices: PriceTable | None,
    guarantee: float | None,
    guarantee_confidence: float,
) -> Figures:
    """The figures in this process: the corpus replayed from its compiled columns, the duration
    and tail models fitted to its recorded observations."""
    source = open_corpus(episodes)
    observations = source.observations()
    if not observations.episodes:
        raise ValueError("recommend: no episodes to tune on")
    corpus = source.compiled(censored)
    profiles = profile_observations(
        observations, spine, z, guarantee=guarantee, guarantee_confidence=guarantee_confidence
    )
    model = LossModel.of_tails(
        {tool: profile.tail for tool, profile in profiles.items()},
        requested_lines=int(observations.requested_lines.sum()),
        calls=int(observations.tool_code.size),
    )
    evaluator: BudgetEvaluator
    if prices is None:
        evaluator = BudgetEvaluator(
            corpus, spine, z, model, recorded_completed=observations.completed
        )
    else:  # the token counts live in the episodes
        priced = PricedCorpus.of(source.episodes(reason="prices: token counts"), prices)
        evaluator = PricedEvaluator(
            corpus, spine, z, model, priced, recorded_completed=observations.completed
        )
    return Figures(profiles, evaluator, {})


def profile_observations(
    observations: CallObservations,
    spine: Policy,
    z: float,
    *,
    guarantee: float | None,
    guarantee_confidence: float,
) -> dict[str, DurationProfile]:
    """Every tool's :class:`~reviewlab.analysis._profiles.DurationProfile` from a corpus's recorded
    observations, in-process."""
    exposure = observations.exposure_lines()
    base_sec = base_seconds(spine, observations.tools)
    profiles = {}
    for tool in observations.tools:
        mine = observations.of_tool(tool)
        profiles[tool] = profile_tool(
            tool,
            observations.duration_sec[mine],
            observations.completed[mine],
            float(exposure[mine].sum()),
            ProfileSettings(base_sec[tool], z, guarantee, guarantee_confidence),
        )
    return profiles


class PricedEvaluator(BudgetEvaluator):
    """A :class:`BudgetEvaluator` whose points' summaries carry the cost of their replay."""

    def __init__(
        self,
        corpus: CompiledCorpus,
        base: Policy,
        z: float,
        model: LossModel,
        priced: PricedCorpus,
        *,
        recorded_completed: np.ndarray,
    ) -> None:
        super().__init__(corpus, base, z, model, recorded_completed=recorded_completed)
        self.priced = priced

    def point(self, chosen: dict[str, float]) -> BudgetPoint:
        """The point of :meth:`BudgetEvaluator.point`, its summary priced."""
        key = tuple(sorted(chosen.items()))
        fresh = key not in self.cache
        point = super().point(chosen)
        if fresh:
            result = self.corpus.result(self.policy(chosen))
            point = point._replace(summary={**point.summary, **self.priced.cost(result).summary})
            self.cache[key] = point
        return point

    def summary(self, policy: Policy) -> dict[str, Any]:
        """The corpus's summary under ``policy``, priced."""
        result = self.corpus.result(policy)
        return {**result.summary, **self.priced.cost(result).summary}

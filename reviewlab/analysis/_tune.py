"""Timeout tuning's entry point: :func:`recommend` checks what it is asked, then searches.

:func:`recommend` answers one question with one stated rule
(:data:`~reviewlab.analysis._recommendation.RULE`), on one corpus, under one stated censoring
assumption. Lifecycle: the budgets, objective and safety rules are checked and the base becomes
one tunable :class:`~reviewlab.core.Policy`; the engine admits it; the figures are gathered
(:mod:`reviewlab.analysis._tune_figures`, in-process or on a cluster); the search runs
(:mod:`reviewlab.analysis._tune_search`) and returns a
:class:`~reviewlab.analysis._recommendation.Recommendation`.

Invariants: every refusal names its parameter before any work; the recommended policy never has
a worse objective than its start; every figure is a vectorized replay of the same corpus that
``reviewlab replay --policy`` reproduces. The search in full: docs/metrics.md, "How tune
searches".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any

from reviewlab.analysis._certify import DEFAULT_GUARANTEE_CONFIDENCE
from reviewlab.analysis._certify import check_guarantee as _check_probability
from reviewlab.analysis._cost import COST_KEYS
from reviewlab.analysis._recommendation import Recommendation
from reviewlab.analysis._safety import (
    DEFAULT_MAX_ADDED_ABANDONED_RATE,
    DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE,
    DEFAULT_MIN_CALLS,
    SafetyRules,
)
from reviewlab.analysis._tune_figures import tuning_figures
from reviewlab.analysis._tune_search import TuneSearch
from reviewlab.analysis.sweep import OBJECTIVE_ALIASES, objective_column, replays_episodes
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.core._prices import PriceTable
from reviewlab.core._vocab import DEFAULT_CENSORING, CensoringMode
from reviewlab.engines._corpus import CorpusSource
from reviewlab.engines._engine import Cluster, Engine, Vectorized, engine_of
from reviewlab.recording._annotations import with_recorded_kinds

OBJECTIVES = {
    name: column
    for name, column in OBJECTIVE_ALIASES.items()
    if column.startswith(("wall_", "max_silence", "zombie", "cost"))
}
"""Objective names and the summary column each minimises (a summary column itself is accepted)."""
DEFAULT_MAX_TIMEOUT_COVERAGE_LOSS = 0.01
"""The timeout coverage-loss budget :func:`recommend` holds when given none (``None``)."""


def excess(summary: dict[str, Any], reference: dict[str, Any]) -> tuple[float, float]:
    """``(coverage loss, abandoned-call rate)`` of ``summary`` beyond a ``reference`` replay's."""
    return (
        summary["coverage_loss_rate"] - reference["coverage_loss_rate"],
        summary["abandoned_call_rate"] - reference["abandoned_call_rate"],
    )


def _check_rate(name: str, value: float | None) -> None:
    if value is not None and not (
        isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0
    ):
        raise ParameterError(name, f"expected a rate in [0, 1], got {value!r}")


def recommend(
    episodes: CorpusSource,
    *,
    max_timeout_coverage_loss: float | None = None,
    max_abandoned_rate: float | None = None,
    objective: str = "wall_p95",
    base: Policy | TimeoutPolicy | None = None,
    narrowing: Narrowing | None = None,
    censored: CensoringMode = DEFAULT_CENSORING,
    confidence: float = 0.95,
    max_coverage_loss: float | None = None,
    prices: PriceTable | None = None,
    min_calls: int = DEFAULT_MIN_CALLS,
    allow_abandoning: Sequence[str] = (),
    max_added_abandoned_rate: float | None = DEFAULT_MAX_ADDED_ABANDONED_RATE,
    max_tool_added_abandoned_rate: float | None = DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE,
    guarantee: float | None = None,
    guarantee_confidence: float = DEFAULT_GUARANTEE_CONFIDENCE,
    client: Any = None,
    engine: Engine | str = "vectorized",
) -> Recommendation:
    """Per tool, the shortest timeout within the budgets, by
    :data:`~reviewlab.analysis._recommendation.RULE` (module docstring).

    ``episodes``: the corpus, anything :func:`~reviewlab.engines._corpus.open_corpus` takes (a
    path is tuned from its compiled columns, without an ``Episode`` object).
    ``max_timeout_coverage_loss`` (default 0.01): the largest timeout coverage-loss
    rate (lines lost because of abandonment / lines asked for);
    ``max_abandoned_rate``: the largest abandoned-call rate (default: no budget).
    Both bound the one-sided ``confidence`` upper limit over episodes (0.5 or
    less: the point estimate). ``objective``: one of :data:`OBJECTIVES` or a
    summary column, minimised among the allowed steps. ``base`` (default
    :meth:`Policy.ouroboros`; a bare timeout rule with ``narrowing``, :meth:`Policy.of`) gives
    the starting timeouts, the untouched parts of the policy (overrides, clamps, default,
    narrowing, idle timeouts) and the comparison; hedges and a breaker are refused by name.
    ``max_coverage_loss`` is the former name of ``max_timeout_coverage_loss``.
    ``prices``: a price table; needed by the objective ``cost``, and with it the
    summaries carry :data:`~reviewlab.analysis._cost.COST_KEYS`.

    The safety rules (:mod:`reviewlab.analysis._safety`): a tool with fewer than ``min_calls``
    recorded calls keeps the base timeout; a side-effecting tool, or one of unknown kind
    (``base.kind_of``), is never tightened below its slowest completed call unless named in
    ``allow_abandoning``; the calls abandoned beyond what the loosest timeouts abandon stay
    within ``max_added_abandoned_rate`` of all calls and ``max_tool_added_abandoned_rate`` of
    each tool's (``None``: no such budget).

    ``guarantee`` (a probability in (0, 1)): instead of the search, each tool gets its
    certified timeout (:func:`~reviewlab.analysis._certify.certify` at
    ``guarantee_confidence``), under the same safety rules; the budgets are reported.

    ``client`` (a ``distributed.Client`` or a scheduler address), or ``engine=Cluster(client)``:
    tune a corpus of Parquet partitions on a Dask cluster (:mod:`reviewlab.analysis._cluster_tune`).
    The workers profile the tools and replay the points; the client receives fixed-size partials
    and makes the same choices as in-process. What the cluster does not honour (its
    declaration: ``censored="impute"``) and ``prices`` are refused there by name. ``engine``:
    the tuner's replays are the vectorized engine's, in-process (``"vectorized"``) or on a
    cluster; another engine is refused by name.
    """
    max_timeout_coverage_loss = _coverage_loss_budget(max_timeout_coverage_loss, max_coverage_loss)
    _check_rate("max_abandoned_rate", max_abandoned_rate)
    if not 0.0 <= confidence < 1.0:
        raise ParameterError("confidence", f"expected a probability in [0, 1), got {confidence!r}")
    key = _objective_key(objective, prices)
    rules = SafetyRules(
        min_calls, tuple(allow_abandoning), max_added_abandoned_rate, max_tool_added_abandoned_rate
    )
    if guarantee is not None:
        _check_probability("guarantee", guarantee)
    _check_probability("guarantee_confidence", guarantee_confidence)
    spine, base_timeouts = _tunable_spine(Policy.of(base, narrowing), episodes)
    chosen = _tuning_engine(engine, client, spine, censored)
    if spine.narrowing.mode == "unbounded":
        raise ParameterError("narrowing", "an unbounded narrowing has no timeouts to tune")
    z = NormalDist().inv_cdf(confidence) if confidence > 0.5 else 0.0
    search = TuneSearch(
        spine=spine,
        base_timeouts=base_timeouts,
        rules=rules,
        key=key,
        max_timeout_coverage_loss=max_timeout_coverage_loss,
        max_abandoned_rate=max_abandoned_rate,
        confidence=confidence,
        guarantee=guarantee,
        guarantee_confidence=guarantee_confidence,
    )
    assumptions = search.assumptions(censored, prices)
    with tuning_figures(
        episodes,
        chosen,
        spine,
        z,
        censored=censored,
        prices=prices,
        guarantee=guarantee,
        guarantee_confidence=guarantee_confidence,
    ) as figures:
        return search.run(
            figures.profiles, figures.evaluator, {**assumptions, **figures.assumptions}
        )


def _coverage_loss_budget(given: float | None, former: float | None) -> float:
    """The timeout coverage-loss budget, given by its name or its former name
    (``max_coverage_loss``, with a deprecation warning), or the default; checked."""
    if former is not None:
        if given is not None:
            raise ParameterError(
                "max_coverage_loss", "the former name of max_timeout_coverage_loss; give only one"
            )
        warnings.warn(
            "max_coverage_loss is now max_timeout_coverage_loss (it bounds the coverage lost "
            "to timeouts)",
            DeprecationWarning,
            stacklevel=3,  # the caller of recommend
        )
        _check_rate("max_coverage_loss", former)
        given = former
    if given is None:
        given = DEFAULT_MAX_TIMEOUT_COVERAGE_LOSS
    _check_rate("max_timeout_coverage_loss", given)
    return given


def _objective_key(objective: str, prices: PriceTable | None) -> str:
    """The summary column ``objective`` names; a cost objective needs ``prices``."""
    try:
        key = objective_column(objective)
    except ValueError:
        raise ParameterError(
            "objective",
            f"expected one of {', '.join(OBJECTIVES)} or a summary column, got {objective!r}",
        ) from None
    if key in COST_KEYS and prices is None:
        raise ParameterError("prices", f"the objective {objective!r} needs a price table")
    return key


def _tunable_spine(base: Policy, episodes: CorpusSource) -> tuple[Policy, TimeoutPolicy]:
    """The base as one :class:`Policy` with the tool kinds the recording states, and its
    per-tool table; refused by name when it hedges, has a breaker or its timeouts are a custom
    rule."""
    # A gateway's recording says which tools its servers annotated read-only or destructive.
    spine = with_recorded_kinds(base, episodes)
    if replays_episodes(spine):
        raise ParameterError(
            "base",
            "it hedges or has a breaker, which the tuner's compiled replays do not apply; "
            "tune the timeouts without them (then sweep hedges and breakers with make_grid)",
        )
    if not isinstance(spine.timeouts, TimeoutPolicy):
        raise ParameterError(
            "base",
            f"its timeouts are a custom rule ({type(spine.timeouts).__name__}); "
            "recommend tunes a TimeoutPolicy's per-tool table",
        )
    return spine, spine.timeouts


def _tuning_engine(
    engine: Engine | str, client: Any, spine: Policy, censored: CensoringMode
) -> Vectorized | Cluster:
    """The engine the replays run on: the vectorized one, in-process or on a cluster, having
    admitted ``spine`` and ``censored`` by its declaration before any work."""
    chosen = engine_of(engine, client=client)
    if not isinstance(chosen, Vectorized | Cluster):
        raise ParameterError(
            "engine",
            "the tuner replays with the vectorized engine, in-process or "
            f"Cluster(client), not {type(chosen).__name__}",
        )
    chosen.admit(spine, censored, "as_recorded")
    return chosen

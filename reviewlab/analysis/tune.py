"""Timeout tuning: per tool, the shortest timeout the budgets allow, and what it buys.

:func:`recommend` answers one question with one stated rule (:data:`RULE`), on one corpus,
under one stated censoring assumption. Lifecycle: each tool's ladder of candidate timeouts
comes from its censoring-aware quantiles (:data:`LADDER_QUANTILES`) plus its loosest rung;
every tool starts loosest, and one step at a time the allowed tighter step with the best
objective is taken (allowed: the budgets hold, on the corpus at their upper confidence bound
and for unseen episodes in the tail model, and the objective gets no worse); then each tool's
choice is explained. With ``prices`` the objective may be the cost.

Invariants: the recommended policy never has a worse objective than its start; its budgets are
checked and reported, never assumed; every figure is a vectorized replay of the same corpus
that ``reviewlab replay --policy`` reproduces. The search in full: docs/metrics.md, "How tune
searches".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from reviewlab.analysis.attribution import difference, explain_table
from reviewlab.analysis.budgets import BudgetEvaluator, BudgetPoint, budget_table
from reviewlab.analysis.certify import DEFAULT_GUARANTEE_CONFIDENCE, Certificate, certify
from reviewlab.analysis.certify import check_guarantee as _check_probability
from reviewlab.analysis.cost import COST_KEYS, PricedCorpus
from reviewlab.analysis.safety import (
    DEFAULT_MAX_ADDED_ABANDONED_RATE,
    DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE,
    DEFAULT_MIN_CALLS,
    SafetyRules,
    Standing,
    check_opted_in,
    restrict_ladder,
    standings,
)
from reviewlab.analysis.sweep import (
    OBJECTIVE_ALIASES,
    default_threads,
    objective_column,
    replays_episodes,
)
from reviewlab.analysis.tails import LossModel
from reviewlab.core.atomic import write_text_atomic
from reviewlab.core.policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.core.prices import PriceTable
from reviewlab.core.vocab import CensoringMode
from reviewlab.engines.censoring import KaplanMeier
from reviewlab.engines.corpus import CorpusSource, open_corpus
from reviewlab.engines.vectorized import CompiledCorpus

__all__ = [
    "LADDER_QUANTILES",
    "OBJECTIVES",
    "RULE",
    "RULE_GUARANTEE",
    "Recommendation",
    "excess",
    "km_quantile",
    "recommend",
]

OBJECTIVES = {
    name: column
    for name, column in OBJECTIVE_ALIASES.items()
    if column.startswith(("wall_", "max_silence", "zombie", "cost"))
}
"""Objective names and the summary column each minimises (a summary column itself is accepted)."""
LADDER_QUANTILES = (0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995)
"""The survival quantiles each tool's candidate timeouts are read from."""
_SERIES = tuple(m * 10.0**e for e in range(-1, 5) for m in (1.0, 2.0, 5.0))
"""Round timeouts (0.1 s … 50,000 s) that fill a ladder between its quantile rungs and the top."""
RULE = (
    "each tool starts at its loosest candidate (its base timeout, or beyond its longest "
    "completed call) and is tightened one step of its Kaplan–Meier quantile ladder at a time, "
    "always the step with the best {objective}, as long as {objective} gets no worse and both "
    "the {confidence:.0%} upper bounds over episodes and the tail model's predictions for "
    "unseen episodes of the timeout coverage loss and the abandoned-call rate stay within "
    "budget; it stops when no step is allowed"
)
"""The rule :func:`recommend` applies, as the output states it (then the safety rules,
:meth:`~reviewlab.analysis.safety.SafetyRules.describe`)."""
RULE_GUARANTEE = (
    "each tool gets the shortest timeout t with P(a call finishes within t) >= {guarantee:g} "
    "certified at confidence {guarantee_confidence:g} by an order statistic of its recorded "
    "durations, calls that never returned counted as never finishing (docs/metrics.md, "
    '"Certified timeouts"); a tool whose calls cannot certify it keeps the base timeout; '
    "the budgets are checked, not searched"
)
"""The rule of :func:`recommend` with ``guarantee`` (then the safety rules)."""


class Recommendation(NamedTuple):
    """What :func:`recommend` returns: the policy, the rule, the
    budgets' verdicts and the reasons."""

    policy: Policy
    """The recommended policy: per-tool timeouts (no floor; every tool of the corpus explicit)
    under the narrowing it was tuned with (the base's other parts kept)."""
    explain: pd.DataFrame
    """One row per tool: durations, the choice, what it buys, one step tighter and looser."""
    summary: dict[str, Any]
    """Summary of the corpus under the recommended policy."""
    baseline: dict[str, Any]
    """Summary of the corpus under ``base``."""
    budgets: pd.DataFrame
    """One row per budget: ``budget, limit, estimate,
    upper_<confidence>, predicted_unseen, met``."""
    rule: str
    """The rule applied, in words."""
    objective: str
    """The summary column minimised."""
    assumptions: dict[str, Any]
    """Censoring mode, engine, confidence level and the base policy's name."""

    @property
    def met(self) -> bool:
        """Whether every budget holds at its upper confidence bound."""
        return bool(self.budgets["met"].all())

    def to_toml(self) -> str:
        """The policy file ``-o`` writes, as :meth:`Policy.load` reads it back."""
        return self.policy.to_toml()

    def save(self, path: str | Path) -> Path:
        """Write :meth:`to_toml` to ``path`` whole or not at all; returns the path."""
        return write_text_atomic(path, self.to_toml())

    @property
    def saved(self) -> float:
        """The objective under ``base`` minus under the
        recommendation (the saving; inf − inf is 0)."""
        return difference(self.baseline[self.objective], self.summary[self.objective])


def km_quantile(estimate: KaplanMeier, q: float) -> float:
    """The ``q``-quantile of a Kaplan–Meier estimate: the first event time with ``S(t) <= 1 - q``.

    ``inf`` when censoring leaves the estimate above ``1 - q`` (the quantile lies
    beyond what was observed).
    """
    if not 0.0 < q < 1.0:
        raise ValueError(f"q: expected a probability in (0, 1), got {q!r}")
    hit = int(np.searchsorted(-estimate.survival_after, -(1.0 - q), side="left"))
    return float(estimate.event_times[hit]) if hit < estimate.event_times.size else math.inf


def excess(summary: dict[str, Any], reference: dict[str, Any]) -> tuple[float, float]:
    """``(coverage loss, abandoned-call rate)`` of ``summary`` beyond a ``reference`` replay's."""
    return (
        summary["coverage_loss_rate"] - reference["coverage_loss_rate"],
        summary["abandoned_call_rate"] - reference["abandoned_call_rate"],
    )


def _nice(seconds: float) -> float:
    """Round a candidate timeout up to two significant digits (0.1 s at least)."""
    if seconds <= 0.1:
        return 0.1
    step = 10.0 ** (math.floor(math.log10(seconds)) - 1)
    return float(round(math.ceil(seconds / step - 1e-9) * step, 6))


def _ladder(estimate: KaplanMeier, longest_completed: float, base_sec: float) -> list[float]:
    """A tool's candidate timeouts, ascending; the last is the loosest (see the module docstring).

    The quantile rungs, the tool's slowest completed call rounded up, and the
    round values of :data:`_SERIES` between the median and the loosest rung (so
    a step looser than the slowest call seen never jumps straight to the base).
    """
    slowest = _nice(longest_completed * 1.01) if longest_completed > 0 else 0.1
    loosest = max(base_sec, slowest)
    rungs = {loosest, slowest}
    for q in LADDER_QUANTILES:
        quantile = km_quantile(estimate, q)
        if math.isfinite(quantile) and _nice(quantile) < loosest:
            rungs.add(_nice(quantile))
    median = min(rungs)
    rungs.update(value for value in _SERIES if median < value < loosest)
    if base_sec < loosest:
        rungs.add(base_sec)
    return sorted(rungs)


def _check_rate(name: str, value: float | None) -> None:
    if value is not None and not (
        isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0
    ):
        raise ValueError(f"{name}: expected a rate in [0, 1], got {value!r}")


def recommend(
    episodes: CorpusSource,
    *,
    max_timeout_coverage_loss: float | None = None,
    max_abandoned_rate: float | None = None,
    objective: str = "wall_p95",
    base: Policy | TimeoutPolicy | None = None,
    narrowing: Narrowing | None = None,
    censored: CensoringMode = "wedge",
    confidence: float = 0.95,
    max_coverage_loss: float | None = None,
    prices: PriceTable | None = None,
    min_calls: int = DEFAULT_MIN_CALLS,
    allow_abandoning: Sequence[str] = (),
    max_added_abandoned_rate: float | None = DEFAULT_MAX_ADDED_ABANDONED_RATE,
    max_tool_added_abandoned_rate: float | None = DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE,
    guarantee: float | None = None,
    guarantee_confidence: float = DEFAULT_GUARANTEE_CONFIDENCE,
) -> Recommendation:
    """Per tool, the shortest timeout within the budgets, by :data:`RULE` (module docstring).

    ``episodes``: the corpus, anything :func:`~reviewlab.engines.corpus.open_corpus` takes (a
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
    summaries carry :data:`~reviewlab.analysis.cost.COST_KEYS`.

    The safety rules (:mod:`reviewlab.analysis.safety`): a tool with fewer than ``min_calls``
    recorded calls keeps the base timeout; a side-effecting tool, or one of unknown kind
    (``base.kind_of``), is never tightened below its slowest completed call unless named in
    ``allow_abandoning``; the calls abandoned beyond what the loosest timeouts abandon stay
    within ``max_added_abandoned_rate`` of all calls and ``max_tool_added_abandoned_rate`` of
    each tool's (``None``: no such budget).

    ``guarantee`` (a probability in (0, 1)): instead of the search, each tool gets its
    certified timeout (:func:`~reviewlab.analysis.certify.certify` at
    ``guarantee_confidence``), under the same safety rules; the budgets are reported.
    """
    if max_coverage_loss is not None:
        if max_timeout_coverage_loss is not None:
            raise ValueError(
                "max_coverage_loss: the former name of max_timeout_coverage_loss; give only one"
            )
        warnings.warn(
            "max_coverage_loss is now max_timeout_coverage_loss (it bounds the coverage lost "
            "to timeouts)",
            DeprecationWarning,
            stacklevel=2,
        )
        _check_rate("max_coverage_loss", max_coverage_loss)
        max_timeout_coverage_loss = max_coverage_loss
    if max_timeout_coverage_loss is None:
        max_timeout_coverage_loss = 0.01
    _check_rate("max_timeout_coverage_loss", max_timeout_coverage_loss)
    _check_rate("max_abandoned_rate", max_abandoned_rate)
    if not 0.0 <= confidence < 1.0:
        raise ValueError(f"confidence: expected a probability in [0, 1), got {confidence!r}")
    try:
        key = objective_column(objective)
    except ValueError:
        raise ValueError(
            f"objective: expected one of {', '.join(OBJECTIVES)} or a summary column, "
            f"got {objective!r}"
        ) from None
    if key in COST_KEYS and prices is None:
        raise ValueError(f"objective: {objective!r} needs a price table (prices=...)")
    rules = SafetyRules(
        min_calls, tuple(allow_abandoning), max_added_abandoned_rate, max_tool_added_abandoned_rate
    )
    if guarantee is not None:
        _check_probability("guarantee", guarantee)
    _check_probability("guarantee_confidence", guarantee_confidence)
    spine = Policy.of(base, narrowing)
    if replays_episodes(spine):
        raise ValueError(
            "base: it hedges or has a breaker, which the tuner's compiled replays do not apply; "
            "tune the timeouts without them (then sweep hedges and breakers with make_grid)"
        )
    if not isinstance(spine.timeouts, TimeoutPolicy):
        raise ValueError(
            f"base: its timeouts are a custom rule ({type(spine.timeouts).__name__}); "
            "recommend tunes a TimeoutPolicy's per-tool table"
        )
    base_timeouts: TimeoutPolicy = spine.timeouts
    narrowing = spine.narrowing
    if narrowing.mode == "unbounded":
        raise ValueError("narrowing: an unbounded narrowing has no timeouts to tune")
    # The corpus is replayed from its compiled columns and the duration and tail models are fitted
    # to its recorded observations: no Episode object unless prices read their token counts.
    source = open_corpus(episodes)
    observations = source.observations()
    if not observations.episodes:
        raise ValueError("recommend: no episodes to tune on")
    corpus = source.compiled(censored)
    z = NormalDist().inv_cdf(confidence) if confidence > 0.5 else 0.0
    model = LossModel(observations, confidence=confidence)
    priced = None
    if prices is not None:  # the token counts live in the episodes
        priced = PricedCorpus.of(source.episodes(reason="prices: token counts"), prices)
    evaluator = (
        BudgetEvaluator(corpus, spine, z, model)
        if priced is None
        else _PricedEvaluator(corpus, spine, z, model, priced)
    )
    estimates, _ = observations.estimates_by_tool()
    tools = sorted(estimates, key=lambda t: (-estimates[t].observations, t))
    check_opted_in(rules.allow_abandoning, tools)
    longest = observations.longest_completed()
    base_sec = {tool: base_timeouts.timeout_for(None, tool, remaining_sec=None) for tool in tools}
    standing = standings(
        spine, {tool: estimates[tool].observations for tool in tools}, longest, rules
    )
    ladders = {
        tool: restrict_ladder(
            _ladder(estimates[tool], longest.get(tool, 0.0), base_sec[tool]),
            standing[tool],
            base_sec[tool],
        )
        for tool in tools
    }
    chosen = {tool: ladders[tool][-1] for tool in tools}
    evaluator.start(chosen)

    def allowed(point: BudgetPoint) -> bool:
        coverage = max(point.timeout_loss_upper, point.timeout_loss_predicted)
        abandoned = max(point.abandoned_upper, point.abandoned_predicted)
        return (
            coverage <= max_timeout_coverage_loss + 1e-12
            and (max_abandoned_rate is None or abandoned <= max_abandoned_rate + 1e-12)
            and rules.allows(point)
        )

    certificates: dict[str, Certificate] | None = None
    if guarantee is not None:
        certificates = {}
        for tool in tools:
            mine = observations.of_tool(tool)
            certificates[tool] = certify(
                observations.duration_sec[mine],
                observations.completed[mine],
                guarantee,
                guarantee_confidence,
            )
            chosen[tool] = _certified_rung(ladders[tool], certificates[tool], standing[tool])
            if chosen[tool] not in ladders[tool]:
                ladders[tool] = sorted({*ladders[tool], chosen[tool]})
    current = evaluator.point(chosen)
    while certificates is None:
        best: tuple[tuple[float, float, float, float, int], str, BudgetPoint] | None = None
        _prefetch(
            evaluator,
            [
                {**chosen, tool: ladders[tool][ladders[tool].index(chosen[tool]) - 1]}
                for tool in tools
                if ladders[tool].index(chosen[tool]) > 0
            ],
        )
        for order, tool in enumerate(tools):
            rung = ladders[tool].index(chosen[tool])
            if rung == 0:
                continue
            point = evaluator.point({**chosen, tool: ladders[tool][rung - 1]})
            if not allowed(point) or point.summary[key] > current.summary[key]:
                continue
            rank = (
                point.summary[key],
                point.timeout_loss_upper,
                point.timeout_loss_predicted,
                point.abandoned_upper,
                order,
            )
            if best is None or rank < best[0]:
                best = (rank, tool, point)
        if best is None:
            break
        _, tool, current = best
        chosen[tool] = ladders[tool][ladders[tool].index(chosen[tool]) - 1]

    policy = spine.replace(
        timeouts=base_timeouts.with_tool_timeouts(name="recommended", **chosen), name="recommended"
    )
    baseline = _summary(corpus, spine, priced)
    added: dict[str, tuple[tuple[float, float, float], float | None]] = {
        "added_abandoned_call_rate": (current.added_abandoned, rules.max_added_abandoned_rate)
    }
    for tool in tools:
        if standing[tool].status == "kept_rare":
            continue  # held at its base timeout: it adds nothing
        figures = current.tool_added_abandoned.get(tool, (0.0, 0.0, 0.0))
        added[f"added_abandoned_call_rate.{tool}"] = (
            figures,
            rules.max_tool_added_abandoned_rate,
        )
    budgets = budget_table(
        evaluator.rates(chosen),
        {
            "timeout_coverage_loss_rate": current.timeout_loss_predicted,
            "abandoned_call_rate": current.abandoned_predicted,
        },
        max_timeout_coverage_loss,
        max_abandoned_rate,
        confidence,
        added,
    )
    explain = explain_table(
        evaluator,
        estimates=estimates,
        tools=tools,
        ladders=ladders,
        base_sec=base_sec,
        chosen=chosen,
        current=current,
        key=key,
        allowed=allowed,
        standing=standing,
        rules=rules,
        recorded_completed=observations.completed,
        certificates=certificates,
    )
    rule = (
        RULE.format(objective=key, confidence=confidence)
        if guarantee is None
        else RULE_GUARANTEE.format(guarantee=guarantee, guarantee_confidence=guarantee_confidence)
    )
    return Recommendation(
        policy=policy,
        explain=explain,
        summary=_summary(corpus, policy, priced),
        baseline=baseline,
        budgets=budgets,
        rule=f"{rule}; {rules.describe(confidence)}",
        objective=key,
        assumptions={
            "censored": censored,
            "reaction": "as_recorded",
            "engine": "vectorized",
            "confidence": confidence,
            "base": spine.label,
            "narrowing": narrowing.label,
            "min_calls": rules.min_calls,
            "allow_abandoning": ",".join(rules.allow_abandoning) or "none",
            **(
                {"guarantee": guarantee, "guarantee_confidence": guarantee_confidence}
                if guarantee is not None
                else {}
            ),
            **({"currency": prices.currency} if prices is not None else {}),
        },
    )


class _PricedEvaluator(BudgetEvaluator):
    """A :class:`BudgetEvaluator` whose points' summaries carry the cost of their replay."""

    def __init__(
        self,
        corpus: CompiledCorpus,
        base: Policy,
        z: float,
        model: LossModel,
        priced: PricedCorpus,
    ) -> None:
        super().__init__(corpus, base, z, model)
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


def _summary(corpus: CompiledCorpus, policy: Policy, priced: PricedCorpus | None) -> dict[str, Any]:
    """The corpus's summary under ``policy``, priced when there is a price table."""
    if priced is None:
        return corpus.summary(policy)
    result = corpus.result(policy)
    return {**result.summary, **priced.cost(result).summary}


def _certified_rung(ladder: list[float], certificate: Certificate, standing: Standing) -> float:
    """A tool's timeout under a guarantee: its certified timeout rounded up, never below the
    rungs the safety rules leave it; the base (the loosest rung) when it is rarely seen or
    cannot be certified."""
    if standing.status == "kept_rare" or not certificate.certified:
        return ladder[-1]
    certified = _nice(certificate.timeout_sec)
    return max(certified, ladder[0]) if standing.status == "protected" else certified


def _prefetch(evaluator: BudgetEvaluator, candidates: list[dict[str, float]]) -> None:
    """Evaluate one step's candidate points side by side on threads (NumPy releases the GIL;
    each point is a pure function of its timeouts, so the search's choices are the same as one
    after another): the search then reads them from the evaluator's cache."""
    fresh = [c for c in candidates if not evaluator.cached(c)]
    workers = min(default_threads(), len(fresh))
    if workers < 2:
        return
    with ThreadPoolExecutor(workers, thread_name_prefix="reviewlab-tune") as pool:
        list(pool.map(evaluator.point, fresh))

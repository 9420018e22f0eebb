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
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist
from typing import Any, NamedTuple

import pandas as pd

from reviewlab.analysis._attribution import Choice, ToolFacts, difference, explain_table
from reviewlab.analysis._budgets import BudgetPoint, Evaluator, budget_table
from reviewlab.analysis._certify import DEFAULT_GUARANTEE_CONFIDENCE, Certificate
from reviewlab.analysis._certify import check_guarantee as _check_probability
from reviewlab.analysis._cost import COST_KEYS
from reviewlab.analysis._profiles import (
    DurationProfile,
    base_seconds,
    nice,
)
from reviewlab.analysis._safety import (
    DEFAULT_MAX_ADDED_ABANDONED_RATE,
    DEFAULT_MAX_TOOL_ADDED_ABANDONED_RATE,
    DEFAULT_MIN_CALLS,
    SafetyRules,
    Standing,
    check_opted_in,
    restrict_ladder,
    standings,
)
from reviewlab.analysis._tune_figures import tuning_figures
from reviewlab.analysis.sweep import OBJECTIVE_ALIASES, objective_column, replays_episodes
from reviewlab.core._atomic import write_text_atomic
from reviewlab.core._display import html_of
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Narrowing, Policy, TimeoutPolicy
from reviewlab.core._prices import PriceTable
from reviewlab.core._vocab import CensoringMode
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
RULE = (
    "each tool starts at its loosest candidate (its base timeout, or beyond its longest "
    "completed call) and is tightened one step of its Kaplan–Meier quantile ladder at a time, "
    "always the step with the best {objective}, as long as {objective} gets no worse and both "
    "the {confidence:.0%} upper bounds over episodes and the tail model's predictions for "
    "unseen episodes of the timeout coverage loss and the abandoned-call rate stay within "
    "budget; it stops when no step is allowed"
)
"""The rule :func:`recommend` applies, as the output states it (then the safety rules,
:meth:`~reviewlab.analysis._safety.SafetyRules.describe`)."""
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

    def _repr_html_(self) -> str | None:
        """The policy, the budgets' verdicts and what it changes, for Jupyter
        (:mod:`reviewlab.core._display`)."""
        return html_of("recommendation", self)


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
    client: Any = None,
    engine: Engine | str = "vectorized",
) -> Recommendation:
    """Per tool, the shortest timeout within the budgets, by :data:`RULE` (module docstring).

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
    search = _Search(
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


class _Search(NamedTuple):
    """The search of :data:`RULE` (or the guarantee's), over any :class:`Evaluator`."""

    spine: Policy
    base_timeouts: TimeoutPolicy
    rules: SafetyRules
    key: str
    max_timeout_coverage_loss: float
    max_abandoned_rate: float | None
    confidence: float
    guarantee: float | None
    guarantee_confidence: float

    def allowed(self, point: BudgetPoint) -> bool:
        coverage = max(point.timeout_loss_upper, point.timeout_loss_predicted)
        abandoned = max(point.abandoned_upper, point.abandoned_predicted)
        return (
            coverage <= self.max_timeout_coverage_loss + 1e-12
            and (self.max_abandoned_rate is None or abandoned <= self.max_abandoned_rate + 1e-12)
            and self.rules.allows(point)
        )

    def foreseen_out(self, evaluator: Evaluator, chosen: dict[str, float]) -> bool:
        """Whether the tail model alone already breaks a budget at ``chosen``: :meth:`allowed`
        refuses its point whatever its replay says (each budget holds the larger of the upper
        bound and the prediction), so the search does not replay it."""
        coverage, abandoned, added = evaluator.foreseen(chosen)
        overall = self.rules.max_added_abandoned_rate
        return (
            coverage > self.max_timeout_coverage_loss + 1e-12
            or (self.max_abandoned_rate is not None and abandoned > self.max_abandoned_rate + 1e-12)
            or (overall is not None and added > overall + 1e-12)
        )

    def assumptions(self, censored: CensoringMode, prices: PriceTable | None) -> dict[str, Any]:
        """What a recommendation of this search rests on: the censoring, the engine, the
        confidence, the base, the safety rules, the guarantee and the prices' currency."""
        rules = self.rules
        return {
            "censored": censored,
            "reaction": "as_recorded",
            "engine": "vectorized",
            "confidence": self.confidence,
            "base": self.spine.label,
            "narrowing": self.spine.narrowing.label,
            "min_calls": rules.min_calls,
            "allow_abandoning": ",".join(rules.allow_abandoning) or "none",
            **(
                {"guarantee": self.guarantee, "guarantee_confidence": self.guarantee_confidence}
                if self.guarantee is not None
                else {}
            ),
            **({"currency": prices.currency} if prices is not None else {}),
        }

    def run(
        self,
        profiles: dict[str, DurationProfile],
        evaluator: Evaluator,
        assumptions: dict[str, Any],
    ) -> Recommendation:
        """Every tool starts at its loosest rung; under a guarantee each takes its certified
        rung, otherwise the search tightens step by step; then the choice is reported."""
        facts = self.ladders(profiles)
        chosen = {tool: facts.ladders[tool][-1] for tool in facts.tools}
        evaluator.start(chosen)
        if self.guarantee is not None:
            facts = self.certify(facts, chosen)
        current = evaluator.point(chosen)
        if self.guarantee is None:
            current = self.tighten(evaluator, facts, chosen, current)
        return self.recommendation(evaluator, facts, chosen, current, assumptions)

    def ladders(self, profiles: dict[str, DurationProfile]) -> ToolFacts:
        """The tools, most observed first, with their base timeouts, standings under the safety
        rules and the ladders of rungs those rules leave them."""
        tools = sorted(profiles, key=lambda t: (-profiles[t].observations, t))
        check_opted_in(self.rules.allow_abandoning, tools)
        longest = {t: p.longest_completed_sec for t, p in profiles.items() if p.events}
        base_sec = base_seconds(self.spine, tools)
        standing = standings(
            self.spine, {tool: profiles[tool].observations for tool in tools}, longest, self.rules
        )
        ladders = {
            tool: restrict_ladder(list(profiles[tool].ladder), standing[tool], base_sec[tool])
            for tool in tools
        }
        return ToolFacts(tools, profiles, ladders, base_sec, standing)

    def certify(self, facts: ToolFacts, chosen: dict[str, float]) -> ToolFacts:
        """Under a guarantee: each tool's certified rung into ``chosen``, added to its ladder
        when it is not a rung; the facts gain the certificates."""
        certificates: dict[str, Certificate] = {}
        ladders = dict(facts.ladders)
        for tool in facts.tools:
            certificate = facts.profiles[tool].certificate
            assert certificate is not None
            certificates[tool] = certificate
            chosen[tool] = _certified_rung(ladders[tool], certificate, facts.standing[tool])
            if chosen[tool] not in ladders[tool]:
                ladders[tool] = sorted({*ladders[tool], chosen[tool]})
        return replace(facts, ladders=ladders, certificates=certificates)

    def tighten(
        self,
        evaluator: Evaluator,
        facts: ToolFacts,
        chosen: dict[str, float],
        current: BudgetPoint,
    ) -> BudgetPoint:
        """Take the best allowed step one rung tighter until none is; ``chosen`` follows the
        steps, and the point of the last one is returned."""
        while (step := self.best_step(evaluator, facts, chosen, current)) is not None:
            tool, current = step
            chosen[tool] = _tighter(facts.ladders[tool], chosen[tool])
        return current

    def best_step(
        self,
        evaluator: Evaluator,
        facts: ToolFacts,
        chosen: dict[str, float],
        current: BudgetPoint,
    ) -> tuple[str, BudgetPoint] | None:
        """The tool whose step one rung tighter is allowed and has the best objective (ties: the
        lower coverage-loss bound and prediction, abandoned bound, then table order), with its
        point; ``None`` when no step is allowed."""
        ladders, key = facts.ladders, self.key
        # One step tighter for each tool; only those the tail model does not already refuse
        # are replayed (the refused ones could not be chosen).
        candidates = {
            tool: {**chosen, tool: _tighter(ladders[tool], chosen[tool])}
            for tool in facts.tools
            if ladders[tool].index(chosen[tool]) > 0
        }
        candidates = {
            tool: candidate
            for tool, candidate in candidates.items()
            if not self.foreseen_out(evaluator, candidate)
        }
        evaluator.prefetch(list(candidates.values()))
        best: tuple[tuple[float, float, float, float, int], str, BudgetPoint] | None = None
        for order, tool in enumerate(facts.tools):
            if tool not in candidates:
                continue
            point = evaluator.point(candidates[tool])
            if not self.allowed(point) or point.summary[key] > current.summary[key]:
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
        return None if best is None else (best[1], best[2])

    def recommendation(
        self,
        evaluator: Evaluator,
        facts: ToolFacts,
        chosen: dict[str, float],
        current: BudgetPoint,
        assumptions: dict[str, Any],
    ) -> Recommendation:
        """The chosen timeouts as a policy, with the budgets' verdicts, each tool's explanation,
        the summaries under it and under the base, and the rule in words."""
        policy = self.spine.replace(
            timeouts=self.base_timeouts.with_tool_timeouts(name="recommended", **chosen),
            name="recommended",
        )
        explain = explain_table(
            evaluator, facts, Choice(chosen, current, self.key, self.allowed), self.rules
        )
        return Recommendation(
            policy=policy,
            explain=explain,
            summary=evaluator.summary(policy),
            baseline=evaluator.summary(self.spine),
            budgets=self.budgets(evaluator, facts, chosen, current),
            rule=f"{self.rule()}; {self.rules.describe(self.confidence)}",
            objective=self.key,
            assumptions=assumptions,
        )

    def budgets(
        self,
        evaluator: Evaluator,
        facts: ToolFacts,
        chosen: dict[str, float],
        current: BudgetPoint,
    ) -> pd.DataFrame:
        """One row per budget at the chosen point: coverage loss, abandoned calls, and the
        calls abandoned beyond the loosest timeouts', overall and per tool not kept rare."""
        rules = self.rules
        added: dict[str, tuple[tuple[float, float, float], float | None]] = {
            "added_abandoned_call_rate": (current.added_abandoned, rules.max_added_abandoned_rate)
        }
        for tool in facts.tools:
            if facts.standing[tool].status == "kept_rare":
                continue  # held at its base timeout: it adds nothing
            figures = current.tool_added_abandoned.get(tool, (0.0, 0.0, 0.0))
            added[f"added_abandoned_call_rate.{tool}"] = (
                figures,
                rules.max_tool_added_abandoned_rate,
            )
        return budget_table(
            evaluator.rates(chosen),
            {
                "timeout_coverage_loss_rate": current.timeout_loss_predicted,
                "abandoned_call_rate": current.abandoned_predicted,
            },
            self.max_timeout_coverage_loss,
            self.max_abandoned_rate,
            self.confidence,
            added,
        )

    def rule(self) -> str:
        """The rule applied, in words: :data:`RULE`, or :data:`RULE_GUARANTEE` under a
        guarantee."""
        if self.guarantee is None:
            return RULE.format(objective=self.key, confidence=self.confidence)
        return RULE_GUARANTEE.format(
            guarantee=self.guarantee, guarantee_confidence=self.guarantee_confidence
        )


def _tighter(ladder: list[float], rung: float) -> float:
    """The rung one step tighter than ``rung`` on its ``ladder``."""
    return ladder[ladder.index(rung) - 1]


def _certified_rung(ladder: list[float], certificate: Certificate, standing: Standing) -> float:
    """A tool's timeout under a guarantee: its certified timeout rounded up, never below the
    rungs the safety rules leave it; the base (the loosest rung) when it is rarely seen or
    cannot be certified."""
    if standing.status == "kept_rare" or not certificate.certified:
        return ladder[-1]
    certified = nice(certificate.timeout_sec)
    return max(certified, ladder[0]) if standing.status == "protected" else certified

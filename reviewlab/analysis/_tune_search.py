"""The tuner's search: from every tool at its loosest rung, the best allowed step at a time.

Lifecycle: :meth:`TuneSearch.run` gives each tool its ladder under the safety rules
(:mod:`reviewlab.analysis._safety`), starts every tool at its loosest rung, then either takes
each tool's certified rung (a guarantee) or tightens one rung at a time, always the allowed
step with the best objective, until none is allowed; it ends in a
:class:`~reviewlab.analysis._recommendation.Recommendation`. The figures come from any
:class:`~reviewlab.analysis._budgets.Evaluator` (in-process or a cluster's).

Invariants: a step is allowed only when each budget holds at the larger of its upper bound and
the tail model's prediction, and the objective gets no worse; a point the tail model alone
refuses is never replayed; ties break by a fixed order, so the search is deterministic.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import pandas as pd

from reviewlab.analysis._attribution import Choice, ToolFacts, explain_table
from reviewlab.analysis._budgets import BudgetPoint, Evaluator, budget_table
from reviewlab.analysis._certify import Certificate
from reviewlab.analysis._profiles import DurationProfile, base_seconds, nice
from reviewlab.analysis._recommendation import RULE, RULE_GUARANTEE, Recommendation
from reviewlab.analysis._safety import (
    SafetyRules,
    Standing,
    check_opted_in,
    restrict_ladder,
    standings,
)
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._prices import PriceTable
from reviewlab.core._vocab import CensoringMode


class TuneSearch(NamedTuple):
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
            chosen[tool] = certified_rung(ladders[tool], certificate, facts.standing[tool])
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
            chosen[tool] = tighter(facts.ladders[tool], chosen[tool])
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
            tool: {**chosen, tool: tighter(ladders[tool], chosen[tool])}
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


def tighter(ladder: list[float], rung: float) -> float:
    """The rung one step tighter than ``rung`` on its ``ladder``."""
    return ladder[ladder.index(rung) - 1]


def certified_rung(ladder: list[float], certificate: Certificate, standing: Standing) -> float:
    """A tool's timeout under a guarantee: its certified timeout rounded up, never below the
    rungs the safety rules leave it; the base (the loosest rung) when it is rarely seen or
    cannot be certified."""
    if standing.status == "kept_rare" or not certificate.certified:
        return ladder[-1]
    certified = nice(certificate.timeout_sec)
    return max(certified, ladder[0]) if standing.status == "protected" else certified

"""Per-tool figures of a recommendation, each the tool's own effect (docs/metrics.md, "tune's
per-tool table").

A tool's figure must not carry another tool's doing: when ``query_code`` is abandoned, every
later read of its episode loses its credit, and a breakdown of the whole tuned replay by tool
would blame ``read_file`` for it. So every per-tool column of :func:`explain_table` comes from
a replay that changes THAT tool alone: the base policy with only this tool at its recommended
timeout (``own`` figures, compared with the base replay), or the recommendation with only this
tool one step tighter or looser. Own effects do not add up to the whole policy's (one
abandonment withholds the credit of reads of any tool after it); the whole-policy figures are
the summary's, labelled as such.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reviewlab.analysis._budgets import BudgetPoint, Evaluator
from reviewlab.analysis._certify import Certificate
from reviewlab.analysis._profiles import EXPLAIN_QUANTILES, DurationProfile
from reviewlab.analysis._safety import SafetyRules, Standing

QUANTILES = EXPLAIN_QUANTILES
"""The duration quantiles the explanation shows."""


def difference(a: float, b: float) -> float:
    """``a - b``, with ``inf - inf`` read as no change (0)."""
    return 0.0 if a == b else a - b


@dataclass(frozen=True)
class ToolFacts:
    """What the search knew of each tool it tuned: the tools in table order, their duration
    profiles, ladders of candidate timeouts, base timeouts, standings under the rules and, under
    a guarantee, their certificates."""

    tools: Sequence[str]
    profiles: Mapping[str, DurationProfile]
    ladders: Mapping[str, list[float]]
    base_sec: Mapping[str, float]
    standing: Mapping[str, Standing]
    certificates: Mapping[str, Certificate] | None = None


@dataclass(frozen=True)
class Choice:
    """The recommendation a table explains: each tool's chosen timeout, the point they make, the
    objective's summary key, and whether a point is within the budgets."""

    chosen: Mapping[str, float]
    current: BudgetPoint
    key: str
    allowed: Callable[[BudgetPoint], bool]


def explain_table(
    evaluator: Evaluator, facts: ToolFacts, choice: Choice, rules: SafetyRules
) -> pd.DataFrame:
    """One row per tool: its durations, its standing under the rules, its choice, its own effect
    (changed alone from the base), and one step tighter and looser (changed alone from the
    recommendation). Column meanings: docs/metrics.md, "tune's per-tool table"."""
    at_base, chosen, ladders = dict(facts.base_sec), choice.chosen, facts.ladders
    steps = [
        {**chosen, tool: ladders[tool][step]}
        for tool in facts.tools
        for step in (ladders[tool].index(chosen[tool]) + side for side in (-1, 1))
        if 0 <= step < len(ladders[tool])
    ]
    alone = ({**at_base, tool: chosen[tool]} for tool in facts.tools)
    evaluator.prefetch([at_base, *alone, *steps])
    base = _Base(evaluator.point(at_base), evaluator.abandoned_counts(at_base).total)
    rows = []
    for tool in facts.tools:
        row = _tool_columns(facts, tool, chosen[tool], rules)
        row.update(_own_effect(evaluator, facts, choice, base, tool))
        row.update(_steps_either_side(evaluator, facts, choice, tool))
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Base:
    """The base replay each tool's own effect is measured from."""

    point: BudgetPoint
    abandoned: int


def _tool_columns(
    facts: ToolFacts, tool: str, timeout: float, rules: SafetyRules
) -> dict[str, Any]:
    """What is known of the tool before any replay: its standing, durations, base and chosen
    timeouts, certificate, and the survival and tail figures at the chosen timeout."""
    profile, standing = facts.profiles[tool], facts.standing[tool]
    row: dict[str, Any] = {
        "tool": tool,
        "kind": standing.kind,
        "status": standing.status,
        "reason": standing.reason(rules.min_calls, facts.base_sec[tool]),
        "calls": profile.observations,
        "censored": profile.observations - profile.events,
    }
    row.update({f"duration_p{q * 100:g}_sec": profile.quantiles[q] for q in QUANTILES})
    row["slowest_completed_sec"] = standing.slowest_completed_sec
    row["base_timeout_sec"] = facts.base_sec[tool]
    row["timeout_sec"] = timeout
    if facts.certificates is not None:
        certificate = facts.certificates[tool]
        row["certified_sec"] = certificate.timeout_sec
        row["certificate_rank"] = certificate.rank
        row["certificate"] = certificate.reason or (
            f"P(finish within {certificate.timeout_sec:.4g} s) >= {certificate.guarantee:g} "
            f"at confidence {certificate.confidence:g} (order statistic "
            f"{certificate.rank} of {certificate.calls})"
        )
    # The share of the tool's calls that return within the timeout, by Kaplan–Meier.
    row["survival_quantile"] = 1.0 - profile.survival.survival(timeout)
    return row


def _own_effect(
    evaluator: Evaluator, facts: ToolFacts, choice: Choice, base: _Base, tool: str
) -> dict[str, Any]:
    """The tool's own effect: the base with this tool alone at its recommended timeout."""
    timeout, key = choice.chosen[tool], choice.key
    tail = evaluator.model.tools[tool]
    row: dict[str, Any] = {"tail_alpha": tail.alpha}
    row["predicted_timeout_loss"] = evaluator.model.timeout_coverage_loss(
        {tool: timeout}
    ) - evaluator.model.timeout_coverage_loss({tool: evaluator.loosest[tool]})
    alone = {**facts.base_sec, tool: timeout}
    own_point = evaluator.point(alone)
    own = evaluator.abandoned_counts(alone)
    calls = facts.profiles[tool].observations
    row["abandoned_rate"] = float(own.by_tool.get(tool, 0)) / calls if calls else 0.0
    row["completed_abandoned"] = int(own.completed_by_tool.get(tool, 0))
    row["added_abandoned_calls"] = own.total - base.abandoned
    row["timeout_coverage_loss_rate"] = difference(
        own_point.summary["timeout_coverage_loss_rate"],
        base.point.summary["timeout_coverage_loss_rate"],
    )
    row[f"saved_{key}"] = difference(base.point.summary[key], own_point.summary[key])
    return row


def _steps_either_side(
    evaluator: Evaluator, facts: ToolFacts, choice: Choice, tool: str
) -> dict[str, Any]:
    """One step either side, this tool alone moved from the recommendation (NaN past the
    ladder's ends)."""
    ladder, key, chosen = facts.ladders[tool], choice.key, choice.chosen
    value = choice.current.summary[key]
    rung = ladder.index(chosen[tool])
    row: dict[str, Any] = {}
    for side, step in (("tighter", rung - 1), ("looser", rung + 1)):
        if 0 <= step < len(ladder):
            other = evaluator.point({**chosen, tool: ladder[step]})
            row[f"{side}_sec"] = ladder[step]
            row[f"{side}_{key}_change"] = difference(other.summary[key], value)
            row[f"{side}_timeout_loss_upper"] = other.timeout_loss_upper
            row[f"{side}_timeout_loss_predicted"] = other.timeout_loss_predicted
            row[f"{side}_within_budget"] = bool(choice.allowed(other))
        else:
            row[f"{side}_sec"] = math.nan
            row[f"{side}_{key}_change"] = math.nan
            row[f"{side}_timeout_loss_upper"] = math.nan
            row[f"{side}_timeout_loss_predicted"] = math.nan
            row[f"{side}_within_budget"] = None
    return row

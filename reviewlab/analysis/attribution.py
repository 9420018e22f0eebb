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
from typing import Any

import pandas as pd

from reviewlab.analysis.budgets import BudgetPoint, Evaluator
from reviewlab.analysis.certify import Certificate
from reviewlab.analysis.profiles import EXPLAIN_QUANTILES, DurationProfile
from reviewlab.analysis.safety import SafetyRules, Standing

__all__ = ["QUANTILES", "difference", "explain_table"]

QUANTILES = EXPLAIN_QUANTILES
"""The duration quantiles the explanation shows."""


def difference(a: float, b: float) -> float:
    """``a - b``, with ``inf - inf`` read as no change (0)."""
    return 0.0 if a == b else a - b


def explain_table(
    evaluator: Evaluator,
    *,
    profiles: Mapping[str, DurationProfile],
    tools: Sequence[str],
    ladders: Mapping[str, list[float]],
    base_sec: Mapping[str, float],
    chosen: Mapping[str, float],
    current: BudgetPoint,
    key: str,
    allowed: Callable[[BudgetPoint], bool],
    standing: Mapping[str, Standing],
    rules: SafetyRules,
    certificates: Mapping[str, Certificate] | None = None,
) -> pd.DataFrame:
    """One row per tool: its durations, its standing under the rules, its choice, its own effect
    (changed alone from the base), and one step tighter and looser (changed alone from the
    recommendation). Column meanings: docs/metrics.md, "tune's per-tool table"."""
    at_base = dict(base_sec)
    steps = [
        {**chosen, tool: ladders[tool][step]}
        for tool in tools
        for step in (ladders[tool].index(chosen[tool]) + side for side in (-1, 1))
        if 0 <= step < len(ladders[tool])
    ]
    evaluator.prefetch([at_base, *({**at_base, tool: chosen[tool]} for tool in tools), *steps])
    base_point = evaluator.point(at_base)
    base_abandoned = evaluator.abandoned_counts(at_base).total
    value = current.summary[key]
    rows = []
    for tool in tools:
        profile = profiles[tool]
        timeout = chosen[tool]
        row: dict[str, Any] = {
            "tool": tool,
            "kind": standing[tool].kind,
            "status": standing[tool].status,
            "reason": standing[tool].reason(rules.min_calls, base_sec[tool]),
            "calls": profile.observations,
            "censored": profile.observations - profile.events,
        }
        row.update({f"duration_p{q * 100:g}_sec": profile.quantiles[q] for q in QUANTILES})
        row["slowest_completed_sec"] = standing[tool].slowest_completed_sec
        row["base_timeout_sec"] = base_sec[tool]
        row["timeout_sec"] = timeout
        if certificates is not None:
            certificate = certificates[tool]
            row["certified_sec"] = certificate.timeout_sec
            row["certificate_rank"] = certificate.rank
            row["certificate"] = certificate.reason or (
                f"P(finish within {certificate.timeout_sec:.4g} s) >= {certificate.guarantee:g} "
                f"at confidence {certificate.confidence:g} (order statistic "
                f"{certificate.rank} of {certificate.calls})"
            )
        # The share of the tool's calls that return within the timeout, by Kaplan–Meier.
        row["survival_quantile"] = 1.0 - profile.survival.survival(timeout)
        tail = evaluator.model.tools[tool]
        row["tail_alpha"] = tail.alpha
        row["predicted_timeout_loss"] = evaluator.model.timeout_coverage_loss(
            {tool: timeout}
        ) - evaluator.model.timeout_coverage_loss({tool: evaluator.loosest[tool]})
        # Own effect: the base with this tool alone at its recommended timeout.
        alone = {**at_base, tool: timeout}
        own_point = evaluator.point(alone)
        own = evaluator.abandoned_counts(alone)
        calls = profile.observations
        row["abandoned_rate"] = float(own.by_tool.get(tool, 0)) / calls if calls else 0.0
        row["completed_abandoned"] = int(own.completed_by_tool.get(tool, 0))
        row["added_abandoned_calls"] = own.total - base_abandoned
        row["timeout_coverage_loss_rate"] = difference(
            own_point.summary["timeout_coverage_loss_rate"],
            base_point.summary["timeout_coverage_loss_rate"],
        )
        row[f"saved_{key}"] = difference(base_point.summary[key], own_point.summary[key])
        # One step either side, this tool alone moved from the recommendation.
        rung = ladders[tool].index(timeout)
        for side, step in (("tighter", rung - 1), ("looser", rung + 1)):
            if 0 <= step < len(ladders[tool]):
                other = evaluator.point({**chosen, tool: ladders[tool][step]})
                row[f"{side}_sec"] = ladders[tool][step]
                row[f"{side}_{key}_change"] = difference(other.summary[key], value)
                row[f"{side}_timeout_loss_upper"] = other.timeout_loss_upper
                row[f"{side}_timeout_loss_predicted"] = other.timeout_loss_predicted
                row[f"{side}_within_budget"] = bool(allowed(other))
            else:
                row[f"{side}_sec"] = math.nan
                row[f"{side}_{key}_change"] = math.nan
                row[f"{side}_timeout_loss_upper"] = math.nan
                row[f"{side}_timeout_loss_predicted"] = math.nan
                row[f"{side}_within_budget"] = None
        rows.append(row)
    return pd.DataFrame(rows)

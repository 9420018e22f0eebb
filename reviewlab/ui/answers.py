"""The text answers of ``reviewlab tune`` and ``reviewlab incident``, for a terminal or a notebook.

Thin over :mod:`reviewlab.analysis.tune` and :mod:`reviewlab.analysis.incident`:
every figure printed here was computed there; this module chooses what to show
and in which order, and lays it out with :func:`reviewlab.ui.report.text_table`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from reviewlab.analysis.incident import describe_silence, duration_words
from reviewlab.analysis.tune import Recommendation
from reviewlab.core import metrics
from reviewlab.engines.result import ReplayResult
from reviewlab.recording.schema import Episode
from reviewlab.ui.report import format_value, summary_table, text_table

__all__ = ["BUDGET_LABELS", "incident_text", "slot_table", "tune_table", "tune_text"]

BUDGET_LABELS = {
    "timeout_coverage_loss_rate": "coverage lost to timeouts",
    "abandoned_call_rate": "abandoned-call rate",
    "added_abandoned_call_rate": "abandoned calls added (all tools)",
}
"""How the budget table names each budgeted rate (``added_abandoned_call_rate.TOOL``: "abandoned
calls added (TOOL)")."""


def _budget_label(budget: str) -> str:
    prefix = "added_abandoned_call_rate."
    if budget.startswith(prefix):
        return f"abandoned calls added ({budget.removeprefix(prefix)})"
    return BUDGET_LABELS.get(budget, budget)


def tune_table(recommendation: Recommendation) -> pd.DataFrame:
    """The per-tool part of the answer, narrowed to what a tuner reads
    (the full frame is ``explain``)."""
    key = recommendation.objective
    explain = recommendation.explain
    columns = [
        "tool",
        "kind",
        "calls",
        "censored",
        "duration_p99_sec",
        "slowest_completed_sec",
        "base_timeout_sec",
        "timeout_sec",
        "certified_sec",
        "survival_quantile",
        "completed_abandoned",
        "added_abandoned_calls",
        "abandoned_rate",
        "timeout_coverage_loss_rate",
        "predicted_timeout_loss",
        f"saved_{key}",
        "tighter_sec",
        f"tighter_{key}_change",
        "tighter_timeout_loss_predicted",
        "tighter_within_budget",
        "looser_sec",
        f"looser_{key}_change",
        "looser_timeout_loss_predicted",
    ]
    return explain[[c for c in columns if c in explain.columns]]


def _budget_rows(recommendation: Recommendation) -> pd.DataFrame:
    budgets = recommendation.budgets
    upper = next(c for c in budgets.columns if c.startswith("upper_"))
    rows = []
    for row in budgets.to_dict("records"):
        limit = row["limit"]
        rows.append(
            {
                "budget": _budget_label(row["budget"]),
                "limit": "none" if math.isinf(limit) else limit,
                "estimate": row["estimate"],
                f"{upper.removeprefix('upper_')} upper bound (this corpus)": row[upper],
                "predicted (unseen episodes)": row["predicted_unseen"],
                "met": ("yes" if row["met"] else "NO")
                + (" (no budget)" if math.isinf(limit) else ""),
            }
        )
    return pd.DataFrame(rows)


def tune_text(recommendation: Recommendation, *, base_label: str | None = None) -> str:
    """The whole answer: the rule, each budget's verdict, the
    tools, the figures, the policy file."""
    key = recommendation.objective
    assumptions = recommendation.assumptions
    base_label = base_label or f"base ({assumptions.get('base', 'base')})"
    settings = ", ".join(f"{name}={value}" for name, value in assumptions.items())
    before, after = recommendation.baseline[key], recommendation.summary[key]
    explain = recommendation.explain
    reasons = [
        f"  {tool}: {reason}"
        for tool, reason in zip(explain["tool"], explain["reason"], strict=True)
    ]
    certified = (
        [
            f"  {tool}: {text}"
            for tool, text in zip(explain["tool"], explain["certificate"], strict=True)
        ]
        if "certificate" in explain.columns
        else []
    )
    lines = [
        f"rule: {recommendation.rule}.",
        f"assumptions: {settings}",
        "",
        text_table(_budget_rows(recommendation)),
        "",
        "per tool (each figure is that tool's own effect: the base with only this tool changed; "
        'docs/metrics.md, "tune\'s per-tool table"):',
        text_table(tune_table(recommendation)),
        "",
        "what the rules decided, per tool:",
        *reasons,
        *(["", "certificates:", *certified] if certified else []),
        "",
        "whole policy (every tool changed at once):",
        text_table(
            summary_table(
                {base_label: recommendation.baseline, "recommended": recommendation.summary}
            )
        ),
        "",
        f"saved: {key} {format_value(before)} -> {format_value(after)} "
        f"({format_value(recommendation.saved)} less than {base_label})",
        "",
        recommendation.to_toml().rstrip("\n"),
    ]
    if not recommendation.met and "guarantee" in assumptions:
        lines.insert(
            0, "NOT MET: the certified timeouts break some budget (reported, not searched)."
        )
    elif not recommendation.met:
        lines.insert(
            0, "NOT MET: no candidate keeps every budget; the loosest candidates are shown."
        )
    return "\n".join(lines)


def incident_text(silences: pd.DataFrame) -> str:
    """The longest silences: one sentence for the longest, then the table, then the assumptions."""
    if silences.empty:
        return "no round with tool calls: no silence to report"
    frame = silences.copy()
    frame["began_at"] = [
        pd.Timestamp(t).tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S UTC")
        for t in frame["began_at"]
    ]
    frame["silence"] = [
        duration_words(float(s)) + ("" if done else "+")
        for s, done in zip(frame["silence_sec"], frame["completed"], strict=True)
    ]
    bounded = [c for c in frame.columns if str(c).startswith("bounded_sec.")]
    for column in bounded:
        frame[column.removeprefix("bounded_sec.")] = [
            duration_words(float(v)) for v in frame[column]
        ]
    shown = [
        "rank",
        "slot",
        "episode_id",
        "round",
        "tool",
        "args",
        "began_at",
        "silence",
        *[c.removeprefix("bounded_sec.") for c in bounded],
    ]
    assumptions: dict[str, Any] = silences.attrs.get("assumptions", {})
    searched = silences.attrs.get("episodes")
    lines = [
        "longest silence: " + describe_silence(silences.iloc[0].to_dict()),
        "",
        text_table(frame[shown]),
        "",
        "silence: the calls of one round, from the end of its model send (+: a call was still "
        "running when the log ended); the policy columns replay that round under each policy",
        "assumptions: "
        + ", ".join(f"{name}={value}" for name, value in assumptions.items())
        + (f"; {searched} episode(s) searched" if searched is not None else ""),
    ]
    return "\n".join(lines)


def slot_table(result: ReplayResult, episodes: Iterable[Episode] | None = None) -> pd.DataFrame:
    """:func:`reviewlab.core.metrics.per_slot` with each request under the slot that served it in
    the recording (``reviewer-3``), not the pool simulation's own ``slot-0`` …

    Without ``episodes`` (and without a ``recorded_slot`` column in the result) the
    replay's own slot ids are kept.
    """
    # Here, not at the top: the charts package imports matplotlib, which the command line's
    # answers (tune, incident) do not need.
    from reviewlab.ui.charts._common import recorded_slots

    names = recorded_slots(result, episodes)
    frame = result.episodes
    if names:
        mapped = frame["episode_id"].astype(str).map(names)
        frame = frame.assign(slot_id=mapped.fillna(frame["slot_id"]))
    return metrics.per_slot(result.calls, frame)

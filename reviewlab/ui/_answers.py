"""The text answers of ``reviewlab tune`` and ``reviewlab incident``, for a terminal or a notebook.

Thin over :mod:`reviewlab.analysis._tune` and :mod:`reviewlab.analysis._incident`:
every figure printed here was computed there; this module chooses what to show
and in which order, and lays it out as :class:`~reviewlab.ui._tables.Table` s, each with the
assumptions it rests on. Per-tool figures (each tool's own effect) and whole-policy figures
are separate tables with titles saying which is which.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from reviewlab.analysis._incident import describe_silence
from reviewlab.analysis._recommendation import Recommendation
from reviewlab.core._breakdown import per_slot
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode
from reviewlab.ui._numbers import SILENCE, label_of
from reviewlab.ui._tables import Table, as_table, changes_lines, summary_table

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


def tune_table(recommendation: Recommendation) -> Table:
    """The per-tool part of the answer, narrowed to what a tuner reads
    (the full frame is ``explain``); every figure is that tool's own effect."""
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
    return as_table(
        explain[[c for c in columns if c in explain.columns]],
        title="per tool (each figure is that tool's own effect: the base with only this tool "
        'changed; docs/metrics.md, "tune\'s per-tool table"):',
        assumptions=recommendation.assumptions,
    )


def tune_budget_table(recommendation: Recommendation) -> Table:
    """Each budget: its limit, the estimate, its upper bound, the prediction, whether it is met."""
    budgets = recommendation.budgets
    upper = next(c for c in budgets.columns if c.startswith("upper_"))
    level = upper.removeprefix("upper_")
    rows = []
    for row in budgets.to_dict("records"):
        limit = row["limit"]
        rows.append(
            {
                "budget": _budget_label(row["budget"]),
                "limit": "none" if math.isinf(limit) else limit,
                "estimate": row["estimate"],
                f"{level} upper bound (this corpus)": row[upper],
                "predicted (unseen episodes)": row["predicted_unseen"],
                "met": ("yes" if row["met"] else "NO")
                + (" (no budget)" if math.isinf(limit) else ""),
            }
        )
    return as_table(
        pd.DataFrame(rows), title="budgets (rates):", assumptions=recommendation.assumptions
    )


def budgets_words(recommendation: Recommendation) -> str:
    """The budgets applied, as a heading names them: ``coverage lost to timeouts ≤ 1 %; …``
    (per-tool budgets summed up in one clause)."""
    from reviewlab.ui._numbers import rate_text

    budgets = recommendation.budgets
    upper = next(c for c in budgets.columns if c.startswith("upper_"))
    level = upper.removeprefix("upper_").replace("%", " %")
    parts, per_tool = [], set()
    for row in budgets.to_dict("records"):
        if math.isinf(row["limit"]):
            continue
        if str(row["budget"]).startswith("added_abandoned_call_rate."):
            per_tool.add(rate_text(row["limit"]))
            continue
        parts.append(f"{_budget_label(row['budget'])} ≤ {rate_text(row['limit'])}")
    if per_tool:
        parts.append(f"abandoned calls added per tool ≤ {', '.join(sorted(per_tool))} of its calls")
    where = f" (each at its {level} upper bound over episodes and as predicted for unseen ones)"
    return ("; ".join(parts) or "no budget") + (where if parts else "")


def tune_text(recommendation: Recommendation, *, base_label: str | None = None) -> str:
    """The whole answer: the rule, each budget's verdict, the
    tools, the figures, the policy file."""
    key = recommendation.objective
    assumptions = recommendation.assumptions
    base_label = base_label or f"base ({assumptions.get('base', 'base')})"
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
    whole = summary_table(
        {base_label: recommendation.baseline, "recommended": recommendation.summary},
        assumptions=assumptions,
        title="whole policy (every tool changed at once):",
    )
    lines = [
        f"within: {budgets_words(recommendation)}",
        f"rule: {recommendation.rule}.",
        "",
        tune_budget_table(recommendation).text(),
        "",
        tune_table(recommendation).text(),
        "",
        "what the rules decided, per tool:",
        *reasons,
        *(["", "certificates:", *certified] if certified else []),
        "",
        whole.text(),
        "",
        f"objective: {label_of(key)} (minimised)",
        *changes_lines(recommendation.baseline, recommendation.summary, against=base_label),
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


STILL_RUNNING = (
    "+: a call of that round never returned while the recording watched it; the silence lasted "
    "at least this long"
)


def incident_table(silences: pd.DataFrame) -> Table:
    """The longest silences as a table: where, what, when, how long, and each candidate's bound."""
    frame = silences.copy()
    frame["began_at"] = [
        pd.Timestamp(t).tz_convert("UTC").strftime("%Y-%m-%d %H:%M:%S UTC")
        for t in frame["began_at"]
    ]
    frame["silence_sec"] = [
        f"{seconds:,.0f} s+" if not done and math.isfinite(seconds) else seconds
        for seconds, done in zip(frame["silence_sec"], frame["completed"], strict=True)
    ]
    bounded = [c for c in frame.columns if str(c).startswith("bounded_sec.")]
    shown = ["rank", "slot", "episode_id", "round", "tool", "args", "began_at", "silence_sec"]
    assumptions: dict[str, Any] = dict(silences.attrs.get("assumptions", {}))
    notes = [STILL_RUNNING] if not frame["completed"].all() else []
    return as_table(
        frame[[*shown, *bounded]],
        title="longest silences (recorded); bounded_sec.POLICY: that round replayed under POLICY",
        assumptions=assumptions,
        notes=[*notes, SILENCE + ' (docs/metrics.md, "Silence")'],
    )


def incident_text(silences: pd.DataFrame) -> str:
    """The longest silences: one sentence for the longest, then the table with its footnotes."""
    if silences.empty:
        return "no round with tool calls: no silence to report"
    searched = silences.attrs.get("episodes")
    lines = [
        "longest silence: " + describe_silence(silences.iloc[0].to_dict()),
        "",
        incident_table(silences).text(),
    ]
    if searched is not None:
        lines.append(f"{searched} episode(s) searched")
    return "\n".join(lines)


def slot_table(result: ReplayResult, episodes: Iterable[Episode] | None = None) -> Table:
    """:func:`reviewlab.core._breakdown.per_slot` with each request under the slot that served it in
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
    return as_table(per_slot(result.calls, frame), assumptions=result.assumptions)

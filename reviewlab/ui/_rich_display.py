"""What a result shows in Jupyter: its summary in the one number style, the assumptions it rests
on, and a small chart where a chart says more (docs/metrics.md, "Results in a notebook").

One renderer per kind of :mod:`reviewlab.core._display`, registered when this module is imported
(``import reviewlab`` imports it): a replay (summary, per-tool table, per-tool rates chart),
both censoring ends side by side, a recommendation (verdict, budgets, per-tool choice, what it
changes), a policy (per-tool timeouts and parts), a corpus (size and per-tool calls), and a
sweep frame (its rates against the one timeout it varies, or its front, then its rows).

Invariants: every figure is written by :mod:`reviewlab.ui._numbers` (through
:class:`~reviewlab.ui._tables.Table`), and every string from a recording or a user (tool,
policy and corpus names) is HTML-escaped; a chart is an inline PNG, its figure cleared after.
At module level this imports only the standard library, the registry and the number style, so
``import reviewlab`` loads neither pandas nor matplotlib; they load when something is drawn.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Iterable, Mapping
from typing import Any

from reviewlab.core._display import register_html
from reviewlab.ui._numbers import cell, column_kind, count_text, label_of

PER_TOOL_COLUMNS = (
    "tool",
    "calls",
    "abandoned_calls",
    "abandoned_call_rate",
    "timeout_coverage_loss_rate",
    "duration_p50_sec",
)
"""The per-tool columns a replay shows in a notebook (the full breakdown: ``per_tool()``)."""

SWEEP_ROWS = 20
"""The rows of a sweep frame shown in a notebook (a note says how many more there are)."""

CHART_DPI = 80
"""The resolution of a chart inline in a notebook."""

REPLAY_CHART_SIZE = (6.4, 3.2)
"""The per-tool rates chart of a replay in a notebook, in inches (smaller than the report's)."""


def _box(title: str, parts: Iterable[str]) -> str:
    """One result: a bold title line, then its parts, in a plain block."""
    head = f"<p><strong>{html.escape(title)}</strong></p>"
    return '<div class="reviewlab-result">' + head + "".join(parts) + "</div>"


def _line(text: str, css: str = "note") -> str:
    return f'<p class="{css}">{html.escape(text)}</p>'


def _figure(key: str, value: Any) -> str:
    """A summary figure as the label a person reads and its value in the number style."""
    return f"{label_of(key)} {cell(value, column_kind(key))}"


def png_html(figure: Any, alt: str) -> str:
    """``figure`` as an inline PNG ``<img>`` (``alt`` escaped); the figure is cleared after."""
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, format="png", dpi=CHART_DPI)
    finally:
        figure.clear()  # a chart's Figure is never in pyplot's registry: clearing frees it
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


# -- replays ------------------------------------------------------------------------------------
def replay_html(result: Any) -> str:
    """A replay (a :class:`~reviewlab.engines._result.ReplayResult`, or a cluster's
    :class:`~reviewlab.engines._result.ReplaySummary`): the summary with its assumptions, and
    with call frames the per-tool table and the per-tool rates chart."""
    from reviewlab.ui._tables import as_table, summary_table

    summary = result.summary
    label = result.policy.label
    title = (
        f"Replay under {label}: {count_text(summary['episodes'])} episodes, "
        f"{count_text(summary['calls'])} calls ({result.engine} engine)"
    )
    framed = hasattr(result, "per_tool")
    if framed:
        table = summary_table({label: result})
    else:
        table = summary_table({label: dict(summary)}, assumptions=result.assumptions)
    parts = [table.html()]
    if framed and summary["calls"]:
        from reviewlab.ui.charts import per_tool_rates

        per_tool = result.per_tool()
        shown = [c for c in PER_TOOL_COLUMNS if c in per_tool.columns]
        parts.append(as_table(per_tool[shown], title="per tool").html())
        figure = per_tool_rates(result, figsize=REPLAY_CHART_SIZE)
        parts.append(png_html(figure, f"per-tool rates under {label}"))
    return _box(title, parts)


def replay_bounds_html(bounds: Any) -> str:
    """Both censoring ends of one replay side by side, with what they share."""
    from reviewlab.ui._tables import summary_table

    optimistic, pessimistic = bounds.optimistic, bounds.pessimistic
    table = summary_table(
        {
            "optimistic (censored=observed)": dict(optimistic.summary),
            "pessimistic (censored=wedge)": dict(pessimistic.summary),
        },
        assumptions=bounds.assumptions,
    )
    title = (
        f"Replay bounds under {optimistic.policy.label}: "
        f"{count_text(optimistic.summary['episodes'])} episodes, both censoring ends"
    )
    return _box(title, [table.html()])


# -- tuning -------------------------------------------------------------------------------------
_RECOMMENDATION_COLUMNS = (
    "tool",
    "kind",
    "status",
    "calls",
    "censored",
    "base_timeout_sec",
    "timeout_sec",
    "abandoned_rate",
    "timeout_coverage_loss_rate",
)


def recommendation_html(recommendation: Any) -> str:
    """The verdict on the budgets, the objective before and after, the budgets, the per-tool
    choice, the summaries side by side, the rule."""
    from reviewlab.ui._answers import tune_budget_table
    from reviewlab.ui._tables import as_table, changes_lines, summary_table

    key = recommendation.objective
    verdict = "every budget met" if recommendation.met else "a budget is NOT met"
    title = (
        f"Recommended policy {recommendation.policy.label}: {verdict}; {label_of(key)} "
        f"{cell(recommendation.baseline[key], column_kind(key))} → "
        f"{cell(recommendation.summary[key], column_kind(key))}"
    )
    explain = recommendation.explain
    shown = [c for c in _RECOMMENDATION_COLUMNS if c in explain.columns]
    base = str(recommendation.assumptions.get("base", "base"))
    side_by_side = summary_table(
        {f"{base} (base)": recommendation.baseline, "recommended": recommendation.summary},
        assumptions=recommendation.assumptions,
    )
    parts = [
        tune_budget_table(recommendation).html(),
        as_table(explain[shown], title="per tool (the full frame: explain)").html(),
        side_by_side.html(),
        *(_line(text) for text in changes_lines(recommendation.baseline, recommendation.summary)),
        _line("rule: " + recommendation.rule),
    ]
    return _box(title, parts)


# -- policies and corpora -----------------------------------------------------------------------
_ANY_OTHER = "(any other tool)"


def policy_html(policy: Any) -> str:
    """Per tool: the timeout before any deadline narrowing, the idle timeout, the hedge, the
    kind and the task action; then the parts that hold for every call, and the TOML."""
    import pandas as pd

    from reviewlab.core._learned import LearnedTimeouts
    from reviewlab.core._policy import PolicyError, TimeoutPolicy
    from reviewlab.ui._tables import as_table

    timeouts = policy.timeouts
    listed: set[str] = set()  # the tools the rule names (a custom rule names none)
    if isinstance(timeouts, TimeoutPolicy):
        listed = set(timeouts.tools_sec)
    elif isinstance(timeouts, LearnedTimeouts):
        listed = set(timeouts.models) | set(timeouts.fixed_sec)
    tools = sorted(listed | set(policy.idle_sec) | set(policy.hedges) | set(policy.tasks))
    rows = []
    for tool in [*tools, _ANY_OTHER]:
        hedge = policy.hedges.get(tool)
        rows.append(
            {
                "tool": tool,
                "timeout_sec": policy.timeout_for(None, tool, remaining_sec=None),
                "idle_sec": policy.idle_sec.get(tool),
                "hedge_after_sec": None if hedge is None else hedge.after_sec,
                "kind": "" if tool == _ANY_OTHER else policy.kind_of(tool),
                "task": policy.tasks.get(tool, ""),
            }
        )
    frame = pd.DataFrame(rows)
    frame = frame[[c for c in frame.columns if c == "tool" or frame[c].notna().any()]]
    frame = frame[[c for c in frame.columns if not (frame[c] == "").all()]]
    notes = [f"narrowing: {policy.narrowing.label}", f"cap rule: {policy.cap_rule}"]
    if policy.breaker is not None:
        notes.append(f"breaker: {policy.breaker.label}")
    table = as_table(
        frame,
        title="per tool",
        notes=notes,
        assumptions="no deadline in force: each timeout as the rule gives it, before the "
        "inherited deadline narrows it",
    )
    parts = [table.html()]
    try:
        parts.append(
            "<details><summary>policy file (TOML)</summary><pre>"
            + html.escape(policy.to_toml())
            + "</pre></details>"
        )
    except PolicyError:  # a custom rule has no file form
        parts.append(_line(f"timeouts: a custom rule ({type(timeouts).__name__})"))
    return _box(f"Policy {policy.label}", parts)


def corpus_html(corpus: Any) -> str:
    """The corpus's size, and per tool its calls, the censored ones and the recorded
    durations of the completed ones (from its compiled columns)."""
    import numpy as np
    import pandas as pd

    from reviewlab.ui._tables import as_table

    seen = corpus.observations()
    rows = []
    for tool in sorted(seen.tools):
        mine = seen.of_tool(tool)
        done = seen.duration_sec[mine][seen.completed[mine]]
        rows.append(
            {
                "tool": tool,
                "calls": int(mine.size),
                "censored": int(mine.size - done.size),
                "duration_p50_sec": float(np.median(done)) if done.size else None,
                "slowest_completed_sec": float(done.max()) if done.size else None,
            }
        )
    calls = int(seen.tool_code.size)
    censored = int(calls - np.count_nonzero(seen.completed))
    title = (
        f"Corpus {corpus.name}: {count_text(seen.episodes)} episodes, {count_text(calls)} calls, "
        f"{count_text(len(seen.tools))} tools, {count_text(censored)} censored calls"
    )
    table = as_table(
        pd.DataFrame(rows, columns=["tool", "calls", "censored", *_DURATION_COLUMNS]),
        title="per tool (durations of the calls that returned)",
        assumptions="durations as recorded; a censored call is one the recording never saw "
        "return (a replay's censored= says what it does)",
    )
    parts = [table.html()]
    if corpus.skipped:
        parts.append(_line(f"{count_text(len(corpus.skipped))} defective line(s) skipped"))
    return _box(title, parts)


_DURATION_COLUMNS = ("duration_p50_sec", "slowest_completed_sec")


# -- sweeps -------------------------------------------------------------------------------------
def _sweep_chart(frame: Any) -> tuple[Any, str] | None:
    """The chart a sweep frame says most with: its rates against the one timeout it varies
    (tool curves, or one ``timeout.TOOL`` axis), else its front; ``None`` when neither fits."""
    from reviewlab.ui._sweeps import parameter_columns
    from reviewlab.ui.charts import pareto_front, rates_vs_timeout

    rates = {"abandoned_call_rate", "timeout_coverage_loss_rate"}
    if len(frame) < 2 or not rates <= set(frame.columns):
        return None
    if {"tool", "timeout_sec"} <= set(frame.columns):
        return rates_vs_timeout(frame), "rates against each tool's timeout"
    varying = [c for c in parameter_columns(frame) if frame[c].nunique(dropna=False) > 1]
    if len(varying) == 1 and varying[0].startswith("timeout."):
        tool = varying[0].removeprefix("timeout.")
        curves = frame.rename(columns={varying[0]: "timeout_sec"}).assign(tool=tool)
        return rates_vs_timeout(curves), f"rates against the timeout of {tool}"
    if "wall_p95_sec" in frame.columns:
        return pareto_front(frame), "p95 wall time against the coverage lost to timeouts"
    return None


def sweep_html(frame: Any) -> str:
    """A sweep frame: how many points, the chart that fits, its first :data:`SWEEP_ROWS` rows
    (the parameters that vary, the key metrics), its assumptions."""
    import pandas as pd

    from reviewlab.ui._sweeps import SWEEP_METRICS, parameter_columns
    from reviewlab.ui._tables import as_table

    metrics = [c for c in SWEEP_METRICS if c in frame.columns]
    plain = pd.DataFrame(frame)
    if not metrics:  # sliced down to parameters: its rows as pandas shows them
        return str(plain._repr_html_())
    names = [c for c in ("policy_name", "tool", "timeout_sec") if c in frame.columns]
    params = names + [c for c in parameter_columns(frame) if plain[c].nunique(dropna=False) > 1]
    shown = list(dict.fromkeys([*params, *metrics, *(["pareto"] if "pareto" in plain else [])]))
    rows = plain[shown].head(SWEEP_ROWS).reset_index(drop=True)
    notes = (
        [f"{len(plain) - SWEEP_ROWS} more row(s) in the frame"] if len(plain) > SWEEP_ROWS else []
    )
    assumptions: Mapping[str, Any] | str = frame.assumptions or (
        "not stated (a frame made outside reviewlab.analysis.sweep.sweep)"
    )
    parts = []
    chart = _sweep_chart(plain)
    if chart is not None:
        parts.append(png_html(*chart))
    parts.append(as_table(rows, notes=notes, assumptions=assumptions).html())
    return _box(f"Sweep of {count_text(len(plain))} policy points", parts)


register_html("replay_result", replay_html)
register_html("replay_bounds", replay_bounds_html)
register_html("recommendation", recommendation_html)
register_html("policy", policy_html)
register_html("corpus", corpus_html)
register_html("sweep", sweep_html)

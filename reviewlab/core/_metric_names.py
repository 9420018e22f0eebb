"""Every figure of a replay's summary, declared once: its key, the label a person reads, its
unit, whether a policy is judged on it, and whether a brief view shows it.

The tables, the number style, the charts and the widgets read their metric lists and labels
from :data:`METRICS`; :mod:`reviewlab.core._metrics` computes the figures under these keys
(:data:`SUMMARY_KEYS`, in the order of the summary dict). Definitions: docs/metrics.md, "The
summary".

Invariant: this module imports nothing but the standard library, so the number style
(:mod:`reviewlab.ui._numbers`) reads it when ``import reviewlab`` runs without loading NumPy or
pandas.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MetricUnit = Literal["rate", "seconds", "count", "number"]
"""How a figure is counted: a share in [0, 1], seconds, a whole count, or a plain number."""


@dataclass(frozen=True)
class Metric:
    """One figure a replay's summary reports (docs/metrics.md, "The summary")."""

    key: str
    """Its key in the summary dict."""
    label: str
    """The words a person reads for it (every table, chart and widget)."""
    unit: MetricUnit
    objective: bool = False
    """A policy is judged on it, lower being better (what "saved" and "paid" name)."""
    brief: bool = False
    """One of the few figures a brief view shows (the explorer's live table)."""


_SUMMARY: tuple[Metric, ...] = (
    Metric("episodes", "episodes", "count"),
    Metric("calls", "calls", "count"),
    Metric("abandoned_call_rate", "abandoned-call rate", "rate", objective=True, brief=True),
    Metric("coverage_loss_rate", "coverage-loss rate", "rate", objective=True, brief=True),
    Metric(
        "timeout_coverage_loss_rate",
        "coverage lost to timeouts",
        "rate",
        objective=True,
        brief=True,
    ),
    Metric("inherent_coverage_loss_rate", "coverage lost by failing reads", "rate", objective=True),
    Metric("wall_p50_sec", "wall p50", "seconds", objective=True, brief=True),
    Metric("wall_p95_sec", "wall p95", "seconds", objective=True, brief=True),
    Metric("wall_p99_sec", "wall p99", "seconds", objective=True, brief=True),
    Metric("wall_max_sec", "wall max", "seconds", objective=True),
    Metric("max_silence_sec", "longest silence", "seconds", objective=True, brief=True),
    Metric("zombie_sec", "zombie time", "seconds", objective=True, brief=True),
    Metric("zombie_finite_sec", "zombie time (returning)", "seconds", objective=True),
    Metric("wedged_zombies", "wedged zombies", "count", objective=True, brief=True),
    Metric("peak_loose_workers", "peak loose workers", "count", objective=True, brief=True),
    Metric("deadline_bound_share", "deadline-bound share", "rate", brief=True),
    Metric("hedges", "hedged calls", "count"),
    Metric("extra_call_share", "extra-call share (hedges)", "rate", objective=True),
)
"""Every figure of the summary dict every engine returns, in its order."""
_EXTRA: tuple[Metric, ...] = (
    Metric("withheld_calls", "calls the breaker withheld", "count"),
    Metric("idle_bound_calls", "calls bounded by idleness", "count"),
    Metric("queue_wait_mean_sec", "mean queue wait", "seconds"),
    Metric("cost_per_episode", "cost per episode", "number", objective=True),
)
"""Figures some replays add to their summary (a breaker, idle timeouts, a reviewer pool,
prices)."""
METRICS = _SUMMARY + _EXTRA
"""Every summary figure, declared once: the labels, units, objectives and brief views of the
tables, charts and widgets are read from here."""
SUMMARY_KEYS = tuple(metric.key for metric in _SUMMARY)
"""The keys of the summary dict every engine returns, in order."""

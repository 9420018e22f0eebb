"""What a policy trades: abandoned calls against lost coverage and wall time.

:func:`per_tool_rates` (and :class:`LiveRates`, its in-place redraw for
widgets) shows one replay per tool; :func:`rates_vs_timeout` and
:func:`pareto_front` show a sweep; :func:`survival_curves` shows the recorded
call durations against each tool's bound. See :mod:`reviewlab.ui.charts` for the
conventions every chart follows (``ax=``, no pyplot).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.core.policy import SupportsTimeoutFor, TimeoutPolicy
from reviewlab.engines.result import ReplayResult
from reviewlab.recording.schema import Episode
from reviewlab.ui.charts._common import figure_and_axes, legend_outside, policy_label

__all__ = ["LiveRates", "pareto_front", "per_tool_rates", "rates_vs_timeout", "survival_curves"]


def _require_columns(frame: pd.DataFrame, needed: Iterable[str], what: str) -> None:
    missing = set(needed) - set(frame.columns)
    if missing:
        raise ValueError(f"{what} lack column(s) {', '.join(sorted(missing))}")


def _pick_tools(tools: Sequence[str] | None, available: Iterable[str], refusal: str) -> list[str]:
    """``tools`` in the order given (default: every available tool, sorted); one not available is refused."""
    known = set(available)
    chosen = list(tools) if tools is not None else sorted(known)
    unknown = sorted(set(chosen) - known)
    if unknown:
        raise ValueError(f"{refusal} {', '.join(unknown)}")
    return chosen


def per_tool_rates(
    result: ReplayResult,
    *,
    ax: Axes | None = None,
    figsize: tuple[float, float] = (7.0, 3.6),
) -> Figure:
    """Per tool, the abandoned-call rate and the coverage-loss rate of one replay, as paired bars (%).

    The figures are :meth:`ReplayResult.per_tool`; each bar is labelled with its value.
    """
    figure, ax = figure_and_axes(ax, figsize)
    LiveRates(ax).draw(result)
    return figure


_RATE_TOPS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 120.0)


class LiveRates:
    """The :func:`per_tool_rates` chart on one Axes, redrawn in place for live widgets.

    The first :meth:`draw` makes the bars; later draws with the same tools only
    move bar heights, labels, the y range and the title, which renders several
    times faster than a new figure (matplotlib caches the text layout of
    artists it has drawn before). A different tool set redraws from scratch.
    """

    _WIDTH = 0.38

    def __init__(self, ax: Axes) -> None:
        self.ax = ax
        self._tools: list[str] | None = None
        self._bars: list[Any] = []
        self._labels: list[list[Any]] = []

    def draw(self, result: ReplayResult) -> None:
        """Show ``result``'s per-tool rates."""
        table = result.per_tool()
        tools = [str(tool) for tool in table["tool"]]
        series = [
            100 * table["abandoned_call_rate"].to_numpy(dtype=float),
            100 * table["coverage_loss_rate"].to_numpy(dtype=float),
        ]
        ax = self.ax
        if tools != self._tools:
            ax.clear()
            x = np.arange(len(tools))
            self._bars = [
                ax.bar(
                    x - self._WIDTH / 2,
                    series[0],
                    self._WIDTH,
                    color="#c44e52",
                    label="abandoned calls",
                ),
                ax.bar(
                    x + self._WIDTH / 2,
                    series[1],
                    self._WIDTH,
                    color="#4c72b0",
                    label="coverage loss",
                ),
            ]
            self._labels = [
                list(ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)) for bars in self._bars
            ]
            ax.set_xticks(x, tools)
            ax.set_ylabel("rate (%)")
            ax.legend(fontsize=8, loc="upper right")
            self._tools = tools
        else:
            for bars, labels, values in zip(self._bars, self._labels, series, strict=True):
                for bar, label, value in zip(bars, labels, values, strict=True):
                    bar.set_height(value)
                    label.xy = (bar.get_x() + bar.get_width() / 2, value)
                    label.set_text(f"{value:.1f}")
        top = float(max(series[0].max(initial=0.0), series[1].max(initial=0.0)))
        # The y range steps through a few fixed tops, so the tick labels (costly text) repeat between draws.
        ax.set_ylim(0, next(limit for limit in _RATE_TOPS if top * 1.15 <= limit))
        ax.set_title(f"Per-tool rates under {policy_label(result)}")


# -- sweeps ---------------------------------------------------------------------


def rates_vs_timeout(
    curves: pd.DataFrame,
    *,
    tools: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Abandoned-call rate (solid) and coverage-loss rate (dashed) against each tool's timeout.

    ``curves`` is long: one row per (tool, timeout) with ``tool, timeout_sec,
    abandoned_call_rate, coverage_loss_rate`` (as :func:`reviewlab.analysis.sweep.tool_curves`
    returns). ``tools`` picks and orders the curves (default: all).
    """
    _require_columns(
        curves,
        ("tool", "timeout_sec", "abandoned_call_rate", "coverage_loss_rate"),
        "rates_vs_timeout: curves",
    )
    chosen = _pick_tools(tools, curves["tool"], "rates_vs_timeout: no curve for tool(s)")
    figure, ax = figure_and_axes(ax, (8.0, 4.8))
    colors = [f"C{i}" for i in range(10)]
    for index, tool in enumerate(chosen):
        part = curves[curves["tool"] == tool].sort_values("timeout_sec")
        color = colors[index % len(colors)]
        ax.plot(
            part["timeout_sec"],
            100 * part["abandoned_call_rate"],
            "-o",
            color=color,
            markersize=3,
            label=f"{tool}: abandoned calls",
        )
        ax.plot(
            part["timeout_sec"],
            100 * part["coverage_loss_rate"],
            "--",
            color=color,
            label=f"{tool}: coverage loss",
        )
    ax.set_xscale("log")
    ax.set_xlabel("per-tool timeout (s, log scale)")
    ax.set_ylabel("rate (%)")
    ax.set_title("Abandoned calls and lost coverage against the per-tool timeout")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return figure


def pareto_front(
    points: pd.DataFrame,
    *,
    front: pd.Series | np.ndarray | None = None,
    named: Mapping[str, Mapping[str, Any] | ReplayResult] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """p95 episode wall time against coverage loss over a sweep, the Pareto front highlighted.

    ``points`` has ``coverage_loss_rate`` and ``wall_p95_sec`` per policy point
    (a :func:`reviewlab.analysis.sweep.sweep` frame). ``front`` is a boolean mask of
    the non-dominated points (default: the frame's ``pareto`` column, else
    :func:`reviewlab.analysis.sweep.pareto` of the frame). ``named`` marks policies by name:
    a summary dict or a :class:`ReplayResult` each.
    """
    _require_columns(points, ("coverage_loss_rate", "wall_p95_sec"), "pareto_front: points")
    if front is None:
        from reviewlab.analysis.sweep import pareto

        front = points["pareto"] if "pareto" in points.columns else pareto(points)
    mask = np.asarray(front, dtype=bool)
    if mask.shape != (len(points),):
        raise ValueError(f"pareto_front: front has {mask.size} entries for {len(points)} points")
    figure, ax = figure_and_axes(ax, (7.5, 5.0))
    loss = 100 * points["coverage_loss_rate"].to_numpy(dtype=float)
    wall = points["wall_p95_sec"].to_numpy(dtype=float)
    ax.scatter(loss[~mask], wall[~mask], s=12, color="#9aa7b8", label="policy point")
    order = np.argsort(loss[mask])
    ax.plot(
        loss[mask][order],
        wall[mask][order],
        "-o",
        color="#c44e52",
        markersize=5,
        label="Pareto front",
    )
    markers = "*DPXsv^<>"
    span_x = max(float(np.ptp(loss)), 1e-9) if loss.size else 1.0
    span_y = max(float(np.ptp(wall)), 1e-9) if wall.size else 1.0
    placed: list[tuple[float, float]] = []
    for index, (name, summary) in enumerate((named or {}).items()):
        values = summary.summary if isinstance(summary, ReplayResult) else summary
        x, y = 100 * values["coverage_loss_rate"], values["wall_p95_sec"]
        ax.plot(
            [x],
            [y],
            markers[index % len(markers)],
            markersize=11,
            markeredgecolor="black",
            color=f"C{index + 2}",
            label=name,
            linestyle="none",
        )
        # Named policies often coincide (the pre-fix and ouroboros points, say): stack their labels.
        crowd = sum(
            abs(x - px) < 0.03 * span_x and abs(y - py) < 0.03 * span_y for px, py in placed
        )
        placed.append((x, y))
        ax.annotate(
            name, (x, y), xytext=(8, 6 - 11 * crowd), textcoords="offset points", fontsize=8
        )
    ax.set_xlabel("coverage loss (% of requested read lines not credited)")
    ax.set_ylabel("p95 episode wall time (s)")
    ax.set_title("Wall time against lost coverage over the sweep")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return figure


# -- durations --------------------------------------------------------------------


def survival_curves(
    episodes: Sequence[Episode],
    policy: SupportsTimeoutFor | None = None,
    *,
    tools: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Per-tool share of calls still running after t seconds (Kaplan–Meier), each tool's bound drawn.

    The estimate is the shared censoring-aware one
    (:func:`reviewlab.engines.censoring.estimates_by_tool`): a call that never
    returned counts as still running until it was last seen, and is marked
    with a ``+`` on its tool's curve there. ``policy`` (default
    :meth:`TimeoutPolicy.ouroboros`) gives each tool's bound without a deadline,
    drawn as a dotted line in the tool's colour; its legend entry says the
    share of the tool's calls that bound would abandon.
    """
    from reviewlab.engines.censoring import censored_calls, estimates_by_tool

    episodes = list(episodes)
    per_tool, _ = estimates_by_tool(episodes)
    if not per_tool:
        raise ValueError("survival_curves: the episodes hold no calls")
    chosen = _pick_tools(tools, per_tool, "survival_curves: no calls of tool(s)")
    policy = policy if policy is not None else TimeoutPolicy.ouroboros()
    censored_at: dict[str, list[float]] = {}
    for _, _, call in censored_calls(episodes):
        censored_at.setdefault(call.tool, []).append(call.duration_sec)
    figure, ax = figure_and_axes(ax, (8.0, 4.8))
    # On a log axis the curves start (at 1.0) half-way below the shortest positive duration seen.
    positive = [t for tool in chosen for t in per_tool[tool].event_times if t > 0]
    start = min(positive, default=1.0) / 2
    for index, tool in enumerate(chosen):
        estimate = per_tool[tool]
        color = f"C{index % 10}"
        times = np.maximum(np.concatenate([[start], estimate.event_times]), start)
        survival = np.concatenate([[1.0], estimate.survival_after])
        ax.step(
            times,
            survival,
            where="post",
            color=color,
            label=f"{tool} ({estimate.observations} calls, {estimate.observations - estimate.events} censored)",
        )
        marks = censored_at.get(tool, [])
        if marks:
            ax.plot(
                marks,
                [estimate.survival(t) for t in marks],
                "+",
                color=color,
                markersize=9,
                linestyle="none",
            )
        bound = float(policy.timeout_for(None, tool))
        ax.axvline(
            bound,
            color=color,
            linestyle=":",
            linewidth=1.5,
            label=f"{tool} bound {bound:g} s: abandons {100 * estimate.survival(bound):.2g}%",
        )
    ax.set_xscale("log")
    ax.set_xlim(left=start)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("call duration (s, log scale)")
    ax.set_ylabel("share of calls still running")
    ax.set_title("Per-tool duration survival (Kaplan–Meier; + = censored call)")
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)
    return figure

"""What a policy trades: abandoned calls against lost coverage and wall time.

:func:`per_tool_rates` (and :class:`LiveRates`, its in-place redraw for
widgets) shows one replay per tool; :func:`rates_vs_timeout` and
:func:`pareto_front` show a sweep; :func:`survival_curves` shows the recorded
call durations against each tool's bound. See :mod:`reviewlab.ui.charts` for the
conventions every chart follows (``ax=``, no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.core._policy import Policy, SupportsTimeoutFor
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode
from reviewlab.ui.charts._common import (
    LABEL_BOX,
    duration_text,
    figure_and_axes,
    legend_outside,
    policy_label,
)
from reviewlab.ui.charts._palette import (
    FRONT_COLOR,
    METRIC_COLORS,
    POINT_COLOR,
    policy_color,
    tool_color,
)


def _require_columns(frame: pd.DataFrame, needed: Iterable[str], what: str) -> None:
    missing = set(needed) - set(frame.columns)
    if missing:
        raise ValueError(f"{what} lack column(s) {', '.join(sorted(missing))}")


def _pick_tools(tools: Sequence[str] | None, available: Iterable[str], refusal: str) -> list[str]:
    """``tools`` in the order given (default: every available tool,
    sorted); one not available is refused."""
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
    """Per tool, the abandoned-call rate and the coverage lost (to
    timeouts, and in total), as bars (%).

    The figures are :meth:`ReplayResult.per_tool`; each bar is labelled with its value.
    """
    figure, ax = figure_and_axes(ax, figsize)
    LiveRates(ax).draw(result)
    return figure


_RATE_TOPS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 120.0)


_RATE_SERIES = tuple(
    (column, label, METRIC_COLORS[column])
    for column, label in (
        ("abandoned_call_rate", "abandoned calls"),
        ("timeout_coverage_loss_rate", "coverage lost to timeouts"),
        ("coverage_loss_rate", "coverage loss (total)"),
    )
)
"""The bars per tool: column, legend label, colour (a column the breakdown lacks is left out)."""


class LiveRates:
    """The :func:`per_tool_rates` chart on one Axes, redrawn in place for live widgets.

    Per tool: the abandoned-call rate, the coverage the timeouts cost (when
    the breakdown has ``timeout_coverage_loss_rate``) and the total coverage
    loss, side by side. The first :meth:`draw` makes the bars; later draws
    with the same tools only move bar heights, labels, the y range and the
    title, which renders several times faster than a new figure (matplotlib
    caches the text layout of artists it has drawn before). A different tool
    set redraws from scratch.
    """

    def __init__(self, ax: Axes) -> None:
        self.ax = ax
        self._key: tuple[list[str], list[str]] | None = None
        self._bars: list[Any] = []
        self._labels: list[list[Any]] = []

    def draw(self, result: ReplayResult) -> None:
        """Show ``result``'s per-tool rates."""
        table = result.per_tool()
        tools = [str(tool) for tool in table["tool"]]
        kinds = [kind for kind in _RATE_SERIES if kind[0] in table.columns]
        series = [100 * table[column].to_numpy(dtype=float) for column, _, _ in kinds]
        ax = self.ax
        key = (tools, [column for column, _, _ in kinds])
        if key != self._key:
            ax.clear()
            x = np.arange(len(tools))
            width = 0.8 / len(kinds)
            self._bars = [
                ax.bar(
                    x + (index - (len(kinds) - 1) / 2) * width,
                    values,
                    width,
                    color=color,
                    label=label,
                )
                for index, ((_, label, color), values) in enumerate(zip(kinds, series, strict=True))
            ]
            self._labels = [
                list(ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)) for bars in self._bars
            ]
            ax.set_xticks(x, tools)
            ax.set_ylabel("rate (%)")
            # Below the tick labels, in one row: inside the Axes it would hide a bar.
            ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(kinds))
            self._key = key
        else:
            for bars, labels, values in zip(self._bars, self._labels, series, strict=True):
                for bar, label, value in zip(bars, labels, values, strict=True):
                    bar.set_height(value)
                    label.xy = (bar.get_x() + bar.get_width() / 2, value)
                    label.set_text(f"{value:.1f}")
        top = float(max((values.max(initial=0.0) for values in series), default=0.0))
        # The y range steps through a few fixed tops, so the tick labels
        # (costly text) repeat between draws.
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
    abandoned_call_rate`` and ``timeout_coverage_loss_rate`` (the coverage the
    timeouts cost; ``coverage_loss_rate`` when a frame has no timeout share),
    as :func:`reviewlab.analysis.sweep.tool_curves` returns. ``tools`` picks and
    orders the curves (default: all); each tool has its palette colour.
    """
    loss = (
        "timeout_coverage_loss_rate"
        if "timeout_coverage_loss_rate" in curves.columns
        else "coverage_loss_rate"
    )
    _require_columns(
        curves, ("tool", "timeout_sec", "abandoned_call_rate", loss), "rates_vs_timeout: curves"
    )
    chosen = _pick_tools(tools, curves["tool"], "rates_vs_timeout: no curve for tool(s)")
    figure, ax = figure_and_axes(ax, (8.0, 4.8))
    what = "coverage lost to timeouts" if loss.startswith("timeout") else "coverage loss"
    for tool in chosen:
        part = curves[curves["tool"] == tool].sort_values("timeout_sec")
        color = tool_color(str(tool))
        ax.plot(
            part["timeout_sec"],
            100 * part["abandoned_call_rate"],
            "-o",
            color=color,
            markersize=3,
            label=f"{tool}: abandoned calls",
        )
        ax.plot(part["timeout_sec"], 100 * part[loss], "--", color=color, label=f"{tool}: {what}")
    ax.set_xscale("log")
    ax.set_xlabel("per-tool timeout (s, log scale)")
    ax.set_ylabel("rate (%)")
    # Two lines: the legend beside the Axes leaves them narrower than the figure, and a centred
    # one-line title reached past the figure's left edge.
    ax.set_title(f"Abandoned calls and {what}\nagainst the per-tool timeout")
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)
    return figure


def pareto_front(
    points: pd.DataFrame,
    *,
    front: pd.Series | np.ndarray | None = None,
    named: Mapping[str, Mapping[str, Any] | ReplayResult] | None = None,
    x: str | None = None,
    y: str = "wall_p95_sec",
    ax: Axes | None = None,
) -> Figure:
    """p95 episode wall time against the coverage the timeouts cost, over a sweep; the front marked.

    ``points`` has ``x`` (default ``timeout_coverage_loss_rate``, else
    ``coverage_loss_rate``) and ``y`` per policy point (a
    :func:`reviewlab.analysis.sweep.sweep` frame). The front is computed on the two objectives
    drawn (:func:`reviewlab.analysis.sweep.pareto` on ``x`` and ``y``), so a point on it is
    never dominated in the plane the reader sees; ``front`` overrides it with a mask of the
    caller's. It is drawn as filled red dots joined by a red staircase (the region it
    dominates lies above and to the right); the other points are grey dots. ``named`` marks
    policies by name (a summary dict or a :class:`ReplayResult` each) as rings in their
    palette colours (:func:`~reviewlab.ui.charts._palette.policy_color`); coinciding ones nest,
    largest first. Every note — a named policy's longest silence, "∞" — is in the legend, right
    of the Axes, so nothing is written over a point. A point with an infinite value is drawn at
    the top (▲) or right edge.
    """
    if x is None:
        x = (
            "timeout_coverage_loss_rate"
            if "timeout_coverage_loss_rate" in points.columns
            else "coverage_loss_rate"
        )
    _require_columns(points, (x, y), "pareto_front: points")
    if front is None:
        from reviewlab.analysis.sweep import pareto

        front = pareto(points, [x, y])
    mask = np.asarray(front, dtype=bool)
    if mask.shape != (len(points),):
        raise ValueError(f"pareto_front: front has {mask.size} entries for {len(points)} points")
    named_values = {
        name: (summary.summary if isinstance(summary, ReplayResult) else summary)
        for name, summary in (named or {}).items()
    }
    figure, ax = figure_and_axes(ax, (8.5, 5.0))
    xs = 100 * points[x].to_numpy(dtype=float)
    ys = points[y].to_numpy(dtype=float)
    extra_x = [100 * float(v.get(x, math.nan)) for v in named_values.values()]
    extra_y = [float(v.get(y, math.nan)) for v in named_values.values()]
    right, top = _edges(np.concatenate([xs, extra_x]), np.concatenate([ys, extra_y]))
    xs, ys = np.minimum(xs, right), np.minimum(ys, top)
    ax.scatter(xs[~mask], ys[~mask], s=12, color=POINT_COLOR, label="policy point", zorder=1)
    order = np.lexsort((ys[mask], xs[mask]))
    fx, fy = xs[mask][order], ys[mask][order]
    ax.plot(
        fx,
        fy,
        "o",
        drawstyle="steps-post",
        linestyle="-",
        linewidth=1.2,
        color=FRONT_COLOR,
        markersize=5,
        label=f"Pareto front ({int(mask.sum())} points)",
        zorder=2,
    )
    _mark_named(ax, named_values, x, y, right, top)
    ax.set_xlabel(
        "coverage lost to timeouts (% of requested read lines)"
        if x.startswith("timeout")
        else "coverage loss (% of requested read lines not credited)"
    )
    ax.set_ylabel("p95 episode wall time (s)" if y == "wall_p95_sec" else y)
    ax.set_title("Wall time against lost coverage over the sweep (front on these two axes)")
    ax.grid(True, alpha=0.3)
    legend_outside(ax)
    return figure


def _edges(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float]:
    """Where infinite values are drawn: a little beyond the largest finite value on each axis."""

    def edge(values: np.ndarray) -> float:
        finite = values[np.isfinite(values)]
        if not finite.size:
            return 1.0
        low, high = float(finite.min()), float(finite.max())
        return high + 0.08 * max(high - low, abs(high), 1e-9)

    return edge(xs), edge(ys)


def _named_label(name: str, values: Mapping[str, Any], infinite: bool) -> str:
    """A named policy's legend entry: its name, its longest silence (the front's third figure,
    which the plane cannot show), and whether a drawn value is infinite."""
    text = name + (" (∞, drawn at the edge)" if infinite else "")
    silence = values.get("max_silence_sec")
    if silence is None:
        return text
    if math.isfinite(float(silence)):
        return f"{text}: silent ≤ {duration_text(float(silence))}"
    return f"{text}: a silence never ends"


def _mark_named(
    ax: Axes,
    named: Mapping[str, Mapping[str, Any]],
    x: str,
    y: str,
    right: float,
    top: float,
) -> None:
    """Each named policy as a ring in its palette colour; coinciding ones nest (smaller above)."""
    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    span_x = max(xlim[1] - xlim[0], 1e-9)
    span_y = max(ylim[1] - ylim[0], 1e-9)
    placed: list[tuple[float, float]] = []
    for index, (name, values) in enumerate(named.items()):
        px = min(100 * float(values[x]), right)
        py = min(float(values[y]), top)
        infinite = not (math.isfinite(float(values[x])) and math.isfinite(float(values[y])))
        crowd = sum(
            abs(px - qx) < 0.03 * span_x and abs(py - qy) < 0.03 * span_y for qx, qy in placed
        )
        placed.append((px, py))
        ax.plot(
            [px],
            [py],
            "^" if infinite else "o",
            # A later policy on the same spot is a smaller disc above:
            # concentric rings, all visible.
            markersize=max(15.0 - 5.0 * crowd, 4.0),
            markeredgecolor="black",
            color=policy_color(name),
            label=_named_label(name, values, infinite),
            linestyle="none",
            zorder=3 + index,
        )


# -- durations --------------------------------------------------------------------


def survival_curves(
    episodes: Sequence[Episode],
    policy: Policy | SupportsTimeoutFor | None = None,
    *,
    tools: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Per-tool share of calls still running after t s (Kaplan–Meier); each bound drawn once.

    Both axes are logarithmic, so the tail a timeout acts on (the last percent
    of calls, and the few that never return) is as visible as the body. The
    estimate is the shared censoring-aware one
    (:func:`reviewlab.engines._censoring.estimates_by_tool`): a call that never
    returned counts as still running until it was last seen, and is marked
    with a ``+`` on its tool's curve there. A curve that reaches 0 is drawn
    down to the bottom edge (half the smallest share one call can be).
    ``policy`` (default :meth:`Policy.ouroboros`) gives each tool's
    bound without a deadline. Tools sharing a bound share ONE dotted line,
    labelled once with the bound and the tools it applies to; each tool's
    legend entry says its bound and the share of its calls that bound abandons.
    """
    from reviewlab.engines._censoring import censored_calls, estimates_by_tool

    episodes = list(episodes)
    per_tool, _ = estimates_by_tool(episodes)
    if not per_tool:
        raise ValueError("survival_curves: the episodes hold no calls")
    chosen = _pick_tools(tools, per_tool, "survival_curves: no calls of tool(s)")
    spine = Policy.of(policy)
    censored_at: dict[str, list[float]] = {}
    for _, _, call in censored_calls(episodes):
        censored_at.setdefault(call.tool, []).append(call.duration_sec)
    figure, ax = figure_and_axes(ax, (8.5, 6.0))
    # On a log axis the curves start (at 1.0) half-way below the shortest positive duration seen.
    positive = [t for tool in chosen for t in per_tool[tool].event_times if t > 0]
    start = min(positive, default=1.0) / 2
    floor = 0.5 / max(per_tool[tool].observations for tool in chosen)
    bounds: dict[float, list[str]] = {}
    for tool in chosen:
        estimate = per_tool[tool]
        color = tool_color(tool)
        bound = float(spine.timeout_for(None, tool, remaining_sec=None))
        bounds.setdefault(bound, []).append(tool)
        times = np.maximum(np.concatenate([[start], estimate.event_times]), start)
        survival = np.maximum(np.concatenate([[1.0], estimate.survival_after]), floor)
        ax.step(
            times,
            survival,
            where="post",
            color=color,
            label=(
                f"{tool} ({estimate.observations} calls, "
                f"{estimate.observations - estimate.events} censored): "
                f"bound {bound:g} s abandons {100 * estimate.survival(bound):.2g}%"
            ),
        )
        marks = censored_at.get(tool, [])
        if marks:
            ax.plot(
                marks,
                [max(estimate.survival(t), floor) for t in marks],
                "+",
                color=color,
                markersize=9,
                linestyle="none",
            )
    for bound, sharing in sorted(bounds.items()):
        color = tool_color(sharing[0]) if len(sharing) == 1 else "#333333"
        ax.axvline(bound, color=color, linestyle=":", linewidth=1.5)
        ax.annotate(
            f"bound {bound:g} s: {', '.join(sharing)}",
            (bound, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(-3, -4),
            textcoords="offset points",
            rotation=90,
            ha="right",
            va="top",
            fontsize=7,
            color="black",
            bbox=LABEL_BOX,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(left=start)
    ax.set_ylim(floor * 0.8, 1.3)
    ax.set_xlabel("call duration (s, log scale)")
    ax.set_ylabel("share of calls still running")
    ax.set_title("Per-tool call durations (Kaplan–Meier survival; + = censored call)")
    ax.grid(True, which="both", alpha=0.3)
    # Below the Axes: the entries are long, and beside the Axes they would squeeze the curves.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8)
    return figure

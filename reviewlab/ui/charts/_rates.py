"""One replay's rates per tool, and a sweep's rates against each tool's timeout.

:func:`per_tool_rates` (and :class:`LiveRates`, its in-place redraw for widgets) shows one
replay per tool; :func:`rates_vs_timeout` shows a sweep's per-tool curves. A sweep's front is
:mod:`reviewlab.ui.charts._pareto`'s, the recorded durations :mod:`reviewlab.ui.charts._survival`'s.
See :mod:`reviewlab.ui.charts` for the conventions every chart follows (``ax=``, no pyplot).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.engines._result import ReplayResult
from reviewlab.ui.charts._common import (
    figure_and_axes,
    legend_outside,
    pick_tools,
    policy_label,
    require_columns,
)
from reviewlab.ui.charts._palette import METRIC_COLORS, tool_color


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
    require_columns(
        curves, ("tool", "timeout_sec", "abandoned_call_rate", loss), "rates_vs_timeout: curves"
    )
    chosen = pick_tools(tools, curves["tool"], "rates_vs_timeout: no curve for tool(s)")
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

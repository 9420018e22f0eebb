"""The price of waiting, drawn: cost per episode against the coverage the timeouts cost.

One chart, :func:`cost_vs_coverage`, over a priced sweep (a
:func:`reviewlab.analysis.sweep.sweep` frame made with ``prices=``): every
policy point, the points no other point beats on both axes (the cost–coverage
front, :func:`reviewlab.analysis.sweep.pareto` over these two columns), and
the named policies in their palette colours. The costs themselves come from
:mod:`reviewlab.analysis._cost`; nothing is priced here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.ui.charts._common import figure_and_axes, infinity_edges, legend_outside
from reviewlab.ui.charts._palette import FRONT_COLOR, POINT_COLOR, policy_color


def cost_vs_coverage(
    points: pd.DataFrame,
    *,
    named: Mapping[str, Mapping[str, Any]] | None = None,
    x: str | None = None,
    y: str = "cost_per_episode",
    currency: str = "USD",
    ax: Axes | None = None,
) -> Figure:
    """Cost per episode against the coverage lost to timeouts, over a priced sweep.

    ``points`` has ``x`` (default ``timeout_coverage_loss_rate``, else
    ``coverage_loss_rate``; drawn in %) and ``y`` (default ``cost_per_episode``)
    per policy point. The points on the two-column front are ringed. ``named``
    marks policies by name (a priced summary each: a sweep row, or
    :func:`reviewlab.analysis._cost.cost_summary` merged into a replay's summary) in
    their palette colours, their cost in the legend (right of the Axes, hiding nothing). An
    infinite cost (a slot held forever) is drawn at the top edge as ▲. When rounds went
    unpriced the title says how many, so a cheap-looking point is not mistaken for a fully
    priced one.
    """
    from reviewlab.analysis.sweep import pareto

    if x is None:
        x = (
            "timeout_coverage_loss_rate"
            if "timeout_coverage_loss_rate" in points.columns
            else "coverage_loss_rate"
        )
    missing = [c for c in (x, y) if c not in points.columns]
    if missing:
        raise ValueError(
            f"cost_vs_coverage: points lack column(s) {', '.join(missing)} "
            "(sweep with prices= to get the cost columns)"
        )
    named_values = dict(named or {})
    for name, values in named_values.items():
        for column in (x, y):
            if column not in values:
                raise ValueError(f"cost_vs_coverage: named[{name!r}] has no {column!r}")
    figure, ax = figure_and_axes(ax, (7.5, 5.0))
    front = pareto(points, x, y).to_numpy() if len(points) else np.zeros(0, dtype=bool)
    xs = 100 * points[x].to_numpy(dtype=float)
    ys = points[y].to_numpy(dtype=float)
    extra_x = [100 * float(v[x]) for v in named_values.values()]
    extra_y = [float(v[y]) for v in named_values.values()]
    right, top = infinity_edges(np.concatenate([xs, extra_x]), np.concatenate([ys, extra_y]))
    infinite = ~np.isfinite(ys)
    xs, ys = np.minimum(xs, right), np.minimum(ys, top)
    ax.scatter(xs[~front], ys[~front], s=14, color=POINT_COLOR, label="policy point", zorder=1)
    if infinite.any():
        ax.scatter(xs[infinite], ys[infinite], marker="^", s=30, color=POINT_COLOR, label="cost ∞")
    order = np.argsort(xs[front], kind="stable")
    ax.plot(
        xs[front][order],
        ys[front][order],
        "o-",
        markerfacecolor="none",
        markeredgecolor=FRONT_COLOR,
        color=FRONT_COLOR,
        linewidth=0.8,
        markersize=7,
        label="cost–coverage front",
        zorder=2,
    )
    for index, (name, values) in enumerate(named_values.items()):
        cost = float(values[y])
        px, py = min(100 * float(values[x]), right), min(cost, top)
        ax.plot(
            [px],
            [py],
            "o" if math.isfinite(cost) else "^",
            markersize=11,
            markeredgecolor="black",
            color=policy_color(name),
            linestyle="none",
            label=f"{name}: {_money(cost, currency)}",  # in the legend: over the
            zorder=3 + index,  # points a label would hide some
        )
    ax.set_xlabel(
        "coverage lost to timeouts (% of requested read lines)"
        if x.startswith("timeout")
        else "coverage loss (% of requested read lines not credited)"
    )
    ax.set_ylabel(f"cost per episode ({currency})" if y == "cost_per_episode" else y)
    title = "Price of waiting: cost against lost coverage"
    if "unpriced_rounds" in points.columns and len(points):
        unpriced = int(points["unpriced_rounds"].max())
        if unpriced:
            title += f"\n(up to {unpriced:,} rounds unpriced: no token usage in the recording)"
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    legend_outside(ax)  # right of the Axes: inside it would hide points
    return figure


def _money(value: float, currency: str) -> str:
    if not math.isfinite(value):
        return f"∞ {currency}"
    return f"{value:.4g} {currency}"

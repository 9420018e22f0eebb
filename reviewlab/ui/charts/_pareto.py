"""A sweep's Pareto front: p95 wall time against the coverage the timeouts cost.

:func:`pareto_front` draws every policy point of a sweep, its front on the two objectives drawn
(computed by :func:`reviewlab.analysis.sweep.pareto`, never here), and named policies as rings.
Invariants: a point on the drawn front is never dominated in the plane the reader sees; an
infinite value is drawn at the edge and said so in the legend; every note is in the legend,
never over a point. Conventions: :mod:`reviewlab.ui.charts` (``ax=``, no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.engines._result import ReplayResult
from reviewlab.ui.charts._common import (
    duration_text,
    figure_and_axes,
    infinity_edges,
    legend_outside,
    require_columns,
)
from reviewlab.ui.charts._palette import FRONT_COLOR, POINT_COLOR, policy_color


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
    require_columns(points, (x, y), "pareto_front: points")
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
    right, top = infinity_edges(np.concatenate([xs, extra_x]), np.concatenate([ys, extra_y]))
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

"""What the current policy trades, and where it sits: the trade-off curve of the dashboard.

:func:`tradeoff_frame` replays a policy with every timeout scaled by each of
:data:`TRADEOFF_FACTORS` (the curve through the current policy: tighter to the left of it,
looser to the right); :func:`tradeoff_curve` draws two panels against the coverage lost to
timeouts — the abandoned-call rate, and p95 episode wall time — with the curve, the current
policy as a large ring, and the presets beside it. The legend is right of the Axes, so it
hides no point. The replays are the caller's (``summarize``): this module only lays them out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.ui.charts._palette import FRONT_COLOR, policy_color

TRADEOFF_FACTORS = (0.0625, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
"""The scales of the current policy's timeouts the curve replays (1.0: the policy itself)."""

TRADEOFF_AXES = (
    ("abandoned_call_rate", "abandoned-call rate (%)", 100.0),
    ("wall_p95_sec", "p95 episode wall time (s)", 1.0),
)
"""The panels' y columns, labels and multipliers; x is always the coverage lost to timeouts."""

X = "timeout_coverage_loss_rate"
_COLUMNS = ("scale", X, "abandoned_call_rate", "wall_p95_sec", "max_silence_sec")


def tradeoff_frame(
    policy: Policy,
    summarize: Callable[[Policy], Mapping[str, Any]],
    factors: Sequence[float] = TRADEOFF_FACTORS,
) -> pd.DataFrame:
    """One row per factor: ``scale`` and the summary figures of ``policy`` with every timeout
    scaled by it (``summarize(policy)`` replays). A policy whose timeouts are not a
    :class:`TimeoutPolicy` (a custom rule) has no scale: only its own row."""
    rows = []
    timeouts = policy.timeouts
    chosen = factors if isinstance(timeouts, TimeoutPolicy) else (1.0,)
    for factor in chosen:
        scaled = (
            policy
            if factor == 1.0 or not isinstance(timeouts, TimeoutPolicy)
            else policy.replace(timeouts=timeouts.scaled(factor))
        )
        summary = summarize(scaled)
        rows.append({"scale": float(factor), **{c: summary[c] for c in _COLUMNS[1:]}})
    return pd.DataFrame(rows, columns=list(_COLUMNS))


def _finite_top(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.max()) * 1.12 if finite.size else 1.0


def tradeoff_curve(
    curve: pd.DataFrame,
    *,
    current: Mapping[str, Any] | None = None,
    presets: Mapping[str, Mapping[str, Any]] | None = None,
    current_label: str = "current policy",
    axes: Sequence[Axes] | None = None,
    figure: Figure | None = None,
) -> Figure:
    """The curve (``tradeoff_frame``) in two panels against the coverage lost to timeouts, the
    ``current`` summary as a ring, each preset summary as a diamond in its palette colour.

    An infinite figure is drawn on the top edge as ▲. ``axes`` (two) or ``figure`` draw into
    existing ones (the dashboard redraws one figure in place).
    """
    if axes is None:
        if figure is None:
            figure = Figure(figsize=(10.0, 3.6), layout="constrained")
        figure.clear()
        axes = list(figure.subplots(1, 2))
    figure = axes[0].figure  # type: ignore[assignment]
    assert isinstance(figure, Figure)
    presets = dict(presets or {})
    xs = 100 * curve[X].to_numpy(dtype=float)
    for ax, (column, label, factor) in zip(axes, TRADEOFF_AXES, strict=True):
        ax.clear()
        ys = factor * curve[column].to_numpy(dtype=float)
        others = [factor * float(v[column]) for v in presets.values()]
        if current is not None:
            others.append(factor * float(current[column]))
        top = _finite_top(np.concatenate([ys, np.asarray(others, dtype=float)]))
        drawn = np.minimum(ys, top)
        ax.plot(xs, drawn, "-o", color=FRONT_COLOR, markersize=3, label="timeouts × 1/16 … 8")
        for name, summary in presets.items():
            px, py = 100 * float(summary[X]), factor * float(summary[column])
            ax.plot(
                [px],
                [min(py, top)],
                "^" if not math.isfinite(py) else "D",
                color=policy_color(name),
                markeredgecolor="black",
                markersize=7,
                linestyle="none",
                label=f"preset: {name}" + (" (∞)" if not math.isfinite(py) else ""),
            )
        if current is not None:
            px, py = 100 * float(current[X]), factor * float(current[column])
            ax.plot(
                [px],
                [min(py, top)],
                "o",
                markersize=13,
                markerfacecolor="none",
                markeredgecolor="black",
                markeredgewidth=2,
                linestyle="none",
                label=current_label,
                zorder=5,
            )
        ax.set_xlabel("coverage lost to timeouts (%)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=-0.04 * top, top=top * 1.05)  # a point at 0 shows whole
        ax.grid(True, alpha=0.3)
    axes[0].set_title("What the current policy trades")
    handles, labels = axes[0].get_legend_handles_labels()
    axes[-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7)
    return figure

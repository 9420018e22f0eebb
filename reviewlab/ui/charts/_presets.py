"""Other frameworks' presets on one corpus, drawn: longest silence against abandoned calls.

One chart, :func:`preset_scores`, over :func:`reviewlab.analysis._presets.score_presets`'s frame:
each preset a point (hollow when its values are unverified), the added policies (ouroboros, the
recommendation) in their palette colours. A silence that never ends (no bound, a call that never
returns) is drawn at the top edge as ▲. Nothing is replayed here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.ui.charts._common import figure_and_axes
from reviewlab.ui.charts._palette import POINT_COLOR, policy_color


def preset_scores(
    scores: pd.DataFrame,
    *,
    x: str = "abandoned_call_rate",
    y: str = "max_silence_sec",
    ax: Axes | None = None,
) -> Figure:
    """Each row of ``scores`` (``preset``, ``framework``, ``verified``, ``x``, ``y``) as a
    labelled point: ``x`` in %, ``y`` on a log scale; rows whose framework is ``reviewlab`` in
    their policy colours."""
    missing = [c for c in ("preset", "framework", x, y) if c not in scores.columns]
    if missing:
        raise ValueError(f"preset_scores: scores lack column(s) {', '.join(missing)}")
    figure, ax = figure_and_axes(ax, (8.0, 5.5))
    xs = 100 * scores[x].to_numpy(dtype=float)
    ys = scores[y].to_numpy(dtype=float)
    finite = ys[np.isfinite(ys) & (ys > 0)]
    top = float(finite.max()) * 4 if finite.size else 10.0
    bottom = float(finite.min()) / 2 if finite.size else 0.1
    labels: dict[tuple[float, float], list[str]] = {}
    for row, px, py in zip(scores.to_dict("records"), xs, ys, strict=True):
        name = str(row["preset"])
        ours = row["framework"] == "reviewlab"
        color = policy_color(name.removeprefix("reviewlab ")) if ours else POINT_COLOR
        endless = not math.isfinite(py)
        shown_y = top if endless else max(py, bottom)
        hollow = row.get("verified") == "unverified"
        ax.scatter(
            [px],
            [shown_y],
            marker="^" if endless else ("D" if ours else "o"),
            s=60 if ours else 36,
            facecolors="none" if hollow else color,
            edgecolors=color,
            zorder=3 if ours else 2,
        )
        labels.setdefault((px, shown_y), []).append(name + (" (unverified)" if hollow else ""))
    for (px, shown_y), names in labels.items():  # presets on one point share one label
        ax.annotate(
            ", ".join(names),
            (px, shown_y),
            textcoords="offset points",
            xytext=(5, 3),
            fontsize=7,
        )
    ax.set_yscale("log")
    ax.set_ylim(bottom, top * 1.5)
    ax.set_xlabel(f"{x.replace('_', ' ')} (%)")
    ax.set_ylabel(f"{y.replace('_', ' ')} (log; ▲ never ends)")
    ax.set_title("Other frameworks' timeout defaults, replayed on this corpus")
    ax.grid(True, which="both", alpha=0.2)
    return figure

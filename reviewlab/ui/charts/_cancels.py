"""What servers did with a cancel, and how late dropped valid results came, drawn.

Two charts over :mod:`reviewlab.analysis._cancels` and :mod:`reviewlab.analysis._clocks` frames:
:func:`cancel_chart` (per server and tool, the cancels that stopped, kept working or were
answered anyway, stacked) and :func:`dropped_results_chart` (each valid result dropped: how
late it came after its abandonment, per tool). Nothing is replayed here.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.ui.charts._common import figure_and_axes
from reviewlab.ui.charts._palette import STATE_COLORS, tool_color

# A server that kept working is a zombie's colour; one that answered anyway, a silence's.
_VERDICT_COLORS = {
    "stopped": STATE_COLORS["busy"],
    "kept_working": STATE_COLORS["zombie"],
    "answered_anyway": STATE_COLORS["silent"],
}


def cancel_chart(faithfulness: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """One horizontal bar per server and tool of
    :func:`~reviewlab.analysis._cancels.cancel_faithfulness`'s frame: its cancels split into
    stopped, kept working and answered anyway."""
    missing = [c for c in ("server", "tool", *_VERDICT_COLORS) if c not in faithfulness]
    if missing:
        raise ValueError(f"cancel_chart: the frame lacks column(s) {', '.join(missing)}")
    figure, ax = figure_and_axes(ax, (8.0, 1.2 + 0.45 * max(1, len(faithfulness))))
    labels = [f"{row.server} · {row.tool}" for row in faithfulness.itertuples()]
    left = np.zeros(len(faithfulness))
    for verdict, color in _VERDICT_COLORS.items():
        counts = faithfulness[verdict].to_numpy(dtype=float)
        ax.barh(labels, counts, left=left, color=color, label=verdict.replace("_", " "))
        left += counts
    ax.set_xlabel("cancels sent")
    ax.set_title("What the server did after the cancel")
    ax.legend(loc="lower right", frameon=False)
    ax.invert_yaxis()
    return figure


def dropped_results_chart(clocks: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Each valid result dropped in :func:`~reviewlab.analysis._clocks.clock_table`'s frame (a
    call that came back after its abandonment) as a point: its tool, and how late it came."""
    if "dropped_late_sec" not in clocks or "tool" not in clocks:
        raise ValueError("dropped_results_chart: the frame lacks dropped_late_sec or tool")
    figure, ax = figure_and_axes(ax, (8.0, 4.0))
    dropped = clocks[clocks["dropped_late_sec"].notna()]
    tools = sorted(dropped["tool"].unique())
    for position, tool in enumerate(tools):
        late = dropped[dropped["tool"] == tool]["dropped_late_sec"].to_numpy(dtype=float)
        ax.scatter(late, np.full(late.size, position), color=tool_color(tool), s=30, alpha=0.8)
    ax.set_yticks(range(len(tools)), tools)
    ax.set_xlabel("seconds after the abandonment the valid result came")
    ax.set_title(f"Valid results dropped: {len(dropped)}")
    if not tools:
        ax.text(0.5, 0.5, "no valid result was dropped", ha="center", transform=ax.transAxes)
    return figure

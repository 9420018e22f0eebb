"""The recorded call durations per tool against each tool's bound (Kaplan–Meier survival).

:func:`survival_curves` draws the shared censoring-aware estimate
(:func:`reviewlab.engines._censoring.estimates_by_tool`): a call that never returned counts as
still running until it was last seen. Invariants: both axes are logarithmic, so the tail a
timeout acts on is as visible as the body; tools sharing a bound share one line. Conventions:
:mod:`reviewlab.ui.charts` (``ax=``, no pyplot).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from reviewlab.core._policy import Policy, SupportsTimeoutFor
from reviewlab.recording._schema import Episode
from reviewlab.ui.charts._common import LABEL_BOX, figure_and_axes, pick_tools
from reviewlab.ui.charts._palette import tool_color


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
    chosen = pick_tools(tools, per_tool, "survival_curves: no calls of tool(s)")
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

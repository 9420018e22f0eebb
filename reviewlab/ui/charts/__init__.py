"""Charts over replay, sweep and metrics results (matplotlib, Agg, no global pyplot state).

Colours come from :mod:`reviewlab.ui.charts._palette` only, so a named policy
or a tool has the same colour in the report, the notebooks and the dashboard.

Every function draws one chart and returns its :class:`~matplotlib.figure.Figure`.
Pass ``ax=`` to draw into an existing Axes (the figure returned is then
``ax.figure``); without it a fresh figure is made with :class:`Figure`
directly, never through ``pyplot``, so nothing is shown, nothing leaks into a
global figure registry, and the charts are safe in threads, tests and servers.

The charts compute nothing of their own beyond layout: rates, fronts, survival
estimates and per-call timelines come from :mod:`reviewlab.core._metrics`,
:mod:`reviewlab.engines._replay`, :mod:`reviewlab.analysis.sweep` and friends.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.ui.charts._cancels import cancel_chart, dropped_results_chart
    from reviewlab.ui.charts._cost import cost_vs_coverage
    from reviewlab.ui.charts._hedging import hedge_tradeoff
    from reviewlab.ui.charts._palette import STATE_COLORS, policy_color, tool_color
    from reviewlab.ui.charts._pareto import pareto_front
    from reviewlab.ui.charts._pool import pool_timeline
    from reviewlab.ui.charts._presets import preset_scores
    from reviewlab.ui.charts._rates import LiveRates, per_tool_rates, rates_vs_timeout
    from reviewlab.ui.charts._survival import survival_curves
    from reviewlab.ui.charts._timelines import call_timeline, episode_timeline
    from reviewlab.ui.charts._tradeoff import tradeoff_curve, tradeoff_frame

_HOMES = {
    "LiveRates": "reviewlab.ui.charts._rates",
    "STATE_COLORS": "reviewlab.ui.charts._palette",
    "call_timeline": "reviewlab.ui.charts._timelines",
    "cancel_chart": "reviewlab.ui.charts._cancels",
    "cost_vs_coverage": "reviewlab.ui.charts._cost",
    "dropped_results_chart": "reviewlab.ui.charts._cancels",
    "episode_timeline": "reviewlab.ui.charts._timelines",
    "hedge_tradeoff": "reviewlab.ui.charts._hedging",
    "pareto_front": "reviewlab.ui.charts._pareto",
    "per_tool_rates": "reviewlab.ui.charts._rates",
    "policy_color": "reviewlab.ui.charts._palette",
    "pool_timeline": "reviewlab.ui.charts._pool",
    "preset_scores": "reviewlab.ui.charts._presets",
    "rates_vs_timeout": "reviewlab.ui.charts._rates",
    "survival_curves": "reviewlab.ui.charts._survival",
    "tool_color": "reviewlab.ui.charts._palette",
    "tradeoff_curve": "reviewlab.ui.charts._tradeoff",
    "tradeoff_frame": "reviewlab.ui.charts._tradeoff",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.ui.charts`` loads only what is asked for."""

__all__ = [
    "STATE_COLORS",
    "LiveRates",
    "call_timeline",
    "cancel_chart",
    "cost_vs_coverage",
    "dropped_results_chart",
    "episode_timeline",
    "hedge_tradeoff",
    "pareto_front",
    "per_tool_rates",
    "policy_color",
    "pool_timeline",
    "preset_scores",
    "rates_vs_timeout",
    "survival_curves",
    "tool_color",
    "tradeoff_curve",
    "tradeoff_frame",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

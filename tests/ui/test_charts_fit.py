"""Every chart fits its figure: drawn from the smallest realistic input and saved as the report
saves it (:meth:`reviewlab.ui._report.Report.figure`: ``dpi=110``, no ``bbox_inches``), no title,
axis label, tick label, legend or text reaches past the saved canvas.

The chart functions are read off :data:`reviewlab.ui.charts.__all__` (every exported function
that returns a :class:`~matplotlib.figure.Figure`), so a new chart is checked as soon as it is
exported: the test fails until :data:`INPUTS` says how to draw it.
"""

from __future__ import annotations

import inspect
import io
import typing
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.image import imread
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from reviewlab.analysis.sweep import make_grid, sweep, tool_curves
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._prices import ModelPrice, PriceTable
from reviewlab.engines._replay import replay
from reviewlab.recording._files import load_episodes
from reviewlab.recording._schema import Episode
from reviewlab.resources import corpus_path, incident_path
from reviewlab.ui import charts
from reviewlab.ui._rich_display import CHART_DPI, REPLAY_CHART_SIZE
from reviewlab.ui.charts import tradeoff_frame

REPORT_DPI = 110
"""What :meth:`reviewlab.ui._report.Report.figure` saves with (and no ``bbox_inches``)."""

SLACK_PX = 1.0
"""Rounding of a saved pixel: an extent may reach this far past the canvas."""


@cache
def _episodes() -> list[Episode]:
    """The first 60 episodes of the bundled corpus: every tool, a few censored calls."""
    return list(load_episodes(corpus_path()))[:60]


def _per_tool_rates() -> Figure:
    return charts.per_tool_rates(replay(_episodes(), Policy.uniform(5.0)))


def _rates_vs_timeout() -> Figure:
    tools = sorted({call.tool for episode in _episodes() for call in episode.calls})
    return charts.rates_vs_timeout(
        tool_curves(_episodes(), dict.fromkeys(tools, [1.0, 10.0, 100.0]))
    )


def _pareto_front() -> Figure:
    points = sweep(_episodes(), make_grid(Policy.ouroboros(), scales=[0.01, 0.1, 1.0]))
    named = {"ouroboros": replay(_episodes(), Policy.ouroboros())}
    return charts.pareto_front(points, named=named)


def _survival_curves() -> Figure:
    return charts.survival_curves(_episodes(), Policy.ouroboros())


def _episode_timeline() -> Figure:
    episode = _episodes()[0]
    return charts.episode_timeline(
        replay([episode], Policy.uniform(5.0)), episode.id, episode=episode
    )


def _pool_timeline() -> Figure:
    incident = list(load_episodes(incident_path()))
    run = replay(incident, Policy.unbounded(), engine="twin", slots=6, censored="observed")
    return charts.pool_timeline(run, episodes=incident)


def _cost_vs_coverage() -> Figure:
    price = ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0)
    prices = PriceTable(models={"model": price}, slot_per_sec=0.001, default_model="model")
    points = sweep(_episodes(), make_grid(Policy.ouroboros(), scales=[0.1, 1.0]), prices=prices)
    return charts.cost_vs_coverage(points)


def _hedge_tradeoff() -> Figure:
    grid = make_grid(TimeoutPolicy.uniform(30.0), hedges={"read_file": [0.2, 1.0]})
    return charts.hedge_tradeoff(sweep(_episodes(), grid))


def _preset_scores() -> Figure:
    scores = pd.DataFrame(
        {
            "preset": ["ouroboros", "mcp-typescript-sdk", "no timeout"],
            "framework": ["reviewlab", "MCP TypeScript SDK", "none"],
            "verified": ["verified", "unverified", "verified"],
            "abandoned_call_rate": [0.012, 0.03, 0.0],
            "max_silence_sec": [610.0, 65.0, np.inf],
        }
    )
    return charts.preset_scores(scores)


def _cancel_chart() -> Figure:
    faithfulness = pd.DataFrame(
        {
            "server": ["demo", "demo"],
            "tool": ["search_code", "read_file"],
            "stopped": [1, 0],
            "kept_working": [0, 1],
            "answered_anyway": [1, 0],
        }
    )
    return charts.cancel_chart(faithfulness)


def _dropped_results_chart() -> Figure:
    clocks = pd.DataFrame(
        {
            "tool": ["search_code", "read_file", "search_code"],
            "dropped_late_sec": [0.4, 2.5, np.nan],
        }
    )
    return charts.dropped_results_chart(clocks)


def _tradeoff_curve() -> Figure:
    policy = Policy.ouroboros()

    def summarize(p: Policy) -> dict[str, Any]:
        return replay(_episodes(), p).summary

    curve = tradeoff_frame(policy, summarize, factors=(0.01, 0.1, 1.0))
    presets = {"unbounded": replay(_episodes(), Policy.unbounded()).summary}
    return charts.tradeoff_curve(curve, current=summarize(policy), presets=presets)


INPUTS: dict[str, Callable[[], Figure]] = {
    "cancel_chart": _cancel_chart,
    "cost_vs_coverage": _cost_vs_coverage,
    "dropped_results_chart": _dropped_results_chart,
    "episode_timeline": _episode_timeline,
    "hedge_tradeoff": _hedge_tradeoff,
    "pareto_front": _pareto_front,
    "per_tool_rates": _per_tool_rates,
    "pool_timeline": _pool_timeline,
    "preset_scores": _preset_scores,
    "rates_vs_timeout": _rates_vs_timeout,
    "survival_curves": _survival_curves,
    "tradeoff_curve": _tradeoff_curve,
}
"""How to draw each chart function from the smallest realistic input."""


def chart_functions() -> list[str]:
    """Every function :data:`reviewlab.ui.charts.__all__` exports that returns a Figure."""
    found = []
    for name in charts.__all__:
        value = getattr(charts, name)
        if inspect.isfunction(value) and typing.get_type_hints(value).get("return") is Figure:
            found.append(name)
    return sorted(found)


def saved_canvas(figure: Figure, dpi: float = REPORT_DPI) -> tuple[Bbox, Any]:
    """Save ``figure`` as the report does (or at ``dpi``); the saved canvas in pixels and a
    renderer laid out as that save was."""
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=dpi, format="png")
    height, width = imread(io.BytesIO(buffer.getvalue()), format="png").shape[:2]
    figure.set_dpi(dpi)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return Bbox.from_bounds(0, 0, width, height), canvas.get_renderer()


def drawn_extents(figure: Figure, renderer: Any) -> Iterator[tuple[str, Bbox]]:
    """Each text-bearing artist's window extent, named: titles, axis labels with their tick
    labels, legends, and the texts on the Axes and the figure."""
    for index, ax in enumerate(figure.axes):
        where = f"axes {index}"
        for child in ax.get_children():  # the three titles and every text or annotation
            if isinstance(child, Text) and child.get_visible() and child.get_text():
                kind = "title" if _is_title(ax, child) else "text"
                yield f"{where} {kind} {child.get_text()!r}", child.get_window_extent(renderer)
        for axis_name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            box = axis.get_tightbbox(renderer)
            if box is not None and box.width > 0:
                yield f"{where} {axis_name} axis (label and tick labels)", box
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            yield f"{where} legend", legend.get_window_extent(renderer)
    for legend in figure.legends:
        yield "figure legend", legend.get_window_extent(renderer)
    for text in figure.texts:
        if text.get_visible() and text.get_text():
            yield f"figure text {text.get_text()!r}", text.get_window_extent(renderer)


def _is_title(ax: Any, text: Text) -> bool:
    """Whether ``text`` is one of the Axes' three titles (left, centre, right)."""
    return text not in ax.texts and text.get_position()[1] >= 1.0


def outside(box: Bbox, canvas: Bbox) -> bool:
    """Whether ``box`` reaches past ``canvas`` by more than a pixel's rounding."""
    return (
        box.x0 < canvas.x0 - SLACK_PX
        or box.y0 < canvas.y0 - SLACK_PX
        or box.x1 > canvas.x1 + SLACK_PX
        or box.y1 > canvas.y1 + SLACK_PX
    )


def test_every_chart_function_has_an_input():
    """The charts discovered from ``__all__`` are exactly those this test knows how to draw, and
    the discovery finds the charts and skips what draws nothing (colours, frames)."""
    found = chart_functions()
    assert found == sorted(INPUTS)
    assert "rates_vs_timeout" in found and "tool_color" not in found
    assert "tradeoff_frame" not in found


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_every_artist_lies_inside_the_saved_figure(name):
    """Saved as the report saves it, every title, axis label, tick label, legend and text of
    the chart lies inside the saved canvas."""
    figure = INPUTS[name]()
    assert isinstance(figure, Figure)
    canvas, renderer = saved_canvas(figure)
    extents = list(drawn_extents(figure, renderer))
    assert any("title" in what for what, _ in extents), f"{name}: no title was drawn"
    clipped = [
        f"{what}: x {box.x0:.0f}..{box.x1:.0f}, y {box.y0:.0f}..{box.y1:.0f}"
        for what, box in extents
        if outside(box, canvas)
    ]
    assert not clipped, (
        f"{name}: past the {canvas.width:.0f}×{canvas.height:.0f} px canvas: " + "; ".join(clipped)
    )


def test_the_notebook_replay_chart_fits_at_its_size():
    """The per-tool rates chart a replay shows in a notebook (smaller, lower resolution) keeps
    every artist inside its saved canvas too."""
    result = replay(_episodes(), Policy.uniform(5.0))
    figure = charts.per_tool_rates(result, figsize=REPLAY_CHART_SIZE)
    canvas, renderer = saved_canvas(figure, CHART_DPI)
    clipped = [what for what, box in drawn_extents(figure, renderer) if outside(box, canvas)]
    assert not clipped


def test_the_check_sees_a_clipped_title():
    """A title far wider than its figure is reported as reaching past the canvas (the check can
    fail)."""
    figure = Figure(figsize=(3.0, 2.0), layout="constrained")
    ax = figure.add_subplot()
    ax.set_title("a title much too long to fit in a figure three inches wide, cut at both ends")
    canvas, renderer = saved_canvas(figure)
    flagged = [what for what, box in drawn_extents(figure, renderer) if outside(box, canvas)]
    assert any("title" in what for what in flagged)

"""The cost chart: cost per episode against lost coverage over a priced sweep, its front, named
policies in their palette colours, infinite costs at the top edge, unpriced rounds in the title."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES
from matplotlib.colors import to_hex

from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.core._prices import ModelPrice, PriceTable
from reviewlab.recording.interop import import_openhands
from reviewlab.ui import charts
from reviewlab.ui.charts._palette import policy_color

FIXTURE = FIXTURES / "openhands/multi_swe_bench_examples_output.jsonl"


def _legend(ax) -> list[str]:
    return [text.get_text() for text in ax.get_legend().get_texts()]


def test_the_front_the_other_points_and_the_named_policies():
    """Points beaten on both axes are grey; the front joins the others; names carry the cost."""
    points = pd.DataFrame(
        {
            "timeout_coverage_loss_rate": [0.0, 0.01, 0.05, 0.02, 0.06],
            "cost_per_episode": [0.9, 0.3, 0.1, 0.8, 0.5],
            "unpriced_rounds": [0, 0, 0, 0, 0],
        }
    )
    named = {
        "ouroboros": {"timeout_coverage_loss_rate": 0.0, "cost_per_episode": 0.9},
        "recommended": {"timeout_coverage_loss_rate": 0.01, "cost_per_episode": 0.3},
    }
    ax = charts.cost_vs_coverage(points, named=named).axes[0]
    front = [line for line in ax.lines if line.get_label() == "cost–coverage front"][0]
    assert list(front.get_xdata()) == [0.0, 1.0, 5.0]
    assert list(front.get_ydata()) == [0.9, 0.3, 0.1]
    grey = np.asarray(ax.collections[0].get_offsets()).tolist()
    assert sorted(map(tuple, grey)) == [(2.0, 0.8), (6.0, 0.5)]
    assert not ax.texts  # the costs are in the legend, beside the Axes: no note over a point
    markers = {line.get_label(): line for line in ax.lines}
    assert to_hex(markers["ouroboros: 0.9 USD"].get_color()) == policy_color("ouroboros")
    assert to_hex(markers["recommended: 0.3 USD"].get_color()) == policy_color("recommended")
    assert _legend(ax) == [
        "policy point",
        "cost–coverage front",
        "ouroboros: 0.9 USD",
        "recommended: 0.3 USD",
    ]
    assert ax.get_ylabel() == "cost per episode (USD)"
    assert "unpriced" not in ax.get_title()


def test_an_infinite_cost_sits_on_the_top_edge_and_unpriced_rounds_are_in_the_title():
    """A slot held forever costs ∞: drawn as ▲ above every finite point; unpriced rounds said."""
    points = pd.DataFrame(
        {
            "timeout_coverage_loss_rate": [0.0, 0.02],
            "cost_per_episode": [math.inf, 0.2],
            "unpriced_rounds": [12, 12],
        }
    )
    named = {"pre-fix": {"timeout_coverage_loss_rate": 0.0, "cost_per_episode": math.inf}}
    ax = charts.cost_vs_coverage(points, named=named, currency="EUR").axes[0]
    triangles = [c for c in ax.collections if c.get_label() == "cost ∞"]
    (edge_y,) = {y for _, y in np.asarray(triangles[0].get_offsets())}
    assert edge_y > 0.2
    assert "pre-fix: ∞ EUR" in _legend(ax)
    assert "12 rounds unpriced" in ax.get_title()


def test_missing_columns_are_named():
    """A sweep made without prices has no cost column: the error says so."""
    points = pd.DataFrame({"timeout_coverage_loss_rate": [0.0]})
    with pytest.raises(ValueError, match="cost_per_episode.*prices="):
        charts.cost_vs_coverage(points)
    good = pd.DataFrame({"timeout_coverage_loss_rate": [0.0], "cost_per_episode": [1.0]})
    with pytest.raises(ValueError, match=r"named\['x'\] has no 'cost_per_episode'"):
        charts.cost_vs_coverage(good, named={"x": {"timeout_coverage_loss_rate": 0.0}})


def test_a_priced_sweep_of_real_logs_draws_every_point():
    """A priced sweep of the imported OpenHands runs: one marker per point, front included."""
    episodes = import_openhands(FIXTURE)
    prices = PriceTable(
        models={"llama-4-maverick": ModelPrice(0.17, 0.6)}, slot_per_sec=0.001, zombie_per_sec=0.001
    )
    frame = sweep(episodes, make_grid(scales=[0.005, 0.01, 0.1, 1.0]), prices=prices)
    figure = charts.cost_vs_coverage(frame)
    ax = figure.axes[0]
    front = [line for line in ax.lines if line.get_label() == "cost–coverage front"][0]
    shown = len(front.get_xdata()) + len(ax.collections[0].get_offsets())
    assert shown == len(frame)
    assert frame["cost_per_episode"].min() in set(front.get_ydata())


def test_hedge_tradeoff_draws_one_line_per_tool_in_delay_order():
    """Points sorted by delay, x in % of dispatched calls, delays labelled, the reference dashed."""
    points = pd.DataFrame(
        {
            "hedge.read_file.after_sec": [2.0, 0.5, 1.0],
            "extra_call_share": [0.01, 0.05, 0.02],
            "wall_p99_sec": [80.0, 60.0, 70.0],
        }
    )
    reference = {"ouroboros": {"wall_p99_sec": 90.0}}
    ax = charts.hedge_tradeoff(points, reference=reference).axes[0]
    line = [ln for ln in ax.lines if ln.get_label() == "hedge read_file"][0]
    assert list(line.get_xdata()) == [5.0, 2.0, 1.0]
    assert list(line.get_ydata()) == [60.0, 70.0, 80.0]
    assert to_hex(line.get_color()) == charts.tool_color("read_file")
    assert [t.get_text() for t in ax.texts] == ["0.5 s", "1 s", "2 s"]
    dashed = [ln for ln in ax.lines if ln.get_label() == "ouroboros (no hedge)"][0]
    assert list(dashed.get_ydata()) == [90.0, 90.0]
    assert to_hex(dashed.get_color()) == policy_color("ouroboros")


def test_hedge_tradeoff_needs_a_hedge_sweep():
    """A frame without hedge delay columns is refused with what it needs."""
    with pytest.raises(ValueError, match=r"hedge\.<tool>\.after_sec"):
        charts.hedge_tradeoff(pd.DataFrame({"extra_call_share": [0.0], "wall_p99_sec": [1.0]}))


def test_a_hedge_sweep_of_the_bundled_corpus_draws():
    """A real sweep of hedge delays draws one point per delay."""
    from reviewlab.core._policy import TimeoutPolicy
    from reviewlab.recording._files import load_episodes
    from reviewlab.resources import corpus_path

    episodes = load_episodes(corpus_path())[:200]
    grid = make_grid(TimeoutPolicy.uniform(30.0), hedges={"read_file": [0.2, 1.0]})
    frame = sweep(episodes, grid)
    ax = charts.hedge_tradeoff(frame).axes[0]
    assert len(ax.lines[0].get_xdata()) == 2
    assert (frame["extra_call_share"] > 0).any()

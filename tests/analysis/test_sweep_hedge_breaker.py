"""Sweeps over hedge delays and breakers: the grid's axes and parameter columns, and each point
replayed on the episodes exactly as replay() replays it (a compiled corpus ignores neither)."""

from __future__ import annotations

import math

import pytest

from reviewlab.analysis.sweep import make_grid, replays_episodes, sweep
from reviewlab.core._breaker import BreakerRule
from reviewlab.core._policy import Policy
from reviewlab.core._prices import PriceTable
from reviewlab.engines._replay import replay
from reviewlab.engines.vectorized import compile_corpus
from reviewlab.recording._files import load_episodes
from reviewlab.resources import corpus_path

BASE = Policy.uniform(1.0)


@pytest.fixture(scope="module")
def episodes():
    """The first 300 episodes of the bundled corpus."""
    return load_episodes(corpus_path())[:300]


def test_the_grid_crosses_hedge_delays_and_breakers_and_names_them():
    """2 delays × 3 breakers = 6 points, each policy carrying its hedge and breaker."""
    rules = [None, BreakerRule(3), BreakerRule(2, window=4, cooldown_rounds=None, cooldown_sec=30)]
    grid = make_grid(BASE, hedges={"read_file": [0.5, 2.0]}, hedge_share=0.1, breakers=rules)
    assert len(grid) == 6
    frame = grid.frame()
    assert frame["hedge.read_file.after_sec"].tolist() == [0.5, 0.5, 0.5, 2.0, 2.0, 2.0]
    assert set(frame["hedge.max_share"]) == {0.1}
    assert frame["breaker.consecutive"].tolist() == [0, 3, 2] * 2
    assert frame["breaker.cooldown"].tolist() == ["", "2 rounds", "30 s"] * 2
    assert math.isnan(frame["breaker.window"][1]) and frame["breaker.window"][2] == 4
    for point, rule in zip(grid, rules * 2, strict=True):
        assert point.policy.hedges["read_file"].max_share == 0.1
        assert point.policy.breaker == rule
        assert replays_episodes(point.policy)
    assert not replays_episodes(BASE)


def test_a_grid_without_the_new_axes_is_what_it_was():
    """No hedge or breaker axis: no new columns, the policies untouched."""
    grid = make_grid(BASE, scales=[1.0, 2.0])
    assert list(grid.frame().columns) == [
        "policy_name",
        "scale",
        "narrowing.mode",
        "narrowing.reserve_sec",
        "narrowing.fraction",
    ]


@pytest.mark.parametrize("engine", ["vectorized", "twin"])
def test_every_point_equals_its_own_replay(episodes, engine):
    """Each row of a hedge × breaker sweep is the summary replay() gives that point."""
    grid = make_grid(BASE, hedges={"read_file": [0.2]}, breakers=[None, BreakerRule(2)])
    frame = sweep(episodes, grid, engine=engine, prices=PriceTable(slot_per_sec=1.0))
    for point, row in zip(grid, frame.to_dict("records"), strict=True):
        expected = replay(episodes, point.policy, engine=engine).summary
        for key in ("abandoned_call_rate", "wall_p99_sec", "hedges", "zombie_finite_sec"):
            assert row[key] == pytest.approx(expected[key]), key
    withheld = frame["breaker.consecutive"] == 2
    assert (
        frame.loc[withheld, "abandoned_call_rate"].iloc[0]
        < frame.loc[~withheld, "abandoned_call_rate"].iloc[0]
    )
    assert (frame["cost_per_episode"] > 0).all()


def test_a_compiled_corpus_refuses_points_it_cannot_replay(episodes):
    """A compiled corpus has no episodes to run the breaker's fixed point on: an error says so."""
    compiled = compile_corpus(episodes, censored="wedge", seed=0)
    grid = make_grid(BASE, breakers=[BreakerRule(3)])
    with pytest.raises(ValueError, match="hedges or has a breaker"):
        sweep(compiled, grid)


def test_bad_axes_are_named():
    """An empty delay list and a breaker that is not a BreakerRule are errors naming the axis."""
    with pytest.raises(ValueError, match=r"hedges\.read_file"):
        make_grid(BASE, hedges={"read_file": []})
    with pytest.raises(TypeError, match=r"breakers\[1\]"):
        make_grid(BASE, breakers=[None, 3])  # type: ignore[list-item]


def test_a_sweep_over_prices_gives_one_row_per_point_and_table(episodes):
    """Named tables: rows point by point, each table's cost what a one-table sweep gives."""
    tables = {
        "cheap slots": PriceTable(slot_per_sec=0.001, zombie_per_sec=0.01),
        "dear slots": PriceTable(slot_per_sec=0.1, zombie_per_sec=0.01),
    }
    grid = make_grid(BASE, scales=[1.0, 30.0])
    frame = sweep(episodes, grid, prices=tables)
    assert frame["prices"].tolist() == ["cheap slots", "dear slots"] * 2
    assert frame["scale"].tolist() == [1.0, 1.0, 30.0, 30.0]
    for name, table in tables.items():
        alone = sweep(episodes, grid, prices=table)
        assert "prices" not in alone.columns
        mine = frame[frame["prices"] == name].reset_index(drop=True)
        assert mine["cost_per_episode"].tolist() == pytest.approx(
            alone["cost_per_episode"].tolist()
        )
        assert mine["wall_p99_sec"].tolist() == alone["wall_p99_sec"].tolist()
    dear = frame[frame["prices"] == "dear slots"]["slot_cost"].to_numpy()
    cheap = frame[frame["prices"] == "cheap slots"]["slot_cost"].to_numpy()
    assert dear == pytest.approx(100 * cheap)
    with pytest.raises(TypeError, match=r"prices\['x'\]"):
        sweep(episodes, grid, prices={"x": 1.0})  # type: ignore[dict-item]


def test_tune_refuses_a_base_it_would_replay_without_its_breaker_or_hedges(episodes):
    """recommend replays compiled corpora, which apply no breaker: such a base is an error."""
    from reviewlab.analysis._tune import recommend

    with pytest.raises(ValueError, match="base: it hedges or has a breaker"):
        recommend(episodes, base=BASE.with_breaker(3))
    with pytest.raises(ValueError, match="base: it hedges or has a breaker"):
        recommend(episodes, base=BASE.with_hedge("read_file", after_sec=1.0))

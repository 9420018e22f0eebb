"""Hedge delays from censoring-aware quantiles, and the sweep over them (analysis/_hedging.py)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from reviewlab.analysis._hedging import HedgeAxis, hedge_delays, sweep_hedge_delays
from reviewlab.core._policy import Policy
from reviewlab.engines._censoring import KaplanMeier
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Round

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def test_a_kaplan_meier_quantile_by_hand() -> None:
    """Times 1, 2 returned and 3 censored: S(1) = 2/3, S(2) = 1/3, never below."""
    km = KaplanMeier([1.0, 2.0, 3.0], [True, True, False])
    assert km.quantile(0.2) == 1.0
    assert km.quantile(0.5) == 2.0
    assert km.quantile(0.9) == math.inf
    assert km.quantile(0.0) == 1.0
    with pytest.raises(ValueError, match="q"):
        km.quantile(1.0)


def _corpus() -> list[Episode]:
    rng = np.random.default_rng(3)
    episodes = []
    for i in range(30):
        calls = [
            Call(
                tool="read_file",
                args={"path": f"f{i}_{k}.py"},
                duration_sec=float(rng.lognormal(-1.0, 1.2)),
                completed=bool(rng.random() > 0.05),
            )
            for k in range(4)
        ]
        episodes.append(
            Episode(
                id=f"e{i}",
                source="synthetic",
                slot="s1",
                started_at=T0 + timedelta(seconds=i),
                rounds=[Round(send_sec=0.5, calls=calls), Round(send_sec=0.2)],
            )
        )
    return episodes


def test_delays_are_the_censoring_aware_quantiles_and_unreachable_ones_are_left_out() -> None:
    """Recorded 1 and 2 s returned, a 3 s wedge: p50 is 2 s, p90 has no finite delay."""
    calls = [
        Call(tool="read_file", duration_sec=1.0),
        Call(tool="read_file", duration_sec=2.0),
        Call(tool="read_file", duration_sec=3.0, completed=False),
    ]
    corpus = [
        Episode(id="e", source="synthetic", slot="s1", started_at=T0, rounds=[Round(calls=calls)])
    ]
    assert hedge_delays(corpus, "read_file", (0.2, 0.5, 0.9)) == {0.2: 1.0, 0.5: 2.0}
    with pytest.raises(ValueError, match="search_code"):
        hedge_delays(corpus, "search_code")


def test_the_sweep_rows_are_the_replays_of_each_delay() -> None:
    """Each row's summary is that of a direct replay with the tool hedged at that delay; the
    reference is the unhedged base."""
    corpus = _corpus()
    base = Policy.uniform(3.0)
    frame, reference = sweep_hedge_delays(
        corpus, HedgeAxis("read_file", (0.5, 0.9, 0.95), max_share=0.2), base=base
    )
    delays = hedge_delays(corpus, "read_file", (0.5, 0.9, 0.95))
    assert frame["hedge.quantile"].tolist() == sorted(delays)
    for _, row in frame.iterrows():
        after = row["hedge.read_file.after_sec"]
        assert after == delays[row["hedge.quantile"]]
        direct = replay(
            corpus,
            base.with_hedge("read_file", after_sec=after, max_share=0.2),
            engine="vectorized",
        ).summary
        for key in ("hedges", "extra_call_share", "wall_p99_sec", "zombie_finite_sec"):
            assert row[key] == pytest.approx(direct[key]), key
    assert reference == replay(corpus, base, engine="vectorized").summary
    # Longer delays hedge fewer calls (a delay past the 3 s bound, none); the base, none.
    assert frame["hedges"].iloc[0] > 0 and frame["hedges"].is_monotonic_decreasing
    assert reference["hedges"] == 0


def test_held_out_delays_come_from_one_part_and_every_figure_from_the_other() -> None:
    """With held_out=0.5 the delays are the quantiles of the 15 episodes the split chose on
    (the same seeded split, redone here), and every row and the reference are replays of the
    other 15 alone (the seed also seeds the hedges' draws): the figures never include the
    episodes that set the delays."""
    corpus = _corpus()
    base = Policy.uniform(3.0)
    frame, reference = sweep_hedge_delays(
        corpus, HedgeAxis("read_file", (0.5, 0.9), max_share=0.2), base=base, held_out=0.5, seed=4
    )
    order = np.random.default_rng(4).permutation(len(corpus))
    chosen = [corpus[i] for i in sorted(order[:15])]
    reported = [corpus[i] for i in sorted(order[15:])]
    delays = hedge_delays(chosen, "read_file", (0.5, 0.9))
    assert delays != hedge_delays(corpus, "read_file", (0.5, 0.9))
    assert frame.attrs["delays_chosen_on"] == 15 and frame.attrs["reported_on"] == 15
    for _, row in frame.iterrows():
        after = row["hedge.read_file.after_sec"]
        assert after == delays[row["hedge.quantile"]]
        direct = replay(
            reported,
            base.with_hedge("read_file", after_sec=after, max_share=0.2),
            engine="vectorized",
            seed=4,
        ).summary
        assert row["wall_p99_sec"] == pytest.approx(direct["wall_p99_sec"])
        assert row["hedges"] == direct["hedges"]
    assert reference == replay(reported, base, engine="vectorized", seed=4).summary
    with pytest.raises(ValueError, match="held_out"):
        sweep_hedge_delays(corpus, HedgeAxis("read_file"), held_out=1.0)

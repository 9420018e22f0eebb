"""Why a timeout is a bet: the completed-only spiral, restart cutoffs against Monte Carlo and
brute force, redundant requests in the twin (reviewlab/analysis/bets.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reviewlab.analysis.bets import (
    completed_only_spiral,
    optimal_cutoff,
    redundancy_latency,
    restart_expectation,
)
from reviewlab.engines.censoring import KaplanMeier


def test_the_completed_only_rule_spirals_below_the_truth():
    """With factor 1 each round's timeout is the p99 of the calls that finished under the last
    one (checked by hand), it falls every round and ends below the true p99, where the
    censoring-aware estimate answers 'beyond the timeout' instead."""
    rng = np.random.default_rng(3)
    true = rng.lognormal(0.0, 1.2, 4000)
    frame = completed_only_spiral(true, start_sec=40.0, q=0.99, factor=1.0, rounds=6)
    timeouts = frame["timeout_sec"].tolist()
    for before, after in zip(timeouts, timeouts[1:], strict=False):
        assert after == pytest.approx(float(np.quantile(true[true <= before], 0.99)))
        assert after < before
    truth = float(np.quantile(true, 0.99))
    assert timeouts[-1] < truth
    late = frame[frame["timeout_sec"] < truth]
    assert len(late) and all(math.isinf(v) for v in late["km_quantile"])


def test_the_restart_expectation_matches_a_monte_carlo_of_restarts():
    """E[min(T, t)] / F(t) equals the mean time of 20,000 simulated restart runs drawing from
    the same empirical distribution."""
    rng = np.random.default_rng(5)
    sample = rng.pareto(1.2, 500) + 0.1
    estimate = KaplanMeier(sample, np.ones(sample.size, dtype=bool))
    cutoff = float(np.quantile(sample, 0.7))
    total = np.zeros(20_000)
    running = np.ones(20_000, dtype=bool)
    while running.any():
        draws = rng.choice(sample, running.sum())
        total[running] += np.minimum(draws, cutoff)
        index = np.flatnonzero(running)
        running[index[draws <= cutoff]] = False
    assert restart_expectation(estimate, cutoff) == pytest.approx(total.mean(), rel=0.03)


def test_the_optimal_cutoff_is_the_best_on_a_fine_grid_and_helps_only_with_a_falling_hazard():
    """No cutoff on a fine grid beats t*; a heavy tail makes restarting pay, a rising hazard
    (Weibull shape 3) makes the best cutoff 'never restart'; calls that never return make the
    no-restart mean infinite."""
    rng = np.random.default_rng(2)
    heavy = rng.lognormal(0.0, 1.5, 3000)
    estimate = KaplanMeier(heavy, np.ones(heavy.size, dtype=bool))
    best, with_restart, without = optimal_cutoff(estimate)
    grid = np.quantile(heavy, np.linspace(0.01, 1.0, 400))
    assert with_restart <= min(restart_expectation(estimate, t) for t in grid) + 1e-12
    assert with_restart < 0.6 * without
    assert without == pytest.approx(heavy.mean())
    light = rng.weibull(3.0, 3000)
    _, w, wo = optimal_cutoff(KaplanMeier(light, np.ones(light.size, dtype=bool)))
    assert w == pytest.approx(wo, rel=0.01)
    wedged = np.concatenate([heavy, np.full(30, 10 * heavy.max())])  # seen running, never back
    returned = np.concatenate([np.ones(heavy.size, dtype=bool), np.zeros(30, dtype=bool)])
    assert math.isinf(optimal_cutoff(KaplanMeier(wedged, returned))[2])


def test_redundant_requests_help_at_low_load_and_hurt_at_high_load():
    """In the twin, with losers never cancelled: at negligible load one copy's mean latency is
    the mean service time; two copies of a high-variance service cut it at low load and raise
    it at high load."""
    rng = np.random.default_rng(7)
    service = np.where(rng.random(500) < 0.1, rng.exponential(10, 500), rng.exponential(0.5, 500))
    lone = redundancy_latency(service, arrival_rate=0.01, slots=4, copies=1)
    assert lone["mean_sec"] == pytest.approx(service.mean(), rel=1e-9)
    low = [redundancy_latency(service, arrival_rate=0.2, slots=4, copies=c) for c in (1, 2)]
    high = [redundancy_latency(service, arrival_rate=1.3, slots=4, copies=c) for c in (1, 2)]
    assert low[1]["mean_sec"] < 0.5 * low[0]["mean_sec"]
    assert high[1]["mean_sec"] > 1.5 * high[0]["mean_sec"]
    assert high[1]["load"] == pytest.approx(2 * high[0]["load"])

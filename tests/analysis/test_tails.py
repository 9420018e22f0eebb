"""LossModel: per-tool Pareto tails beyond the slowest calls, and each call's exposure in lines."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from reviewlab.analysis._tails import LossModel
from reviewlab.recording._schema import Call, Episode, Extent, Round

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def read(lines: int, duration: float = 0.1, completed: bool = True) -> Call:
    return Call(
        tool="read_file",
        duration_sec=duration,
        completed=completed,
        extent=Extent(path="a.py", start_line=1, end_line=lines),
    )


def episode(number: int, calls: list[Call]) -> Episode:
    return Episode(
        id=f"e{number}",
        source="synthetic",
        started_at=T0,
        rounds=[Round(send_sec=1.0, calls=calls)],
    )


def test_exposure_is_own_lines_plus_every_later_read():
    """A call's abandonment costs its own lines and every later read's: summed per tool."""
    search = Call(tool="search_code", duration_sec=0.5)
    corpus = [episode(0, [read(10), search, read(5)]), episode(1, [search, read(7)])]
    model = LossModel(corpus)
    # read_file: first read 10 + 5, last read 5, and the 7-line read: 15 + 5 + 7.
    assert model.tools["read_file"].exposure_lines == 27
    # search_code: 5 after it in e0, 7 after it in e1.
    assert model.tools["search_code"].exposure_lines == 12
    assert model.requested_lines == 22 and model.calls == 5
    # Few calls: no fitted tail; beyond the slowest call the next one may still be slower.
    tail = model.tools["read_file"]
    assert math.isinf(tail.threshold_sec) and math.isnan(tail.alpha)
    assert tail.survival(1.0) == pytest.approx(1 / 4)
    assert model.timeout_coverage_loss({"read_file": 1.0}) == pytest.approx(27 / 4 / 22)
    assert model.abandoned_rate({"read_file": 1.0}) == pytest.approx(3 / 4 / 5)


def test_the_hill_fit_recovers_a_pareto_tail():
    """On Pareto durations with index 2 the fitted tail predicts the true exceedance shares
    beyond the slowest calls, and its confidence limit errs on the heavy side."""
    rng = np.random.default_rng(3)
    durations = (1.0 - rng.random(4000)) ** (-1 / 2.0)  # P(T > t) = t^-2 for t >= 1
    corpus = [episode(i, [read(10, float(d))]) for i, d in enumerate(durations)]
    point = LossModel(corpus, confidence=0.5).tools["read_file"]
    cautious = LossModel(corpus, confidence=0.95).tools["read_file"]
    assert point.alpha == pytest.approx(2.0, rel=0.2)
    assert cautious.alpha < point.alpha
    slowest = float(durations.max())
    for t in (slowest * 2, slowest * 10):
        truth = t**-2.0
        assert point.survival(t) == pytest.approx(truth, rel=0.8)
        assert cautious.survival(t) >= point.survival(t)
    # Inside the body the Kaplan–Meier estimate is used as it is.
    assert point.survival(1.5) == pytest.approx(np.mean(durations > 1.5))


def test_calls_that_never_return_keep_the_survival_above_their_share():
    """However long the timeout, a tool whose calls sometimes never return keeps losing them."""
    calls = [read(10, 0.1 + i / 100) for i in range(60)]
    calls += [read(10, 500.0, completed=False) for _ in range(3)]
    model = LossModel([episode(i, [c]) for i, c in enumerate(calls)])
    share = 3 / 63
    for t in (10.0, 1000.0, 1e6):
        assert model.tools["read_file"].survival(t) >= share - 1e-12

"""The exact merges behind a cluster sweep, each against an independent single-array answer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reviewlab.core import _metrics as metrics
from reviewlab.core._quantiles import interpolate, quantile_ranks
from reviewlab.engines.cluster import _merge, _select
from reviewlab.engines.cluster._keys import LEVELS, float_keys, key_value
from reviewlab.engines.cluster._merge import CellSums
from reviewlab.engines.cluster._overlap import (
    SUMMARY_COLUMNS,
    LooseEvents,
    PeakSearch,
    cell_summary,
)
from reviewlab.engines.cluster._pairwise import leaf_sum, partition_pieces, sum_of_pieces
from reviewlab.engines.cluster._select import OrderStatistics, cell_histogram, cell_values


def _cuts(rng: np.random.Generator, n: int, most: int) -> list[tuple[int, int]]:
    """Random contiguous partitions of ``range(n)`` (empty ones included)."""
    cuts = np.sort(rng.integers(0, n + 1, size=int(rng.integers(0, most))))
    bounds = [0, *cuts.tolist(), n]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def test_the_pairwise_pieces_reassemble_numpys_own_sum() -> None:
    """Arrays of many lengths cut at random places sum, reassembled, to np.sum to the bit."""
    rng = np.random.default_rng(5)
    for trial in range(300):
        n = int(rng.integers(0, 5000)) if trial < 280 else int(rng.integers(100_000, 2_000_000))
        values = rng.exponential(size=n) * (rng.random(n) < rng.random())
        values[rng.random(n) < 0.001] = 1e9 * rng.random()
        pieces = [partition_pieces(values[lo:hi], lo, n) for lo, hi in _cuts(rng, n, 20)]
        assert sum_of_pieces(pieces, n) == float(values.sum()), (trial, n)


def test_a_leaf_is_summed_as_numpy_sums_it() -> None:
    """Up to 128 values are added in NumPy's order (eight running sums), not left to right."""
    rng = np.random.default_rng(1)
    for n in range(0, 129):
        values = rng.standard_normal(n) * 10.0 ** rng.integers(-8, 8, size=n)
        assert leaf_sum(values) == float(np.sum(values)), n


def test_keys_sort_as_their_values() -> None:
    """The keys' order is the values' order, infinities and signed zeros included, and a key
    gives its value back."""
    rng = np.random.default_rng(2)
    values = np.concatenate(
        [
            rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, size=500),
            [0.0, -0.0, math.inf, -math.inf, 5e-324, -5e-324, 1.0, 1.0],
        ]
    )
    keys = float_keys(values)
    order = np.argsort(keys, kind="stable")
    assert np.all(np.diff(values[order]) >= 0)
    assert [key_value(int(k)) for k in keys] == [v + 0.0 for v in values]


def _select_all(parts: list[np.ndarray], ranks: list[int]) -> tuple[dict[int, float], int]:
    """Run the selection protocol over ``parts`` as the cluster runs it; the values and passes."""
    sorted_keys = [np.sort(float_keys(p)) for p in parts]
    search = OrderStatistics(sum(p.size for p in parts), ranks)
    passes = 0
    while not search.done:
        answers: dict = {}
        for kind, cell in search.requests():
            if kind == "hist":
                merged = CellSums(("count",))
                for keys in sorted_keys:
                    numbers, counts = cell_histogram(keys, cell)
                    merged.add(numbers, count=counts)
                answers[(kind, cell)] = merged
            else:
                answers[(kind, cell)] = [cell_values(keys, cell) for keys in sorted_keys]
        search.feed(answers)
        passes += 1
    return search.values(), passes


@pytest.mark.parametrize("limit", [4096, 3])
def test_order_statistics_are_the_sorted_arrays(
    limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every rank's value is the sorted array's, with ties, infinities and many levels of
    histograms (a limit of 3 values forces the search down to single keys)."""
    monkeypatch.setattr(_select, "VALUES_LIMIT", limit)
    rng = np.random.default_rng(3)
    for trial in range(60):
        n = int(rng.integers(1, 3000))
        values = rng.lognormal(3, 2, n)
        values = np.where(rng.random(n) < 0.5, np.round(values), values)  # many ties
        values[rng.random(n) < 0.05] = math.inf
        if trial % 5 == 0:
            values[:] = 7.25  # all tied
        parts = [values[lo:hi] for lo, hi in _cuts(rng, n, 8)]
        ranks = sorted(set(rng.integers(0, n, size=6).tolist()) | {0, n - 1})
        found, passes = _select_all(parts, ranks)
        ordered = np.sort(values)
        assert found == {rank: float(ordered[rank]) for rank in ranks}
        assert passes <= LEVELS + 1


def test_selected_order_statistics_interpolate_to_numpys_quantiles() -> None:
    """The wall quantiles from the distributed order statistics are np.quantile's, bit for bit
    (and inf where a wedged episode reaches the quantile)."""
    rng = np.random.default_rng(4)
    for n in (1, 2, 7, 100, 12_345):
        values = rng.lognormal(2, 1.5, n)
        plan = quantile_ranks(n, metrics.WALL_QUANTILES)
        ranks = [rank for below, above, _ in plan for rank in (below, above)]
        parts = [values[lo:hi] for lo, hi in _cuts(rng, n, 6)]
        found, _ = _select_all(parts, ranks)
        assert interpolate(plan, found) == tuple(np.quantile(values, metrics.WALL_QUANTILES))
    wedged = np.r_[np.arange(90.0), np.full(10, math.inf)]
    plan = quantile_ranks(wedged.size, metrics.WALL_QUANTILES)
    found, _ = _select_all([wedged[:37], wedged[37:]], [r for b, a, _ in plan for r in (b, a)])
    assert interpolate(plan, found) == (float(np.quantile(wedged, 0.5)), math.inf, math.inf)


def test_the_peak_of_loose_workers_is_the_single_array_peak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The branch and bound over cells of time finds metrics.peak_overlap of all intervals, for
    partitions that hold consecutive stretches of time or interleave, with ties and inf ends."""
    rng = np.random.default_rng(6)
    for trial in range(200):
        n = int(rng.integers(0, 2000))
        start = np.round(rng.uniform(0, 1e4, n), int(rng.integers(0, 4)))
        if trial % 2 == 0:
            start = np.sort(start)
        length = np.maximum(np.round(rng.exponential(50, n), int(rng.integers(0, 3))), 0.5)
        end = start + length
        end[rng.random(n) < 0.05] = math.inf
        if trial % 2 == 0:
            owner = np.zeros(n, dtype=int)
            for number, (lo, hi) in enumerate(_cuts(rng, n, 8)):
                owner[lo:hi] = number
        else:
            owner = rng.integers(0, 6, n)
        events = [
            LooseEvents(start[owner == p], end[owner == p]) for p in range(owner.max(initial=0) + 1)
        ]
        search = PeakSearch()
        while not search.done:
            answers = {}
            for cell in search.requests():
                merged = CellSums(SUMMARY_COLUMNS)
                for mine in events:
                    numbers, columns = cell_summary(mine, cell)
                    merged.add(numbers, **columns)
                answers[cell] = merged
            search.feed(answers)
        assert search.best == metrics.peak_overlap(start, end), trial


def test_cell_sums_fold_without_changing_the_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """Folding the pending answers (forced every few rows) keeps every sub-cell's exact sum."""
    monkeypatch.setattr(_merge, "COMPACT_ROWS", 5)
    rng = np.random.default_rng(7)
    expected = np.zeros(50, dtype=np.int64)
    sums = CellSums(("count",))
    for _ in range(40):
        numbers = np.unique(rng.integers(0, 50, size=int(rng.integers(0, 12))))
        counts = rng.integers(1, 1000, size=numbers.size)
        expected[numbers] += counts
        sums.add(numbers, count=counts)
    numbers, columns = sums.result()
    assert numbers.tolist() == np.flatnonzero(expected).tolist()
    assert columns["count"].tolist() == expected[numbers].tolist()

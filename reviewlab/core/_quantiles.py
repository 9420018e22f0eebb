"""Quantiles of the summary (wall-time p50/p95/p99): NumPy's linear method, infinity kept.

One definition in three steps, so an engine that knows its values in another form can supply
step 2 without building the array: :func:`quantile_ranks` (the two order statistics NumPy's
``"linear"`` method interpolates, and the weight); the order statistics themselves
(:func:`quantiles` partitions the array, :meth:`ReplacedValues.order_statistics` reads a
sorted base with a few values replaced); :func:`interpolate` (NumPy's interpolation, except
that reaching an infinite value with positive weight is ``inf``, not NaN).

Invariant: for finite values every quantile is bit-identical to ``np.quantile``, however step
2 was done; an empty set of values gives zeros.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def quantile_ranks(n: int, qs: Sequence[float]) -> list[tuple[int, int, float]]:
    """Per quantile ``q`` of ``n`` values: ``(below, above, weight)`` as NumPy's linear method
    (Hyndman & Fan's 7th) has them — the virtual index ``(n − 1)·q`` (NumPy's own form of it),
    clipped to ``[0, n − 1]`` as NumPy clips it."""
    out = []
    for q in qs:
        virtual = (n - 1) * float(q)
        if virtual >= n - 1:
            below = above = n - 1
            # NumPy takes index -1 for both and its weight as virtual − (−1); either way the
            # interpolation of a value with itself.
            weight = virtual + 1
        elif virtual < 0:
            below = above = 0
            weight = virtual
        else:
            below = math.floor(virtual)
            above = below + 1
            weight = virtual - below
        out.append((below, above, weight))
    return out


def interpolate(
    plan: Sequence[tuple[int, int, float]], stats: Mapping[int, float]
) -> tuple[float, ...]:
    """Step 3: each ``(below, above, weight)`` of ``plan`` from the order statistics ``stats``
    (rank → value), as NumPy's ``_lerp`` does it (``a + (b − a)·t``, or ``b − (b − a)(1 − t)``
    from ``t ≥ 0.5``), with infinity kept."""
    out = []
    for below, above, weight in plan:
        a, b = float(stats[below]), float(stats[above])
        if math.isinf(a) or (weight > 0 and math.isinf(b)):
            out.append(math.inf)
        elif below == above or weight == 0:
            out.append(a)
        else:
            diff = b - a
            out.append(b - diff * (1 - weight) if weight >= 0.5 else a + diff * weight)
    return tuple(out)


def _ranks(plan: Sequence[tuple[int, int, float]]) -> list[int]:
    return sorted({rank for below, above, _ in plan for rank in (below, above)})


def quantiles(values: np.ndarray | ReplacedValues, qs: Sequence[float]) -> tuple[float, ...]:
    """Linear-interpolation quantiles (NumPy's default) that keep ``math.inf`` infinite.

    ``values``: an array, or a :class:`ReplacedValues` (the same quantiles, read from its
    sorted base). An empty set gives zeros.
    """
    if isinstance(values, ReplacedValues):
        n = values.size
        if n == 0:
            return tuple(0.0 for _ in qs)
        plan = quantile_ranks(n, qs)
        ranks = _ranks(plan)
        return interpolate(plan, dict(zip(ranks, values.order_statistics(ranks), strict=True)))
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return tuple(0.0 for _ in qs)
    plan = quantile_ranks(data.size, qs)
    ranks = _ranks(plan)
    ordered = np.partition(data, ranks)
    return interpolate(plan, {rank: ordered[rank] for rank in ranks})


@dataclass(frozen=True)
class ReplacedValues:
    """A multiset of values given as a sorted ``base`` with some values replaced: each of
    ``removed`` (values of ``base``, as many times as listed) taken out, and ``added`` put in,
    as many as were removed.

    :meth:`order_statistics` reads the multiset's sorted order without building it: a sort of
    the replacements and a few binary searches per rank (a sweep point of a large corpus
    changes few walls). Why it is exact: the ``k``-th smallest, if it is one of ``base``'s
    values, sits at a rank of ``base`` within ``k ± m`` (``m`` replacements: at most ``m``
    removed and ``m`` added before it), so it is the smallest value of that window or of
    ``added`` with at least ``k + 1`` values of the multiset at or below it (a smaller one
    that passes would be that smallest value instead, and a value all of whose copies were
    removed passes only where a smaller value of the multiset does).
    """

    base: np.ndarray
    """Sorted ascending (``inf`` allowed, no NaN)."""
    removed: np.ndarray
    added: np.ndarray

    def __post_init__(self) -> None:
        if self.removed.size != self.added.size:
            raise ValueError(
                f"removed ({self.removed.size}) and added ({self.added.size}) must be as many"
            )

    @property
    def size(self) -> int:
        """How many values the multiset holds (as many as ``base``)."""
        return int(self.base.size)

    def order_statistics(self, ranks: Sequence[int]) -> np.ndarray:
        """The values at 0-based ``ranks`` of the multiset's sorted order."""
        n, m = self.size, int(self.added.size)
        ranks = [int(k) for k in ranks]
        for k in ranks:
            if not 0 <= k < n:
                raise IndexError(f"rank {k} is outside 0..{n - 1}")
        if m == 0:
            return self.base[ranks].astype(float)
        base, removed, added = self.base, np.sort(self.removed), np.sort(self.added)

        def at_or_below(x: float) -> int:
            # How many values of the multiset are at most x.
            return int(
                base.searchsorted(x, "right")
                - removed.searchsorted(x, "right")
                + added.searchsorted(x, "right")
            )

        def first(values: np.ndarray, low: int, high: int, need: int) -> int:
            # The first index in [low, high) whose value has `need` values at or below it
            # (the count grows with the index: `values` is sorted); `high` if none has.
            while low < high:
                middle = (low + high) // 2
                if at_or_below(values[middle]) >= need:
                    high = middle
                else:
                    low = middle + 1
            return low

        out = np.empty(len(ranks))
        for i, k in enumerate(ranks):
            high = min(n, k + m + 1)
            at_base = first(base, max(0, k - m), high, k + 1)
            at_added = first(added, 0, m, k + 1)
            found = [base[at_base]] if at_base < high else []
            if at_added < m:
                found.append(added[at_added])
            out[i] = min(found)
        return out

    def max(self) -> float:
        """The largest value (0.0 for an empty multiset)."""
        return float(self.order_statistics([self.size - 1])[0]) if self.size else 0.0

    def to_array(self) -> np.ndarray:
        """The multiset's values, sorted."""
        keep = np.ones(self.size, dtype=bool)
        if self.removed.size:
            # Drop one copy of each removed value: per value, the first copies of its run.
            removed = np.sort(self.removed)
            values, counts = np.unique(removed, return_counts=True)
            starts = np.searchsorted(self.base, values, side="left")
            drop = np.repeat(starts, counts) + (
                np.arange(removed.size) - np.repeat(np.cumsum(counts) - counts, counts)
            )
            keep[drop] = False
        return np.sort(np.concatenate([self.base[keep], self.added]))

"""Exact order statistics of values spread over partitions: histograms on the shared grid of
:mod:`._keys`, then only the values inside the one cell that holds the wanted rank.

Lifecycle of one rank's search (:class:`RankSearch`): it starts in the cell of every key with
the corpus-wide rank → each pass asks every partition either for its histogram of the cell
(counts per sub-cell, :func:`cell_histogram`) or, once the cell holds at most
:data:`VALUES_LIMIT` values, for those values themselves (:func:`cell_values`) → the merged
histogram names the sub-cell holding the rank and the rank within it; the values give the
rank's value directly; a cell of the last level is one key, so its value is known without
asking. A search takes at most :data:`~._keys.LEVELS` + 1 passes, usually two or three; what
one pass moves is bounded by the grid (65,536 sub-cells) and :data:`VALUES_LIMIT`, never by
the corpus. ``inf`` is a key like any other: a rank that falls on it is ``inf``.

:class:`OrderStatistics` runs the searches of several ranks of one multiset together, one
request per distinct cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from reviewlab.engines.cluster._keys import (
    LEVELS,
    Cell,
    cell_slice,
    key_value,
    sub_cell,
    sub_cells,
)
from reviewlab.engines.cluster._merge import CellSums

VALUES_LIMIT = 4096
"""A cell with at most this many values (over all partitions) is asked for its values."""

Request = tuple[str, Cell]
"""``("hist", cell)`` or ``("values", cell)``."""


def cell_histogram(sorted_keys: np.ndarray, cell: Cell) -> tuple[np.ndarray, np.ndarray]:
    """A partition's histogram of ``cell``: its non-empty sub-cells (ascending) and counts."""
    inside = sorted_keys[cell_slice(sorted_keys, cell)]
    if not inside.size:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.int64)
    numbers = sub_cells(inside, cell)
    starts = np.flatnonzero(np.r_[True, numbers[1:] != numbers[:-1]])
    counts = np.diff(np.r_[starts, numbers.size])
    return numbers[starts], counts.astype(np.int64)


def cell_values(sorted_keys: np.ndarray, cell: Cell) -> np.ndarray:
    """A partition's keys inside ``cell`` (ascending)."""
    return sorted_keys[cell_slice(sorted_keys, cell)]


@dataclass
class RankSearch:
    """The search for the value at 0-based ``rank`` of the keys in ``cell`` (``count`` of them)."""

    rank: int
    cell: Cell
    count: int
    value: float | None = None

    def request(self) -> Request | None:
        """What the next pass asks the partitions (``None``: found)."""
        if self.value is not None:
            return None
        return ("values", self.cell) if self.count <= VALUES_LIMIT else ("hist", self.cell)

    def take_histogram(self, numbers: np.ndarray, counts: np.ndarray) -> None:
        """Narrow to the sub-cell that holds the rank, by the merged histogram of the cell."""
        through = np.cumsum(counts)
        total = int(through[-1]) if through.size else 0
        if total != self.count:
            raise RuntimeError(
                f"selection: the partitions hold {total} values in cell {self.cell}, not the "
                f"{self.count} counted before (a partition changed during the sweep?)"
            )
        at = int(np.searchsorted(through, self.rank, side="right"))
        self.rank -= int(through[at] - counts[at])
        self.count = int(counts[at])
        self.cell = sub_cell(self.cell, int(numbers[at]))
        if self.cell[0] == LEVELS:  # one key: its value is known
            self.value = key_value(self.cell[1])

    def take_values(self, keys: np.ndarray) -> None:
        """The value at the rank, among every partition's keys in the cell."""
        if keys.size != self.count:
            raise RuntimeError(
                f"selection: the partitions hold {keys.size} values in cell {self.cell}, not the "
                f"{self.count} counted before (a partition changed during the sweep?)"
            )
        self.value = key_value(int(np.partition(keys, self.rank)[self.rank]))


class OrderStatistics:
    """The values at several ranks of one multiset of ``size`` values spread over partitions."""

    def __init__(self, size: int, ranks: Iterable[int]) -> None:
        self.searches = {rank: RankSearch(rank, (0, 0), size) for rank in sorted(set(ranks))}

    def requests(self) -> list[Request]:
        """The distinct requests of the searches not yet done."""
        wanted = {s.request() for s in self.searches.values()}
        return sorted(r for r in wanted if r is not None)

    def feed(self, answers: Mapping[Request, CellSums | list[np.ndarray]]) -> None:
        """Merged answers to :meth:`requests`: a :class:`CellSums` of ``count`` per
        histogram, the partitions' key arrays per values request."""
        for search in self.searches.values():
            request = search.request()
            if request is None:
                continue
            answer = answers[request]
            if request[0] == "hist":
                assert isinstance(answer, CellSums)
                numbers, sums = answer.result()
                search.take_histogram(numbers, sums["count"])
            else:
                assert isinstance(answer, list)
                keys = np.concatenate(answer) if answer else np.zeros(0, dtype=np.uint64)
                search.take_values(keys)

    @property
    def done(self) -> bool:
        """Whether every rank's value is known."""
        return all(s.value is not None for s in self.searches.values())

    def values(self) -> dict[int, float]:
        """Rank → value (every search done)."""
        out = {}
        for rank, search in self.searches.items():
            assert search.value is not None
            out[rank] = search.value
        return out

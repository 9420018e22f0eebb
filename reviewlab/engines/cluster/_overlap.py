"""The most loose workers running at one instant across every partition, exactly, from
fixed-size summaries on the shared grid of :mod:`._keys`.

The peak of a sum is not the sum of the peaks, so the search is a branch and bound over cells
of time: a partition summarises a cell by, per non-empty sub-cell, its net change and its
*rise* (:func:`cell_summary`); the client knows the corpus-wide count entering each sub-cell,
hence values the count reaches and a bound it cannot exceed; only sub-cells touched by two
partitions or more whose bound beats the best value are looked into, a level deeper
(:class:`PeakSearch`), at most :data:`~._keys.LEVELS` passes. Ends come before starts at equal
times, as in :func:`reviewlab.core._metrics.peak_overlap`. The argument in full:
docs/cluster.md, "The loose-worker peak".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from reviewlab.engines.cluster._keys import (
    LEVELS,
    Cell,
    cell_slice,
    float_keys,
    sub_cell,
    sub_cells,
)
from reviewlab.engines.cluster._merge import CellSums

CELLS_PER_PASS = 256
"""The most cells one pass looks into (the most promising first)."""
SUMMARY_COLUMNS = ("net", "rise", "parts")


class LooseEvents:
    """One partition's loose-worker intervals as events sorted by (time key, +1 after −1)."""

    def __init__(self, start: np.ndarray, end: np.ndarray) -> None:
        keys = float_keys(np.concatenate([start, end]))
        deltas = np.concatenate(
            [np.ones(len(start), dtype=np.int64), -np.ones(len(end), dtype=np.int64)]
        )
        order = np.lexsort((deltas, keys))
        self.keys = keys[order]
        self.deltas = deltas[order]

    @property
    def nbytes(self) -> int:
        """Memory held by the events."""
        return int(self.keys.nbytes + self.deltas.nbytes)


def cell_summary(events: LooseEvents, cell: Cell) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Per non-empty sub-cell of ``cell`` (ascending): the partition's net change, its rise
    (at least 0) and 1 (it touches the sub-cell)."""
    where = cell_slice(events.keys, cell)
    keys, deltas = events.keys[where], events.deltas[where]
    if not keys.size:
        empty = np.zeros(0, dtype=np.int64)
        return np.zeros(0, dtype=np.intp), {name: empty for name in SUMMARY_COLUMNS}
    numbers = sub_cells(keys, cell)
    starts = np.flatnonzero(np.r_[True, numbers[1:] != numbers[:-1]])
    stops = np.r_[starts[1:], keys.size]
    running = np.cumsum(deltas)  # the partition's count relative to the cell's start
    entering = running[starts] - deltas[starts]
    # The count at an instant is the count after all of that instant's events.
    instant_end = np.r_[keys[1:] != keys[:-1], True]
    reached = np.maximum.reduceat(np.where(instant_end, running, np.iinfo(np.int64).min), starts)
    rise = np.maximum(reached - entering, 0)
    return numbers[starts], {
        "net": running[stops - 1] - entering,
        "rise": rise,
        "parts": np.ones(starts.size, dtype=np.int64),
    }


class PeakSearch:
    """The client's side of the search (see the module docstring)."""

    def __init__(self) -> None:
        self.best = 0
        """The largest count known to be reached (the peak once :attr:`done`)."""
        self._open: dict[Cell, tuple[int, int]] = {(0, 0): (0, 1 << 62)}
        """Cells to look into: their entering count and the bound of their count."""

    @property
    def done(self) -> bool:
        """Whether the peak is known."""
        self._prune()
        return not self._open

    def _prune(self) -> None:
        self._open = {c: v for c, v in self._open.items() if v[1] > self.best}

    def requests(self) -> list[Cell]:
        """The cells the next pass looks into (the highest bounds first)."""
        self._prune()
        ranked = sorted(self._open, key=lambda c: (-self._open[c][1], c))
        return ranked[:CELLS_PER_PASS]

    def feed(self, answers: Mapping[Cell, CellSums]) -> None:
        """The merged summaries of the cells of :meth:`requests`."""
        found: dict[Cell, tuple[int, int]] = {}
        for cell, sums in answers.items():
            entering_cell, _ = self._open.pop(cell)
            numbers, columns = sums.result()
            if not numbers.size:
                continue
            net, rise, parts = columns["net"], columns["rise"], columns["parts"]
            entering = entering_cell + np.cumsum(net) - net
            self.best = max(self.best, int((entering + net).max()))
            last = cell[0] + 1 == LEVELS
            alone = parts == 1
            if alone.any():  # one partition moves in the sub-cell: its climb is the count's
                self.best = max(self.best, int((entering + rise)[alone].max()))
            if last:
                continue  # one instant each: the count after it is known
            bound = entering + rise
            for at in np.flatnonzero(~alone):
                found[sub_cell(cell, int(numbers[at]))] = (int(entering[at]), int(bound[at]))
        self._open.update(found)
        self._prune()

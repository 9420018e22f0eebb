"""Sums by sub-cell of the answers of many partitions, in memory that does not grow with them.

A :class:`CellSums` takes each partition's sparse answer about one cell (the numbers of its
non-empty sub-cells, ascending, and one integer column per figure) and keeps the per-sub-cell
sums. Answers are appended as they arrive and folded together whenever the pending rows
exceed :data:`COMPACT_ROWS`, so it holds at most about twice the 65,536 sub-cells a cell has,
however many partitions answer. Integer sums are exact in any order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

COMPACT_ROWS = 1 << 16
"""Pending rows beyond which the answers received so far are folded into one."""


class CellSums:
    """Per sub-cell sums of integer ``columns`` over the answers :meth:`add` was given."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        self._ids: list[np.ndarray] = []
        self._values: dict[str, list[np.ndarray]] = {name: [] for name in self.columns}
        self._pending = 0

    def add(self, ids: np.ndarray, **values: np.ndarray) -> None:
        """One partition's answer: its non-empty sub-cells and their figures."""
        if not ids.size:
            return
        self._ids.append(np.asarray(ids, dtype=np.intp))
        for name in self.columns:
            self._values[name].append(np.asarray(values[name], dtype=np.int64))
        self._pending += ids.size
        if self._pending > COMPACT_ROWS and len(self._ids) > 1:
            self._fold()

    def _fold(self) -> None:
        ids = np.concatenate(self._ids)
        unique, inverse = np.unique(ids, return_inverse=True)
        self._ids = [unique]
        for name in self.columns:
            summed = np.zeros(unique.size, dtype=np.int64)
            np.add.at(summed, inverse, np.concatenate(self._values[name]))
            self._values[name] = [summed]
        self._pending = unique.size

    def result(self) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The non-empty sub-cells, ascending, and each column's sums."""
        if not self._ids:
            return np.zeros(0, dtype=np.intp), {
                name: np.zeros(0, dtype=np.int64) for name in self.columns
            }
        if len(self._ids) > 1:
            self._fold()
        return self._ids[0], {name: self._values[name][0] for name in self.columns}

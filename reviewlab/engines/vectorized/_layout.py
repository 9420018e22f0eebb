"""The column-major layout of ragged rows that the vectorized engine runs its clocks on.

A :class:`PrefixLayout` is built once per corpus (by
:class:`~reviewlab.engines.vectorized.CompiledCorpus`, for the events of every episode
and for the calls of every round) and only read afterwards.

Invariants:

* rows are sorted by length, longest first (ties keep their original order),
  so column ``j`` is always the first ``active[j]`` sorted rows: a running
  per-row value is one vector addition per column, on contiguous views;
* :meth:`PrefixLayout.running_sums` adds one item at a time, in row order,
  exactly like the twin's ``t += x``, so every float it returns is the twin's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PrefixLayout:
    """Rows of unequal length stored column by column, longest rows first, without padding.

    Column ``j`` holds the ``active[j]`` rows that have a ``j``-th item, as the
    contiguous slab ``offsets[j] : offsets[j] + active[j]``; because rows are
    sorted by length, those are always the first ``active[j]`` sorted rows, so a
    running per-row value is one vector addition per column, on views only.
    ``order[i]`` is the original row of sorted row ``i``; ``rank`` its inverse.
    """

    order: np.ndarray
    rank: np.ndarray
    active: tuple[int, ...]
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, lengths: np.ndarray) -> PrefixLayout:
        """The layout of ragged rows of these lengths (longest first, ties in input order)."""
        lengths = np.asarray(lengths, dtype=np.intp)
        order = np.argsort(-lengths, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        depth = int(lengths.max(initial=0))
        counts = np.bincount(lengths, minlength=depth + 1)
        active = (lengths.size - np.cumsum(counts))[:depth]  # rows longer than j
        offsets = np.concatenate([[0], np.cumsum(active)]).astype(np.intp)
        return cls(order, rank, tuple(active.tolist()), tuple(offsets.tolist()))

    @property
    def size(self) -> int:
        """How many cells the layout holds in all."""
        return self.offsets[-1] if self.offsets else 0

    def position(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Slab position of item ``columns`` of original row ``rows``."""
        return np.asarray(self.offsets, dtype=np.intp)[columns] + self.rank[rows]

    def running_sums(self, start: np.ndarray, increments: np.ndarray) -> np.ndarray:
        """Per sorted row, ``start`` plus its increments one by one: the value after every item.

        The twin's ``t += x`` sequence, so the floats are the twin's.
        """
        out = np.empty(self.size)
        previous = start
        for j, n in enumerate(self.active):
            current = out[self.offsets[j] : self.offsets[j] + n]
            np.add(previous[:n], increments[self.offsets[j] : self.offsets[j] + n], out=current)
            previous = current
        return out

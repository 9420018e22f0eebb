"""The float sum NumPy takes of one array, from pieces of it held by different partitions.

``np.sum`` of a float64 array is a pairwise sum whose shape depends only on the length, so the
corpus-wide sum of zombie seconds is assembled exactly from its partitions: a partition gives
the sums of the maximal nodes of the shape inside its range and the values of the (at most
two) leaves straddling its edges (:func:`partition_pieces`); the client adds the pieces as
NumPy adds them (:func:`sum_of_pieces`). A partition sends ``O(log total)`` numbers. Checked
against ``np.sum`` on random cuts (``tests/engines/test_cluster_merge.py``); the shape:
docs/cluster.md, "The exact sum of zombie seconds".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

LEAF = 128
"""NumPy's pairwise block size: ranges up to this long are summed by running sums."""

Node = tuple[int, int]
"""``(start, length)`` of a range of the corpus-wide array."""


def _split(start: int, length: int) -> tuple[Node, Node]:
    half = length // 2
    half -= half % 8
    return (start, half), (start + half, length - half)


def leaf_sum(values: np.ndarray | list[float]) -> float:
    """NumPy's sum of at most :data:`LEAF` values, operation for operation."""
    v = [float(x) for x in values]
    n = len(v)
    if n < 8:
        total = 0.0
        for x in v:
            total += x
        return total
    r = v[:8]
    i = 8
    while i < n - n % 8:
        for j in range(8):
            r[j] += v[i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < n:
        total += v[i]
        i += 1
    return total


@dataclass
class Pieces:
    """What one partition contributes to the corpus-wide sum."""

    offset: int
    size: int
    nodes: dict[Node, float] = field(default_factory=dict)
    """The sums of the maximal nodes inside the partition."""
    leaves: dict[Node, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    """Per straddling leaf: the corpus-wide positions and values of the partition's non-zero
    values in it."""


def partition_pieces(values: np.ndarray, offset: int, total: int) -> Pieces:
    """The pieces of the partition holding ``values`` at ``[offset, offset + len(values))`` of
    a corpus-wide array of ``total`` values."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    end = offset + values.size
    pieces = Pieces(offset, int(values.size))
    if not values.size:
        return pieces
    stack: list[Node] = [(0, total)]
    while stack:
        start, length = stack.pop()
        stop = start + length
        if stop <= offset or start >= end:
            continue
        if offset <= start and stop <= end:
            # NumPy's own pairwise sum of the node (the same shape as inside the whole array).
            part = values[start - offset : stop - offset]
            pieces.nodes[(start, length)] = float(np.add.reduce(part, initial=0.0))
        elif length <= LEAF:
            low, high = max(start, offset), min(stop, end)
            mine = values[low - offset : high - offset]
            at = np.flatnonzero(mine)
            pieces.leaves[(start, length)] = (at + low, mine[at].copy())
        else:
            stack.extend(_split(start, length))
    return pieces


def sum_of_pieces(pieces: Iterable[Pieces], total: int) -> float:
    """``np.sum`` of the corpus-wide array whose partitions gave ``pieces``."""
    parts = sorted((p for p in pieces if p.size), key=lambda p: p.offset)
    if total == 0 or not parts:
        return 0.0
    nodes: dict[Node, float] = {}
    leaves: dict[Node, list[tuple[np.ndarray, np.ndarray]]] = {}
    for p in parts:
        nodes.update(p.nodes)
        for node, found in p.leaves.items():
            leaves.setdefault(node, []).append(found)

    def walk(start: int, length: int) -> float:
        node = (start, length)
        if node in nodes:
            return nodes[node]
        if length <= LEAF:
            dense = np.zeros(length)
            for at, value in leaves.get(node, []):
                dense[at - start] = value
            return leaf_sum(dense)
        left, right = _split(start, length)
        return walk(*left) + walk(*right)

    return walk(0, total)

"""The shared bin grid of every distributed selection: float64 values as ordered 64-bit keys,
cut into cells 16 bits at a time.

A value's *key* is its IEEE-754 bit pattern made order-preserving (:func:`float_keys`): the
sign bit flipped for a non-negative value, every bit flipped for a negative one, so keys sort
as the values do and ``inf`` is the largest key of a number (``-0.0`` is read as ``0.0``).
A *cell* ``(level, prefix)`` holds the keys whose top ``16·level`` bits are ``prefix``;
``(0, 0)`` holds every key, and a cell of level :data:`LEVELS` is one key, i.e. one value. A
cell's *sub-cells* are the cells of the next level inside it, numbered by the next 16 bits
(``0..65535``). The grid depends on nothing but the bits, so every partition bins its values
on the same grid without being told anything about the others.
"""

from __future__ import annotations

import numpy as np

LEVEL_BITS = 16
"""Bits of the key each level adds (65,536 sub-cells per cell)."""
LEVELS = 64 // LEVEL_BITS
"""The level at which a cell is a single key."""

_SIGN = np.uint64(1 << 63)
_MASK = np.uint64((1 << LEVEL_BITS) - 1)

Cell = tuple[int, int]
"""``(level, prefix)``: the keys whose top ``16·level`` bits are ``prefix``."""


def float_keys(values: np.ndarray) -> np.ndarray:
    """The order-preserving uint64 key of each float64 value (see the module docstring)."""
    bits = (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)  # + 0.0: -0.0 -> 0.0
    return np.where(bits >> np.uint64(63) == 1, ~bits, bits | _SIGN)


def key_value(key: int) -> float:
    """The float64 value of one key (the inverse of :func:`float_keys`)."""
    bits = key ^ (1 << 63) if key >> 63 else key ^ ((1 << 64) - 1)
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def _bounds(cell: Cell) -> tuple[int, int]:
    """The keys of ``cell``: ``[low, high)`` as Python integers (``high`` may be ``2**64``)."""
    level, prefix = cell
    shift = 64 - LEVEL_BITS * level
    return prefix << shift, (prefix + 1) << shift


def cell_slice(sorted_keys: np.ndarray, cell: Cell) -> slice:
    """The positions of ``cell``'s keys in an ascending key array."""
    low, high = _bounds(cell)
    start = int(np.searchsorted(sorted_keys, np.uint64(low), side="left"))
    stop = (
        sorted_keys.size
        if high >= 1 << 64
        else int(np.searchsorted(sorted_keys, np.uint64(high), side="left"))
    )
    return slice(start, stop)


def sub_cells(keys: np.ndarray, cell: Cell) -> np.ndarray:
    """The number (0..65535) of the sub-cell of ``cell`` each of its ``keys`` falls in."""
    shift = np.uint64(64 - LEVEL_BITS * (cell[0] + 1))
    return ((keys >> shift) & _MASK).astype(np.intp)


def sub_cell(cell: Cell, number: int) -> Cell:
    """Sub-cell ``number`` of ``cell``."""
    level, prefix = cell
    return level + 1, (prefix << LEVEL_BITS) | int(number)

"""Whole-column answers the columnar checks are written with: null masks, numbers, text lengths,
vocabularies, patterns and the shape of a JSON object, one NumPy array per column.

Each function answers for every row at once and gives, row by row, what its plain Arrow kernel
gives (``is_null``, ``fill_null``, ``utf8_length``, ``is_in``, ``match_substring_regex``,
``utf8_trim_whitespace`` with ``starts_with``/``ends_with``), held to a per-row reference by
tests/recording/test_columnar_arrays.py. The shortcuts only skip work whose answer is already
known: a column without nulls needs no fill, an all-null column no kernel, a text without
multi-byte characters no character count, and an argument text that begins with ``{`` and ends
with ``}`` no trimming (the kernel runs on the others).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_OPEN, _CLOSE = ord("{"), ord("}")
_CONTINUATION = 0xC0, 0x80
"""A UTF-8 continuation byte is ``10xxxxxx``: ``byte & 0xC0 == 0x80``."""


def as_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array (an empty chunked column becomes an empty array of its type)."""
    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            return values.chunk(0)
        if values.num_chunks == 0:
            return pa.array([], values.type)
        return values.combine_chunks()
    return values


def null_mask(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per row, whether it is null."""
    n, nulls = len(values), values.null_count
    if not nulls:
        return np.zeros(n, dtype=bool)
    if nulls == n:
        return np.ones(n, dtype=bool)
    return np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def numbers(values: pa.Array | pa.ChunkedArray, fill: Any) -> np.ndarray:
    """The column as NumPy, ``fill`` where null (the column's own NumPy type)."""
    n, nulls = len(values), values.null_count
    if nulls and nulls == n:
        return np.full(n, fill, dtype=values.type.to_pandas_dtype())
    if nulls:
        values = values.fill_null(fill)
    return np.asarray(values.to_numpy(zero_copy_only=False))


def _offsets_and_bytes(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string array's ``len + 1`` offsets (into its byte buffer) and that buffer."""
    width = np.int64 if pa.types.is_large_string(values.type) else np.int32
    buffers = values.buffers()
    count = values.offset + len(values) + 1
    offsets = np.frombuffer(buffers[1], dtype=width, count=count)[values.offset :]
    data = buffers[2]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    return offsets.astype(np.int64), raw


def text_lengths(values: pa.Array | pa.ChunkedArray, fill: int) -> np.ndarray:
    """Per row, its number of characters (code points), ``fill`` where null.

    The byte length less the row's continuation bytes, counted only when the text holds a
    byte above 0x7F (``utf8_length`` counts the bytes that are not continuation bytes).
    """
    values = as_array(values)
    n = len(values)
    if values.null_count == n:
        return np.full(n, fill, dtype=np.int64)
    offsets, data = _offsets_and_bytes(values)
    lengths = np.diff(offsets)
    text = data[offsets[0] : offsets[-1]]
    if text.size and int(text.max()) > 0x7F:
        mask, marker = _CONTINUATION
        at = np.flatnonzero((text & mask) == marker) + offsets[0]
        rows = np.searchsorted(offsets, at, side="right") - 1
        lengths -= np.bincount(rows, minlength=n)[:n]
    if values.null_count:
        lengths[null_mask(values)] = fill
    return lengths


def json_object_shaped(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Per row, whether its text, trimmed of white space, begins with ``{`` and ends with ``}``
    (False where null). Rows not already so untrimmed are trimmed by Arrow."""
    values = as_array(values)
    n = len(values)
    shaped = np.zeros(n, dtype=bool)
    if values.null_count == n:
        return shaped
    offsets, data = _offsets_and_bytes(values)
    valid = ~null_mask(values)
    if data.size:
        last_byte = data.size - 1
        first = data[np.minimum(offsets[:-1], last_byte)]
        last = data[np.clip(offsets[1:] - 1, 0, last_byte)]
        shaped = valid & (np.diff(offsets) >= 2) & (first == _OPEN) & (last == _CLOSE)
    rest = np.flatnonzero(valid & ~shaped)
    if rest.size:
        trimmed = pc.utf8_trim_whitespace(values.take(pa.array(rest)))
        answer = pc.and_(pc.starts_with(trimmed, "{"), pc.ends_with(trimmed, "}"))
        shaped[rest] = numbers(answer, False).astype(bool)
    return shaped


def not_in(values: pa.Array | pa.ChunkedArray, allowed: tuple[str, ...]) -> np.ndarray:
    """Per row, whether its value is outside ``allowed`` (True where null)."""
    if values.null_count == len(values):
        return np.ones(len(values), dtype=bool)
    inside = pc.is_in(values, value_set=pa.array(list(allowed), pa.string()))
    return ~numbers(inside, False).astype(bool)


def matches(values: pa.Array | pa.ChunkedArray, pattern: str) -> np.ndarray:
    """Per row, whether its text matches the regular expression ``pattern`` (Arrow's RE2
    syntax; True where null)."""
    if values.null_count == len(values):
        return np.ones(len(values), dtype=bool)
    return numbers(pc.match_substring_regex(values, pattern), True).astype(bool)

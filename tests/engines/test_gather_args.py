"""The argument texts whose policy key the compile decodes: one scan of the column for both
searches (a ``timeout`` key, any escape) finds exactly the rows a per-row search finds."""

from __future__ import annotations

import re

import pyarrow as pa

from reviewlab.engines.vectorized._gather import _ESCAPE, _TIMEOUT_KEY, _rows_containing

SEARCHES = [(_TIMEOUT_KEY, b'"timeout'), (_ESCAPE, b"\\")]

TEXTS = [
    '{"path": "a.py"}',
    '{"pattern": "timeout", "path": "src"}',
    '{"cmd": "make", "timeout_sec": 5}',
    None,
    '{"timeout" : 3}',
    '{"q": "a\\"b"}',
    '{"cmd": "x", "timeout":1, "note": "\\u00e9"}',
    '{"timeouts": 2}',
    '{"a": "\\"timeout\\": 1"}',
    '{"timeout_sec"\n:\t9}',
    "{}",
]
"""Argument texts with keys, values and escapes that do and do not count."""


def per_row(texts: list[str | None]) -> list[int]:
    """The rows a Python search of each text on its own finds."""
    pattern = re.compile(r'"timeout(_sec)?"\s*:|\\')
    return [i for i, text in enumerate(texts) if text is not None and pattern.search(text)]


def test_one_scan_finds_the_rows_a_per_row_search_finds() -> None:
    """Keys with any spacing and escapes count; a value "timeout" and a key "timeouts" do not."""
    found = _rows_containing(pa.array(TEXTS), SEARCHES).tolist()
    assert found == per_row(TEXTS) == [2, 4, 5, 6, 8, 9]


def test_a_slice_and_chunks_are_searched_in_their_own_rows() -> None:
    """Rows are numbered within a sliced or chunked column; no match spans two rows."""
    sliced = pa.array(TEXTS).slice(3, 6)
    assert _rows_containing(sliced, SEARCHES).tolist() == per_row(TEXTS[3:9])
    chunked = pa.chunked_array([pa.array(TEXTS[:4]), pa.array(TEXTS[4:])])
    assert _rows_containing(chunked, SEARCHES).tolist() == per_row(TEXTS)
    split = ['{"a": "x"timeout', '": 1}']  # the key's text only across the boundary
    assert _rows_containing(pa.array(split), SEARCHES).tolist() == []


def test_a_column_without_either_literal_finds_nothing() -> None:
    """Neither literal anywhere: no row, and empty or all-null columns likewise."""
    assert _rows_containing(pa.array(['{"a": 1}', "{}"]), SEARCHES).tolist() == []
    assert _rows_containing(pa.array([], pa.string()), SEARCHES).tolist() == []
    assert _rows_containing(pa.array([None, None], pa.string()), SEARCHES).tolist() == []

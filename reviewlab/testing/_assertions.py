"""Assertions that compare two replays: the same frames, column for column, and the same summary.

:func:`assert_same_replay` is what a differential test of two engines asserts (exactly, or
within a tolerance in seconds for an engine on a real clock); the engine-conformance suite
compares frames call by call with :func:`reviewlab.testing._conformance.assert_same_calls`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.engines._result import ReplayResult


def _same_number(a: Any, b: Any, tolerance: float) -> bool:
    if isinstance(a, float | int | np.number) and isinstance(b, float | int | np.number):
        x, y = float(a), float(b)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        if math.isinf(x) or math.isinf(y):
            return x == y
        return abs(x - y) <= tolerance
    return bool(a == b)


def assert_same_summary(a: dict[str, Any], b: dict[str, Any], *, tolerance: float = 0.0) -> None:
    """Both summaries have the same keys and values (numbers within ``tolerance``; NaN only
    with NaN, ``inf`` only with ``inf``); the error names the first key that differs."""
    assert list(a) == list(b), f"summary keys differ: {sorted(set(a) ^ set(b))}"
    for key in a:
        assert _same_number(a[key], b[key], tolerance), f"summary {key}: {a[key]!r} != {b[key]!r}"


def assert_same_replay(a: ReplayResult, b: ReplayResult, *, tolerance: float = 0.0) -> None:
    """Two replays agree: the call and episode frames have the same columns and rows (numbers
    within ``tolerance``), and so do their summaries."""
    for name in ("calls", "episodes"):
        left, right = getattr(a, name), getattr(b, name)
        assert list(left.columns) == list(right.columns), f"{name} columns differ"
        if tolerance == 0.0:
            pd.testing.assert_frame_equal(left, right, check_exact=True, obj=name)
            continue
        assert len(left) == len(right), f"{name}: {len(left)} rows != {len(right)}"
        for column in left.columns:
            for index, (x, y) in enumerate(zip(left[column], right[column], strict=True)):
                assert _same_number(x, y, tolerance), f"{name} row {index} {column}: {x!r} != {y!r}"
    assert_same_summary(a.summary, b.summary, tolerance=tolerance)

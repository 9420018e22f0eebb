"""The one number style (:mod:`reviewlab.ui._numbers`): rates, seconds, counts, ∞."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reviewlab.ui._numbers import (
    INFINITY,
    LABELS,
    cell,
    column_kind,
    count_text,
    infinity_footnote,
    number_text,
    rate_text,
    seconds_text,
)


@pytest.mark.parametrize(
    "value, text",
    [
        (0.0, "0 %"),
        (0.01662, "1.66 %"),
        (0.1451, "14.5 %"),
        (0.0006341, "0.0634 %"),
        (3.243e-05, "0.00324 %"),
        (1.0, "100 %"),
        (1e-9, "< 0.0001 %"),
        (math.nan, "–"),
    ],
)
def test_a_rate_is_a_percentage_with_three_significant_digits(value, text) -> None:
    """Rates print as percentages, never as fractions or in scientific notation."""
    assert rate_text(value) == text


@pytest.mark.parametrize(
    "value, text",
    [
        (0.418, "0.418 s"),
        (54.994984, "54.99 s"),
        (610.93, "610.9 s"),
        (600.0, "600 s"),
        (26160.0, "26,160 s"),
        (25560.4, "25,560 s"),
        (0.0, "0 s"),
        (math.inf, INFINITY),
    ],
)
def test_seconds_carry_their_unit(value, text) -> None:
    """Seconds print with ``s`` and sensible digits; ∞ is one character."""
    assert seconds_text(value) == text


def test_counts_are_integers_even_when_held_as_floats() -> None:
    """``1000.0`` episodes and ``np.int64(6308)`` calls print as integers with separators."""
    assert count_text(1000.0) == "1,000"
    assert count_text(np.int64(6308)) == "6,308"
    assert cell(np.float64(3.0), "count") == "3"


@pytest.mark.parametrize(
    "name, kind",
    [
        ("abandoned_call_rate", "rate"),
        ("coverage lost to timeouts", "rate"),
        ("deadline_bound_share", "rate"),
        ("survival_quantile", "rate"),
        ("wall_p95_sec", "seconds"),
        ("wall p95", "seconds"),
        ("timeout.read_file", "seconds"),
        ("tighter_wall_p95_sec_change", "seconds"),
        ("bounded_sec.ouroboros", "seconds"),
        ("calls", "count"),
        ("start_line", "count"),
        ("added_abandoned_calls", "count"),
        ("scale", "number"),
    ],
)
def test_the_kind_of_a_column_is_read_off_its_name(name, kind) -> None:
    """A column's key or its label says what it holds, the same in every output."""
    assert column_kind(name) == kind


def test_every_summary_label_has_the_kind_of_its_key() -> None:
    """A summary row printed under its label is written like its key."""
    for key, label in LABELS.items():
        assert column_kind(label) == column_kind(key), key


def test_other_values_keep_four_significant_digits_and_words() -> None:
    """Plain numbers keep four significant digits; booleans are yes/no; text stays text."""
    assert number_text(1234.5678) == "1,235"
    assert number_text(0.012345) == "0.01235"
    assert cell(True, "rate") == "yes" and cell("none", "rate") == "none"
    assert cell(None, "seconds") == "–"
    assert number_text(1e308) == "1e+308"


def test_the_infinity_footnote_says_why_under_the_censoring_assumed() -> None:
    """Under ``wedge`` the footnote names the assumption that makes a figure infinite."""
    assert "censored=wedge" in infinity_footnote({"censored": "wedge"})
    assert infinity_footnote().startswith(f"{INFINITY}: never ends")

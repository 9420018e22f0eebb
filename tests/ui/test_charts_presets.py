"""The presets chart draws every scored row, marks unverified presets hollow and endless
silences at the top (reviewlab/ui/charts/_presets.py)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from reviewlab.ui.charts import preset_scores


def scores() -> pd.DataFrame:
    """Four rows: two presets on one point, an unverified one, an unbounded one, ours."""
    return pd.DataFrame(
        {
            "preset": ["a", "b", "c", "none", "reviewlab recommended"],
            "framework": ["A", "B", "C", "N", "reviewlab"],
            "verified": ["verified", "verified", "unverified", "verified", ""],
            "abandoned_call_rate": [0.01, 0.01, 0.02, 0.0, 0.005],
            "max_silence_sec": [60.0, 60.0, 5.0, math.inf, 30.0],
        }
    )


def test_each_row_is_a_point_and_shared_points_share_a_label():
    """Five rows give five markers; the two presets on one point get one label naming both;
    the unverified one is hollow and labelled so; the endless silence sits at the top."""
    figure = preset_scores(scores())
    ax = figure.axes[0]
    assert len(ax.collections) == 5
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts == sorted(["a, b", "c (unverified)", "none", "reviewlab recommended"])
    hollow = ax.collections[2]
    assert hollow.get_facecolors().size == 0 or hollow.get_facecolors()[0][3] == 0
    endless_y = ax.collections[3].get_offsets()[0][1]
    assert endless_y == pytest.approx(max(c.get_offsets()[0][1] for c in ax.collections))
    assert ax.get_yscale() == "log"


def test_missing_columns_are_named():
    """A frame without the plotted columns is refused naming them."""
    with pytest.raises(ValueError, match="max_silence_sec"):
        preset_scores(scores().drop(columns=["max_silence_sec"]))

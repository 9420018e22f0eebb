"""The frame a sweep returns: a pandas DataFrame that keeps what its replays assumed.

:class:`SweepFrame` is a :class:`pandas.DataFrame` (every column, every pandas operation, the
files it writes are a plain frame's), with two additions: :attr:`SweepFrame.assumptions`
(censoring, the model's reaction, the engine, the seed: the same for every row, kept in
``attrs["assumptions"]``) and a notebook display (its summary, a chart of the rates and its
rows, :mod:`reviewlab.ui._rich_display`). Invariants: slicing, sorting, ``head``, ``copy`` and
``pd.concat`` of frames with the same assumptions give a :class:`SweepFrame` with the same
assumptions (pandas carries ``attrs``); a column is a plain :class:`pandas.Series`;
``pd.DataFrame(frame)`` is a plain frame. A frame whose metric columns were dropped still shows
its rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from reviewlab.core._display import html_of

ASSUMPTIONS_ATTR = "assumptions"
"""The key of ``DataFrame.attrs`` that holds a sweep's assumptions."""


class SweepFrame(pd.DataFrame):
    """One row per policy point (:func:`~reviewlab.analysis.sweep.sweep`), with the
    assumptions every row rests on."""

    @property
    def _constructor(self) -> Any:
        return SweepFrame

    @property
    def assumptions(self) -> dict[str, Any]:
        """What every row's replay assumed (docs/semantics.md, "What a replay assumes"); empty
        for a frame made by hand."""
        return dict(self.attrs.get(ASSUMPTIONS_ATTR) or {})

    def _repr_html_(self) -> str | None:
        """The summary, a chart of the rates and the rows, for Jupyter."""
        return html_of("sweep", self) or super()._repr_html_()


def sweep_frame(frame: pd.DataFrame, assumptions: Mapping[str, Any]) -> SweepFrame:
    """``frame`` as a :class:`SweepFrame` that assumes ``assumptions`` (plain values, so a
    Parquet file keeps them)."""
    found = SweepFrame(frame)
    found.attrs[ASSUMPTIONS_ATTR] = {
        key: value.item() if hasattr(value, "item") else value for key, value in assumptions.items()
    }
    return found

"""A bad value of a columnar file, the error that lists them all, and how checks report them.

Lifecycle: a check finds a mask of bad positions and hands it to :class:`Found` with a
field and a message (each a text, or a function of the position, so Python builds a
message only for a value found bad); :func:`~reviewlab.recording.columnar.check_table`
turns what was found into :class:`BadValue` rows, and the readers raise one
:class:`ColumnarFormatError` carrying every one of them.

Invariants: a row is 1-based in its file; a field is dotted as the JSONL reader names it;
no bad value is dropped (the message spells out the first ``_SHOWN``, ``problems`` holds all).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.recording._file_errors import EpisodeFormatError
from reviewlab.recording._ids import duplicate_id
from reviewlab.recording.columnar._arrays import null_mask, numbers

_SHOWN = 20  # bad values spelled out in an error message; all are kept in ``problems``


@dataclass(frozen=True)
class BadValue:
    """One value of a columnar file that breaks the schema."""

    row: int
    """1-based row (episode) in its file."""
    episode_id: str
    """The id of that row (``"<null>"`` when the id itself is missing)."""
    field: str
    """Dotted path of the value (``rounds.0.calls.1.duration_sec``)."""
    message: str
    """What is wrong with it."""


class ColumnarFormatError(EpisodeFormatError):
    """Bad values in a columnar file: every one is in ``problems``;
    the first is ``line``/``field``."""

    def __init__(self, path: str | Path, problems: list[BadValue]) -> None:
        self.problems = list(problems)
        first = self.problems[0]
        lines = [
            f"row {p.row} (episode {p.episode_id!r}): {p.field}: {p.message}" for p in problems
        ]
        more = len(lines) - _SHOWN
        text = "; ".join(lines[:_SHOWN]) + (f"; and {more} more" if more > 0 else "")
        super().__init__(path, first.row, first.field, f"{len(lines)} bad value(s): {text}")
        self.episode_id = first.episode_id

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.problems))


def repeated_id_error(
    path: str | Path, row: int, episode_id: str, first_path: str | Path, first_row: int
) -> ColumnarFormatError:
    """The error for an id that repeats one of an earlier file or batch: at its later row, naming
    where the first one stood (the rule and its words: :mod:`reviewlab.recording._ids`)."""
    first = duplicate_id(episode_id, f"row {first_row} of {first_path}")
    return ColumnarFormatError(path, [BadValue(row, episode_id, "id", first)])


class Found:
    """The bad values found so far, as (row index, field, message), in the order reported."""

    def __init__(self) -> None:
        self.items: list[tuple[int, str, str]] = []

    def report(self, mask: np.ndarray, rows: np.ndarray | None, field: Any, message: Any) -> None:
        """Record every position of ``mask``: its episode row (``rows[k]``, or ``k`` itself), and
        its field and message (each a text, or a function of ``k``)."""
        for k in np.flatnonzero(mask):
            row = int(k if rows is None else rows[k])
            self.items.append(
                (
                    row,
                    field(k) if callable(field) else field,
                    message(k) if callable(message) else message,
                )
            )


class Text:
    """A string column read one value at a time, for the messages of the bad values only."""

    def __init__(self, values: pa.Array | pa.ChunkedArray, null: str | None = None) -> None:
        self.values = values
        self.null = null

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, index: Any) -> Any:
        value = self.values[int(index)].as_py()
        return self.null if value is None else value

    def equals(self, text: str) -> np.ndarray:
        """Where the column holds ``text`` (False where null)."""
        return numbers(pc.equal(self.values, text), False).astype(bool)


def with_value(message: str, values: pa.Array) -> Any:
    """``message``, followed by the bad value itself (a null needs no showing)."""
    if message.endswith("null"):
        return message
    return lambda k: f"{message}, got {values[int(k)].as_py()!r}"


def seconds_rules(values: pa.Array, optional: bool) -> list[tuple[np.ndarray, str]]:
    """(mask, message) pairs for a seconds column: null (unless optional), non-finite, negative."""
    null = null_mask(values)
    checks = [(null & (not optional), "must be a number of seconds, got null")]
    if values.null_count == len(values):  # no number to check
        return checks
    x = numbers(values, np.nan).astype(float)
    checks.append((~null & ~np.isfinite(x), "must be a finite number of seconds"))
    with np.errstate(invalid="ignore"):
        checks.append((~null & (x < 0), "must not be negative"))
    return checks


def rank(parent: np.ndarray) -> np.ndarray:
    """Each value's 0-based position among the values of its parent (``parent`` sorted)."""
    return np.arange(parent.size) - np.searchsorted(parent, parent, side="left")


def negative(values: pa.Array) -> np.ndarray:
    """Where a value is present and below zero."""
    if values.null_count == len(values):
        return np.zeros(len(values), dtype=bool)
    return ~null_mask(values) & (numbers(values, 0) < 0)

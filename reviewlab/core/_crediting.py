"""The two rules that decide what a call was worth: its fate, and what it is credited.

* **Fate** (:func:`abandons`): a bounded call is abandoned unless it returned no
  later than its bound; an unbounded call never is.
* **Crediting** (:class:`Crediting`): a read that returned inside its
  bound is credited its read extent, until the first abandonment in the
  episode; after that, no read is credited any extent (a loose worker may
  overwrite the shared reader stamp, so attribution is unprovable) although
  those reads stay ``executed``. Live, the reads are the calls of ``read_file``
  (and of the tools an MCP server maps to it); in a recording, the reads are the
  calls that carry a read extent, whatever their tool (``read_text_file`` of an
  MCP server credits like ``read_file``).

The real episode, the twin and the vectorized replay all call these; scalar and
array forms are kept side by side so they cannot drift apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reviewlab.core._receipts import Outcome


def abandons(duration_sec: float, completed: bool, bound_sec: float | None) -> bool:
    """Whether a call that ran ``duration_sec`` (``completed=False``:
    still running then) is abandoned.

    An unbounded call is never abandoned. A bounded call is abandoned unless it
    returned no later than its bound (a return exactly at the bound counts as
    inside it).
    """
    if bound_sec is None:
        return False
    return (not completed) or duration_sec > bound_sec


def abandons_array(
    duration_sec: np.ndarray, completed: np.ndarray, bound_sec: np.ndarray
) -> np.ndarray:
    """:func:`abandons` element-wise; a NaN bound stands for
    ``None`` (unbounded, never abandoned)."""
    duration = np.asarray(duration_sec, dtype=float)
    bound = np.asarray(bound_sec, dtype=float)
    done = np.asarray(completed, dtype=bool)
    # Comparisons with NaN are False (no warning): an unbounded call is masked out by isnan.
    return ~np.isnan(bound) & (~done | (duration > bound))


class Crediting:
    """The episode-wide crediting rule (sticky after the first abandonment)."""

    def __init__(self) -> None:
        self.abandoned = False

    def note_abandoned(self) -> None:
        """Record that a worker of this episode is loose: no later extent is provable."""
        self.abandoned = True

    @staticmethod
    def credits_tool(tool: str) -> bool:
        """Whether calls of ``tool`` are ever credited a read extent (only reads are)."""
        return tool == "read_file"

    def may_credit(self, tool: str, outcome: Outcome | str) -> bool:
        """Whether a call of ``tool`` with ``outcome`` may be credited a read extent now."""
        return self.credits_tool(tool) and str(outcome) == Outcome.EXECUTED and not self.abandoned

    @staticmethod
    def credited_lines_array(
        executed: np.ndarray,
        abandoned_before: np.ndarray,
        requested_lines: np.ndarray,
    ) -> np.ndarray:
        """:meth:`credited_lines` element-wise over many recorded reads.

        ``executed`` is whether each read's outcome is ``executed``, ``abandoned_before``
        whether an earlier call of the same episode was abandoned (the sticky state).
        """
        may = np.asarray(executed, dtype=bool) & ~np.asarray(abandoned_before, dtype=bool)
        return np.where(may, np.asarray(requested_lines), 0)

    def extent(
        self, tool: str, outcome: Outcome | str, stamp: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """The extent fields to credit from a reader stamp, or
        ``None`` when nothing may be credited."""
        if not stamp or not self.may_credit(tool, outcome):
            return None
        first = stamp.get("first_line")
        end = stamp.get("end_line")
        total = stamp.get("total_lines")
        extent = {
            "opened_path": str(stamp.get("opened_path", ""))[:300],
            "opened_root": str(stamp.get("opened_root", ""))[:64],
            "start_line": first,
            "end_line": end,
            "total_lines": total,
            "eof": bool(end is not None and total is not None and end >= total),
        }
        return extent

    def credited_lines(self, outcome: Outcome | str, requested_lines: int) -> int:
        """Lines credited to a recorded read (a call with a read extent) that asked for
        ``requested_lines`` (the replays' form; a call without an extent asks for none)."""
        return requested_lines if str(outcome) == Outcome.EXECUTED and not self.abandoned else 0

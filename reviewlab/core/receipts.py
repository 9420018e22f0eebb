"""Receipts, host texts and the crediting rule: what every engine says about a call.

A call is *pending* until dispatched, then *running* on a worker, and then
exactly one of *returned* (inside its bound), *raised* (the tool's own
exception, inside its bound), *abandoned* (its bound passed first), *refused*
(never started: the loose-worker cap was full, the arguments were bad or the
tool is not available) or *withheld* (never started: no room left). Each call
gets exactly one :class:`ToolReceipt`.

:class:`Crediting` holds the crediting rule shared by the real episode, the
twin and the vectorized replay: a ``read_file`` that returned inside its bound
is credited its read extent, until the first abandonment in the episode; after
that, no read is credited any extent (a loose worker may overwrite the shared
reader stamp, so attribution is unprovable) although those reads stay
``executed``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

import numpy as np

__all__ = [
    "EXTENT_FIELDS",
    "Crediting",
    "Outcome",
    "SOURCE_GAP_ABANDONED",
    "SOURCE_GAP_WEDGED",
    "ToolReceipt",
    "abandons",
    "abandons_array",
    "arg_error_text",
    "exception_text",
    "refused_text",
    "tool_timeout_text",
    "unavailable_text",
    "wall_stamp",
]

SOURCE_GAP_ABANDONED = "native_tool_abandoned"
# Replay only: under the pre-fix (unbounded) policy a censored call that never returned
# ends the episode; its receipt carries this gap and the calls after it never run.
SOURCE_GAP_WEDGED = "native_tool_wedged"

# Extent fields copied from a reader stamp onto a credited receipt.
EXTENT_FIELDS = ("opened_path", "opened_root", "start_line", "end_line", "total_lines", "eof")


class Outcome(StrEnum):
    """What became of a call, as the receipt records it."""

    EXECUTED = "executed"
    ERROR = "error"
    REFUSED = "refused"
    WITHHELD = "withheld"


def tool_timeout_text(name: str, bound_sec: float, reset_msg: str = "") -> str:
    """The standard host text for an abandoned call; the bound is printed with ``str(float)``."""
    tail = "" if reset_msg else " about the issue"
    return (
        f"⚠️ TOOL_TIMEOUT ({name}): exceeded {float(bound_sec)}s limit. The tool is still running "
        f"in background but control is returned to you. {reset_msg}Try a different approach or "
        f"inform the user{tail}."
    )


def arg_error_text(message: str) -> str:
    """Host text for arguments that are not a JSON object."""
    return f"⚠️ TOOL_ARG_ERROR: {message}"


def unavailable_text(name: str) -> str:
    """Host text for a tool the read-only inspection episode does not offer."""
    return f"⚠️ tool {name[:200]!r} is not available in this read-only inspection episode"


def exception_text(exc: BaseException) -> str:
    """Host text for a tool's own exception."""
    return f"⚠️ {type(exc).__name__}: {exc}"


def refused_text(name: str, loose: int, cap: int) -> str:
    """Host text for a call refused because too many abandoned workers are still loose."""
    return (
        f"⚠️ TOOL_REFUSED ({name}): {loose} abandoned tool worker(s) are still running (cap {cap}); "
        f"the call was not started. Finish with the evidence you have, or try again later."
    )


def wall_stamp() -> str:
    """The current wall time as ISO-8601 with a time zone (UTC)."""
    return datetime.now(UTC).isoformat()


def abandons(duration_sec: float, completed: bool, bound_sec: float | None) -> bool:
    """Whether a call that ran ``duration_sec`` (``completed=False``: still running then) is abandoned.

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
    """:func:`abandons` element-wise; a NaN bound stands for ``None`` (unbounded, never abandoned)."""
    duration = np.asarray(duration_sec, dtype=float)
    bound = np.asarray(bound_sec, dtype=float)
    done = np.asarray(completed, dtype=bool)
    # Comparisons with NaN are False (no warning): an unbounded call is masked out by isnan.
    return ~np.isnan(bound) & (~done | (duration > bound))


@dataclass
class ToolReceipt:
    """One call's record. ``outcome`` and ``source_gap`` never change once the episode published it."""

    round: int
    tool: str
    outcome: Outcome
    started_at: str
    duration_sec: float
    bound_sec: float | None
    bound_by: str
    result_chars: int = 0
    call_id: str = ""
    source_gap: str | None = None
    delivered: bool = False
    error: str | None = None
    args_summary: dict[str, str] = field(default_factory=dict)
    extent: dict[str, Any] | None = None

    @property
    def abandoned(self) -> bool:
        return self.source_gap == SOURCE_GAP_ABANDONED

    def to_dict(self) -> dict[str, Any]:
        """The usage-dict form: optional fields appear only when set; extent fields are flattened."""
        data = asdict(self)
        data["outcome"] = str(self.outcome)
        extent = data.pop("extent")
        summary = data.pop("args_summary")
        for key in ("source_gap", "error"):
            if data[key] is None:
                del data[key]
        data.update(summary)
        if extent:
            data.update(extent)
        return data


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
        credits_tool: np.ndarray,
        executed: np.ndarray,
        abandoned_before: np.ndarray,
        requested_lines: np.ndarray,
    ) -> np.ndarray:
        """:meth:`credited_lines` element-wise over many calls.

        ``credits_tool`` is :meth:`credits_tool` of each call's tool, ``executed``
        whether its outcome is ``executed``, ``abandoned_before`` whether an
        earlier call of the same episode was abandoned (the sticky state).
        """
        may = (
            np.asarray(credits_tool, dtype=bool)
            & np.asarray(executed, dtype=bool)
            & ~np.asarray(abandoned_before, dtype=bool)
        )
        return np.where(may, np.asarray(requested_lines), 0)

    def extent(
        self, tool: str, outcome: Outcome | str, stamp: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """The extent fields to credit from a reader stamp, or ``None`` when nothing may be credited."""
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

    def credited_lines(self, tool: str, outcome: Outcome | str, requested_lines: int) -> int:
        """Lines credited to a call that asked for ``requested_lines`` (the twin's and replay's form)."""
        return requested_lines if self.may_credit(tool, outcome) else 0

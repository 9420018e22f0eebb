"""Builders of recorded episodes for tests and examples: short to write, valid by construction.

``call("search_code", 3.0)`` is one recorded call, ``read("a.py", 1, 40, 2.0)`` a read with its
extent, ``episode("e1", [[read(...)], [call(...)]])`` an episode whose rounds hold those calls
(each round sent in ``send_sec``, a final answer round appended), ``corpus(...)`` a list of
them. An episode is written as format 2 when any call carries a field only format 2 has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from reviewlab.recording._schema import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_2,
    Call,
    Episode,
    Extent,
    Round,
)

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
"""When a built episode starts unless told otherwise."""

_V2_FIELDS = ("transport", "progress_sec", "cancel_sent", "cancel_honoured_sec")


def call(tool: str, duration_sec: float, args: dict[str, Any] | None = None, **more: Any) -> Call:
    """One recorded call of ``tool`` that ran ``duration_sec`` (``completed=False``: censored)."""
    return Call(tool=tool, args=dict(args or {}), duration_sec=duration_sec, **more)


def read(path: str, start_line: int, end_line: int, duration_sec: float, **more: Any) -> Call:
    """A recorded ``read_file`` of ``path`` lines ``start_line..end_line`` with that extent."""
    args = {"path": path, "start_line": start_line, "end_line": end_line}
    extent = Extent(path=path, start_line=start_line, end_line=end_line)
    return Call(tool="read_file", args=args, duration_sec=duration_sec, extent=extent, **more)


def episode(
    id: str,
    rounds: Sequence[Sequence[Call]],
    *,
    send_sec: float = 1.0,
    final_answer: bool = True,
    started_at: datetime = START,
    slot: str = "",
    **more: Any,
) -> Episode:
    """An episode whose rounds hold ``rounds``' calls, each round sent in ``send_sec``; with
    ``final_answer`` a round without calls ends it."""
    made = [Round(send_sec=send_sec, calls=list(calls)) for calls in rounds]
    if final_answer:
        made.append(Round(send_sec=send_sec, calls=[]))
    v2 = any(getattr(c, name) is not None for r in made for c in r.calls for name in _V2_FIELDS)
    return Episode.model_validate(
        {
            "schema": SCHEMA_VERSION_2 if v2 else SCHEMA_VERSION,
            "id": id,
            "source": "synthetic",
            "slot": slot,
            "started_at": started_at,
            "rounds": made,
            **more,
        }
    )


def corpus(*episodes: Episode | Iterable[Episode], spacing_sec: float = 0.0) -> list[Episode]:
    """The episodes as one list (nested lists flattened); with ``spacing_sec`` each starts that
    much after the one before it."""
    flat: list[Episode] = []
    for item in episodes:
        flat.extend([item] if isinstance(item, Episode) else item)
    if spacing_sec:
        flat = [
            e.model_copy(update={"started_at": e.started_at + timedelta(seconds=i * spacing_sec)})
            for i, e in enumerate(flat)
        ]
    return flat

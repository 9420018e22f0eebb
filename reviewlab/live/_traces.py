"""What a review episode leaves behind: per-call and per-round traces, and the episode result.

A :class:`CallTrace` is written once, when the round loop has settled its call (the receipt
is final from then on; only the executor's :class:`~reviewlab.live._executor.CallResult` may
still learn a loose worker's zombie seconds). :class:`EpisodeResult` is assembled once, when
the episode ended.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reviewlab.core._receipts import ToolReceipt
from reviewlab.live._executor import CallResult


@dataclass
class CallTrace:
    """One call as the episode ran it: what was asked, what the executor said, the receipt."""

    round: int
    call_id: str
    tool: str
    args: dict[str, Any] | None
    """Decoded arguments; ``None`` when they were not a JSON object."""
    receipt: ToolReceipt
    result: CallResult | None = None
    """The executor's record; ``None`` for a call refused before it reached the executor."""
    rendered: dict[str, Any] | None = None
    """The reader stamp of a ``read_file`` that returned inside its
    bound (lines actually rendered)."""
    read: bool = False
    """Whether the episode credits this call by the rule for reads (``read_file``, or one of an
    MCP server's read tools such as ``read_text_file``)."""
    at_sec: float = math.nan
    """For a call that never reached the executor (refused, withheld): when the episode
    decided so, on :func:`~reviewlab.core._deadline.monotonic_now` (a dispatched call's
    start is its result's ``started_sec``)."""


@dataclass
class RoundTrace:
    """One model send (``send_sec`` long) and the calls its reply asked for."""

    round: int
    send_sec: float
    calls: list[CallTrace] = field(default_factory=list)


@dataclass
class EpisodeResult:
    """What an episode produced: the final answer, the usage dict, the receipts and the trace.

    :func:`reviewlab.recording.capture.episode_from_result` turns it into a recorded episode.
    """

    raw_text: str
    usage: dict[str, Any]
    receipts: list[ToolReceipt]
    trace: list[RoundTrace]
    end_reason: str
    started_at: datetime
    deadline_sec: float | None
    task: str
    meta: dict[str, str] = field(default_factory=dict)

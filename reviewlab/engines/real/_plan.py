"""What the real engine replays of each recorded episode: its calls, its sends, its hedge plan.

A :class:`ReplayPlan` is made once per episode, before anything runs, from the corpus as
recorded and the replay's two once-per-replay decisions: the completion times of censored calls
(:func:`~reviewlab.engines._censoring.completion_times`) and the hedge plan
(:func:`~reviewlab.engines._censoring.hedge_plan`). Times are recorded seconds: the engine runs
under a :class:`~reviewlab.core._deadline.ScaledClock`, so nothing here is scaled.

Calls are named by their row in corpus order (episode order, then call order), the row the
hedge plan is indexed by: the model asks for call ``row`` under the tool-call id ``c{row}``
and re-issues it as ``r{row}`` (:func:`call_id`, :func:`parse_call_id`); the executor puts the
id on the call's notes, where the replay's tools and hedge admission read it. The policy sees
the recorded arguments only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reviewlab.engines._censoring import HedgePlan, effective_observation
from reviewlab.recording._schema import Episode


def call_id(row: int, reissue: bool = False) -> str:
    """The tool-call id of corpus row ``row`` (``r`` for a re-issued copy)."""
    return f"{'r' if reissue else 'c'}{row}"


def parse_call_id(text: str) -> tuple[int, bool] | None:
    """``(row, reissue)`` of a replayed call's id, or ``None`` for any other id."""
    if len(text) < 2 or text[0] not in "cr" or not text[1:].isdigit():
        return None
    return int(text[1:]), text[0] == "r"


@dataclass
class PlannedCall:
    """One recorded call as the replay runs it (recorded seconds)."""

    tool: str
    args: dict[str, Any]
    round: int
    duration_sec: float
    completed: bool
    failed: bool
    requested_lines: int
    extent: tuple[int, int] | None
    progress_sec: tuple[float, ...] | None = None
    """Recorded progress times (seconds after dispatch); ``None``: not recorded, so no idle
    timeout applies to the call (as in the twin)."""
    honoured_sec: float | None = None
    """How long after a cancel the server was recorded stopping (``cancel_honoured_sec``):
    abandoned, the call stops that long after the abandonment, or at its return if sooner."""
    planned: bool = False
    """The replay's hedge plan lets this call hedge."""
    after_sec: float = math.nan
    second_sec: float = math.nan
    """The second attempt's duration (``inf`` never returns)."""

    @property
    def first_end_sec(self) -> float:
        """When the first attempt returns, from dispatch (``inf``: never)."""
        return self.duration_sec if self.completed else math.inf

    @property
    def second_end_sec(self) -> float:
        """When a second attempt returns, from dispatch (``inf``: never)."""
        return self.after_sec + self.second_sec


@dataclass
class ReplayPlan:
    """One episode to replay: its calls (rows ``first_row ...``) and its sends."""

    episode: Episode
    arrival_sec: float
    calls: list[PlannedCall]
    rounds: list[tuple[float, list[int]]]
    """Per send: its (merged) send time and the indices of the calls it asks for."""
    first_row: int = 0

    def index_of(self, text: str) -> tuple[int, bool] | None:
        """``(index in this episode, reissue)`` of a call id of this plan, else ``None``."""
        parsed = parse_call_id(text)
        if parsed is None:
            return None
        index = parsed[0] - self.first_row
        return (index, parsed[1]) if 0 <= index < len(self.calls) else None


def plan_episode(
    episode: Episode,
    arrival_sec: float,
    imputed: Mapping[tuple[str, int], float] | None,
    hedges: HedgePlan | None = None,
    first_row: int = 0,
) -> ReplayPlan:
    """The :class:`ReplayPlan` of ``episode``, whose first call is corpus row ``first_row``."""
    calls: list[PlannedCall] = []
    rounds: list[tuple[float, list[int]]] = []
    pending_send = 0.0
    for round_no, rnd in enumerate(episode.rounds, 1):
        indices = []
        for call in rnd.calls:
            duration, completed = effective_observation(call)
            if not completed and imputed is not None:
                duration, completed = imputed[(episode.id, len(calls))], True
            extent = None if call.extent is None else (call.extent.start_line, call.extent.end_line)
            indices.append(len(calls))
            planned = PlannedCall(
                call.tool,
                dict(call.args),
                round_no,
                duration,
                completed,
                call.status == "error",
                call.requested_lines,
                extent,
                None if call.progress_sec is None else tuple(call.progress_sec),
                call.cancel_honoured_sec,
            )
            row = first_row + len(calls)
            if hedges is not None and hedges.planned[row]:
                planned.planned = True
                planned.after_sec = float(hedges.after_sec[row])
                planned.second_sec = float(hedges.second_sec[row])
            calls.append(planned)
        pending_send += rnd.send_sec
        if indices or round_no == len(episode.rounds):
            # A recorded round without calls before the end would end a real episode: its send
            # time is carried into the next send instead.
            rounds.append((pending_send, indices))
            pending_send = 0.0
    return ReplayPlan(episode, arrival_sec, calls, rounds, first_row)

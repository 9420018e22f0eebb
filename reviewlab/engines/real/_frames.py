"""The real engine's answer: the twin's frames, from what the real episodes measured.

Every time here is already in recorded seconds: the episodes ran under the replay's
:class:`~reviewlab.core._deadline.ScaledClock`, so the executor's durations, zombie seconds,
dispatch times and bounds come out on the recorded scale and nothing is divided by the time
scale. Columns as :data:`~reviewlab.core._metrics.CALL_COLUMNS` and
:data:`~reviewlab.core._metrics.CALL_TIMING_COLUMNS` (see the package docstring for what is
measured and what is taken from the recording).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core import _metrics as metrics
from reviewlab.core._policy import Bound, Policy
from reviewlab.core._receipts import Outcome
from reviewlab.core._vocab import (
    OUTCOMES_ANSWERED,
    SOURCE_GAP_SKIPPED,
    SOURCE_GAP_WEDGED,
    SOURCE_GAP_WITHHELD,
)
from reviewlab.engines._remap import skipped_start
from reviewlab.engines._result import EpisodeArrays, ReplayResult, assemble
from reviewlab.engines._shared import calls_frame
from reviewlab.engines.real._actors import ReplayModel, ReplayRegistry
from reviewlab.engines.real._plan import PlannedCall, ReplayPlan
from reviewlab.live._call_results import CallStatus
from reviewlab.live._episode import EpisodeResult
from reviewlab.live._traces import CallTrace


@dataclass
class RealRun:
    """One episode's replay: its plan, its stand-ins and what it measured (clock seconds)."""

    plan: ReplayPlan
    registry: ReplayRegistry
    result: EpisodeResult | None = None
    started: float = 0.0
    ended: float = 0.0
    error: BaseException | None = None
    traces: dict[int, Any] = field(default_factory=dict)
    model: ReplayModel | None = None


def settle_loose(runs: list[RealRun], settle_sec: float) -> None:
    """Wait (at most ``settle_sec`` real seconds in all) for loose workers whose calls complete."""
    give_up_at = time.monotonic() + settle_sec
    for run in runs:
        assert run.result is not None
        for rnd in run.result.trace:
            for trace in rnd.calls:
                result = trace.result
                ref = run.plan.index_of(trace.call_id)
                if result is None or result.settled is None or ref is None:
                    continue
                call = run.plan.calls[ref[0]]
                if result.hedged:
                    # Wait only if every attempt still loose will come back.
                    ends = [call.first_end_sec, call.second_end_sec]
                    if result.status is not CallStatus.ABANDONED:
                        ends = [ends[1] if result.winner == 1 else ends[0]]
                    comes_back = all(math.isfinite(end) for end in ends)
                else:
                    # A call that never returned comes back when its server honours a cancel.
                    stops = call.completed or (call.honoured_sec is not None and not call.planned)
                    comes_back = result.status is CallStatus.ABANDONED and stops
                if comes_back:
                    result.settled.wait(max(0.0, give_up_at - time.monotonic()))


def _log_end(run: RealRun, wedged: CallTrace | None) -> float:
    """When a withheld call of ``run`` "started" (seconds from the episode's start): the wedge's
    end, i.e. when the recorded log ended; without a measured wedge, the episode's own end."""
    if wedged is not None:
        return math.inf  # the wedge is waited on forever
    return run.ended - run.started


def overhead(result: ReplayResult, runs: list[RealRun], scale: float) -> dict[str, float]:
    """The engine's own measured overhead: per call (real seconds) and as a share of wall time.

    A dispatched call should have waited its bound if abandoned, else its
    recorded duration; what it waited beyond that (recorded seconds) is overhead. The share
    is that sum over the finite wall time of the corpus.
    """
    planned = {
        (run.plan.episode.id, index): call.duration_sec
        for run in runs
        for index, call in enumerate(run.plan.calls)
    }
    answers = {
        (run.plan.episode.id, index): min(call.first_end_sec, call.second_end_sec)
        for run in runs
        for index, call in enumerate(run.plan.calls)
        if call.planned
    }
    calls = result.calls
    ran = calls[calls["outcome"].isin(OUTCOMES_ANSWERED) & np.isfinite(calls["wait_sec"])]
    hedged = ran["hedged"] if "hedged" in ran else pd.Series(False, index=ran.index)
    extra = []
    for episode_id, index, wait, bound, gap, was_hedged in zip(
        ran["episode_id"],
        ran["call_index"],
        ran["wait_sec"],
        ran["bound_sec"],
        ran["source_gap"],
        hedged,
        strict=True,
    ):
        should = planned.get((episode_id, int(index)), wait)
        if was_hedged:
            should = answers.get((episode_id, int(index)), should)
        if gap == "native_tool_abandoned":
            should = bound
        extra.append(wait - should)
    walls = result.episodes["wall_sec"].to_numpy()
    finite_wall = float(walls[np.isfinite(walls)].sum())
    total = float(np.sum(extra)) if extra else 0.0
    return {
        "time_scale": scale,
        "overhead_per_call_sec": (total / len(extra)) * scale if extra else 0.0,
        "overhead_share": total / finite_wall if finite_wall > 0 else 0.0,
    }


def _unrun_row(
    episode_id: str, index: int, call: PlannedCall, gap: str, start: float
) -> tuple[Any, ...]:
    """The row of a call that never ran: withheld after the log ended, or skipped by the model."""
    return (
        episode_id,
        call.round,
        index,
        call.tool,
        call.duration_sec,
        call.completed,
        math.nan,
        "unbounded",
        str(Outcome.WITHHELD),
        gap,
        call.requested_lines,
        0,
        0.0,
        start,
        0.0,
        False,
    )


def _withheld_row(
    run: RealRun, call_index: int, call: PlannedCall, trace: CallTrace, requested: int
) -> tuple[Any, ...]:
    """The row of a call the breaker withheld: "started" when the episode withheld it."""
    start = trace.at_sec - run.started
    row = _unrun_row(run.plan.episode.id, call_index, call, SOURCE_GAP_WITHHELD, start)
    return (*row[:10], requested, *row[11:])


def _bound_by(by: str, bound: Bound | None, tie_sec: float) -> str:
    """The term that set a measured bound, read with the real clock's tolerance: a deadline
    window within ``tie_sec`` (the clock's measured resolution, in recorded seconds) below the
    tool timeout is a tie, the tool timeout's (docs/semantics.md, "Ties on the real clock")."""
    if by != "deadline" or bound is None or bound.sec is None or bound.tool_timeout_sec is None:
        return by
    return "tool_timeout" if bound.sec >= bound.tool_timeout_sec - tie_sec else by


def _is_withheld(trace: CallTrace | None) -> bool:
    return trace is not None and trace.receipt.source_gap == SOURCE_GAP_WITHHELD


@dataclass
class _Tally:
    """What one episode's dispatched calls add up beside their rows: the waits of each send
    (``round_silence``, keyed by round and whether it is a re-issue) and, across the replay,
    every loose worker's start and end on the corpus clock."""

    run: RealRun
    ended_at: int | None
    """The call the recorded episode ended at (a wedge the policy never bounded), if any."""
    tie_sec: float
    loose_starts: list[float]
    loose_ends: list[float]
    round_silence: dict[tuple[int, bool], float] = field(default_factory=dict)


def _ran_row(
    tally: _Tally,
    call_index: int,
    index: int,
    call: PlannedCall,
    trace: CallTrace,
    *,
    requested: int,
) -> tuple[Any, ...]:
    """The row of a call the real episode dispatched (and, last, whether it was hedged)."""
    run, ended_at = tally.run, tally.ended_at
    episode_id = run.plan.episode.id
    if trace.result is None:
        raise RuntimeError(
            f"episode {episode_id!r} call {index}: the real episode refused it "
            f"({trace.receipt.error}); a replayed call should always reach the executor"
        )
    receipt, measured = trace.receipt, trace.result
    waited = measured.duration_sec
    bound_sec = math.nan if receipt.bound_sec is None else receipt.bound_sec
    gap = receipt.source_gap or ""
    started = measured.started_sec - run.started
    duration, zombie = waited, 0.0
    hedged = measured.hedged
    if ended_at == index and requested == call.requested_lines:
        gap, duration, waited = SOURCE_GAP_WEDGED, call.duration_sec, math.inf
        # Unbounded and never answered: the plan's hedge started (and never returned either).
        hedged = call.planned and receipt.bound_sec is None
    elif hedged:
        duration = call.duration_sec
        back = run.plan.arrival_sec + started + waited
        for attempt, end, measured_sec in (
            (1, call.first_end_sec, measured.zombie_sec),
            (2, call.second_end_sec, measured.second_zombie_sec),
        ):
            if measured.status is not CallStatus.ABANDONED and attempt == measured.winner:
                continue
            if measured_sec is not None:
                loose = measured_sec
            else:
                loose = max(0.0, end - waited) if math.isfinite(end) else math.inf
            if loose:
                zombie += loose
                tally.loose_starts.append(back)
                tally.loose_ends.append(back + loose)
    elif measured.status is CallStatus.ABANDONED:
        if call.honoured_sec is not None and not call.planned:
            # The server stops that long after the cancel, or at its return if sooner.
            # Measured when the worker settled; a call that never returned and was not seen
            # stopping stays loose for good.
            stop = waited + call.honoured_sec
            end = min(call.duration_sec, stop) if call.completed else math.inf
            zombie = measured.zombie_sec if measured.zombie_sec is not None else end - waited
            duration = waited + zombie
        elif not call.completed:
            duration, zombie = call.duration_sec, math.inf
        elif measured.zombie_sec is not None:
            zombie = measured.zombie_sec
            duration = waited + zombie
        else:
            duration, zombie = call.duration_sec, max(0.0, call.duration_sec - waited)
        start = run.plan.arrival_sec + started + waited
        tally.loose_starts.append(start)
        tally.loose_ends.append(start + zombie)
    # A re-issue is its own send: its waits make a silence of their own.
    key = (call.round, call_index >= len(run.plan.calls))
    tally.round_silence[key] = tally.round_silence.get(key, 0.0) + waited
    extent = receipt.extent or {}
    credited = 0
    if extent.get("start_line") is not None and extent.get("end_line") is not None:
        credited = int(extent["end_line"]) - int(extent["start_line"]) + 1
    return (
        episode_id,
        call.round,
        call_index,
        call.tool,
        duration,
        call.completed,
        bound_sec,
        _bound_by(receipt.bound_by, measured.bound, tally.tie_sec),
        str(receipt.outcome),
        gap,
        requested,
        credited,
        zombie,
        started,
        waited,
        hedged,
    )


def replay_result(
    runs: list[RealRun], policy: Policy, assumptions: dict[str, Any], *, hedging: bool = False
) -> ReplayResult:
    """The :class:`ReplayResult` of the runs (rows in corpus order, re-issues after their
    round); ``assumptions["tie_sec"]`` is the engine's tie tolerance (:func:`_bound_by`)."""
    tie_sec = float(assumptions.get("tie_sec", 0.0))
    rows: list[tuple[Any, ...]] = []
    loose_starts: list[float] = []
    loose_ends: list[float] = []
    wall, silence = [], []
    for run in runs:
        plan, result = run.plan, run.result
        assert result is not None and run.model is not None
        traces: dict[int, CallTrace] = {}
        reissues: dict[int, CallTrace] = {}
        for rnd in result.trace:
            for ran in rnd.calls:
                ref = plan.index_of(ran.call_id)
                if ref is not None:
                    (reissues if ref[1] else traces)[ref[0]] = ran
        ended_at = run.registry.ended_at_call
        log_end = _log_end(run, traces.get(ended_at) if ended_at is not None else None)
        episode_wall = math.inf if ended_at is not None else run.ended - run.started
        tally = _Tally(run, ended_at, tie_sec, loose_starts, loose_ends)
        mine: list[tuple[Any, ...]] = []
        reissued = run.model.reissued
        n = len(plan.calls)
        for index, call in enumerate(plan.calls):
            trace = traces.get(index)
            if _is_withheld(trace) and (ended_at is None or index < ended_at):
                assert trace is not None
                mine.append(_withheld_row(run, index, call, trace, call.requested_lines))
            elif trace is None or (ended_at is not None and index > ended_at):
                skipped = index in run.model.skipped
                gap = SOURCE_GAP_SKIPPED if skipped else ""
                start = math.nan if skipped else log_end
                mine.append(_unrun_row(plan.episode.id, index, call, gap, start))
            else:
                mine.append(
                    _ran_row(tally, index, index, call, trace, requested=call.requested_lines)
                )
            last_of_round = index + 1 == n or plan.calls[index + 1].round != call.round
            if last_of_round:
                for k, again in enumerate(reissued):
                    if plan.calls[again].round != call.round:
                        continue
                    if _is_withheld(reissues.get(again)):
                        mine.append(
                            _withheld_row(run, n + k, plan.calls[again], reissues[again], 0)
                        )
                    elif again in reissues:
                        mine.append(
                            _ran_row(
                                tally, n + k, again, plan.calls[again], reissues[again], requested=0
                            )
                        )
        if run.model.skipped:
            starts = np.array([row[13] for row in mine], dtype=float)
            dispatched = np.array([row[9] != SOURCE_GAP_SKIPPED for row in mine], dtype=bool)
            fixed = skipped_start(starts, dispatched, episode_wall)
            mine = [(*row[:13], start, *row[14:]) for row, start in zip(mine, fixed, strict=True)]
        rows.extend(mine)
        wall.append(episode_wall)
        silence.append(max(tally.round_silence.values(), default=0.0))
    calls = calls_frame([row[:-1] for row in rows])
    if hedging:
        calls["hedged"] = np.array([row[-1] for row in rows], dtype=bool)
    return assemble(
        calls,
        EpisodeArrays(
            [run.plan.episode.id for run in runs],
            [run.plan.episode.slot for run in runs],
            wall,
            silence,
        ),
        peak_loose_workers=metrics.peak_overlap(loose_starts, loose_ends),
        engine="real",
        policy=policy,
        assumptions=assumptions,
    )

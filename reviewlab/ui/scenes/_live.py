"""What the live scenes share: a scene clock, a model that takes time to answer, a held tool that
keeps its late value, and the timeline of a finished live episode.

The live scenes run the real :class:`~reviewlab.live._episode.ReviewEpisode` on the real
:class:`~reviewlab.live._executor.BoundedExecutor`, under a
:class:`~reviewlab.core._deadline.ScaledClock` (:data:`SCENE_CLOCK_FACTOR`): every bound, send
and duration is in scene seconds, a hundred of which pass in one real second, so a 20 s bound
costs 0.2 s of the reader's time. Nothing races the clock: a held tool waits on an event the
reader (or a test) sets, and the scene waits on the executor's own ``settled`` event, never
more than :data:`REAL_WAIT_LIMIT_SEC` real seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewlab.core._deadline import current_clock, monotonic_now
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED
from reviewlab.live._doubles import WedgedRegistry
from reviewlab.live._episode import EpisodeResult, ScriptedModel
from reviewlab.live._inspection import inspection_registry
from reviewlab.live._traces import CallTrace
from reviewlab.ui.scenes._timeline import Timeline

SCENE_CLOCK_FACTOR = 0.01
"""Real seconds one scene second lasts: the live scenes run a hundred times faster than life."""
SPARE_FACTOR = 10.0
"""A call the scene needs to return gets this many times the held call's bound: it returns in
milliseconds, and the margin keeps a busy machine from turning it into a second abandonment."""
REAL_WAIT_LIMIT_SEC = 30.0
"""The longest a scene waits, in real seconds, for a worker it released (a slow machine's margin;
never reached when the worker behaves)."""


class PacedModel(ScriptedModel):
    """A :class:`~reviewlab.live._episode.ScriptedModel` whose every send takes ``send_sec`` on the
    clock in force (so a timeline shows the sends between the calls)."""

    def __init__(self, script: list[dict[str, Any]], send_sec: float) -> None:
        super().__init__(script)
        self.send_sec = send_sec

    def chat(self, **kwargs: Any) -> dict[str, Any]:
        """Wait ``send_sec`` clock seconds, then answer with the next reply of the script."""
        current_clock().sleep_for(self.send_sec)
        return super().chat(**kwargs)


class LateValueRegistry(WedgedRegistry):
    """A :class:`~reviewlab.live._doubles.WedgedRegistry` that keeps what the held call returned
    once released (:attr:`late_value`) and when (:attr:`late_at`, on the call's clock): the value
    a loose worker brings back to nobody."""

    late_value: str | None = None
    late_at: float | None = None

    def execute(self, name: str, args: Any) -> str:
        """Run ``name``; the held tool's value is kept after it is released."""
        value = super().execute(name, args)
        if name == self.tool:
            self.late_at = monotonic_now()
            self.late_value = value
        return value


def late_value_factory(
    tool: str, release: threading.Event, made: list[LateValueRegistry]
) -> Callable[..., tuple[Any, Any, Any]]:
    """A registry factory for ``ReviewEpisode`` holding ``tool`` until ``release``; each registry
    it builds is appended to ``made``."""

    def build(
        root: str | Path, drive_root: str | Path | None = None, task_id: str = ""
    ) -> tuple[LateValueRegistry, Any, Any]:
        registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
        held = LateValueRegistry(registry, tool, release)
        made.append(held)
        return held, ctx, schemas

    return build


@dataclass(frozen=True)
class LiveCall:
    """One call of a live episode, on the episode's clock (0 = the episode started)."""

    call_id: str
    tool: str
    round: int
    start_sec: float
    wait_sec: float
    """How long the episode waited on it (about its bound when abandoned)."""
    bound_sec: float | None
    outcome: str
    abandoned: bool
    zombie_sec: float | None
    """How long its loose worker ran after the abandonment; ``None`` while it is still loose."""
    trace: CallTrace


def live_calls(result: EpisodeResult, t0: float) -> list[LiveCall]:
    """The dispatched calls of ``result`` with times relative to ``t0`` (the clock at the start)."""
    calls = []
    for rnd in result.trace:
        for trace in rnd.calls:
            res = trace.result
            if res is None:
                continue
            abandoned = trace.receipt.source_gap == SOURCE_GAP_ABANDONED
            calls.append(
                LiveCall(
                    call_id=trace.call_id,
                    tool=trace.tool,
                    round=trace.round,
                    start_sec=res.started_sec - t0,
                    wait_sec=float(res.duration_sec),
                    bound_sec=res.bound_sec,
                    outcome=str(trace.receipt.outcome),
                    abandoned=abandoned,
                    zombie_sec=res.zombie_sec if abandoned else 0.0,
                    trace=trace,
                )
            )
    return calls


def live_sends(result: EpisodeResult, t0: float) -> list[tuple[float, float]]:
    """``(start_sec, send_sec)`` of every model send: each starts when the round before it ended."""
    sends = []
    at = 0.0
    for rnd in result.trace:
        sends.append((at, rnd.send_sec))
        at += rnd.send_sec
        for trace in rnd.calls:
            if trace.result is not None:
                at = trace.result.started_sec - t0 + float(trace.result.duration_sec)
    return sends


def draw_live(
    line: Timeline,
    calls: list[LiveCall],
    sends: list[tuple[float, float]],
    lanes: dict[str, str],
    loose_until: float,
) -> None:
    """The sends on lane ``model`` and each call on ``lanes[call_id]``: its wait, bound, ✕ and
    loose worker (to ``loose_until`` while it has not come back)."""
    for start, length in sends:
        line.send("model", start, length)
    for call in calls:
        lane = lanes[call.call_id]
        line.bound(lane, call.start_sec, call.bound_sec)
        line.call(lane, call.start_sec, call.wait_sec, call.outcome)
        if call.abandoned:
            at = call.start_sec + call.wait_sec
            line.abandoned(lane, at)
            if call.zombie_sec is None:
                line.zombie(lane, at, max(0.0, loose_until - at), text="still loose")
            else:
                line.zombie(lane, at, call.zombie_sec)

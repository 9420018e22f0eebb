"""The calls of bounded tools (:func:`reviewlab.bounded_tool`) grouped into recorded episodes.

A framework's agent loop is not ours, so only the calls of the wrapped tools are seen.
:class:`ToolCallLog` is the ``recorder=`` of :func:`~reviewlab.live._bounded.bounded_tool` and
hands whole episodes to a :class:`~reviewlab.recording.capture.Recorder`.

Lifecycle: ``ToolCallLog(path or Recorder)`` → ``[with log.episode(): run the agent]*`` →
``close``. The calls of one ``episode`` block make one episode, recorded when the block ends
(``final_answer``, or ``log_end`` when it raised); calls outside any block make one open
episode, recorded by :meth:`end_episode` or :meth:`close`, never dropped. Rounds are inferred
from the calls' overlap (:mod:`reviewlab.recording.capture`).

Invariants: calls are recorded as the executor's episodes record them (abandoned:
right-censored at the bound; refused: an ``error`` call of 0 s); thread-safe.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from reviewlab.core._vocab import EndReason, Source
from reviewlab.live._bounded import BoundedCall
from reviewlab.live._call_results import CallStatus
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.recording.capture._recorder import Recorder
from reviewlab.recording.capture._timeline import TimedCall, inferred_rounds, offsets_meta


class ToolCallLog:
    """Collects bounded-tool calls into episodes and records them (see the module docstring).

    ``recorder`` is a :class:`Recorder` (left open: its owner closes it) or a
    path, for which the log opens a ``Recorder(path, source="live")`` and closes
    it in :meth:`close`.
    """

    def __init__(self, recorder: Recorder | str | os.PathLike[str], *, task: str = "") -> None:
        self._owns = not isinstance(recorder, Recorder)
        self.recorder = recorder if isinstance(recorder, Recorder) else Recorder(recorder)
        self.task = task
        self._lock = threading.Lock()
        self._calls: list[BoundedCall] = []
        self._started_wall: float | None = None

    def record_call(self, call: BoundedCall) -> None:
        """Keep one finished call in the open episode (called by the wrapped tools)."""
        with self._lock:
            self._calls.append(call)

    @contextlib.contextmanager
    def episode(self, *, task: str | None = None, id: str | None = None) -> Iterator[None]:
        """The calls made inside the block are one episode, recorded when the block ends."""
        self.end_episode()
        with self._lock:
            self._started_wall = time.time()
        try:
            yield
        except BaseException as exc:
            self._end(task, id, time.time(), "log_end", type(exc).__name__)
            raise
        self._end(task, id, time.time(), "final_answer", None)

    def end_episode(self, *, task: str | None = None, id: str | None = None) -> Episode | None:
        """Record the calls kept outside an ``episode`` block as one episode (None if none)."""
        return self._end(task, id, None, "log_end", None)

    @property
    def episodes(self) -> list[Episode]:
        """The episodes recorded so far."""
        return self.recorder.episodes

    def close(self) -> None:
        """Record the open episode, then close the recorder if the log opened it."""
        self.end_episode()
        if self._owns:
            self.recorder.close()

    def __enter__(self) -> ToolCallLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _end(
        self,
        task: str | None,
        id: str | None,
        ended_wall: float | None,
        end_reason: EndReason,
        error: str | None,
    ) -> Episode | None:
        with self._lock:
            calls, self._calls = self._calls, []
            started_wall, self._started_wall = self._started_wall, None
        if not calls and ended_wall is None:
            return None
        pending = _Pending(
            calls, started_wall, ended_wall, end_reason, task if task is not None else self.task
        )
        if error is not None:
            pending.meta["error"] = error
        recorder = self.recorder
        episode = pending.to_episode(
            id=id or _free_id(recorder), slot=recorder.slot, source=recorder.source
        )
        return recorder.record(episode)


def _free_id(recorder: Recorder) -> str:
    """``<prefix>-<n>``, the first ``n`` from the episode count on that the file does not hold."""
    taken = {episode.id for episode in recorder.episodes}
    number = len(taken) + 1
    while f"{recorder.prefix}-{number}" in taken:
        number += 1
    return f"{recorder.prefix}-{number}"


class _Pending:
    """One finished episode's calls, turned into an :class:`Episode` by the recorder."""

    def __init__(
        self,
        calls: list[BoundedCall],
        started_wall: float | None,
        ended_wall: float | None,
        end_reason: EndReason,
        task: str,
    ) -> None:
        self.calls = calls
        first = min((c.started_wall for c in calls), default=time.time())
        self.started_wall = started_wall if started_wall is not None else first
        self.ended_wall = ended_wall
        self.end_reason = end_reason
        self.task = task
        self.meta: dict[str, str] = {"rounds": "inferred from the tool calls' overlap"}

    def to_episode(self, *, id: str, slot: str, source: Source) -> Episode:
        """The calls as one episode: rounds by overlap, then the block's last round."""
        timed = []
        for call in self.calls:
            recorded = recorded_call(call)
            start = call.started_wall - self.started_wall
            timed.append(TimedCall(recorded, start, start + recorded.duration_sec))
        rounds, offsets = inferred_rounds(timed, 0.0)
        if self.ended_wall is not None:
            last_end = max((t.end_sec for t in timed), default=0.0)
            rounds.append(Round(send_sec=max(0.0, self.ended_wall - self.started_wall - last_end)))
            offsets.append([])
        meta = {**self.meta, **offsets_meta(rounds, offsets)}
        return Episode(
            id=id,
            source=source,
            slot=slot,
            started_at=datetime.fromtimestamp(self.started_wall, UTC),
            rounds=rounds,
            end_reason=self.end_reason,
            task=self.task,
            meta=meta,
        )


def recorded_call(call: BoundedCall) -> Call:
    """One bounded-tool call in the recorded format (censoring as the module docstring says)."""
    result = call.result
    common: dict[str, Any] = {
        "tool": call.tool[:200] or "?",
        "args": call.args,
        "result_chars": call.result_chars,
    }
    if result.status is CallStatus.REFUSED:
        return Call(duration_sec=0.0, status="error", **common)
    if result.status is CallStatus.ABANDONED:
        bound = result.bound_sec or 0.0
        returned_after = None
        if result.zombie_sec is not None:
            # Strictly past the bound, or a replay would count the call as returned in time.
            returned_after = max(
                result.duration_sec + result.zombie_sec, math.nextafter(bound, math.inf)
            )
        return Call(
            duration_sec=bound, completed=False, returned_after_sec=returned_after, **common
        )
    if result.status is CallStatus.RAISED:
        return Call(duration_sec=max(0.0, result.duration_sec), status="error", **common)
    return Call(duration_sec=max(0.0, result.duration_sec), **common)

"""The stand-ins a replayed episode runs with: tools that take their recorded time, a model
that replays its recorded sends, and the static hedge plan as the executor's admission.

Every wait is on the clock in force (:func:`~reviewlab.core._deadline.current_clock`, a
:class:`~reviewlab.core._deadline.ScaledClock` in a replay), in recorded seconds. Calls are told
apart by the id on their notes (:func:`~reviewlab.live._call_notes.current_notes`), never by an
argument the policy would see.
"""

from __future__ import annotations

import copy
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from reviewlab.core._deadline import Clock
from reviewlab.core._hedge import HedgeRule
from reviewlab.core._vocab import DEFAULT_REACTION
from reviewlab.engines.real._plan import PlannedCall, ReplayPlan, call_id, parse_call_id
from reviewlab.live._call_notes import CallNotes, current_notes
from reviewlab.live._episode import ScriptedModel, tool_call

_TIMEOUT_PREFIX = "⚠️ TOOL_TIMEOUT ("


class LogEnded(Exception):
    """Raised by a censored call under the pre-fix policy: the recorded log ends with it."""


@dataclass
class _ReaderContext:
    last_read_view: dict[str, Any] | None = None


_POLL_SEC = 0.05
"""Real seconds between checks, while a call that never returns waits to be abandoned, that the
run has not ended."""


class ReplayRegistry:
    """The tools of one replayed episode: each call takes its recorded time.

    A call waits until its recorded duration after its dispatch (the notes' ``started``),
    reporting progress at its recorded progress times on the way; a read stamps the reader
    view with its recorded extent (after the wait, as the real reader stamps after
    rendering); a call recorded as a tool error raises. A call that never returns waits until
    the run ends (``release``). A planned call's second run is its hedge, which runs the
    plan's second-attempt duration from its own start.
    """

    def __init__(
        self, plan: ReplayPlan, clock: Clock, release: threading.Event, unbounded: bool
    ) -> None:
        self.plan = plan
        self.clock = clock
        self.release = release
        self.unbounded = unbounded
        self.ctx = _ReaderContext()
        self.ended_at_call: int | None = None
        self._never = threading.Event()
        self._attempts: dict[int, int] = {}
        self._attempts_lock = threading.Lock()
        self.read_tools = frozenset(c.tool for c in plan.calls if c.extent is not None)
        """Tools with a recorded read: the round loop credits them by the rule for reads."""

    def reports_progress(self, tool_name: str, call_id: str) -> bool:
        """Whether the recorded call ``call_id`` has progress times (an idle timeout applies
        only then, as in the twin)."""
        ref = self.plan.index_of(call_id)
        return ref is not None and self.plan.calls[ref[0]].progress_sec is not None

    def _attempt(self, index: int, call: PlannedCall, reissue: bool) -> int:
        """Which attempt of call ``index`` this is (a planned call's second run is its hedge)."""
        if not call.planned or reissue:
            return 1
        with self._attempts_lock:
            number = self._attempts[index] = self._attempts.get(index, 0) + 1
        return number

    def execute(self, name: str, args: Mapping[str, Any]) -> str:
        notes = current_notes()
        ref = None if notes is None else self.plan.index_of(notes.call_id)
        if ref is None:
            raise RuntimeError(f"replay registry: a call of {name!r} without a replayed call id")
        assert notes is not None
        index, reissue = ref
        call = self.plan.calls[index]
        attempt = self._attempt(index, call, reissue)
        if self.ended_at_call is not None:
            return ""  # the recorded log has ended: this call never ran
        clock = self.clock
        if attempt > 1:
            # The hedge: the plan's second attempt, from its own start.
            if math.isinf(call.second_sec):
                self.release.wait()
                return ""
            clock.sleep_for(call.second_sec)
        elif not call.completed:
            hedge_returns = call.planned and math.isfinite(call.second_sec)
            if self.unbounded and not hedge_returns:
                # Never returns and nothing bounds the wait: recorded as infinite, not waited on.
                self.ended_at_call = index
                raise LogEnded(f"call {index} was still running when the recorded log ended")
            self._progress(notes, call, math.inf)
            if self._honours(call):
                while not notes.abandoned.wait(_POLL_SEC):  # until abandoned, or the run ends
                    if self.release.is_set():
                        return ""
                self._stop_after_cancel(notes, call, math.inf)
            else:
                self.release.wait()
            return ""
        else:
            self._progress(notes, call, call.duration_sec)
            stop = notes.abandoned if self._honours(call) else self._never
            if clock.wait_until(stop, notes.started + call.duration_sec):
                self._stop_after_cancel(notes, call, call.duration_sec)
        if call.extent is not None:  # a recorded read (crediting.py), whatever its tool
            first, end = call.extent
            self.ctx.last_read_view = {
                "target": str(call.args.get("path", "")),
                "opened_path": str(call.args.get("path", "")),
                "opened_root": "replay",
                "first_line": first,
                "end_line": end,
                "total_lines": end,
                "body_start": 0,
                "line_ends": [],
            }
        if call.failed:
            raise RuntimeError(f"recorded tool error ({call.tool})")
        return f"replayed {call.tool} #{index}"

    def _progress(self, notes: CallNotes, call: PlannedCall, until_sec: float) -> None:
        """Report the call's recorded progress, each at its time after dispatch, before
        ``until_sec`` (and, for a server that honours a cancel, before its abandonment)."""
        stop = notes.abandoned if self._honours(call) else self._never
        for moment in call.progress_sec or ():
            if moment >= until_sec:
                return
            if self.clock.wait_until(stop, notes.started + moment):
                return
            notes.progress()

    @staticmethod
    def _honours(call: PlannedCall) -> bool:
        """Whether the call's server was recorded stopping after a cancel (a call the plan may
        hedge keeps its recorded attempts, as in the twin)."""
        return call.honoured_sec is not None and not call.planned

    def _stop_after_cancel(self, notes: CallNotes, call: PlannedCall, end_sec: float) -> None:
        """The call was abandoned: stop ``honoured_sec`` after the abandonment, or at its
        recorded return ``end_sec`` if sooner (recorded seconds after dispatch)."""
        assert call.honoured_sec is not None and notes.abandoned_sec is not None
        stop = min(end_sec, notes.abandoned_sec + call.honoured_sec)
        self.clock.wait_until(self._never, notes.started + stop)

    def factory(self, root: Any, drive_root: Any = None, task_id: str = "") -> tuple[Any, Any, Any]:
        names = sorted({c.tool for c in self.plan.calls})
        schemas = [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in names
        ]
        return self, self.ctx, schemas


class ReplayModel(ScriptedModel):
    """Replays the recorded sends: waits ``send_sec``, then answers with that round's calls.

    Under a reaction other than ``as_recorded`` it reads the tool results it is
    sent, as a model would: a ``TOOL_TIMEOUT`` text for one of its recorded
    calls makes it re-issue that call in an extra send (``reissue``), or give
    up on the call's ``path`` so that later ``read_file`` calls on it are not
    issued (``skip_target``; recorded in :attr:`skipped`).
    """

    def __init__(
        self,
        plan: ReplayPlan,
        registry: ReplayRegistry,
        clock: Clock,
        reaction: str = DEFAULT_REACTION,
    ) -> None:
        script: list[dict[str, Any]] = []
        for _send, indices in plan.rounds:
            if indices:
                calls = [self._ask(plan, i) for i in indices]
                script.append({"content": "", "tool_calls": calls})
            else:
                script.append({"content": "replayed final answer"})
        if not script or "tool_calls" in script[-1]:
            # The recording ended mid-episode (a wedge, a log end): the replay still ends with an
            # answer.
            script.append({"content": "replayed final answer"})
        super().__init__(script)
        self.plan = plan
        self.sends = [send for send, _ in plan.rounds] + [0.0]
        self.registry = registry
        self.clock = clock
        self.reaction = reaction
        self.skipped: set[int] = set()
        """Recorded calls not issued under ``skip_target``."""
        self.reissued: list[int] = []
        """Recorded calls re-issued under ``reissue``, in dispatch order."""
        self._given_up: set[str] = set()
        self._step = 0
        self._last_send = 0.0

    @staticmethod
    def _ask(plan: ReplayPlan, index: int, reissue: bool = False) -> dict[str, Any]:
        call = plan.calls[index]
        return tool_call(call.tool, call.args, call_id(plan.first_row + index, reissue))

    def _timed_out(self, messages: Any) -> list[int]:
        """The recorded calls whose results in the latest tool messages are timeout texts."""
        out = []
        for message in reversed(list(messages or [])):
            if message.get("role") != "tool":
                break
            ref = self.plan.index_of(str(message.get("tool_call_id", "")))
            if (
                ref is not None
                and not ref[1]
                and str(message.get("content", "")).startswith(_TIMEOUT_PREFIX)
            ):
                out.append(ref[0])
        return sorted(out)

    def chat(self, **kwargs: Any) -> dict[str, Any]:
        if self.registry.ended_at_call is not None:
            self.calls.append(kwargs)
            return {"content": "the recorded log ended"}
        timed_out = self._timed_out(kwargs.get("messages"))
        if self.reaction == "reissue" and timed_out:
            # The model asks again for what timed out, once, in a send as long as the last one.
            self.calls.append(kwargs)
            self.clock.sleep_for(self._last_send)
            self.reissued.extend(timed_out)
            again = [self._ask(self.plan, i, reissue=True) for i in timed_out]
            return {"content": "", "tool_calls": again}
        if self.reaction == "skip_target":
            for i in timed_out:
                path = self.plan.calls[i].args.get("path")
                if isinstance(path, str):
                    self._given_up.add(path)
        carried = 0.0
        while True:
            step = self._step
            self._step += 1
            send = self.sends[step] if step < len(self.sends) else 0.0
            carried += send
            answer = self.script[step] if step < len(self.script) else self.script[-1]
            calls = answer.get("tool_calls")
            if calls and self.reaction == "skip_target":
                kept = []
                for call in calls:
                    ref = self.plan.index_of(call["id"])
                    assert ref is not None
                    planned = self.plan.calls[ref[0]]
                    path = planned.args.get("path")
                    if planned.tool == "read_file" and path in self._given_up:
                        self.skipped.add(ref[0])
                    else:
                        kept.append(call)
                if not kept and self._step < len(self.script):
                    continue  # every call given up: the model's next recorded send follows at once
                answer = {**answer, "tool_calls": kept} if kept else {"content": "replayed answer"}
            break
        self.calls.append(kwargs)
        self._last_send = send
        self.clock.sleep_for(carried)
        return copy.deepcopy(answer)


class PlannedHedges:
    """The replay's static hedge plan as the executor's hedge admission (data, not a policy).

    ``rules`` are the policy's ``hedges`` part, in recorded seconds like every wait under the
    replay's clock; ``planned`` is :attr:`HedgePlan.planned
    <reviewlab.engines._censoring.HedgePlan.planned>`, by corpus row. A call may hedge when its
    row is planned; a re-issued copy never does. The budget was spent when the plan was made,
    so nothing is counted here.
    """

    def __init__(self, rules: Mapping[str, HedgeRule], planned: np.ndarray) -> None:
        self.rules = dict(rules)
        self.planned = np.asarray(planned, dtype=bool)

    def rule_for(self, tool: str) -> HedgeRule | None:
        """The tool's rule."""
        return self.rules.get(tool)

    def note_call(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        """Nothing to count: the budget was spent when the plan was made."""

    def admit(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
        """Whether the plan lets the call being decided (its id on the current notes) hedge."""
        notes = current_notes()
        ref = None if notes is None else parse_call_id(notes.call_id)
        if ref is None or ref[1] or not 0 <= ref[0] < self.planned.size:
            return False
        return bool(self.planned[ref[0]])

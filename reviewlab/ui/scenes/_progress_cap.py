"""Failure family 4, "idle and progress timers with the wrong semantics": a total cap only
checked when progress arrives.

Two ``query_code`` calls report progress (MCP ``notifications/progress``). The chatty one
reports every 5 s and answers after 200 s; the quiet one reports for 8 s, then goes silent and
answers only after 25 min. Broken: a 60 s "maximum total timeout" that is only looked at when a
progress report arrives (modelcontextprotocol/typescript-sdk#2695) — it stops the chatty call
at its first report after 60 s, and never stops the quiet one, which said nothing after 8 s.
:class:`ProgressCheckedCap` is that timer written as a timeout rule, so the twin replays it.
reviewlab: the hard bound runs on its own timer and an idle timeout, reset by every report,
catches the call that went quiet (docs/semantics.md, idle timeouts): ``Policy.uniform(60)
.with_idle(query_code=15)``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from matplotlib.axes import Axes

from reviewlab.core._policy import Policy
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.scenes._failure import FailureScene, FailureState, SceneVerdict
from reviewlab.ui.scenes._timeline import BROKEN_COLOR, DEADLINE_COLOR, Comparison, Timeline

TOOL = "query_code"
CAP_SEC = 60.0
"""The total cap both behaviours mean to enforce."""
IDLE_SEC = 15.0
"""reviewlab's idle timeout: seconds without a progress report."""
NEVER_SEC = 1e9
"""The bound :class:`ProgressCheckedCap` gives a call whose cap is never checked (32 years: no
recording lasts that long)."""
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_JOBS = {
    "chatty": (200.0, tuple(float(t) for t in range(5, 200, 5))),
    "quiet": (1500.0, tuple(float(t) for t in range(1, 9))),
}


def progress_episode() -> Episode:
    """The recording: the chatty call, then the quiet one, each after a send (``episode/2``)."""
    rounds = [
        Round(
            send_sec=5.0,
            calls=[
                Call(
                    tool=TOOL,
                    args={"query": f"index the {job} repository", "job": job},
                    duration_sec=duration,
                    progress_sec=list(progress),
                    transport="mcp",
                )
            ],
        )
        for job, (duration, progress) in _JOBS.items()
    ]
    return Episode(
        schema_version=SCHEMA_VERSION_2,  # type: ignore[call-arg]
        id="progress",
        source="synthetic",
        started_at=_T0,
        rounds=[*rounds, Round(send_sec=5.0)],
    )


def _key(tool: str, args: Mapping[str, Any] | None) -> str:
    return json.dumps([tool, dict(args or {})], sort_keys=True)


class ProgressCheckedCap:
    """The broken timer as a timeout rule: a total cap checked only when progress arrives.

    Knows each recorded call's progress times; the call's "bound" is its first report at or
    after ``cap_sec`` (when the cap is finally looked at), or :data:`NEVER_SEC` when no report
    comes after the cap. Any object with ``timeout_for`` is a rule (docs/semantics.md).
    """

    def __init__(self, cap_sec: float, episodes: Sequence[Episode]) -> None:
        self.cap_sec = cap_sec
        self.name = f"cap {cap_sec:g} s checked on progress"
        self.progress = {
            _key(call.tool, call.args): tuple(call.progress_sec or ())
            for episode in episodes
            for call in episode.calls
        }

    def checked_at(self, tool_name: str, tool_args: Mapping[str, Any] | None) -> float | None:
        """When the cap is first looked at past its limit (``None``: never)."""
        later = [t for t in self.progress.get(_key(tool_name, tool_args), ()) if t >= self.cap_sec]
        return later[0] if later else None

    def timeout_for(
        self, tools: Any, tool_name: str, tool_args: Mapping[str, Any] | None = None
    ) -> float:
        """The call's effective bound under the broken timer."""
        checked = self.checked_at(tool_name, tool_args)
        return NEVER_SEC if checked is None else checked


@dataclass(frozen=True)
class ProgressRun:
    """Both calls under one behaviour."""

    mode: str
    calls: tuple[tuple[str, float, float, str, str, float], ...]
    """``(job, start_sec, wait_sec, outcome, bound_by, duration_sec)`` per call."""
    progress: dict[str, tuple[float, ...]]
    max_silence_sec: float
    wall_sec: float

    def wait_of(self, job: str) -> float:
        """How long the episode waited on ``job``'s call."""
        return next(call[2] for call in self.calls if call[0] == job)


@lru_cache(maxsize=4)
def run_progress_cap(mode: str) -> ProgressRun:
    """Replay :func:`progress_episode` on the twin under ``mode``."""
    episode = progress_episode()
    if mode == "broken":
        policy = Policy(timeouts=ProgressCheckedCap(CAP_SEC, [episode]))
    else:
        policy = Policy.uniform(CAP_SEC).with_idle(**{TOOL: IDLE_SEC})
    result = replay([episode], policy, engine="twin")
    rows = tuple(
        (job, float(r.start_sec), float(r.wait_sec), str(r.outcome), str(r.bound_by),
         _JOBS[job][0])
        for job, r in zip(_JOBS, result.calls.itertuples(), strict=True)
    )  # fmt: skip
    return ProgressRun(
        mode=mode,
        calls=rows,
        progress={job: progress for job, (_, progress) in _JOBS.items()},
        max_silence_sec=float(result.episodes["max_silence_sec"].iloc[0]),
        wall_sec=float(result.episodes["wall_sec"].iloc[0]),
    )


class ProgressCapScene(FailureScene):
    """A chatty call and a quiet one under a cap checked on progress, or reviewlab's timers."""

    name = "progress-cap"
    family = "progress_cap"
    title = "4. Timers with the wrong semantics: a total cap checked only on progress"
    claim = (
        "A cap looked at only when progress arrives never stops a call that went quiet; a hard "
        "bound on its own timer and an idle timeout reset by progress do."
    )
    labels = ("cap checked on progress (broken)", "reviewlab: hard bound + idle")
    figsize = (10.0, 3.0)

    def run(self, mode: str) -> ProgressRun:
        """The episode replayed under ``mode``."""
        return run_progress_cap(mode)

    def compare(self, broken: ProgressRun, reviewlab: ProgressRun) -> tuple[Comparison, ...]:
        """The longest silence (seconds) and the slot-seconds the episode held its slot."""
        return (
            Comparison("longest silence", "s", broken.max_silence_sec, reviewlab.max_silence_sec),
            Comparison("slot-seconds held", "slot-s", broken.wall_sec, reviewlab.wall_sec),
        )

    def draw_run(self, ax: Axes, run: ProgressRun, mode: str) -> None:
        """Each call with its progress ticks, the cap, and where each timer fired."""
        right = 240.0
        lanes = [f"{job} call" for job in _JOBS]
        line = Timeline(ax, lanes, right)
        for lane, (job, start, wait, outcome, by, duration) in zip(lanes, run.calls, strict=True):
            moments = [start + moment for moment in run.progress[job]]
            line.tick(lane, moments, label="progress report", color="#555555")
            line.call(lane, start, wait, outcome, clipped_text=f"waits {seconds_text(wait)}")
            cap_color = BROKEN_COLOR if mode == "broken" else DEADLINE_COLOR
            line.ax.plot([start + CAP_SEC] * 2, [line.row(lane) - 0.4, line.row(lane) + 0.4],
                         color=cap_color, linestyle="--", linewidth=1.2)  # fmt: skip
            if outcome == "error":
                line.abandoned(lane, start + wait)
                line.zombie(lane, start + wait, duration - wait)
                why = {"idle": f"idle {IDLE_SEC:g} s after the last report"}.get(
                    by, "cap checked at a report" if mode == "broken" else "hard bound, own timer"
                )
                line.note(lane, start + wait, why, above=True)
            else:
                line.note(lane, start, "cap never checked: no report after it", above=True)
        ax.set_title(f"cap {seconds_text(CAP_SEC)} (dashed)", fontsize=9)
        line.legend()

    def verdict(self, state: FailureState) -> SceneVerdict:
        """How long the quiet call was waited on, and what stopped each call."""
        run: ProgressRun = state.run
        quiet = run.wait_of("quiet")
        sentences = [
            f"<b class='rl-outcome'>Quiet call waited {seconds_text(quiet)}</b>; "
            f"longest silence {seconds_text(run.max_silence_sec)}.",
        ]
        rows = [
            {
                "call": job,
                "waited": seconds_text(wait),
                "outcome": outcome,
                "stopped by": by if outcome == "error" else "nothing: it returned",
            }
            for job, _, wait, outcome, by, _ in run.calls
        ]
        return sentences, {"outcome": "quiet-waited", "quiet_wait_sec": f"{quiet:g}"}, rows

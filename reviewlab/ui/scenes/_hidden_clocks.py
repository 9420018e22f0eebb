"""Failure family 2, "a hidden or too-short bound": stacked timeouts, one nobody set fires first.

A reviewer calls ``query_code`` through an MCP client inside a host inside an agent turn.
Three clocks run at once (:data:`CLOCK_STACK`): the MCP SDK's request timeout (a 60 s default the
host never passed on), the host's configured tool timeout and the turn's deadline. Broken: the
earliest of them fires — the hidden one — with an error that names no clock, so a valid result
arriving a few seconds later is dropped and the model retries into the same wall (the ``reissue``
reaction). reviewlab: the stack is one :class:`~reviewlab.core._policy.Policy` — the tool's
timeout is the configured one, narrowed by the inherited deadline — and the receipt says which
term fired. Both are replayed on the twin with the same reaction; the slider sets how long the
call really takes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import ipywidgets as w
from matplotlib.axes import Axes

from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._receipts import tool_timeout_text
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import SCHEMA_VERSION_2, Call, Episode, Round
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.scenes._failure import (
    SCENE_MODEL,
    FailureScene,
    FailureState,
    SceneVerdict,
    tokens_of,
)
from reviewlab.ui.scenes._timeline import BROKEN_COLOR, DEADLINE_COLOR, Comparison, Timeline

TOOL = "query_code"
_ARGS = {"query": "callers of apply_discount"}
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class StackedTimeout:
    """One of the clocks running around a call in the broken stack."""

    name: str
    sec: float
    hidden: bool
    """Whether anyone configured it (a library default nobody passed on is hidden)."""


CLOCK_STACK = (
    StackedTimeout("MCP SDK request timeout (default)", 60.0, hidden=True),
    StackedTimeout("host tool timeout (configured)", 300.0, hidden=False),
    StackedTimeout("agent turn deadline", 600.0, hidden=False),
)
"""The broken stack, earliest first (the shape of anthropics/claude-code#43299)."""
BROKEN_ERROR = "MCP error -32001: Request timed out"
"""What the model reads when a clock of the broken stack fires: no clock, no limit."""


def hidden_clock_episode(call_sec: float) -> Episode:
    """The recording: a send, the ``query_code`` call taking ``call_sec``, the answer; tokens per
    round, the turn's deadline inherited."""
    return Episode(
        schema_version=SCHEMA_VERSION_2,  # type: ignore[call-arg]
        id="hidden-clock",
        source="synthetic",
        started_at=_T0,
        deadline_sec=CLOCK_STACK[-1].sec,
        model=SCENE_MODEL,
        rounds=[
            Round(
                send_sec=4.0,
                input_tokens=3_000,
                output_tokens=200,
                calls=[Call(tool=TOOL, args=_ARGS, duration_sec=call_sec)],
            ),
            Round(send_sec=6.0, input_tokens=5_200, output_tokens=600),
        ],
    )


@dataclass(frozen=True)
class Attempt:
    """One attempt of the call as the twin replayed it."""

    start_sec: float
    wait_sec: float
    outcome: str
    bound_sec: float
    bound_by: str


@dataclass(frozen=True)
class ClockRun:
    """The episode under the broken stack or under reviewlab's policy."""

    mode: str
    call_sec: float
    attempts: tuple[Attempt, ...]
    """Each attempt (a retry is a second one)."""
    fired: str | None
    """Which clock fired on the first attempt (``None``: none, the result was delivered)."""
    dropped_results: int
    """Valid results that arrived after a clock had fired (each dropped)."""
    told: str
    """What the model read after the first attempt (the result, or the timeout text)."""
    wall_sec: float
    tokens: int


@lru_cache(maxsize=256)
def run_hidden_clocks(mode: str, call_sec: float) -> ClockRun:
    """Replay the episode on the twin under ``mode`` (``broken``: the earliest clock of
    :data:`CLOCK_STACK` as the bound; ``reviewlab``: the configured tool timeout, narrowed by the
    inherited deadline), with the ``reissue`` reaction."""
    earliest = min(CLOCK_STACK, key=lambda clock: clock.sec)
    if mode == "broken":
        policy = Policy(timeouts=TimeoutPolicy(default_sec=earliest.sec, name="hidden clocks"))
    else:
        configured = next(clock for clock in CLOCK_STACK if not clock.hidden)
        policy = Policy(
            timeouts=TimeoutPolicy(tools_sec={TOOL: configured.sec}, name="reviewlab policy")
        )
    episode = hidden_clock_episode(call_sec)
    result = replay([episode], policy, engine="twin", reaction="reissue")
    calls = result.calls
    attempts = tuple(
        Attempt(float(r.start_sec), float(r.wait_sec), str(r.outcome), float(r.bound_sec),
                str(r.bound_by))
        for r in calls.itertuples()
    )  # fmt: skip
    first = calls.iloc[0]
    abandoned = first["source_gap"] == "native_tool_abandoned"
    if not abandoned:
        fired, told = None, "(the query's result)"
    elif mode == "broken":
        fired = next(clock.name for clock in CLOCK_STACK if clock.sec == float(first["bound_sec"]))
        told = BROKEN_ERROR
    else:
        fired = f"reviewlab bound ({first['bound_by']})"
        told = tool_timeout_text(TOOL, float(first["bound_sec"]))
    dropped = int((calls["source_gap"] == "native_tool_abandoned").sum())
    return ClockRun(
        mode=mode,
        call_sec=call_sec,
        attempts=attempts,
        fired=fired,
        dropped_results=dropped,
        told=told,
        wall_sec=float(result.episodes["wall_sec"].iloc[0]),
        tokens=tokens_of(result, [episode]),
    )


class HiddenClockScene(FailureScene):
    """Stacked timeouts around one MCP call; a slider for how long the call really takes."""

    name = "hidden-clock"
    family = "hidden_clock"
    title = "2. A hidden or too-short bound: which clock fired?"
    claim = (
        "Stacked timeouts fire the earliest one, often a default nobody set, and drop a valid "
        "result arriving seconds later; one policy with a named bound does not."
    )
    labels = ("stacked clocks (broken)", "reviewlab: one named bound")
    left = 0.27

    def extra_controls(self) -> list[w.ValueWidget]:
        """A slider for how long the query really takes."""
        self.call = w.FloatSlider(
            value=64.0, min=10.0, max=400.0, step=1.0, description="call takes (s)",
            continuous_update=False, style={"description_width": "8em"},
            layout=w.Layout(width="26em"),
        )  # fmt: skip
        return [self.call]

    def run(self, mode: str) -> ClockRun:
        """The episode replayed under ``mode`` for the slider's call time."""
        return run_hidden_clocks(mode, float(self.call.value))

    def compare(self, broken: ClockRun, reviewlab: ClockRun) -> tuple[Comparison, ...]:
        """How long the turn took (seconds) and the tokens it spent."""
        return (
            Comparison("turn wall time", "s", broken.wall_sec, reviewlab.wall_sec),
            Comparison("tokens", "tok", broken.tokens, reviewlab.tokens),
        )

    def draw_run(self, ax: Axes, run: ClockRun, mode: str) -> None:
        """The clocks as bars from dispatch, the one that fired in red; the call's attempts."""
        start = run.attempts[0].start_sec
        right = max(CLOCK_STACK[-1].sec, start + run.call_sec, run.wall_sec) * 1.05
        clock_lanes = (
            [clock.name for clock in CLOCK_STACK] if mode == "broken" else ["reviewlab bound"]
        )
        attempt_lanes = ["call" if n == 0 else "retry" for n in range(len(run.attempts))]
        line = Timeline(ax, [*clock_lanes, *attempt_lanes], right)
        if mode == "broken":
            for clock in CLOCK_STACK:
                fired = clock.name == run.fired
                color = BROKEN_COLOR if fired else ("#cccccc" if clock.hidden else "#999999")
                line.bar(clock.name, start, clock.sec, color, height=0.45)
                tag = " (hidden)" if clock.hidden else ""
                line.note(clock.name, start + clock.sec, f"{seconds_text(clock.sec)}{tag}"
                          + (" ← FIRED" if fired else ""))  # fmt: skip
        else:
            first = run.attempts[0]
            line.bar("reviewlab bound", start, first.bound_sec, DEADLINE_COLOR, height=0.45)
            line.note(
                "reviewlab bound",
                start + first.bound_sec,
                f"{seconds_text(first.bound_sec)} ({first.bound_by})",
            )
        for lane, attempt in zip(attempt_lanes, run.attempts, strict=True):
            at, wait = attempt.start_sec, attempt.wait_sec
            line.call(lane, at, wait, attempt.outcome)
            if attempt.outcome == "error":
                line.abandoned(lane, at + wait)
                line.zombie(lane, at + wait, run.call_sec - wait)
                line.tick(lane, at + run.call_sec, label="valid result arrives", color="black")
        ax.set_title(f"{TOOL} really takes {seconds_text(run.call_sec)}", fontsize=9)
        line.legend()

    def verdict(self, state: FailureState) -> SceneVerdict:
        """Which clock fired, what the model read, how many valid results were dropped."""
        run: ClockRun = state.run
        if run.fired is None:
            head = "<b class='rl-outcome'>Delivered</b>: the result came back inside every clock."
        else:
            head = (
                f"<b class='rl-outcome'>Fired: {run.fired}</b>; "
                f"{run.dropped_results} valid result(s) dropped."
            )
        sentences = [head, f"The model read: <code>{run.told}</code>"]
        facts = {"outcome": "delivered" if run.fired is None else "fired", "fired": run.fired or ""}
        return sentences, facts, []

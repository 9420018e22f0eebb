"""Scene "the bound": one call, its tool timeout and the inherited deadline it is narrowed by.

A reviewer inherits a deadline (``deadline_sec`` after the request arrived), spends
``send_sec`` on its first model send, then calls ``search_code``, which takes ``call_sec``.
The call's bound is ``narrowing(tool timeout, time left before the deadline)`` and records
which term fired (docs/semantics.md, "The bound"). :func:`run_bound` replays that episode on the
SimPy twin under ``Policy.uniform(tool timeout)`` with the chosen narrowing and asks
:func:`~reviewlab.core._policy.resolve_bound` the same question directly, so the scene shows one
decision made once. Moving the deadline slider shrinks the bound once the deadline is the
nearer clock; ``bound_by`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import ipywidgets as w

from reviewlab.core._policy import Bound, Narrowing, Policy, resolve_bound
from reviewlab.core._vocab import OUTCOME_EXECUTED
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.scenes._base import Scene, outcome_html
from reviewlab.ui.scenes._timeline import DEADLINE_COLOR, Timeline

BOUND_TOOL = "search_code"
_ARGS = {"pattern": "apply_discount"}
NARROWINGS = {
    "inherit": Narrowing(),
    "none": Narrowing("none"),
    "reserve 10 s": Narrowing("reserve", reserve_sec=10.0),
    "fraction 0.5": Narrowing("fraction", fraction=0.5),
}
"""The narrowing modes the scene's toggle offers, by their button label."""
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def bound_episode(
    deadline_sec: float, *, send_sec: float = 10.0, call_sec: float = 45.0
) -> Episode:
    """The scene's recorded episode: a send, one ``search_code`` call, a final send."""
    return Episode(
        id="bound",
        source="synthetic",
        started_at=_T0,
        deadline_sec=deadline_sec,
        rounds=[
            Round(
                send_sec=send_sec, calls=[Call(tool=BOUND_TOOL, args=_ARGS, duration_sec=call_sec)]
            ),
            Round(send_sec=5.0),
        ],
    )


@dataclass(frozen=True)
class BoundRun:
    """One position of the controls and what the twin made of it."""

    tool_timeout_sec: float
    deadline_sec: float
    """The inherited deadline, seconds after the request arrived."""
    narrowing: str
    send_sec: float
    call_sec: float
    remaining_sec: float
    """Time left before the deadline when the call was dispatched."""
    bound: Bound
    """:func:`~reviewlab.core._policy.resolve_bound` asked directly."""
    bound_sec: float
    """The twin's bound (equal to ``bound.sec``)."""
    bound_by: str
    outcome: str
    source_gap: str
    wait_sec: float
    zombie_sec: float
    wall_sec: float

    @property
    def abandoned(self) -> bool:
        """Whether the episode stopped waiting on the call at its bound."""
        return self.source_gap == "native_tool_abandoned"


@lru_cache(maxsize=512)
def run_bound(
    tool_timeout_sec: float,
    deadline_sec: float,
    narrowing: str = "inherit",
    *,
    send_sec: float = 10.0,
    call_sec: float = 45.0,
) -> BoundRun:
    """Replay the scene's episode on the twin under ``Policy.uniform(tool_timeout_sec)`` narrowed
    by ``narrowing`` (a key of :data:`NARROWINGS`)."""
    if narrowing not in NARROWINGS:
        raise ValueError(f"narrowing: expected one of {', '.join(NARROWINGS)}, got {narrowing!r}")
    policy = Policy.uniform(tool_timeout_sec).replace(narrowing=NARROWINGS[narrowing])
    episode = bound_episode(deadline_sec, send_sec=send_sec, call_sec=call_sec)
    result = replay([episode], policy, engine="twin")
    row = result.calls.iloc[0]
    remaining = max(0.0, deadline_sec - float(row["start_sec"]))
    return BoundRun(
        tool_timeout_sec=float(tool_timeout_sec),
        deadline_sec=float(deadline_sec),
        narrowing=narrowing,
        send_sec=send_sec,
        call_sec=call_sec,
        remaining_sec=remaining,
        bound=resolve_bound(policy, None, BOUND_TOOL, _ARGS, remaining_sec=remaining),
        bound_sec=float(row["bound_sec"]),
        bound_by=str(row["bound_by"]),
        outcome=str(row["outcome"]),
        source_gap=str(row["source_gap"]),
        wait_sec=float(row["wait_sec"]),
        zombie_sec=float(row["zombie_sec"]),
        wall_sec=float(result.episodes["wall_sec"].iloc[0]),
    )


class BoundScene(Scene):
    """Sliders for the tool timeout and the inherited deadline, a toggle for the narrowing."""

    name = "bound"
    title = "The bound: a tool timeout narrowed by the inherited deadline"
    left = 0.2
    claim = (
        "A call's bound is the nearer of its tool timeout and the time left before the "
        "inherited deadline, and the receipt says which one fired."
    )

    def __init__(
        self,
        tool_timeout_sec: float = 30.0,
        deadline_sec: float = 90.0,
        narrowing: str = "inherit",
        *,
        send_sec: float = 10.0,
        call_sec: float = 45.0,
    ) -> None:
        super().__init__()
        self.send_sec, self.call_sec = send_sec, call_sec
        style = {"description_width": "11em"}
        self.timeout = w.FloatSlider(
            value=tool_timeout_sec, min=1.0, max=120.0, step=1.0, description="tool timeout (s)",
            continuous_update=False, style=style, layout=w.Layout(width="38em"),
        )  # fmt: skip
        self.deadline = w.FloatSlider(
            value=deadline_sec, min=0.0, max=120.0, step=1.0,
            description="inherited deadline (s)", continuous_update=False, style=style,
            layout=w.Layout(width="38em"),
        )  # fmt: skip
        self.narrowing = w.ToggleButtons(
            options=list(NARROWINGS), value=narrowing, description="narrowing",
            style={"button_width": "7.5em"},
        )  # fmt: skip
        self.watch(self.timeout, self.deadline, self.narrowing)
        self._finish([w.VBox([self.timeout, self.deadline]), self.narrowing])

    def compute(self) -> BoundRun:
        """The twin's replay for the sliders' values."""
        return run_bound(
            self.timeout.value,
            self.deadline.value,
            self.narrowing.value,
            send_sec=self.send_sec,
            call_sec=self.call_sec,
        )

    def draw(self, state: BoundRun) -> None:
        """The deadline budget, the send, the tool timeout, the bound and the call on one axis."""
        ax = self.axes[0]
        dispatch = state.send_sec
        right = max(
            state.deadline_sec, dispatch + state.call_sec, dispatch + state.tool_timeout_sec
        )
        lanes = ["inherited deadline", "model", "tool timeout", "bound", BOUND_TOOL]
        line = Timeline(ax, lanes, right * 1.08)
        line.bar(
            "inherited deadline", 0.0, min(dispatch, state.deadline_sec), "#d9e8f5", height=0.5
        )
        line.bar(
            "inherited deadline", dispatch, state.remaining_sec, DEADLINE_COLOR, height=0.5,
            label="time left at dispatch",
        )  # fmt: skip
        line.line(
            state.deadline_sec, f"deadline {seconds_text(state.deadline_sec)}", DEADLINE_COLOR
        )
        line.send("model", 0.0, dispatch)
        line.send("model", dispatch + state.wait_sec, 5.0)
        line.bar("tool timeout", dispatch, state.tool_timeout_sec, "#bbbbbb", height=0.5)
        color = DEADLINE_COLOR if state.bound_by == "deadline" else "#555555"
        line.bar("bound", dispatch, state.bound_sec, color, height=0.5)
        line.note(
            "bound",
            dispatch + state.bound_sec,
            f"{seconds_text(state.bound_sec)} ({state.bound_by})",
        )
        line.bound(BOUND_TOOL, dispatch, state.bound_sec)
        line.call(BOUND_TOOL, dispatch, state.wait_sec, state.outcome)
        if state.abandoned:
            at = dispatch + state.bound_sec
            line.abandoned(BOUND_TOOL, at)
            line.zombie(BOUND_TOOL, at, state.zombie_sec)
        ax.set_title(
            f"{BOUND_TOOL} takes {seconds_text(state.call_sec)}; narrowing {state.narrowing}",
            fontsize=9,
        )
        line.legend()

    def describe(self, state: BoundRun) -> str:
        """The bound in words and the call's receipt."""
        by = {
            "deadline": "the inherited deadline fired",
            "tool_timeout": "the tool timeout fired",
        }.get(state.bound_by, state.bound_by)
        sentences = [
            f"Bound <b class='rl-bound'>{seconds_text(state.bound_sec)}</b>: {by} "
            f"(tool timeout {seconds_text(state.tool_timeout_sec)}, "
            f"{seconds_text(state.remaining_sec)} left of the deadline at dispatch).",
            (
                f"The call outlived it: <b class='rl-outcome'>abandoned</b> after "
                f"{seconds_text(state.wait_sec)}; its worker ran on "
                f"{seconds_text(state.zombie_sec)}."
                if state.abandoned
                else f"The call returned inside it: <b class='rl-outcome'>executed</b> after "
                f"{seconds_text(state.wait_sec)}."
            ),
        ]
        receipt = {
            "tool": BOUND_TOOL,
            "outcome": state.outcome,
            "bound_sec": f"{state.bound_sec:g}",
            "bound_by": state.bound_by,
            "source_gap": state.source_gap or "—",
            "duration_sec": f"{state.wait_sec:g}",
        }
        facts: dict[str, Any] = {
            "bound_sec": f"{state.bound_sec:g}",
            "bound_by": state.bound_by,
            "outcome": "abandoned" if state.abandoned else OUTCOME_EXECUTED,
        }
        return outcome_html(self.name, facts, sentences, [receipt])

"""Scene "abandonment": a wedged call is let go at its bound, and its late value credits nothing.

:class:`AbandonmentRun` runs a real review episode (the bundled workspace, the real inspection
tools, the real :class:`~reviewlab.live._executor.BoundedExecutor`) whose ``search_code`` blocks
until released, under a scene clock (:data:`~reviewlab.ui.scenes._live.SCENE_CLOCK_FACTOR`); the
read before it has a looser bound (:data:`~reviewlab.ui.scenes._live.SPARE_FACTOR`). At
its bound the episode stops waiting: the receipt is an ``error`` with the abandonment gap, the
model reads the host text, and the episode finishes. The worker is loose. The reader releases
it with a button: it returns its value to nobody — the ledger records its zombie seconds, and
the receipts, the transcript and the credited lines stay exactly what they were.

Lifecycle of a run: ``running`` (the episode, at construction) → ``loose`` (the episode ended,
the worker holds) → ``released`` (:meth:`AbandonmentRun.release`: the worker came back and
retired). Nothing here sleeps to wait: the release waits on the executor's ``settled`` event.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

import ipywidgets as w

from reviewlab.core._deadline import ScaledClock, clock_scope
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode, tool_call
from reviewlab.live._executor import BoundedExecutor
from reviewlab.live._inspection import demo_workspace
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.scenes._base import Scene, outcome_html
from reviewlab.ui.scenes._live import (
    REAL_WAIT_LIMIT_SEC,
    SCENE_CLOCK_FACTOR,
    SPARE_FACTOR,
    LateValueRegistry,
    LiveCall,
    PacedModel,
    draw_live,
    late_value_factory,
    live_calls,
    live_sends,
)
from reviewlab.ui.scenes._timeline import Timeline

WEDGED_TOOL = "search_code"
_SCRIPT: list[dict[str, Any]] = [
    {"tool_calls": [tool_call("read_file", {"path": "inventory/pricing.py"}, "c1")]},
    {"tool_calls": [tool_call(WEDGED_TOOL, {"pattern": "discount"}, "c2")]},
    {"content": "[] (search_code timed out; the answer rests on pricing.py)"},
]


class AbandonmentRun:
    """One live episode whose ``search_code`` wedges (run at construction; see the module doc)."""

    def __init__(
        self, bound_sec: float = 20.0, *, send_sec: float = 5.0, factor: float = SCENE_CLOCK_FACTOR
    ) -> None:
        self.bound_sec = bound_sec
        self.clock = ScaledClock(factor)
        self.release_event = threading.Event()
        made: list[LateValueRegistry] = []
        self.model = PacedModel(_SCRIPT, send_sec)
        self.executor = BoundedExecutor(name="scene-abandonment")
        with clock_scope(self.clock):
            self.t0 = self.clock.now()
            self.result = ReviewEpisode(
                demo_workspace(),
                self.model,
                policy=Policy(
                    timeouts=TimeoutPolicy(
                        default_sec=bound_sec,
                        tools_sec={"read_file": bound_sec * SPARE_FACTOR},
                        name=f"search_code {bound_sec:g} s",
                    )
                ),
                registry_factory=late_value_factory(WEDGED_TOOL, self.release_event, made),
                executor=self.executor,
            ).execute()
            self.ended_at = self.clock.now() - self.t0
        self.registry = made[0]
        self.receipts_at_end = [receipt.to_dict() for receipt in self.result.receipts]
        """The receipts as the episode published them when it ended."""
        self.sends_at_end = len(self.model.calls)
        self.wedged = next(
            trace for rnd in self.result.trace for trace in rnd.calls if trace.tool == WEDGED_TOOL
        )

    @property
    def released(self) -> bool:
        """Whether the held worker has been released."""
        return self.release_event.is_set()

    def release(self) -> bool:
        """Let the wedged tool return; wait until its loose worker has retired. True when it did
        within :data:`~reviewlab.ui.scenes._live.REAL_WAIT_LIMIT_SEC` real seconds."""
        self.release_event.set()
        settled = self.wedged.result.settled if self.wedged.result is not None else None
        return settled is None or settled.wait(REAL_WAIT_LIMIT_SEC)

    def told(self) -> str:
        """What the model read in place of the wedged call's result (the host text)."""
        messages = self.model.calls[-1]["messages"]
        return next(m["content"] for m in messages if m.get("tool_call_id") == self.wedged.call_id)

    def state(self) -> AbandonmentState:
        """What the run shows now."""
        late = self.registry.late_value
        seen = late is not None and any(
            message.get("content") == late
            for send in self.model.calls
            for message in send["messages"]
        )
        receipts = [receipt.to_dict() for receipt in self.result.receipts]
        result = self.wedged.result
        now = self.clock.now() - self.t0
        return AbandonmentState(
            released=self.released,
            loose_workers=self.executor.loose,
            told=self.told(),
            receipts=tuple(receipts),
            receipts_unchanged=receipts == self.receipts_at_end,
            sends_unchanged=len(self.model.calls) == self.sends_at_end,
            late_value_chars=None if late is None else len(late),
            late_value_seen_by_model=seen,
            zombie_sec=None if result is None else result.zombie_sec,
            calls=tuple(live_calls(self.result, self.t0)),
            sends=tuple(live_sends(self.result, self.t0)),
            ended_at=self.ended_at,
            now_sec=now,
        )


@dataclass(frozen=True)
class AbandonmentState:
    """The abandonment scene at one moment (before or after the release)."""

    released: bool
    loose_workers: int
    """Loose workers of the run's executor now (1 until the release, then 0)."""
    told: str
    receipts: tuple[dict[str, Any], ...]
    receipts_unchanged: bool
    """Whether the receipts equal what the episode published when it ended."""
    sends_unchanged: bool
    """Whether the model was asked nothing more after the episode ended."""
    late_value_chars: int | None
    """Characters the wedged tool returned once released (``None`` before)."""
    late_value_seen_by_model: bool
    zombie_sec: float | None
    """Scene seconds the loose worker ran after its abandonment (``None`` while loose)."""
    calls: tuple[LiveCall, ...]
    sends: tuple[tuple[float, float], ...]
    ended_at: float
    now_sec: float
    running: bool = False
    """Whether a fresh episode is under way (the figure still shows this one)."""

    @property
    def credited_lines(self) -> int:
        """Lines credited over all receipts (the read before the wedge, and nothing else)."""
        total = 0
        for receipt in self.receipts:
            start, end = receipt.get("start_line"), receipt.get("end_line")
            if start is not None and end is not None:
                total += int(end) - int(start) + 1
        return total


class AbandonmentScene(Scene):
    """A live wedged call; a button releases its worker, another runs the episode again."""

    name = "abandonment"
    title = "Abandonment: the episode stops waiting, the worker runs on"
    claim = (
        "At its bound the episode lets go of the wedged call; when the worker finally returns, "
        "its late value reaches nobody and the receipts do not change."
    )
    left = 0.15
    figsize = (9.0, 2.8)

    def __init__(self, bound_sec: float = 20.0) -> None:
        super().__init__()
        self.bound_sec = bound_sec
        self.run = AbandonmentRun(bound_sec)
        self._running = False
        self._idle = threading.Event()
        self._idle.set()
        self.release_button = w.Button(
            description="release the wedged worker", icon="unlock", button_style="warning",
            layout=w.Layout(width="16em"),
        )  # fmt: skip
        self.again_button = w.Button(
            description="run the episode again", icon="repeat", layout=w.Layout(width="14em")
        )
        self.on_click(self.release_button, self.release)
        self.on_click(self.again_button, self.again)
        self._finish([self.release_button, self.again_button])

    def release(self) -> None:
        """Release the wedged worker (the button's action)."""
        self.run.release()

    def again(self) -> None:
        """Release the old run's worker and start a fresh episode on a thread of its own (the
        other button's action). The page stays live while the episode waits out its bound and
        shows it when it ends; :meth:`wait` blocks until then. A click while one runs does
        nothing."""
        if not self._idle.is_set():
            return
        self._idle.clear()
        self._running = True
        self.run.release()
        threading.Thread(target=self._rerun, name="scene-abandonment-rerun", daemon=True).start()

    def _rerun(self) -> None:
        try:
            self.run = AbandonmentRun(self.bound_sec)
        finally:
            self._running = False
            self._changed(None)
            self._idle.set()

    def wait(self, timeout: float | None = REAL_WAIT_LIMIT_SEC) -> bool:
        """Block until no fresh episode is running and the last one is shown; False if
        ``timeout`` real seconds passed first."""
        return self._idle.wait(timeout)

    def compute(self) -> AbandonmentState:
        """The run's state now (``running`` while a fresh episode is under way)."""
        state = replace(self.run.state(), running=self._running)
        self.release_button.disabled = state.released or state.running
        self.again_button.disabled = state.running
        return state

    def draw(self, state: AbandonmentState) -> None:
        """The episode's sends and calls; the loose worker's tail; where the late value landed."""
        ax = self.axes[0]
        lanes = {"c1": "read_file", "c2": WEDGED_TOOL}
        wedged = next(call for call in state.calls if call.tool == WEDGED_TOOL)
        back = wedged.start_sec + wedged.wait_sec + (state.zombie_sec or 0.0)
        # The late value in view unless the reader waited long (a scene second is 10 ms).
        right = state.ended_at * 1.35
        if state.released and back < 4 * state.ended_at:
            right = max(right, back * 1.1)
        line = Timeline(ax, ["model", "read_file", WEDGED_TOOL], right)
        draw_live(line, list(state.calls), list(state.sends), lanes, state.now_sec)
        if state.released:
            at = min(back, right)
            line.tick(WEDGED_TOOL, at, label="late value arrives", color="black")
            line.note(
                WEDGED_TOOL, at, "late value → credited to nothing", align="right", above=True
            )
        line.line(state.ended_at, "episode ended", "#555555")
        ax.set_title(
            f"live ReviewEpisode, bound {seconds_text(self.bound_sec)} (scene clock: "
            f"{1 / SCENE_CLOCK_FACTOR:g}× real time)",
            fontsize=9,
        )
        line.legend()

    def describe(self, state: AbandonmentState) -> str:
        """Before the release: what the model was told; after: where the late value went."""
        facts: dict[str, Any] = {
            "released": str(state.released).lower(),
            "loose_workers": state.loose_workers,
            "receipts_unchanged": str(state.receipts_unchanged).lower(),
            "outcome": "running" if state.running else "released" if state.released else "loose",
        }
        if state.running:
            sentences = [
                "<b class='rl-outcome'>Running</b> a fresh episode: it waits out its bound "
                f"({seconds_text(self.bound_sec)} on the scene clock) before it lets go."
            ]
        elif not state.released:
            sentences = [
                f"<b class='rl-outcome'>Loose</b>: the episode ended without waiting; "
                f"{state.loose_workers} worker still holds <code>{WEDGED_TOOL}</code>.",
                f"The model read: <code>{state.told}</code>",
            ]
        else:
            seen = "YES" if state.late_value_seen_by_model else "no"
            loose = "still loose" if state.zombie_sec is None else seconds_text(state.zombie_sec)
            sentences = [
                f"<b class='rl-outcome'>Released</b>: the worker returned "
                f"{state.late_value_chars} characters {loose} after "
                "its abandonment — to nobody.",
                f"Receipts unchanged: <b>{'yes' if state.receipts_unchanged else 'NO'}</b>; "
                f"the model saw the late value: <b>{seen}</b>; "
                f"lines credited: {state.credited_lines} (the read before the wedge).",
            ]
        rows = [
            {
                "tool": r["tool"],
                "outcome": r["outcome"],
                "bound_sec": r.get("bound_sec"),
                "source_gap": r.get("source_gap") or "—",
                "lines": (
                    f"{r['start_line']}–{r['end_line']}" if r.get("start_line") is not None else "—"
                ),
            }
            for r in state.receipts
        ]
        return outcome_html(self.name, facts, sentences, rows)

"""Scene "the crediting rule": why nothing is credited after the first abandonment.

A read is credited the lines the reader stamped (``ctx.last_read_view``). The stamp is shared:
a loose worker that finally renders its own read overwrites it. :class:`CreditingRun` makes that
happen for real, in order, with events instead of luck: a live episode reads ``stock.py``
(credited), then reads ``pricing.py``, which is held and abandoned at its bound, then reads
``stock.py`` again;
that last read renders its own lines, releases the held read and waits until the loose worker has
stamped ``pricing.py`` over them, then returns inside its bound. The real rule
(:class:`~reviewlab.core._crediting.Crediting`, sticky after the first abandonment) credits the
last read nothing. The scene's toggle shows the counterfactual, computed here and nowhere else:
:class:`ForgetfulCrediting` forgets abandonments, and credits the last read ``pricing.py``'s lines
— lines it never asked for. That is why the rule exists.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as w

from reviewlab.core._crediting import Crediting
from reviewlab.core._deadline import ScaledClock, clock_scope, monotonic_now
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED
from reviewlab.live._episode import EpisodeResult, ReviewEpisode, tool_call
from reviewlab.live._executor import BoundedExecutor
from reviewlab.live._inspection import demo_workspace, inspection_registry
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.scenes._base import Scene, outcome_html
from reviewlab.ui.scenes._live import (
    REAL_WAIT_LIMIT_SEC,
    SCENE_CLOCK_FACTOR,
    SPARE_FACTOR,
    LiveCall,
    PacedModel,
    draw_live,
    live_calls,
    live_sends,
)
from reviewlab.ui.scenes._timeline import Timeline

HELD_PATH = "inventory/pricing.py"
_RACING = {"path": "inventory/stock.py", "start_line": 21, "end_line": 42}
_SCRIPT: list[dict[str, Any]] = [
    {"tool_calls": [tool_call("read_file", {"path": "inventory/stock.py", "end_line": 20}, "c1")]},
    {"tool_calls": [tool_call("read_file", {"path": HELD_PATH}, "c2")]},
    {"tool_calls": [tool_call("read_file", _RACING, "c3")]},
    {"content": "[] (pricing.py timed out)"},
]
CREDITING_RULES = ("sticky rule on", "sticky rule off (counterfactual)")
"""The toggle's two positions: the real rule, and the rule without its sticky part."""


class ForgetfulCrediting(Crediting):
    """The counterfactual rule: credits every read that returned, forgetting abandonments.

    Never used by an engine; it exists to show what the sticky rule prevents.
    """

    def note_abandoned(self) -> None:
        """Forget the abandonment (the real rule remembers it for the rest of the episode)."""


class HeldReadTimeouts:
    """The scene's timeout rule: the held read of :data:`HELD_PATH` gets ``held_sec``, every
    other call :data:`~reviewlab.ui.scenes._live.SPARE_FACTOR` times as much (they return in
    milliseconds; the margin keeps a busy machine from abandoning the racing read too). Any
    object with ``timeout_for`` is a timeout rule (docs/semantics.md)."""

    def __init__(self, held_sec: float) -> None:
        self.held_sec = held_sec
        self.name = f"{HELD_PATH} {held_sec:g} s"

    def timeout_for(self, tools: Any, tool_name: str, tool_args: Any = None) -> float:
        """``held_sec`` for the held read, else the spare bound."""
        args = tool_args if isinstance(tool_args, dict) else {}
        held = tool_name == "read_file" and args.get("path") == HELD_PATH
        return self.held_sec if held else self.held_sec * SPARE_FACTOR


class RacingRegistry:
    """The inspection registry with one held read and one racing read (see the module doc).

    ``read_file`` of :data:`HELD_PATH` waits for :attr:`release`, then renders (stamping the
    reader) and sets :attr:`restamped`. The racing read (``stock.py`` from line 21) renders its
    own lines, sets :attr:`release` and waits for :attr:`restamped` before it returns. Every wait
    is bounded by :data:`~reviewlab.ui.scenes._live.REAL_WAIT_LIMIT_SEC` real seconds.
    """

    def __init__(self, inner: Any, ctx: Any) -> None:
        self.inner = inner
        self.ctx = ctx
        self.release = threading.Event()
        self.restamped = threading.Event()
        self.restamped_at: float | None = None
        """When the loose worker stamped its lines, on the episode's clock."""
        self.own_stamp: dict[str, Any] | None = None
        """The stamp the racing read wrote for itself, before it was overwritten."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def execute(self, name: str, args: Any) -> str:
        """Run ``name`` on the inner registry, holding and racing the two reads as described."""
        path = args.get("path") if isinstance(args, dict) else None
        if name == "read_file" and path == HELD_PATH:
            self.release.wait(REAL_WAIT_LIMIT_SEC)
            value = str(self.inner.execute(name, args))
            self.restamped_at = monotonic_now()
            self.restamped.set()
            return value
        if name == "read_file" and path == _RACING["path"] and args.get("start_line") == 21:
            value = str(self.inner.execute(name, args))
            self.own_stamp = dict(self.ctx.last_read_view or {})
            self.release.set()
            self.restamped.wait(REAL_WAIT_LIMIT_SEC)
            return value
        return str(self.inner.execute(name, args))


@dataclass(frozen=True)
class CreditRow:
    """One read of the episode under one crediting rule."""

    call_id: str
    asked: str
    """The lines the read asked for (``path start–end``)."""
    outcome: str
    stamp: str | None
    """The reader stamp the episode saw when the read settled (``None``: not read)."""
    credited: str | None
    """The lines the rule credits it (``None``: nothing)."""

    @property
    def wrong(self) -> bool:
        """Whether the read is credited lines it did not ask for."""
        return self.credited is not None and self.credited != self.asked


def _lines(path: Any, start: Any, end: Any) -> str:
    return f"{path} {start if start is not None else 1}–{end if end is not None else 'end'}"


def credit_rows(result: EpisodeResult, *, sticky: bool = True) -> list[CreditRow]:
    """Each read of ``result`` credited by the real rule (``sticky``) or the counterfactual.

    The reads are replayed through the rule in dispatch order with the stamps the episode saw;
    with ``sticky`` the extents equal the receipts' (:attr:`CreditingState.rule_matches_receipts`).
    """
    rule = Crediting() if sticky else ForgetfulCrediting()
    rows = []
    for rnd in result.trace:
        for trace in rnd.calls:
            extent = rule.extent(
                "read_file" if trace.read else trace.tool, trace.receipt.outcome, trace.rendered
            )
            if trace.receipt.source_gap == SOURCE_GAP_ABANDONED:
                rule.note_abandoned()
            if not trace.read:
                continue
            args = trace.args or {}
            stamp = trace.rendered
            rows.append(
                CreditRow(
                    call_id=trace.call_id,
                    asked=_lines(args.get("path"), args.get("start_line"), args.get("end_line")),
                    outcome=str(trace.receipt.outcome),
                    stamp=None
                    if not stamp
                    else _lines(stamp["opened_path"], stamp["first_line"], stamp["end_line"]),
                    credited=None
                    if extent is None
                    else _lines(extent["opened_path"], extent["start_line"], extent["end_line"]),
                )
            )
    return rows


class CreditingRun:
    """The live episode of the scene (run at construction; see the module doc)."""

    def __init__(
        self, bound_sec: float = 60.0, *, send_sec: float = 5.0, factor: float = SCENE_CLOCK_FACTOR
    ) -> None:
        self.bound_sec = bound_sec
        self.clock = ScaledClock(factor)
        made: list[RacingRegistry] = []

        def factory(
            root: str | Path, drive_root: str | Path | None = None, task_id: str = ""
        ) -> tuple[RacingRegistry, Any, Any]:
            registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
            made.append(RacingRegistry(registry, ctx))
            return made[-1], ctx, schemas

        self.executor = BoundedExecutor(name="scene-crediting")
        with clock_scope(self.clock):
            self.t0 = self.clock.now()
            self.result = ReviewEpisode(
                demo_workspace(),
                PacedModel(_SCRIPT, send_sec),
                policy=Policy(timeouts=HeldReadTimeouts(bound_sec)),
                registry_factory=factory,
                executor=self.executor,
            ).execute()
            self.ended_at = self.clock.now() - self.t0
        self.registry = made[0]
        held = next(t for rnd in self.result.trace for t in rnd.calls if t.call_id == "c2")
        if held.result is not None and held.result.settled is not None:
            held.result.settled.wait(REAL_WAIT_LIMIT_SEC)  # the loose worker has retired

    def state(self, sticky: bool) -> CreditingState:
        """The scene under the real rule (``sticky``) or the counterfactual."""
        rows = credit_rows(self.result, sticky=sticky)
        real = credit_rows(self.result, sticky=True)
        receipts = [
            receipt.extent for receipt in self.result.receipts if receipt.tool == "read_file"
        ]
        matches = [r.credited for r in real] == [
            None if e is None else _lines(e["opened_path"], e["start_line"], e["end_line"])
            for e in receipts
        ]
        stamped = self.registry.restamped_at
        return CreditingState(
            sticky=sticky,
            rows=tuple(rows),
            rule_matches_receipts=matches,
            calls=tuple(live_calls(self.result, self.t0)),
            sends=tuple(live_sends(self.result, self.t0)),
            restamped_sec=None if stamped is None else stamped - self.t0,
            ended_at=self.ended_at,
        )


@dataclass(frozen=True)
class CreditingState:
    """The crediting scene under one rule."""

    sticky: bool
    rows: tuple[CreditRow, ...]
    rule_matches_receipts: bool
    """Whether the real rule, replayed here, gives exactly the receipts' extents."""
    calls: tuple[LiveCall, ...]
    sends: tuple[tuple[float, float], ...]
    restamped_sec: float | None
    """When the loose worker overwrote the reader stamp (episode clock)."""
    ended_at: float

    @property
    def racing(self) -> CreditRow:
        """The read that returned while the loose worker stamped over it (``c3``)."""
        return next(row for row in self.rows if row.call_id == "c3")

    @property
    def wrongly_credited(self) -> tuple[CreditRow, ...]:
        """The reads credited lines they did not ask for."""
        return tuple(row for row in self.rows if row.wrong)


class CreditingScene(Scene):
    """The live race, with a toggle between the sticky rule and its counterfactual."""

    name = "crediting"
    title = "The crediting rule: nothing is credited after the first abandonment"
    claim = (
        "A loose worker can overwrite the shared reader stamp, so after an abandonment no read "
        "can prove which lines it read; without the rule a read is credited the wrong lines."
    )
    left = 0.3
    figsize = (9.0, 3.0)

    def __init__(self, bound_sec: float = 60.0) -> None:
        super().__init__()
        self.run = CreditingRun(bound_sec)
        self.rule = w.ToggleButtons(
            options=list(CREDITING_RULES), value=CREDITING_RULES[0], description="crediting",
            style={"button_width": "17em"},
        )  # fmt: skip
        self.watch(self.rule)
        self._finish([self.rule])

    def compute(self) -> CreditingState:
        """The run's reads credited by the rule the toggle shows."""
        return self.run.state(sticky=self.rule.value == CREDITING_RULES[0])

    def draw(self, state: CreditingState) -> None:
        """The three reads, the loose worker, and the moment it stamped over the racing read."""
        ax = self.axes[0]
        lanes = {row.call_id: f"{row.call_id}: {row.asked}" for row in state.rows}
        line = Timeline(ax, ["model", *lanes.values()], state.ended_at * 1.15)
        draw_live(line, list(state.calls), list(state.sends), lanes, state.ended_at)
        racing = state.racing
        if state.restamped_sec is not None:
            line.tick(lanes["c3"], state.restamped_sec, label="loose worker stamps pricing.py")
        c3 = next(call for call in state.calls if call.call_id == "c3")
        credit = (
            f"credited {racing.credited} ✗ wrong lines"
            if racing.wrong
            else "credited nothing (attribution unprovable)"
        )
        line.note(lanes["c3"], c3.start_sec, credit, align="right", above=True)
        ax.set_title(
            f"live ReviewEpisode, pricing.py's bound {seconds_text(self.run.bound_sec)}; "
            f"{self.rule.value}",
            fontsize=9,
        )
        line.legend()

    def describe(self, state: CreditingState) -> str:
        """What each read asked for, what the stamp said, what the rule credits."""
        racing = state.racing
        if racing.wrong:
            verdict = (
                f"<b class='rl-outcome'>Wrong lines credited</b>: the last read asked for "
                f"{racing.asked} but is credited {racing.credited}, stamped by the loose worker."
            )
        else:
            verdict = (
                "<b class='rl-outcome'>Nothing credited</b> after the abandonment: the last read "
                f"executed, but its stamp says {racing.stamp}, not what it asked for."
            )
        facts = {
            "rule": "sticky" if state.sticky else "forgetful",
            "outcome": "wrong" if racing.wrong else "uncredited",
            "wrong_reads": len(state.wrongly_credited),
        }
        rows = [
            {
                "read": row.call_id,
                "asked": row.asked,
                "outcome": row.outcome,
                "stamp seen": row.stamp or "—",
                "credited": row.credited or "nothing",
            }
            for row in state.rows
        ]
        return outcome_html(self.name, facts, [verdict], rows)

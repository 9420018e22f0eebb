"""Scene "censoring": a recorded call that never returned, and what each end of a replay assumes.

The recording watched a ``query_code`` call for ``censored_at_sec`` (15 min) and then ended with
it still running: a right-censored observation (``completed=False``). A replay must assume
something about it (docs/semantics.md, "What a replay assumes"): ``wedge`` — it never returns —
or ``observed`` — it returns the moment the recording stopped watching (the optimistic end).
:func:`run_censoring` replays the episode on the SimPy twin under the pre-fix policy or under a
bound, with either assumption. Under the pre-fix policy the two ends disagree completely (the
episode waits forever, or 15 min); under a bound shorter than the censoring time they agree on
everything the episode saw and differ only in the loose worker's tail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import ipywidgets as w

from reviewlab.core._policy import PRE_FIX_LABEL, Policy
from reviewlab.core._vocab import DEFAULT_CENSORING
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Extent, Round
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.scenes._base import Scene, outcome_html
from reviewlab.ui.scenes._timeline import BROKEN_COLOR, Timeline

CENSORED_TOOL = "query_code"
CENSORINGS = ("wedge", "observed")
"""The two ends a replay can assume (``impute`` lies between them)."""
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def censored_episode(censored_at_sec: float = 900.0) -> Episode:
    """The recording: a read, then a ``query_code`` still running after ``censored_at_sec``."""
    return Episode(
        id="censored",
        source="synthetic",
        started_at=_T0,
        end_reason="log_end",
        rounds=[
            Round(
                send_sec=20.0,
                calls=[
                    Call(
                        tool="read_file",
                        args={"path": "inventory/pricing.py"},
                        duration_sec=3.0,
                        extent=Extent(path="inventory/pricing.py", start_line=1, end_line=23),
                    )
                ],
            ),
            Round(
                send_sec=20.0,
                calls=[
                    Call(
                        tool=CENSORED_TOOL,
                        args={"query": "callers of apply_discount"},
                        duration_sec=censored_at_sec,
                        completed=False,
                    )
                ],
            ),
        ],
    )


@dataclass(frozen=True)
class CensoringRun:
    """The twin's replay of the censored episode under one policy and one assumption."""

    policy: str
    censored: str
    censored_at_sec: float
    start_sec: float
    """When the censored call was dispatched."""
    bound_sec: float | None
    outcome: str
    source_gap: str
    wait_sec: float
    """How long the episode waited on the call (``inf``: forever)."""
    zombie_sec: float
    wall_sec: float
    max_silence_sec: float
    other_wall_sec: float
    """The episode's wall time under the other assumption (the other end)."""

    @property
    def ends_agree(self) -> bool:
        """Whether both ends give the episode the same wall time."""
        return self.wall_sec == self.other_wall_sec


@lru_cache(maxsize=512)
def run_censoring(
    bounded: bool, censored: str, *, bound_sec: float = 120.0, censored_at_sec: float = 900.0
) -> CensoringRun:
    """Replay the censored episode on the twin: ``Policy.uniform(bound_sec)`` when ``bounded``,
    else the pre-fix policy; ``censored`` is ``wedge`` or ``observed``."""
    if censored not in CENSORINGS:
        raise ValueError(f"censored: expected one of {', '.join(CENSORINGS)}, got {censored!r}")
    policy = Policy.uniform(bound_sec) if bounded else Policy.unbounded()
    episode = censored_episode(censored_at_sec)
    result = replay([episode], policy, engine="twin", censored=censored)  # type: ignore[arg-type]
    other = "observed" if censored == "wedge" else "wedge"
    other_result = replay([episode], policy, engine="twin", censored=other)  # type: ignore[arg-type]
    row = result.calls.iloc[1]
    bound = float(row["bound_sec"])
    return CensoringRun(
        policy=policy.label,
        censored=censored,
        censored_at_sec=censored_at_sec,
        start_sec=float(row["start_sec"]),
        bound_sec=None if math.isnan(bound) else bound,
        outcome=str(row["outcome"]),
        source_gap=str(row["source_gap"]),
        wait_sec=float(row["wait_sec"]),
        zombie_sec=float(row["zombie_sec"]),
        wall_sec=float(result.episodes["wall_sec"].iloc[0]),
        max_silence_sec=float(result.episodes["max_silence_sec"].iloc[0]),
        other_wall_sec=float(other_result.episodes["wall_sec"].iloc[0]),
    )


class CensoringScene(Scene):
    """The recorded call with its grey tail; toggles for the assumption and the policy."""

    name = "censoring"
    title = "Censoring: a call still running when the recording ended"
    claim = (
        "A replay must assume what a censored call would have done; without a bound the answer "
        "is all assumption, with a bound both ends agree on what the episode saw."
    )
    left = 0.2
    figsize = (9.0, 2.8)
    POLICIES = (PRE_FIX_LABEL, "bounded 120 s")

    def __init__(self, censored: str = DEFAULT_CENSORING, policy: str = PRE_FIX_LABEL) -> None:
        super().__init__()
        self.censored = w.ToggleButtons(
            options=list(CENSORINGS), value=censored, description="assume",
            tooltips=["it never returns", "it returns when the recording stopped watching"],
        )  # fmt: skip
        self.policy = w.ToggleButtons(
            options=list(self.POLICIES), value=policy, description="policy",
            style={"button_width": "11em"},
        )  # fmt: skip
        self.watch(self.censored, self.policy)
        self._finish([self.censored, self.policy])

    def compute(self) -> CensoringRun:
        """The twin's replay under the toggles' policy and assumption."""
        return run_censoring(self.policy.value != PRE_FIX_LABEL, self.censored.value)

    def draw(self, state: CensoringRun) -> None:
        """The recorded call (seen part, grey tail) above the replay's view of it."""
        ax = self.axes[0]
        right = state.censored_at_sec * 1.25
        recorded, replayed = "recorded", f"replayed ({state.censored})"
        line = Timeline(ax, [recorded, replayed], right)
        start = state.start_sec
        line.bar(recorded, start, state.censored_at_sec, "#6f8fb0", label="seen running")
        line.censored(recorded, start + state.censored_at_sec)
        line.line(start + state.censored_at_sec, "recording ends", "#555555")
        line.bound(replayed, start, state.bound_sec)
        line.call(replayed, start, state.wait_sec, state.outcome)
        if state.source_gap == "native_tool_abandoned":
            assert state.bound_sec is not None
            line.abandoned(replayed, start + state.bound_sec)
            line.zombie(replayed, start + state.bound_sec, state.zombie_sec)
        ax.set_title(f"{CENSORED_TOOL} under {state.policy}, censored={state.censored}", fontsize=9)
        ax.title.set_color(BROKEN_COLOR if state.bound_sec is None else "black")
        line.legend()

    def describe(self, state: CensoringRun) -> str:
        """The episode's wall time under this end and the other, and whether they agree."""
        other = "observed" if state.censored == "wedge" else "wedge"
        sentences = [
            f"Episode wall time <b class='rl-outcome'>{seconds_text(state.wall_sec)}</b> "
            f"assuming <i>{state.censored}</i>; {seconds_text(state.other_wall_sec)} assuming "
            f"<i>{other}</i>.",
            "Both ends agree: the bound decides, not the assumption."
            if state.ends_agree
            else "The ends disagree: without a bound the answer is only the assumption.",
        ]
        facts: dict[str, Any] = {
            "censored": state.censored,
            "wall_sec": f"{state.wall_sec:g}",
            "outcome": "agree" if state.ends_agree else "disagree",
        }
        rows = [
            {
                "tool": CENSORED_TOOL,
                "outcome": state.outcome,
                "bound_sec": "—" if state.bound_sec is None else f"{state.bound_sec:g}",
                "source_gap": state.source_gap or "—",
                "waited": seconds_text(state.wait_sec),
                "zombie": seconds_text(state.zombie_sec),
            }
        ]
        return outcome_html(self.name, facts, sentences, rows)

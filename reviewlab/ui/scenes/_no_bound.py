"""Failure family 1, "no bound at all": one wedged tool call takes a reviewer slot for good.

Two reviewer slots serve :data:`REQUESTS` review requests arriving every ``every_sec``; each
request sends, calls ``query_code`` (an MCP tool) and answers, about 200 s in all, so both slots
are needed. One request's call never returns (recorded as still running after 2 h). Broken: no
bound (the pre-fix policy), the call waits forever, its slot is silent for the rest of the day
and every later request queues behind the one slot left. reviewlab: the reference policy
(``Policy.ouroboros()``) abandons the call at its bound; the slot is back, the queue drains.
Both are replayed on the twin's reviewer pool (``replay(..., slots=2)``), assuming the wedge
never returns (``censored="wedge"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from reviewlab.core._policy import Policy
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.ui._numbers import seconds_text
from reviewlab.ui.charts._palette import STATE_COLORS
from reviewlab.ui.scenes._failure import FailureScene, FailureState, SceneVerdict
from reviewlab.ui.scenes._timeline import Comparison, Timeline

REQUESTS = 16
SLOTS = 2
WEDGED_REQUEST = 2
_T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def pool_corpus(requests: int = REQUESTS, every_sec: float = 150.0) -> list[Episode]:
    """The recorded day: ``requests`` requests ``every_sec`` apart; request
    :data:`WEDGED_REQUEST`'s ``query_code`` was still running when the log ended, 2 h later."""
    episodes = []
    for number in range(requests):
        wedged = number == WEDGED_REQUEST
        call = Call(
            tool="query_code",
            args={"query": f"callers of handler_{number}"},
            duration_sec=7200.0 if wedged else 160.0,
            completed=not wedged,
        )
        episodes.append(
            Episode(
                id=f"req-{number:02d}",
                source="synthetic",
                slot=f"reviewer-{number % SLOTS}",
                started_at=_T0 + timedelta(seconds=every_sec * number),
                end_reason="log_end" if wedged else "final_answer",
                rounds=[Round(send_sec=20.0, calls=[call])]
                + ([] if wedged else [Round(send_sec=20.0)]),
            )
        )
    return episodes


@dataclass(frozen=True)
class PoolRun:
    """The pool under one policy."""

    policy: str
    slots: pd.DataFrame
    """The twin's slot timeline (``slot_id, state, start_sec, end_sec, episode_id``)."""
    horizon_sec: float
    """The window the figures count over: the last arrival plus 10 min."""
    wedged_slot_sec: float
    """Slot-seconds the wedged call held its slot silent, within the horizon."""
    queue_wait_mean_sec: float
    """Mean time a request waited for a free slot (``inf`` when one never got one)."""
    served_in_horizon: int
    """Requests answered within the horizon."""
    wedged_wait_sec: float
    """How long the wedged request's slot waited on its call (``inf``: forever)."""


@lru_cache(maxsize=4)
def run_pool(bounded: bool) -> PoolRun:
    """Replay :func:`pool_corpus` on the twin's pool: ``Policy.ouroboros()`` when ``bounded``,
    else the pre-fix policy."""
    policy = Policy.ouroboros() if bounded else Policy.unbounded()
    corpus = pool_corpus()
    result = replay(corpus, policy, engine="twin", slots=SLOTS, censored="wedge")
    slots = result.slots
    assert slots is not None
    episodes = result.episodes
    arrival = episodes["arrival_sec"].to_numpy(dtype=float)
    horizon = float(arrival.max()) + 600.0
    wedged_id = f"req-{WEDGED_REQUEST:02d}"
    silent = slots[(slots["state"] == "silent") & (slots["episode_id"] == wedged_id)]
    ends = np.minimum(silent["end_sec"].to_numpy(dtype=float), horizon)
    starts = np.minimum(silent["start_sec"].to_numpy(dtype=float), horizon)
    done = arrival + episodes["wall_sec"].to_numpy(dtype=float)
    wedged = result.calls[result.calls["episode_id"] == wedged_id]
    return PoolRun(
        policy=policy.label,
        slots=slots,
        horizon_sec=horizon,
        wedged_slot_sec=float((ends - starts).sum()),
        queue_wait_mean_sec=float(episodes["queue_wait_sec"].mean()),
        served_in_horizon=int((done <= horizon).sum()),
        wedged_wait_sec=float(wedged["wait_sec"].iloc[0]),
    )


class NoBoundScene(FailureScene):
    """Two reviewer slots, one wedged call: without a bound the slot never comes back."""

    name = "no-bound"
    family = "no_bound"
    title = "1. No bound at all: a wedged call keeps its slot forever"
    claim = (
        "Without a bound a call that never returns silences its reviewer slot for good and the "
        "other requests queue; with one, the slot is back after the bound."
    )
    labels = ("no bound (pre-fix)", "reviewlab: ouroboros bounds")

    def run(self, mode: str) -> PoolRun:
        """The pool replayed under ``mode``."""
        return run_pool(mode == "reviewlab")

    def compare(self, broken: PoolRun, reviewlab: PoolRun) -> tuple[Comparison, ...]:
        """Mean queue wait (seconds) and silent slot-seconds (within the horizon)."""
        return (
            Comparison("mean wait for a slot", "s", broken.queue_wait_mean_sec,
                       reviewlab.queue_wait_mean_sec),
            Comparison("slot-seconds lost to the wedge", "slot-s", broken.wedged_slot_sec,
                       reviewlab.wedged_slot_sec),
        )  # fmt: skip

    def draw_run(self, ax: Axes, run: PoolRun, mode: str) -> None:
        """The slots' busy, silent and idle stretches, in minutes, up to the horizon."""
        right = run.horizon_sec / 60.0
        lanes = sorted(run.slots["slot_id"].unique())
        line = Timeline(ax, lanes, right, unit="min")
        shown = run.slots[run.slots["state"] != "idle"]
        for (slot, state), group in shown.groupby(["slot_id", "state"], sort=True):
            starts = group["start_sec"].to_numpy(dtype=float)
            ends = np.minimum(group["end_sec"].to_numpy(dtype=float), run.horizon_sec)
            line.bars(
                str(slot),
                [(a / 60.0, (b - a) / 60.0) for a, b in zip(starts, ends, strict=True) if b > a],
                STATE_COLORS.get(str(state), "#999999"),
                label="silent on a tool" if state == "silent" else str(state),
            )
        wedged = run.slots[
            (run.slots["episode_id"] == f"req-{WEDGED_REQUEST:02d}")
            & (run.slots["state"] == "silent")
        ].iloc[0]
        text = (
            "wedged call: slot silent for good"
            if not math.isfinite(run.wedged_wait_sec)
            else f"wedged call abandoned after {seconds_text(run.wedged_wait_sec)}"
        )
        line.note(str(wedged["slot_id"]), float(wedged["start_sec"]) / 60.0, text, above=True)
        ax.set_xlabel("time since the first request (min)")
        ax.set_title(
            f"{REQUESTS} requests on {SLOTS} reviewer slots, policy {run.policy}", fontsize=9
        )
        line.legend()

    def verdict(self, state: FailureState) -> SceneVerdict:
        """Served requests, queue wait and the wedged slot's fate."""
        run: PoolRun = state.run
        if math.isfinite(run.wedged_wait_sec):
            head = (
                f"<b class='rl-outcome'>Slot back</b> after {seconds_text(run.wedged_wait_sec)}: "
                "the call was abandoned at its bound."
            )
        else:
            head = "<b class='rl-outcome'>Slot lost</b>: the wedged call is waited on forever."
        sentences = [
            head,
            f"{run.served_in_horizon} of {REQUESTS} requests answered by the end of the window; "
            f"mean wait for a slot {seconds_text(run.queue_wait_mean_sec)}.",
        ]
        facts = {
            "outcome": "slot-back" if math.isfinite(run.wedged_wait_sec) else "slot-lost",
            "served": run.served_in_horizon,
        }
        return sentences, facts, []

"""Where the time went in one replayed episode: its calls on its own clock.

:func:`call_timeline` lays one replayed episode out on its own clock (a
DataFrame); :func:`episode_timeline` draws it, a step per kind of mark. A
reviewer pool's slots are drawn by :mod:`reviewlab.ui.charts._pool`. See
:mod:`reviewlab.ui.charts` for the conventions every chart follows (``ax=``,
no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reviewlab.core import _metrics as metrics
from reviewlab.core._vocab import OUTCOME_WITHHELD, SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED
from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode
from reviewlab.ui.charts._common import (
    LABEL_BOX,
    duration_text,
    figure_and_axes,
    legend_outside,
    time_scale,
)
from reviewlab.ui.charts._palette import METRIC_COLORS, OUTCOME_COLORS

_OUTCOME_COLORS = OUTCOME_COLORS
_SEND_COLOR = METRIC_COLORS["model_send"]
_ZOMBIE_COLOR = METRIC_COLORS["zombie"]


# -- one episode -------------------------------------------------------------


def _find_episode(episode: Episode | Iterable[Episode] | None, episode_id: str) -> Episode | None:
    if episode is None or isinstance(episode, Episode):
        return episode
    for candidate in episode:
        if candidate.id == episode_id:
            return candidate
    raise KeyError(f"episode {episode_id!r} is not in the episodes given")


def call_timeline(
    result: ReplayResult,
    episode_id: str,
    *,
    episode: Episode | Iterable[Episode] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Lay one replayed episode out on its own clock (0 = its request
    arrived), as the replay ran it.

    Returns ``(calls, sends)``. ``calls`` is the episode's rows of
    ``result.calls``, whose :data:`~reviewlab.core._metrics.CALL_TIMING_COLUMNS`
    the engine recorded (``start_sec``: dispatch, from the arrival; ``wait_sec``:
    how long the episode waited on the call), plus ``abandoned`` and ``wedged``
    flags. ``sends`` has one row per round: ``round, start_sec, end_sec`` of
    the model send. Nothing here re-derives the replay: a round's send runs
    from the end of the previous round's last wait (the first round's from the
    slot grant, ``queue_wait_sec`` in a pool run) to the dispatch of its first
    call. Only a round without calls needs the recorded send time, from
    ``episode`` (the recorded episode, or the corpus); without it, or once the
    episode's log has ended at a wedge, that send takes no time.
    """
    calls = result.calls[result.calls["episode_id"] == episode_id].sort_values("call_index")
    if calls.empty and episode_id not in set(result.episodes["episode_id"]):
        raise KeyError(f"episode {episode_id!r} is not in this replay result")
    missing = [name for name in metrics.CALL_TIMING_COLUMNS if name not in calls.columns]
    if missing:
        raise ValueError(
            f"call_timeline: result.calls has no {', '.join(missing)} column(s); "
            "every replay engine records them (metrics.CALL_TIMING_COLUMNS)"
        )
    recorded = _find_episode(episode, episode_id)
    n_rounds = (
        len(recorded.rounds)
        if recorded is not None
        else int(calls["round"].max() if len(calls) else 0)
    )
    send_sec = [r.send_sec for r in recorded.rounds] if recorded is not None else [0.0] * n_rounds
    abandoned = calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy()
    wedged = calls["source_gap"].eq(SOURCE_GAP_WEDGED).to_numpy()
    rounds = calls["round"].to_numpy()
    starts = calls["start_sec"].to_numpy(dtype=float)
    ends = starts + calls["wait_sec"].to_numpy(dtype=float)
    # In a pool run the episode starts once a slot is free: its first
    # send comes after the queue wait.
    queued = result.episodes.loc[result.episodes["episode_id"] == episode_id]
    t = (
        float(queued["queue_wait_sec"].iloc[0])
        if "queue_wait_sec" in queued.columns and len(queued)
        else 0.0
    )
    send_rows = []
    ended = False
    for number in range(1, n_rounds + 1):
        mine = np.flatnonzero(rounds == number)
        if mine.size:
            send_rows.append((number, t, float(starts[mine[0]])))
            t = float(ends[mine[-1]])
            ended = ended or bool(wedged[mine].any())
        else:
            length = 0.0 if ended else send_sec[number - 1]
            send_rows.append((number, t, t + length))
            t += length
    frame = calls.assign(abandoned=abandoned, wedged=wedged)
    sends = pd.DataFrame(send_rows, columns=["round", "start_sec", "end_sec"]).astype(
        {"start_sec": float, "end_sec": float}
    )
    return frame.reset_index(drop=True), sends


def episode_timeline(
    result: ReplayResult,
    episode_id: str,
    *,
    episode: Episode | Iterable[Episode] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """One episode on its own clock: model sends, then each call as a bar against its bound.

    A call's bar covers the time the episode waited on it; a dashed outline
    behind it spans its bound. Abandoned calls are red with an ✕ where the
    bound passed; the loose worker's zombie tail runs on (hatched, orange)
    after the abandonment, to the axis edge with "never returns" for a wedge.
    Withheld calls (never started) are marked with a grey dot. ``episode``
    (the recorded episode, or the corpus) supplies the model-send times; see
    :func:`call_timeline`.
    """
    frame, sends = call_timeline(result, episode_id, episode=episode)
    figure, ax = figure_and_axes(ax, (9.0, 1.2 + 0.32 * (len(frame) + 1)))
    axis = _EpisodeAxis.spanning(frame, sends)
    _draw_sends(ax, sends, axis)
    once = _LegendOnce()
    for row, call in enumerate(frame.itertuples(), start=1):
        _draw_call(ax, row, call, axis, once)
    ax.set_yticks(
        range(len(frame) + 1), ["model", *(f"r{c.round} {c.tool}" for c in frame.itertuples())]
    )
    ax.invert_yaxis()
    ax.set_xlim(0, axis.right)
    ax.set_xlabel(f"time since the request arrived ({axis.unit})")
    ax.set_title(f"Episode {episode_id}: calls against their bounds ({result.engine})")
    handles, names = ax.get_legend_handles_labels()
    if len(sends):
        handles.insert(0, Patch(color=_SEND_COLOR))
        names.insert(0, "model send")
    legend_outside(ax, handles, names)
    return figure


@dataclass(frozen=True)
class _EpisodeAxis:
    """An episode timeline's time axis: seconds per drawn unit, the unit's name, the right edge."""

    scale: float
    unit: str
    right: float

    @classmethod
    def spanning(cls, frame: pd.DataFrame, sends: pd.DataFrame) -> _EpisodeAxis:
        """The axis over the episode itself (its sends, its waits, its bounds), in the unit that
        span needs.

        A zombie that runs on for hours after the episode moved on would squeeze every call into
        the first pixel, so its tail runs to the right edge and says how long it lasts; a call
        that never returns (an unbounded replay of a wedge) runs to the edge too.
        """
        ends = list(sends["end_sec"].to_numpy(dtype=float)) + list(
            (frame["start_sec"] + frame["wait_sec"]).to_numpy(dtype=float)
        )
        finite_bound_end = frame["start_sec"] + frame["bound_sec"].fillna(0.0)
        ends += list(finite_bound_end.to_numpy(dtype=float))
        ends = [v for v in ends if math.isfinite(v)]
        span = max(ends) if ends else 1.0
        span = span if span > 0 else 1.0
        scale, unit = time_scale(span)
        return cls(scale, unit, span * 1.08 / scale)

    @property
    def sliver(self) -> float:
        """The narrowest bar drawn, so a 30 ms call still shows."""
        return 0.004 * self.right


class _LegendOnce:
    """Hands out a legend label the first time a kind is drawn, then none (one entry per kind)."""

    def __init__(self) -> None:
        self.shown: set[str] = set()

    def __call__(self, label: str) -> str | None:
        if label in self.shown:
            return None
        self.shown.add(label)
        return label


def _draw_sends(ax: Axes, sends: pd.DataFrame, axis: _EpisodeAxis) -> None:
    """The model's sends, on the top row."""
    for send in sends.itertuples():
        if not math.isfinite(send.start_sec):
            continue  # never reached: the episode still waits on a call that never returns
        ax.barh(
            0,
            (send.end_sec - send.start_sec) / axis.scale,
            left=send.start_sec / axis.scale,
            height=0.6,
            color=_SEND_COLOR,
            edgecolor="none",
        )


def _draw_call(ax: Axes, row: int, call: Any, axis: _EpisodeAxis, once: _LegendOnce) -> None:
    """One call on its row: a dot if withheld, else its bound, its wait, and how it ended."""
    start = min(call.start_sec / axis.scale, axis.right)
    if call.outcome == OUTCOME_WITHHELD:
        ax.plot(
            [start],
            [row],
            "o",
            color=_OUTCOME_COLORS[OUTCOME_WITHHELD],
            label=once("withheld (never ran)"),
        )
        return
    if not math.isnan(call.bound_sec):
        ax.barh(
            row,
            call.bound_sec / axis.scale,
            left=start,
            height=0.8,
            fill=False,
            edgecolor="#555555",
            linestyle="--",
            linewidth=0.8,
            label=once("bound"),
        )
    ax.barh(
        row,
        min(max(call.wait_sec / axis.scale, axis.sliver), axis.right - start),
        left=start,
        height=0.55,
        color=_OUTCOME_COLORS.get(call.outcome, "#8c8c8c"),
        label=once(str(call.outcome)),
    )
    if call.abandoned:
        _draw_abandonment(ax, row, call, axis, once)
    elif call.wedged:
        _note_wedge(ax, row, call, min(start + call.wait_sec / axis.scale, axis.right))


def _draw_abandonment(ax: Axes, row: int, call: Any, axis: _EpisodeAxis, once: _LegendOnce) -> None:
    """An ✕ where the bound passed, then the loose worker's zombie tail, noted if it outlives
    the axis."""
    at = (call.start_sec + call.bound_sec) / axis.scale
    ax.plot(
        [at],
        [row],
        "x",
        color="black",
        markersize=9,
        markeredgewidth=2,
        label=once("abandoned at bound"),
    )
    tail = call.zombie_sec / axis.scale if math.isfinite(call.zombie_sec) else math.inf
    ax.barh(
        row,
        min(tail, axis.right - at),
        left=at,
        height=0.3,
        color=_ZOMBIE_COLOR,
        hatch="///",
        alpha=0.6,
        label=once("zombie tail (loose worker)"),
    )
    if at + tail > axis.right:  # the tail outlives the axis: say for how long, above it
        ax.annotate(
            "never returns →"
            if not math.isfinite(call.zombie_sec)
            else f"runs on {duration_text(call.zombie_sec)} →",
            (axis.right, row),
            xytext=(-3, 5),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=7,
        )


def _note_wedge(ax: Axes, row: int, call: Any, end: float) -> None:
    """A bold note at the end of a wedged call's bar: how long it was silent, and that the
    episode ends there."""
    text = (
        f"wedged: silent {duration_text(call.wait_sec)}, episode ends"
        if math.isfinite(call.wait_sec)
        else "wedged: never returns, silent from here on →"
    )
    ax.annotate(
        text,
        (end, row),
        xytext=(-4, 0),
        textcoords="offset points",
        ha="right",
        va="center",
        fontsize=8,
        color="black",
        fontweight="bold",
        bbox=LABEL_BOX,
    )

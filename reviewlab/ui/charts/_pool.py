"""A reviewer pool's slots over time: busy, silent on a tool, idle, from a pool simulation.

:func:`pool_timeline` draws ``result.slots`` row by row, on the recording's slots and wall
clock when the corpus is given, and names the longest silence. See :mod:`reviewlab.ui.charts`
for the conventions every chart follows (``ax=``, no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reviewlab.engines._result import ReplayResult
from reviewlab.recording._schema import Episode
from reviewlab.ui.charts._common import (
    LABEL_BOX,
    clock_origin,
    duration_text,
    figure_and_axes,
    legend_outside,
    policy_label,
    recorded_slots,
    time_scale,
)
from reviewlab.ui.charts._palette import STATE_COLORS

# Slot states are coloured by STATE_COLORS; anything else is drawn grey under its own name.


def pool_timeline(
    result: ReplayResult,
    *,
    episodes: Iterable[Episode] | None = None,
    rows: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Reviewer slots over time: busy, silent on a tool, idle; the longest silence is labelled.

    Needs a pool simulation (``replay(..., engine="twin", slots=N)``), whose
    ``result.slots`` holds ``slot_id, state, start_sec, end_sec, episode_id``.
    ``episodes`` (the recorded corpus) puts the recording's names and clock on
    the chart: with ``rows="recorded"`` (the default when slot names are known)
    each request is drawn on the row of the slot that served it in the
    recording (``reviewer-3``), not the twin's own ``slot-0`` …, and the axis
    shows wall-clock time when arrivals were the recorded ones.
    ``rows="simulated"`` keeps the twin's slots. Labels are dark on a white box,
    readable over every state's colour.
    """
    slots = result.slots
    if slots is None or len(slots) == 0:
        raise ValueError(
            "pool_timeline: the result has no slot timeline; replay with engine='twin', slots=N"
        )
    episodes = list(episodes) if episodes is not None else None
    names = _recorded_names(result, episodes, rows)
    recorded = names is not None
    frame = _slot_rows(slots, names)
    row_ids = sorted(frame["row"].unique())
    row_of = {slot: row for row, slot in enumerate(row_ids)}
    clock = _PoolClock.of(result, episodes, slots)
    figure, ax = figure_and_axes(ax, (10.0, 1.4 + 0.45 * len(row_ids)))
    states = _states_drawn(slots, recorded)
    if recorded:
        ax.set_facecolor(STATE_COLORS["idle"])
    _draw_slot_states(ax, frame, states, row_of, clock)
    _label_longest_silence(ax, result, frame, row_of, clock)
    ax.set_yticks(range(len(row_ids)), row_ids)
    ax.invert_yaxis()
    clock.draw_axis(ax)
    ax.set_ylabel("reviewer slot (as recorded)" if recorded else "reviewer slot")
    ax.set_title(f"Reviewer pool: {slots['slot_id'].nunique()} slots ({policy_label(result)})")
    legend_outside(
        ax,
        [Patch(color=STATE_COLORS.get(s, "#999999")) for s in states],
        [("silent on a tool" if s == "silent" else s) for s in states],
    )
    return figure


def _recorded_names(
    result: ReplayResult, episodes: list[Episode] | None, rows: str | None
) -> Mapping[str, str] | None:
    """The recorded slot of each episode when rows are the recording's slots
    (``rows="recorded"``, the default when the recording names them); None for the twin's."""
    names = recorded_slots(result, episodes)
    rows = rows or ("recorded" if names else "simulated")
    if rows not in ("recorded", "simulated"):
        raise ValueError(f"rows: expected 'recorded' or 'simulated', got {rows!r}")
    if rows == "recorded" and not names:
        raise ValueError(
            "pool_timeline: rows='recorded' needs the recorded slot names: pass episodes="
        )
    return names if rows == "recorded" else None


def _slot_rows(slots: pd.DataFrame, names: Mapping[str, str] | None) -> pd.DataFrame:
    """The slot intervals with the ``row`` each is drawn on: the twin's slot, or with ``names``
    the recorded slot of the episode it served."""
    frame = slots.assign(row=slots["slot_id"].astype(str))
    if names is None:
        return frame
    # Idle intervals belong to the twin's slots; a recorded slot is idle wherever none of
    # its requests runs, which the idle background shows.
    frame = frame[frame["episode_id"].astype(str) != ""]
    return frame.assign(row=frame["episode_id"].astype(str).map(names).fillna("(no slot)"))


def _states_drawn(slots: pd.DataFrame, recorded: bool) -> list[str]:
    """The slot states to draw and list in the legend, known ones in palette order first."""
    states = [s for s in STATE_COLORS if s in set(slots["state"])]
    states += sorted(set(slots["state"]) - set(STATE_COLORS))
    if recorded and "idle" not in states:
        states.append("idle")
    return states


@dataclass(frozen=True)
class _PoolClock:
    """A pool timeline's time axis: the run's span in seconds, and where and how it is drawn:
    on the wall clock from ``origin`` (matplotlib dates) or in seconds since the first request."""

    span: float
    base: float
    scale: float
    unit: str
    origin: datetime | None

    @classmethod
    def of(
        cls, result: ReplayResult, episodes: list[Episode] | None, slots: pd.DataFrame
    ) -> _PoolClock:
        """The clock for ``slots``: the wall clock when the arrivals were the recorded ones."""
        span = float(slots["end_sec"].replace(np.inf, np.nan).max())
        span = span if math.isfinite(span) and span > 0 else 1.0
        origin = clock_origin(result, episodes)
        if origin is not None:
            return cls(span, float(mdates.date2num(origin)), 86_400.0, "", origin)
        scale, unit = time_scale(span)
        return cls(span, 0.0, scale, unit, None)

    def x(self, seconds: float) -> float:
        """Where ``seconds`` since the first request is drawn."""
        return self.base + seconds / self.scale

    def draw_axis(self, ax: Axes) -> None:
        """The x limits, ticks and label: clock times, or seconds in the span's unit."""
        ax.set_xlim(self.base, self.base + self.span / self.scale)
        if self.origin is not None:
            tz = self.origin.tzinfo
            ax.xaxis.set_major_locator(mdates.AutoDateLocator(tz=tz, minticks=4, maxticks=12))
            ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M", tz=tz))
            ax.set_xlabel(
                f"clock time ({self.origin.tzname() or 'UTC'}, {self.origin.date().isoformat()} on)"
            )
        else:
            ax.set_xlabel(f"time since the first request ({self.unit})")


def _draw_slot_states(
    ax: Axes,
    frame: pd.DataFrame,
    states: list[str],
    row_of: Mapping[str, int],
    clock: _PoolClock,
) -> None:
    """Each state's intervals as bars on their rows, state by state (later states on top)."""
    for state in states:
        part = frame[frame["state"] == state]
        color = STATE_COLORS.get(state, "#999999")
        for slot, group in part.groupby("row"):
            bars = [
                (clock.x(start), (min(end, clock.span) - start) / clock.scale)
                for start, end in zip(group["start_sec"], group["end_sec"], strict=True)
            ]
            ax.broken_barh(bars, (row_of[slot] - 0.4, 0.8), facecolors=color, edgecolor="none")


def _label_longest_silence(
    ax: Axes,
    result: ReplayResult,
    frame: pd.DataFrame,
    row_of: Mapping[str, int],
    clock: _PoolClock,
) -> None:
    """Name the longest silence, its length and the tool it waited on, on its bar or beside it."""
    silent = frame[frame["state"] == "silent"]
    if not len(silent):
        return
    span = clock.span
    lengths = (silent["end_sec"] - silent["start_sec"]).to_numpy(dtype=float)
    longest = silent.iloc[int(np.argmax(lengths))]
    start, end = float(longest["start_sec"]), min(float(longest["end_sec"]), span)
    tool = _longest_call_tool(result, str(longest["episode_id"]))
    # A long bar carries its label; a short one has it beside, on the side with more room.
    if end - start >= 0.25 * span:
        at, align = (start + end) / 2, "center"
    elif end <= 0.6 * span:
        at, align = end + 0.01 * span, "left"
    else:
        at, align = start - 0.01 * span, "right"
    length = float(lengths.max())
    on = f" on {tool}" if tool else ""
    ax.annotate(
        f"silent {duration_text(length)}{on}"
        if math.isfinite(length)
        else f"silent{on}, never returns →",
        (clock.x(at), row_of[str(longest["row"])]),
        ha=align,
        va="center",
        fontsize=9,
        fontweight="bold",
        color="black",
        bbox=LABEL_BOX,
    )


def _longest_call_tool(result: ReplayResult, episode_id: str) -> str:
    """The tool of the call the episode waited on longest ('' when it made none)."""
    calls = result.calls[result.calls["episode_id"] == episode_id]
    if calls.empty or "wait_sec" not in calls.columns:
        return ""
    return str(calls.loc[calls["wait_sec"].idxmax(), "tool"])

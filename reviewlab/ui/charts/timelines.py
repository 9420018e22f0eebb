"""Where the time went in one replay: a single episode's calls, and a reviewer pool's slots.

:func:`call_timeline` lays one replayed episode out on its own clock (a
DataFrame); :func:`episode_timeline` draws it; :func:`pool_timeline` draws the
slots of a pool simulation. See :mod:`reviewlab.ui.charts` for the conventions
every chart follows (``ax=``, no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reviewlab.core import metrics
from reviewlab.core.vocab import OUTCOME_WITHHELD, SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED
from reviewlab.engines.result import ReplayResult
from reviewlab.recording.schema import Episode
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
from reviewlab.ui.charts.palette import METRIC_COLORS, OUTCOME_COLORS, STATE_COLORS

__all__ = ["STATE_COLORS", "call_timeline", "episode_timeline", "pool_timeline"]

# Slot states of a pool timeline (STATE_COLORS); anything else is drawn grey under its own name.
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
    ``result.calls``, whose :data:`~reviewlab.core.metrics.CALL_TIMING_COLUMNS`
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
    # The axis spans the episode itself (its sends, its waits, its bounds), in the unit that
    # span needs: a zombie that runs on for hours after the episode moved on would squeeze every
    # call into the first pixel, so its tail runs to the right edge and says how long it lasts.
    # A call that never returns (an unbounded replay of a wedge) runs to the edge too.
    ends = list(sends["end_sec"].to_numpy(dtype=float)) + list(
        (frame["start_sec"] + frame["wait_sec"]).to_numpy(dtype=float)
    )
    finite_bound_end = frame["start_sec"] + frame["bound_sec"].fillna(0.0)
    ends += list(finite_bound_end.to_numpy(dtype=float))
    ends = [v for v in ends if math.isfinite(v)]
    span = max(ends) if ends else 1.0
    span = span if span > 0 else 1.0
    scale, unit = time_scale(span)
    right = span * 1.08 / scale
    sliver = 0.004 * right  # the narrowest bar drawn, so a 30 ms call still shows

    labels = ["model"]
    for send in sends.itertuples():
        if not math.isfinite(send.start_sec):
            continue  # never reached: the episode still waits on a call that never returns
        ax.barh(
            0,
            (send.end_sec - send.start_sec) / scale,
            left=send.start_sec / scale,
            height=0.6,
            color=_SEND_COLOR,
            edgecolor="none",
        )
    shown: set[str] = set()

    def once(label: str) -> str | None:
        """A legend label the first time it is drawn, then none (one legend entry per kind)."""
        if label in shown:
            return None
        shown.add(label)
        return label

    for row, call in enumerate(frame.itertuples(), start=1):
        labels.append(f"r{call.round} {call.tool}")
        start = min(call.start_sec / scale, right)
        if call.outcome == OUTCOME_WITHHELD:
            ax.plot(
                [start],
                [row],
                "o",
                color=_OUTCOME_COLORS[OUTCOME_WITHHELD],
                label=once("withheld (never ran)"),
            )
            continue
        if not math.isnan(call.bound_sec):
            ax.barh(
                row,
                call.bound_sec / scale,
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
            min(max(call.wait_sec / scale, sliver), right - start),
            left=start,
            height=0.55,
            color=_OUTCOME_COLORS.get(call.outcome, "#8c8c8c"),
            label=once(str(call.outcome)),
        )
        if call.abandoned:
            at = (call.start_sec + call.bound_sec) / scale
            ax.plot(
                [at],
                [row],
                "x",
                color="black",
                markersize=9,
                markeredgewidth=2,
                label=once("abandoned at bound"),
            )
            tail = call.zombie_sec / scale if math.isfinite(call.zombie_sec) else math.inf
            ax.barh(
                row,
                min(tail, right - at),
                left=at,
                height=0.3,
                color=_ZOMBIE_COLOR,
                hatch="///",
                alpha=0.6,
                label=once("zombie tail (loose worker)"),
            )
            if at + tail > right:  # the tail outlives the axis: say for how long, above it
                ax.annotate(
                    "never returns →"
                    if not math.isfinite(call.zombie_sec)
                    else f"runs on {duration_text(call.zombie_sec)} →",
                    (right, row),
                    xytext=(-3, 5),
                    textcoords="offset points",
                    ha="right",
                    va="bottom",
                    fontsize=7,
                )
        elif call.wedged:
            text = (
                f"wedged: silent {duration_text(call.wait_sec)}, episode ends"
                if math.isfinite(call.wait_sec)
                else "wedged: never returns, silent from here on →"
            )
            ax.annotate(
                text,
                (min(start + call.wait_sec / scale, right), row),
                xytext=(-4, 0),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize=8,
                color="black",
                fontweight="bold",
                bbox=LABEL_BOX,
            )
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, right)
    ax.set_xlabel(f"time since the request arrived ({unit})")
    ax.set_title(f"Episode {episode_id}: calls against their bounds ({result.engine})")
    handles, names = ax.get_legend_handles_labels()
    if len(sends):
        handles.insert(0, Patch(color=_SEND_COLOR))
        names.insert(0, "model send")
    legend_outside(ax, handles, names)
    return figure


# -- a reviewer pool ----------------------------------------------------------


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
    names = recorded_slots(result, episodes)
    rows = rows or ("recorded" if names else "simulated")
    if rows not in ("recorded", "simulated"):
        raise ValueError(f"rows: expected 'recorded' or 'simulated', got {rows!r}")
    frame = slots.assign(row=slots["slot_id"].astype(str))
    if rows == "recorded":
        if not names:
            raise ValueError(
                "pool_timeline: rows='recorded' needs the recorded slot names: pass episodes="
            )
        # Idle intervals belong to the twin's slots; a recorded slot is idle wherever none of
        # its requests runs, which the idle background shows.
        frame = frame[frame["episode_id"].astype(str) != ""]
        frame = frame.assign(row=frame["episode_id"].astype(str).map(names).fillna("(no slot)"))
    row_ids = sorted(frame["row"].unique())
    row_of = {slot: row for row, slot in enumerate(row_ids)}
    span = float(slots["end_sec"].replace(np.inf, np.nan).max())
    span = span if math.isfinite(span) and span > 0 else 1.0
    origin = clock_origin(result, episodes)
    if origin is not None:
        base, scale = float(mdates.date2num(origin)), 86_400.0
    else:
        base, (scale, unit) = 0.0, time_scale(span)
    figure, ax = figure_and_axes(ax, (10.0, 1.4 + 0.45 * len(row_ids)))
    states = [s for s in STATE_COLORS if s in set(slots["state"])]
    states += sorted(set(slots["state"]) - set(STATE_COLORS))
    if rows == "recorded" and "idle" not in states:
        states.append("idle")
    if rows == "recorded":
        ax.set_facecolor(STATE_COLORS["idle"])
    for state in states:
        part = frame[frame["state"] == state]
        color = STATE_COLORS.get(state, "#999999")
        for slot, group in part.groupby("row"):
            bars = [
                (base + start / scale, (min(end, span) - start) / scale)
                for start, end in zip(group["start_sec"], group["end_sec"], strict=True)
            ]
            ax.broken_barh(bars, (row_of[slot] - 0.4, 0.8), facecolors=color, edgecolor="none")
    silent = frame[frame["state"] == "silent"]
    if len(silent):
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
            (base + at / scale, row_of[str(longest["row"])]),
            ha=align,
            va="center",
            fontsize=9,
            fontweight="bold",
            color="black",
            bbox=LABEL_BOX,
        )
    ax.set_yticks(range(len(row_ids)), row_ids)
    ax.invert_yaxis()
    ax.set_xlim(base, base + span / scale)
    if origin is not None:
        tz = origin.tzinfo
        ax.xaxis.set_major_locator(mdates.AutoDateLocator(tz=tz, minticks=4, maxticks=12))
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M", tz=tz))
        ax.set_xlabel(f"clock time ({origin.tzname() or 'UTC'}, {origin.date().isoformat()} on)")
    else:
        ax.set_xlabel(f"time since the first request ({unit})")
    ax.set_ylabel("reviewer slot (as recorded)" if rows == "recorded" else "reviewer slot")
    ax.set_title(f"Reviewer pool: {slots['slot_id'].nunique()} slots ({policy_label(result)})")
    legend_outside(
        ax,
        [Patch(color=STATE_COLORS.get(s, "#999999")) for s in states],
        [("silent on a tool" if s == "silent" else s) for s in states],
    )
    return figure


def _longest_call_tool(result: ReplayResult, episode_id: str) -> str:
    """The tool of the call the episode waited on longest ('' when it made none)."""
    calls = result.calls[result.calls["episode_id"] == episode_id]
    if calls.empty or "wait_sec" not in calls.columns:
        return ""
    return str(calls.loc[calls["wait_sec"].idxmax(), "tool"])

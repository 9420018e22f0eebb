"""Charts over replay, sweep and metrics results (matplotlib, Agg, no global pyplot state).

Every function draws one chart and returns its :class:`~matplotlib.figure.Figure`.
Pass ``ax=`` to draw into an existing Axes (the figure returned is then
``ax.figure``); without it a fresh figure is made with :class:`Figure`
directly, never through ``pyplot``, so nothing is shown, nothing leaks into a
global figure registry, and the charts are safe in threads, tests and servers.

The charts compute nothing of their own beyond layout: rates, fronts, survival
estimates and per-call timelines come from :mod:`reviewlab.metrics`,
:mod:`reviewlab.replay`, :mod:`reviewlab.sweep` and friends.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from reviewlab.policy import SupportsTimeoutFor, TimeoutPolicy
from reviewlab.recording.schema import Episode
from reviewlab.replay import ReplayResult

__all__ = [
    "STATE_COLORS",
    "call_timeline",
    "episode_timeline",
    "pareto_front",
    "LiveRates",
    "per_tool_rates",
    "pool_timeline",
    "rates_vs_timeout",
    "survival_curves",
]

# Slot states of a pool timeline; anything else is drawn grey under its own name.
STATE_COLORS = {"busy": "#4c72b0", "silent": "#dd3333", "idle": "#e5e5e5", "zombie": "#e69f00"}
_OUTCOME_COLORS = {"executed": "#4c9f70", "error": "#c44e52", "refused": "#8c8c8c", "withheld": "#8c8c8c"}
_SEND_COLOR = "#8172b2"
_ZOMBIE_COLOR = "#e69f00"


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    """The Axes to draw on and its figure: ``ax`` itself, or a fresh Agg figure."""
    if ax is not None:
        figure = ax.figure
        assert isinstance(figure, Figure)
        return figure, ax
    figure = Figure(figsize=figsize, layout="constrained")
    return figure, figure.add_subplot()


def _duration_text(seconds: float) -> str:
    """``26160`` → ``"7 h 16 min"``; short spans in seconds."""
    if not math.isfinite(seconds):
        return "never returns"
    if seconds < 120:
        return f"{seconds:.3g} s"
    minutes = int(round(seconds / 60))
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def _time_scale(span_sec: float) -> tuple[float, str]:
    """Divisor and unit label for a time axis spanning ``span_sec``."""
    if span_sec >= 3 * 3600:
        return 3600.0, "h"
    if span_sec >= 180:
        return 60.0, "min"
    return 1.0, "s"


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
    """Lay one replayed episode out on its own clock (0 = its request arrived), as the replay ran it.

    Returns ``(calls, sends)``. ``calls`` is the episode's rows of
    ``result.calls`` plus ``start_sec`` (when the call was dispatched),
    ``wait_sec`` (how long the episode waited on it: the bound for an
    abandoned call, nothing for a withheld one, else its duration),
    ``abandoned`` and ``wedged`` flags. ``sends`` has one row per round:
    ``round, start_sec, end_sec`` of the model send. The replay rules: each
    round is its send, then its calls in order, from the moment a reviewer
    slot took the request (after ``queue_wait_sec`` in a pool run); the
    model-send times come from the recorded ``episode`` (pass it, or the
    corpus); without it sends take no time.
    """
    calls = result.calls[result.calls["episode_id"] == episode_id].sort_values("call_index")
    if calls.empty and episode_id not in set(result.episodes["episode_id"]):
        raise KeyError(f"episode {episode_id!r} is not in this replay result")
    recorded = _find_episode(episode, episode_id)
    n_rounds = len(recorded.rounds) if recorded is not None else int(calls["round"].max() if len(calls) else 0)
    send_sec = [r.send_sec for r in recorded.rounds] if recorded is not None else [0.0] * n_rounds
    effective = [c.returned_after_sec for c in recorded.calls] if recorded is not None else []
    abandoned = calls["source_gap"].eq("native_tool_abandoned").to_numpy()
    wedged = calls["source_gap"].eq("native_tool_wedged").to_numpy()
    starts, waits, send_rows = [], [], []
    # In a pool run the episode starts once a slot is free: its calls come after the queue wait.
    queued = result.episodes.loc[result.episodes["episode_id"] == episode_id]
    t = float(queued["queue_wait_sec"].iloc[0]) if "queue_wait_sec" in queued.columns and len(queued) else 0.0
    rounds = calls["round"].to_numpy()
    position = 0
    for number in range(1, n_rounds + 1):
        send_rows.append((number, t, t + send_sec[number - 1]))
        t += send_sec[number - 1]
        while position < len(calls) and rounds[position] == number:
            row = calls.iloc[position]
            if row["outcome"] == "withheld":
                wait = 0.0
            elif abandoned[position]:
                wait = float(row["bound_sec"])
            else:
                index = int(row["call_index"])
                late = effective[index] if index < len(effective) else None
                wait = float(late) if late is not None else float(row["duration_sec"])
            starts.append(t)
            waits.append(wait)
            t += wait
            position += 1
    frame = calls.assign(start_sec=starts, wait_sec=waits, abandoned=abandoned, wedged=wedged)
    sends = pd.DataFrame(send_rows, columns=["round", "start_sec", "end_sec"])
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
    figure, ax = _axes(ax, (9.0, 1.2 + 0.32 * (len(frame) + 1)))
    ends = [float(sends["end_sec"].max()) if len(sends) else 0.0]
    ends += list((frame["start_sec"] + frame["wait_sec"]).to_numpy(dtype=float))
    finite_bound_end = frame["start_sec"] + frame["bound_sec"].fillna(0.0)
    zombie_end = frame["start_sec"] + frame["bound_sec"].fillna(0.0) + frame["zombie_sec"]
    ends += list(finite_bound_end.to_numpy(dtype=float))
    ends += [v for v in zombie_end.to_numpy(dtype=float) if math.isfinite(v)]
    span = max(ends) if ends else 1.0
    span = span if span > 0 else 1.0
    scale, unit = _time_scale(span)
    right = span * 1.08 / scale

    labels = ["model"]
    for send in sends.itertuples():
        ax.barh(0, (send.end_sec - send.start_sec) / scale, left=send.start_sec / scale,
                height=0.6, color=_SEND_COLOR, edgecolor="none")
    shown: set[str] = set()

    def once(label: str) -> str | None:
        """A legend label the first time it is drawn, then none (one legend entry per kind)."""
        if label in shown:
            return None
        shown.add(label)
        return label

    for row, call in enumerate(frame.itertuples(), start=1):
        labels.append(f"r{call.round} {call.tool}")
        start = call.start_sec / scale
        if call.outcome == "withheld":
            ax.plot([start], [row], "o", color=_OUTCOME_COLORS["withheld"], label=once("withheld (never ran)"))
            continue
        if not math.isnan(call.bound_sec):
            ax.barh(row, call.bound_sec / scale, left=start, height=0.8, fill=False,
                    edgecolor="#555555", linestyle="--", linewidth=0.8, label=once("bound"))
        ax.barh(row, call.wait_sec / scale, left=start, height=0.55,
                color=_OUTCOME_COLORS.get(call.outcome, "#8c8c8c"), label=once(str(call.outcome)))
        if call.abandoned:
            at = (call.start_sec + call.bound_sec) / scale
            ax.plot([at], [row], "x", color="black", markersize=9, markeredgewidth=2,
                    label=once("abandoned at bound"))
            tail = call.zombie_sec / scale if math.isfinite(call.zombie_sec) else right - at
            ax.barh(row, tail, left=at, height=0.3, color=_ZOMBIE_COLOR, hatch="///", alpha=0.6,
                    label=once("zombie tail (loose worker)"))
            if not math.isfinite(call.zombie_sec):
                ax.annotate("never returns →", (right, row), ha="right", va="bottom", fontsize=8)
        elif call.wedged:
            ax.annotate(f"wedged: silent {_duration_text(call.wait_sec)}, episode ends",
                        (start + call.wait_sec / scale, row), xytext=(-4, 0), textcoords="offset points",
                        ha="right", va="center", fontsize=8, color="white", fontweight="bold")
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlim(0, right)
    ax.set_xlabel(f"time since the request arrived ({unit})")
    ax.set_title(f"Episode {episode_id}: calls against their bounds ({result.engine})")
    handles, names = ax.get_legend_handles_labels()
    if len(sends):
        handles.insert(0, Patch(color=_SEND_COLOR))
        names.insert(0, "model send")
    ax.legend(handles, names, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return figure


# -- a reviewer pool ----------------------------------------------------------


def pool_timeline(result: ReplayResult, *, ax: Axes | None = None) -> Figure:
    """Reviewer slots over time: busy, silent on a tool, idle; the longest silence is labelled.

    Needs a pool simulation (``replay(..., engine="twin", slots=N)``), whose
    ``result.slots`` holds ``slot_id, state, start_sec, end_sec, episode_id``.
    """
    slots = result.slots
    if slots is None or len(slots) == 0:
        raise ValueError("pool_timeline: the result has no slot timeline; replay with engine='twin', slots=N")
    slot_ids = sorted(slots["slot_id"].astype(str).unique())
    row_of = {slot: row for row, slot in enumerate(slot_ids)}
    span = float(slots["end_sec"].replace(np.inf, np.nan).max())
    span = span if math.isfinite(span) and span > 0 else 1.0
    scale, unit = _time_scale(span)
    figure, ax = _axes(ax, (10.0, 1.4 + 0.45 * len(slot_ids)))
    states = [s for s in STATE_COLORS if s in set(slots["state"])]
    states += sorted(set(slots["state"]) - set(STATE_COLORS))
    for state in states:
        part = slots[slots["state"] == state]
        color = STATE_COLORS.get(state, "#999999")
        for slot, group in part.groupby(part["slot_id"].astype(str)):
            bars = [(start / scale, (min(end, span) - start) / scale)
                    for start, end in zip(group["start_sec"], group["end_sec"], strict=True)]
            ax.broken_barh(bars, (row_of[slot] - 0.4, 0.8), facecolors=color, edgecolor="none")
    silent = slots[slots["state"] == "silent"]
    if len(silent):
        lengths = (silent["end_sec"] - silent["start_sec"]).to_numpy(dtype=float)
        longest = silent.iloc[int(np.argmax(lengths))]
        mid = (longest["start_sec"] + min(longest["end_sec"], span)) / 2 / scale
        ax.annotate(f"silent {_duration_text(float(lengths.max()))}", (mid, row_of[str(longest["slot_id"])]),
                    ha="center", va="center", fontsize=9, fontweight="bold", color="white")
    ax.set_yticks(range(len(slot_ids)), slot_ids)
    ax.invert_yaxis()
    ax.set_xlim(0, span / scale)
    ax.set_xlabel(f"time since the first request ({unit})")
    ax.set_ylabel("reviewer slot")
    ax.set_title(f"Reviewer pool: {len(slot_ids)} slots ({_policy_label(result)})")
    ax.legend([Patch(color=STATE_COLORS.get(s, "#999999")) for s in states],
              [("silent on a tool" if s == "silent" else s) for s in states],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return figure


def per_tool_rates(
    result: ReplayResult,
    *,
    ax: Axes | None = None,
    figsize: tuple[float, float] = (7.0, 3.6),
) -> Figure:
    """Per tool, the abandoned-call rate and the coverage-loss rate of one replay, as paired bars (%).

    The figures are :meth:`ReplayResult.per_tool`; each bar is labelled with its value.
    """
    figure, ax = _axes(ax, figsize)
    LiveRates(ax).draw(result)
    return figure


_RATE_TOPS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 120.0)


class LiveRates:
    """The :func:`per_tool_rates` chart on one Axes, redrawn in place for live widgets.

    The first :meth:`draw` makes the bars; later draws with the same tools only
    move bar heights, labels, the y range and the title, which renders several
    times faster than a new figure (matplotlib caches the text layout of
    artists it has drawn before). A different tool set redraws from scratch.
    """

    _WIDTH = 0.38

    def __init__(self, ax: Axes) -> None:
        self.ax = ax
        self._tools: list[str] | None = None
        self._bars: list[Any] = []
        self._labels: list[list[Any]] = []

    def draw(self, result: ReplayResult) -> None:
        """Show ``result``'s per-tool rates."""
        table = result.per_tool()
        tools = [str(tool) for tool in table["tool"]]
        series = [100 * table["abandoned_call_rate"].to_numpy(dtype=float),
                  100 * table["coverage_loss_rate"].to_numpy(dtype=float)]
        ax = self.ax
        if tools != self._tools:
            ax.clear()
            x = np.arange(len(tools))
            self._bars = [
                ax.bar(x - self._WIDTH / 2, series[0], self._WIDTH, color="#c44e52", label="abandoned calls"),
                ax.bar(x + self._WIDTH / 2, series[1], self._WIDTH, color="#4c72b0", label="coverage loss"),
            ]
            self._labels = [list(ax.bar_label(bars, fmt="%.1f", fontsize=7, padding=1)) for bars in self._bars]
            ax.set_xticks(x, tools)
            ax.set_ylabel("rate (%)")
            ax.legend(fontsize=8, loc="upper right")
            self._tools = tools
        else:
            for bars, labels, values in zip(self._bars, self._labels, series, strict=True):
                for bar, label, value in zip(bars, labels, values, strict=True):
                    bar.set_height(value)
                    label.xy = (bar.get_x() + bar.get_width() / 2, value)
                    label.set_text(f"{value:.1f}")
        top = float(max(series[0].max(initial=0.0), series[1].max(initial=0.0)))
        # The y range steps through a few fixed tops, so the tick labels (costly text) repeat between draws.
        ax.set_ylim(0, next(limit for limit in _RATE_TOPS if top * 1.15 <= limit))
        ax.set_title(f"Per-tool rates under {_policy_label(result)}")


def _policy_label(result: ReplayResult) -> str:
    if result.narrowing is not None and result.narrowing.mode == "unbounded":
        return "unbounded (pre-fix)"
    name = getattr(result.policy, "name", None) or "policy"
    return f"{name}, {result.narrowing.label}" if result.narrowing is not None else name


# -- sweeps ---------------------------------------------------------------------


def rates_vs_timeout(
    curves: pd.DataFrame,
    *,
    tools: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Abandoned-call rate (solid) and coverage-loss rate (dashed) against each tool's timeout.

    ``curves`` is long: one row per (tool, timeout) with ``tool, timeout_sec,
    abandoned_call_rate, coverage_loss_rate`` (as :func:`reviewlab.sweep.tool_curves`
    returns). ``tools`` picks and orders the curves (default: all).
    """
    missing = {"tool", "timeout_sec", "abandoned_call_rate", "coverage_loss_rate"} - set(curves.columns)
    if missing:
        raise ValueError(f"rates_vs_timeout: curves lack column(s) {', '.join(sorted(missing))}")
    chosen = list(tools) if tools is not None else sorted(curves["tool"].unique())
    unknown = sorted(set(chosen) - set(curves["tool"]))
    if unknown:
        raise ValueError(f"rates_vs_timeout: no curve for tool(s) {', '.join(unknown)}")
    figure, ax = _axes(ax, (8.0, 4.8))
    colors = [f"C{i}" for i in range(10)]
    for index, tool in enumerate(chosen):
        part = curves[curves["tool"] == tool].sort_values("timeout_sec")
        color = colors[index % len(colors)]
        ax.plot(part["timeout_sec"], 100 * part["abandoned_call_rate"], "-o", color=color,
                markersize=3, label=f"{tool}: abandoned calls")
        ax.plot(part["timeout_sec"], 100 * part["coverage_loss_rate"], "--", color=color,
                label=f"{tool}: coverage loss")
    ax.set_xscale("log")
    ax.set_xlabel("per-tool timeout (s, log scale)")
    ax.set_ylabel("rate (%)")
    ax.set_title("Abandoned calls and lost coverage against the per-tool timeout")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return figure


def pareto_front(
    points: pd.DataFrame,
    *,
    front: pd.Series | np.ndarray | None = None,
    named: Mapping[str, Mapping[str, Any] | ReplayResult] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """p95 episode wall time against coverage loss over a sweep, the Pareto front highlighted.

    ``points`` has ``coverage_loss_rate`` and ``wall_p95_sec`` per policy point
    (a :func:`reviewlab.sweep.sweep` frame). ``front`` is a boolean mask of
    the non-dominated points (default: the frame's ``pareto`` column, else
    :func:`reviewlab.sweep.pareto` of the frame). ``named`` marks policies by name:
    a summary dict or a :class:`ReplayResult` each.
    """
    missing = {"coverage_loss_rate", "wall_p95_sec"} - set(points.columns)
    if missing:
        raise ValueError(f"pareto_front: points lack column(s) {', '.join(sorted(missing))}")
    if front is None:
        from reviewlab.sweep import pareto

        front = points["pareto"] if "pareto" in points.columns else pareto(points)
    mask = np.asarray(front, dtype=bool)
    if mask.shape != (len(points),):
        raise ValueError(f"pareto_front: front has {mask.size} entries for {len(points)} points")
    figure, ax = _axes(ax, (7.5, 5.0))
    loss = 100 * points["coverage_loss_rate"].to_numpy(dtype=float)
    wall = points["wall_p95_sec"].to_numpy(dtype=float)
    ax.scatter(loss[~mask], wall[~mask], s=12, color="#9aa7b8", label="policy point")
    order = np.argsort(loss[mask])
    ax.plot(loss[mask][order], wall[mask][order], "-o", color="#c44e52", markersize=5,
            label="Pareto front")
    markers = "*DPXsv^<>"
    for index, (name, summary) in enumerate((named or {}).items()):
        values = summary.summary if isinstance(summary, ReplayResult) else summary
        ax.plot([100 * values["coverage_loss_rate"]], [values["wall_p95_sec"]],
                markers[index % len(markers)], markersize=11, markeredgecolor="black",
                color=f"C{index + 2}", label=name, linestyle="none")
        ax.annotate(name, (100 * values["coverage_loss_rate"], values["wall_p95_sec"]),
                    xytext=(6, 6), textcoords="offset points", fontsize=8)
    ax.set_xlabel("coverage loss (% of requested read lines not credited)")
    ax.set_ylabel("p95 episode wall time (s)")
    ax.set_title("Wall time against lost coverage over the sweep")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return figure


# -- durations --------------------------------------------------------------------


def survival_curves(
    episodes: Sequence[Episode],
    policy: SupportsTimeoutFor | None = None,
    *,
    tools: Sequence[str] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Per-tool share of calls still running after t seconds (Kaplan–Meier), each tool's bound drawn.

    The estimate is the shared censoring-aware one
    (:func:`reviewlab.twin.impute.estimates_by_tool`): a call that never
    returned counts as still running until it was last seen, and is marked
    with a ``+`` on its tool's curve there. ``policy`` (default
    :meth:`TimeoutPolicy.ouroboros`) gives each tool's bound without a deadline,
    drawn as a dotted line in the tool's colour; its legend entry says the
    share of the tool's calls that bound would abandon.
    """
    from reviewlab.twin.impute import censored_calls, estimates_by_tool

    episodes = list(episodes)
    per_tool, _ = estimates_by_tool(episodes)
    if not per_tool:
        raise ValueError("survival_curves: the episodes hold no calls")
    chosen = list(tools) if tools is not None else sorted(per_tool)
    unknown = sorted(set(chosen) - set(per_tool))
    if unknown:
        raise ValueError(f"survival_curves: no calls of tool(s) {', '.join(unknown)}")
    policy = policy if policy is not None else TimeoutPolicy.ouroboros()
    censored_at: dict[str, list[float]] = {}
    for _, _, call in censored_calls(episodes):
        censored_at.setdefault(call.tool, []).append(call.duration_sec)
    figure, ax = _axes(ax, (8.0, 4.8))
    # On a log axis the curves start (at 1.0) half-way below the shortest positive duration seen.
    positive = [t for tool in chosen for t in per_tool[tool].event_times if t > 0]
    start = min(positive, default=1.0) / 2
    for index, tool in enumerate(chosen):
        estimate = per_tool[tool]
        color = f"C{index % 10}"
        times = np.maximum(np.concatenate([[start], estimate.event_times]), start)
        survival = np.concatenate([[1.0], estimate.survival_after])
        ax.step(times, survival, where="post", color=color,
                label=f"{tool} ({estimate.observations} calls, {estimate.observations - estimate.events} censored)")
        marks = censored_at.get(tool, [])
        if marks:
            ax.plot(marks, [estimate.survival(t) for t in marks], "+", color=color, markersize=9,
                    linestyle="none")
        bound = float(policy.timeout_for(None, tool))
        ax.axvline(bound, color=color, linestyle=":", linewidth=1.5,
                   label=f"{tool} bound {bound:g} s: abandons {100 * estimate.survival(bound):.2g}%")
    ax.set_xscale("log")
    ax.set_xlim(left=start)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("call duration (s, log scale)")
    ax.set_ylabel("share of calls still running")
    ax.set_title("Per-tool duration survival (Kaplan–Meier; + = censored call)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return figure

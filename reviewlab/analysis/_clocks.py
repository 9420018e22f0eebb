"""Which clock ended each call of a corpus: reviewlab's, a host's, the TypeScript SDK's.

:func:`clock_table` replays a corpus in the twin under a policy (and a preset's host ceilings)
and gives per call every clock that applied and the one that ended it (:data:`CLOCK_COLUMNS`),
the valid results dropped (a call that came back after its abandonment: how late), and with
``typescript_sdk=(timeout, cap)`` when the SDK's clocks would end it and how far past the cap
(:data:`SDK_COLUMNS`). :func:`clock_summary` counts them. docs/mcp.md, "Which clock fired".
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Final

import numpy as np
import pandas as pd

from reviewlab.core._caps import on_progress_fire_sec
from reviewlab.core._clocks import ended_by
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import (
    DEFAULT_CENSORING,
    OUTCOMES_ANSWERED,
    SOURCE_GAP_ABANDONED,
    CensoringMode,
)
from reviewlab.engines._corpus import CorpusSource, open_corpus
from reviewlab.engines._replay import replay

CLOCK_COLUMNS: Final = (
    "episode_id",
    "call_index",
    "tool",
    "duration_sec",
    "completed",
    "tool_timeout_sec",
    "deadline_sec",
    "idle_sec",
    "total_cap_sec",
    "host_sec",
    "ended_by",
    "end_sec",
    "recorded_ended_by",
    "dropped_late_sec",
    "late_result_chars",
)
"""The columns of :func:`clock_table` (docs/mcp.md, "Which clock fired")."""
SDK_COLUMNS: Final = ("sdk_end_sec", "sdk_ended_by", "sdk_overrun_sec")
"""Appended by ``typescript_sdk=``: the TypeScript SDK's end of a call that never answered."""


def clock_table(
    corpus: CorpusSource,
    policy: Policy | None = None,
    *,
    preset: str | None = None,
    typescript_sdk: tuple[float, float] | None = None,
    censored: CensoringMode = DEFAULT_CENSORING,
) -> pd.DataFrame:
    """Per call, every clock that applied and which one ended it (see the module docstring).

    ``policy`` defaults to :meth:`Policy.ouroboros`; ``preset`` names a host in
    ``reviewlab presets`` whose ceilings apply on top; ``typescript_sdk`` is ``(timeout_sec,
    max_total_sec)``.
    """
    spine = policy if policy is not None else Policy.ouroboros()
    opened = open_corpus(corpus)
    episodes = opened.episodes(reason="clocks: each call's arguments and recorded facts")
    ours = _keyed(replay(episodes, spine, engine="twin", censored=censored).calls)
    host = None
    if preset is not None:
        from reviewlab.analysis._presets import preset_policy
        from reviewlab.core._presets import find_preset

        tools = sorted({call.tool for episode in episodes for call in episode.calls})
        host_policy = preset_policy(find_preset(preset), tools)
        host = _keyed(replay(episodes, host_policy, engine="twin", censored=censored).calls)
    rows = []
    for episode in episodes:
        for index, call in enumerate(episode.calls):
            row = ours[(episode.id, index)]
            host_row = host[(episode.id, index)] if host is not None else None
            rows.append(_row(episode, index, call, row, host_row, spine, typescript_sdk))
    columns = list(CLOCK_COLUMNS) + (list(SDK_COLUMNS) if typescript_sdk is not None else [])
    return pd.DataFrame(rows, columns=columns)


def ended_by_column(calls: pd.DataFrame) -> pd.Series:
    """Which clock ended each call of any engine's replay call frame: ``returned`` for a call
    that ran and came back, the bound's term for an abandoned one, ``None`` for a call that
    never ran (refused, withheld, skipped)."""
    ran = calls["outcome"].isin(OUTCOMES_ANSWERED).to_numpy()
    abandoned = calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy()
    values = [
        ended_by(bool(gone), str(by)) if took else None
        for took, gone, by in zip(ran, abandoned, calls["bound_by"], strict=True)
    ]
    return pd.Series(values, index=calls.index, name="ended_by", dtype=object)


def _keyed(calls: pd.DataFrame) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["episode_id"], int(r["call_index"])): r for r in calls.to_dict("records")}


def _row(
    episode: Any,
    index: int,
    call: Any,
    row: dict[str, Any],
    host_row: dict[str, Any] | None,
    policy: Policy,
    typescript_sdk: tuple[float, float] | None,
) -> dict[str, Any]:
    ran = row["outcome"] in OUTCOMES_ANSWERED
    abandoned = row["source_gap"] == SOURCE_GAP_ABANDONED
    remaining = (
        max(0.0, episode.deadline_sec - row["start_sec"])
        if episode.deadline_sec is not None
        else math.nan
    )
    bounded = ran and row["bound_by"] != "unbounded"
    left = None if math.isnan(remaining) else remaining
    tool_sec = cap = None
    if bounded:
        tool_sec = policy.timeout_for(None, call.tool, call.args, remaining_sec=left)
        cap = policy.bound(None, call.tool, call.args, remaining_sec=left).sec
    returned_at = call.duration_sec if call.completed else math.inf
    end, by = (row["wait_sec"], ended_by(abandoned, row["bound_by"])) if ran else (math.nan, None)
    host_sec = math.nan
    if host_row is not None and ran:
        host_sec = host_row["bound_sec"]
        host_abandoned = host_row["source_gap"] == SOURCE_GAP_ABANDONED
        if host_abandoned and host_row["wait_sec"] < end:
            end, by = host_row["wait_sec"], "host_ceiling"
    dropped = math.nan
    if call.late_result_sec is not None:
        dropped = call.late_result_sec  # the live run's own abandonment, answered late
    elif abandoned and call.completed and call.status == "ok" and returned_at > end:
        dropped = returned_at - end  # the replay abandoned a call the recording saw answer
    out = {
        "episode_id": episode.id,
        "call_index": index,
        "tool": call.tool,
        "duration_sec": call.duration_sec,
        "completed": call.completed,
        "tool_timeout_sec": math.nan if tool_sec is None else float(tool_sec),
        "deadline_sec": remaining,
        "idle_sec": _nan(policy.idle_for(call.tool) if bounded else None),
        "total_cap_sec": _nan(cap),
        "host_sec": host_sec,
        "ended_by": by,
        "end_sec": end,
        "recorded_ended_by": call.ended_by,
        "dropped_late_sec": dropped,
        "late_result_chars": call.late_result_chars,
    }
    if typescript_sdk is not None:
        timeout, max_total = typescript_sdk
        sdk_end, why = on_progress_fire_sec(call.progress_sec or [], timeout, max_total)
        out["sdk_end_sec"] = sdk_end
        out["sdk_ended_by"] = (
            "returned" if returned_at <= sdk_end else ("total_cap" if why == "cap" else "idle")
        )
        out["sdk_overrun_sec"] = max(0.0, min(sdk_end, returned_at) - max_total)
    return out


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def clock_summary(table: pd.DataFrame) -> dict[str, Any]:
    """Counts of :func:`clock_table`: calls ended by each clock, valid results dropped (how
    many, median and max how late), and with SDK columns, how many calls the SDK's clocks end
    past their cap and by how much at most."""
    counts = Counter(v for v in table["ended_by"] if isinstance(v, str))
    late = table["dropped_late_sec"].to_numpy(dtype=float)
    late = late[~np.isnan(late)]
    summary: dict[str, Any] = {
        "calls": len(table),
        "ended_by": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
        "valid_results_dropped": int(late.size),
        "dropped_late_median_sec": float(np.median(late)) if late.size else math.nan,
        "dropped_late_max_sec": float(late.max()) if late.size else math.nan,
    }
    if "sdk_overrun_sec" in table:
        over = table["sdk_overrun_sec"].to_numpy(dtype=float)
        summary["sdk_overruns"] = int((over > 0).sum())
        summary["sdk_overrun_max_sec"] = float(over.max()) if over.size else 0.0
    return summary

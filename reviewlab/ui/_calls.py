"""Calls as a person reads them: live receipts, a replay's calls with what was recorded, per tool.

A replay rewrites a censored call under ``censored="observed"`` or ``"impute"`` (it returns,
so its frame row says ``completed``). What the *recording* saw is another fact, and a table
must not confuse the two: :func:`calls_table` replaces ``completed`` and ``duration_sec`` with
one ``recorded`` column — ``returned after 0.031 s``, or ``never returned; replayed as
returning at 26,160 s`` (``observed``), ``… replayed as never returning: waits forever``
(``wedge``), ``… replayed as returning at 812 s (a seeded draw)`` (``impute``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from reviewlab.ui._numbers import seconds_text
from reviewlab.ui._tables import Table, as_table, policy_rows

RECEIPT_COLUMNS = (
    "round",
    "tool",
    "outcome",
    "duration_sec",
    "bound_sec",
    "bound_by",
    "source_gap",
    "result_chars",
    "opened_path",
    "start_line",
    "end_line",
)

CALLS_TABLE_COLUMNS = (
    "round",
    "tool",
    "recorded",
    "bound_sec",
    "bound_by",
    "outcome",
    "source_gap",
)
"""The columns :func:`calls_table` shows by default (after ``policy`` when several runs)."""

LIVE_ASSUMPTIONS = "a live run: real threads on the real clock, nothing censored or replayed"


def receipts_table(
    receipts: Iterable[Any], *, assumptions: Mapping[str, Any] | str | None = None
) -> Table:
    """Receipts (``ToolReceipt`` objects or their dicts) as a table with
    :data:`RECEIPT_COLUMNS`; a live run's assumptions unless ``assumptions`` says otherwise."""
    rows = [
        receipt.to_dict() if hasattr(receipt, "to_dict") else dict(receipt) for receipt in receipts
    ]
    frame = pd.DataFrame(rows)
    present = [column for column in RECEIPT_COLUMNS if column in frame.columns]
    frame = frame[present] if present else frame
    if "source_gap" in frame.columns:
        frame["source_gap"] = frame["source_gap"].fillna("")
    frame = frame.astype(object).where(frame.notna(), None)
    for column in ("start_line", "end_line", "result_chars", "round"):
        if column in frame.columns:  # counts, not 1.0
            frame[column] = [None if v is None else int(v) for v in frame[column]]
    return as_table(frame, assumptions=assumptions or LIVE_ASSUMPTIONS)


def recorded_text(completed: bool, recorded_sec: float, censored: str, replayed_sec: float) -> str:
    """What the recording saw of one call, and, for a call it never saw return, what the replay
    made of it under ``censored``."""
    if completed:
        return f"returned after {seconds_text(recorded_sec)}"
    seen = f"never returned (watched {seconds_text(recorded_sec)})"
    if censored == "wedge":
        return f"{seen}; replayed as never returning: waits forever"
    if censored == "impute":
        return f"{seen}; replayed as returning at {seconds_text(replayed_sec)} (a seeded draw)"
    return f"{seen}; replayed as returning at {seconds_text(replayed_sec)}"


def _recorded_calls(episodes: Iterable[Any], wanted: set[str]) -> dict[tuple[str, int, int], Any]:
    found = {}
    for episode in episodes:
        if episode.id not in wanted:
            continue
        index = 0  # call_index counts the episode's calls in dispatch order
        for number, round_ in enumerate(episode.rounds, start=1):
            for call in round_.calls:
                found[(episode.id, number, index)] = call
                index += 1
    return found


def calls_table(
    runs: Mapping[str, Any],
    *,
    episodes: Iterable[Any] | None = None,
    episode_id: str | None = None,
    tool: str | None = None,
    columns: Sequence[str] = CALLS_TABLE_COLUMNS,
    title: str = "",
) -> Table:
    """The calls of one or more replays (``label → ReplayResult``), one block of rows per run
    (a ``policy`` column when there are several), with the ``recorded`` column.

    ``episodes`` (the recorded corpus) tells which calls the recording never saw return; without
    it only ``censored="wedge"`` replays can (their frames keep ``completed``). ``episode_id``
    and ``tool`` pick rows. The runs must share their assumptions (one table never mixes two).
    """
    from reviewlab.ui._tables import common_assumptions

    assumptions = common_assumptions(
        {label: run.assumptions for label, run in runs.items()}, what="calls_table"
    )
    censored = str(assumptions.get("censored", "wedge"))
    parts = []
    for label, run in runs.items():
        calls = run.calls
        if episode_id is not None:
            calls = calls[calls["episode_id"] == episode_id]
        if tool is not None:
            calls = calls[calls["tool"] == tool]
        parts.append(calls.assign(policy=label))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    recorded: dict[tuple[str, int, int], Any] = {}
    if episodes is not None and len(frame):
        recorded = _recorded_calls(episodes, set(frame["episode_id"].astype(str)))
    elif censored != "wedge" and len(frame):
        raise ValueError(
            f"calls_table: under censored={censored} a replayed call returns, so which calls the "
            "recording never saw return is known only from the recording: pass episodes="
        )
    texts = []
    for row in frame.itertuples(index=False):
        call = recorded.get((str(row.episode_id), int(row.round), int(row.call_index)))
        completed = bool(row.completed) if call is None else call.completed
        seen = float(row.duration_sec) if call is None else call.duration_sec
        texts.append(recorded_text(completed, seen, censored, float(row.duration_sec)))
    frame = frame.assign(recorded=texts)
    shown = [c for c in columns if c in frame.columns]
    if len(runs) > 1:
        shown = ["policy", *shown]
    if "source_gap" in shown:
        frame["source_gap"] = frame["source_gap"].fillna("")
    return as_table(frame[shown], title=title, assumptions=assumptions)


def per_tool_table(result: Any, *, title: str = "") -> Table:
    """:meth:`ReplayResult.per_tool` with the replay's assumptions, and a column per part its
    policy sets: ``hedged_calls`` (hedges), ``withheld_calls`` (a breaker), ``idle_bound_calls``
    (idle timeouts)."""
    from reviewlab.core._vocab import SOURCE_GAP_WITHHELD

    table = result.per_tool().copy()
    parts = policy_rows(result)
    if not parts:  # the breakdown alone: a vectorized replay builds no call frame for it
        return as_table(table, title=title, assumptions=result.assumptions)
    calls = result.calls
    by_tool = calls.groupby("tool", sort=False)
    if "hedges" in parts:
        hedged = by_tool["hedged"].sum() if "hedged" in calls.columns else pd.Series(dtype=int)
        table["hedged_calls"] = [int(hedged.get(t, 0)) for t in table["tool"]]
    if "withheld_calls" in parts:
        withheld = (calls["source_gap"] == SOURCE_GAP_WITHHELD).groupby(calls["tool"]).sum()
        table["withheld_calls"] = [int(withheld.get(t, 0)) for t in table["tool"]]
    if "idle_bound_calls" in parts:
        idle = (calls["bound_by"] == "idle").groupby(calls["tool"]).sum()
        table["idle_bound_calls"] = [int(idle.get(t, 0)) for t in table["tool"]]
    return as_table(table, title=title, assumptions=result.assumptions)

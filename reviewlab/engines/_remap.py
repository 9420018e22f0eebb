"""The rewritten replay's frames in recorded numbering: what the fixed point hands back.

Lifecycle: once the plans stop changing, :func:`remap` takes the last pass's frames (one row
per rewritten call), renumbers them as the recording numbers its calls, puts back a row for
every skipped or withheld call (never started: outcome ``withheld``), and assembles the
result named as a replay of the policy under the rewrite's assumptions.

Invariants: every episode's rows are in dispatch order (by round, recorded calls by index,
then re-issued copies); a row that never started "starts" with the next issued row of its
episode, or at its end (:func:`skipped_start`, shared by every engine's frames).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core import _metrics as metrics
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import OUTCOME_WITHHELD, SOURCE_GAP_SKIPPED, SOURCE_GAP_WITHHELD
from reviewlab.engines._censoring import effective_observation
from reviewlab.engines._result import EpisodeArrays, ReplayResult, assemble
from reviewlab.engines._rewrite import Origin, Plan
from reviewlab.engines._withholding import CallKey
from reviewlab.recording._schema import Call, Episode


def skipped_start(starts: np.ndarray, dispatched: np.ndarray, wall_sec: float) -> np.ndarray:
    """When each row of one episode "starts", for rows that were never dispatched.

    Rows are in dispatch order; a row that was not dispatched starts when the
    next dispatched row starts, or at ``wall_sec`` (the episode's end) if none.
    Dispatched rows keep their own start. Shared by every engine's frames.
    """
    out = np.asarray(starts, dtype=float).copy()
    following = wall_sec
    for row in range(out.size - 1, -1, -1):
        if dispatched[row]:
            following = out[row]
        else:
            out[row] = following
    return out


def remap(
    result: ReplayResult,
    corpus: Sequence[Episode],
    origins: Mapping[str, list[Origin]],
    plans: Mapping[str, Plan],
    held_at: Mapping[tuple[str, CallKey], float],
    *,
    policy: Policy,
    assumptions: Mapping[str, Any],
) -> ReplayResult:
    """The rewritten replay's frames in recorded numbering, with the skipped and withheld calls
    put back (named as a replay of ``policy``, under the rewrite's ``assumptions``: censoring,
    seed and reaction, over the inner run's)."""
    # Hedged replays carry a ``hedged`` column too (a call never started was not hedged).
    extra_columns = [name for name in metrics.CALL_HEDGE_COLUMNS if name in result.calls]
    columns = list(metrics.ENGINE_CALL_COLUMNS) + extra_columns
    calls = result.calls[columns]
    if plans:
        walls = dict(zip(result.episodes["episode_id"], result.episodes["wall_sec"], strict=True))
        calls = _put_back(calls, corpus, origins, plans, held_at, walls)
    calls = calls[columns].reset_index(drop=True)
    episodes = result.episodes
    pool = None
    if "arrival_sec" in episodes:
        from reviewlab.engines._result import PoolFrames

        pool = PoolFrames(
            episodes["arrival_sec"].to_numpy(),
            episodes["start_sec"].to_numpy(),
            result.slots if result.slots is not None else pd.DataFrame(),
        )
    return assemble(
        calls,
        EpisodeArrays(
            episodes["episode_id"].to_numpy(),
            episodes["slot_id"].to_numpy(),
            episodes["wall_sec"].to_numpy(),
            episodes["max_silence_sec"].to_numpy(),
        ),
        peak_loose_workers=int(result.summary["peak_loose_workers"]),
        engine=result.engine,
        policy=policy,
        assumptions={**result.assumptions, **assumptions},
        pool=pool,
    )


def _unrun_row(
    episode: Episode, call: Call, round_no: int, index: int, gap: str, requested: int, start: float
) -> dict[str, Any]:
    """The row of a call that never started: skipped by the model or withheld by the breaker."""
    duration, completed = effective_observation(call)
    return {
        "episode_id": episode.id,
        "round": round_no,
        "call_index": index,
        "tool": call.tool,
        "duration_sec": duration,
        "completed": completed,
        "bound_sec": math.nan,
        "bound_by": "unbounded",
        "outcome": OUTCOME_WITHHELD,
        "source_gap": gap,
        "requested_lines": requested,
        "credited_lines": 0,
        "zombie_sec": 0.0,
        "start_sec": start,
        "wait_sec": 0.0,
    }


def _put_back(
    calls: pd.DataFrame,
    corpus: Sequence[Episode],
    origins: Mapping[str, list[Origin]],
    plans: Mapping[str, Plan],
    held_at: Mapping[tuple[str, CallKey], float],
    walls: Mapping[str, float],
) -> pd.DataFrame:
    """The rewritten replay's rows (in corpus order, one per rewritten call) in recorded
    numbering, with the skipped and withheld rows added, every episode in dispatch order."""
    index_col = calls["call_index"].to_numpy(dtype=np.int64).copy()
    round_col = calls["round"].to_numpy(dtype=np.int64).copy()
    extra: list[dict[str, Any]] = []
    position_of: dict[str, int] = {}
    recorded_n: dict[str, int] = {}
    skipping: list[str] = []
    row = 0
    for position, episode in enumerate(corpus):
        mine = origins[episode.id]
        plan = plans.get(episode.id)
        position_of[episode.id] = position
        if plan is not None:
            recorded = list(episode.calls)
            recorded_n[episode.id] = n = len(recorded)
            round_of = [number for number, rnd in enumerate(episode.rounds, 1) for _ in rnd.calls]
            # Re-issued copies are numbered n, n + 1, ... in dispatch order, withheld ones too.
            again = [i for number in sorted(plan.reissue_after) for i in plan.reissue_after[number]]
            copy_number = {index: n + k for k, index in enumerate(again)}
            for offset, origin in enumerate(mine):
                index = origin.index
                index_col[row + offset] = copy_number[index] if origin.reissue else index
                round_col[row + offset] = round_of[index]
            for index in sorted(plan.skipped):
                call = recorded[index]
                extra.append(
                    _unrun_row(
                        episode,
                        call,
                        round_of[index],
                        index,
                        SOURCE_GAP_SKIPPED,
                        call.requested_lines,
                        math.nan,
                    )
                )
            for index, reissue in sorted(plan.withheld):
                call = recorded[index]
                extra.append(
                    _unrun_row(
                        episode,
                        call,
                        round_of[index],
                        copy_number[index] if reissue else index,
                        SOURCE_GAP_WITHHELD,
                        0 if reissue else call.requested_lines,
                        held_at[(episode.id, (index, reissue))],
                    )
                )
            if plan.skipped:
                skipping.append(episode.id)
        row += len(mine)
    if row != len(calls):
        raise RuntimeError(f"reaction: {len(calls)} replayed rows for {row} rewritten calls")
    calls = calls.assign(call_index=index_col, round=round_col)
    if extra:
        added = pd.DataFrame(extra)
        for name in calls.columns.difference(added.columns):
            added[name] = np.zeros(len(added), dtype=calls[name].dtype)  # e.g. hedged: False
        calls = pd.concat(
            [calls, added[list(calls.columns)].astype(calls.dtypes.to_dict())], ignore_index=True
        )
    # Dispatch order within an episode: by round, recorded calls by index, then re-issues.
    ids = calls["episode_id"].to_numpy()
    positions = np.fromiter((position_of[i] for i in ids), dtype=np.int64, count=ids.size)
    counts = np.fromiter((recorded_n.get(i, 0) for i in ids), dtype=np.int64, count=ids.size)
    numbers = calls["call_index"].to_numpy(dtype=np.int64)
    rounds = calls["round"].to_numpy(dtype=np.int64)
    copies = (numbers >= counts) & np.isin(ids, list(recorded_n))
    width = 4 * (counts + 1) + 4
    sequence = rounds * width + np.where(copies, 2 * (counts + 1) + numbers, numbers)
    calls = calls.iloc[np.lexsort((sequence, positions))].reset_index(drop=True)
    if skipping:
        # A skipped row "starts" with the next issued row of its episode (rows are contiguous).
        starts = calls["start_sec"].to_numpy(dtype=float).copy()
        issued = calls["source_gap"].ne(SOURCE_GAP_SKIPPED).to_numpy()
        ordered = np.sort(positions)
        for episode_id in skipping:
            at = position_of[episode_id]
            first, stop = np.searchsorted(ordered, at), np.searchsorted(ordered, at, "right")
            starts[first:stop] = skipped_start(
                starts[first:stop], issued[first:stop], walls[episode_id]
            )
        calls["start_sec"] = starts
    return calls

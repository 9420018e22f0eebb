"""The model's reaction after an abandonment: a swappable assumption of every replay.

A replay abandons calls the recording saw return, so what the model does next is an
assumption, named in ``ReplayResult.assumptions``: ``as_recorded`` (the later rounds replay
unchanged), ``reissue`` (abandoned calls re-issued once after their round) or ``skip_target``
(no later read of a path whose call was abandoned); docs/semantics.md, "What a replay
assumes". The twin and the vectorized engine replay a reaction, a breaker and hedges through
one fixed point over a rewritten corpus (:func:`react`): a :class:`Plan` per episode, the
corpus rewritten and replayed as recorded, the abandonments giving the next plan, until it
stops changing.

Invariants: a call's fate depends only on earlier calls of its episode (or slot), so each pass
settles one more decision, capped at :data:`MAX_PASSES` plus three per recorded call; hedges
are planned once from the corpus as recorded and carried by origin. The fixed point, the rows
and the combinations: docs/architecture.md, "Reactions and the rewrite fixed point".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from reviewlab.core import _metrics as metrics
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import (
    OUTCOME_WITHHELD,
    REACTIONS,
    SOURCE_GAP_ABANDONED,
    SOURCE_GAP_SKIPPED,
    SOURCE_GAP_WITHHELD,
    Reaction,
)
from reviewlab.engines._censoring import (
    HedgePlan,
    completion_times,
    effective_observation,
    hedge_plan,
)
from reviewlab.engines._result import EpisodeArrays, ReplayResult, assemble
from reviewlab.engines._withholding import CallKey, episode_walks, withheld_calls
from reviewlab.recording._schema import Call, Episode, Round

MAX_PASSES = 64
"""Rewrite passes :func:`react` makes, beyond three per recorded call, before it gives up."""

Run = Callable[[list[Episode], HedgePlan | None], ReplayResult]
"""An engine as :func:`react` drives it: an ``as_recorded``, ``censored="wedge"`` replay of a
rewritten corpus, with the replay's hedge plan carried to its calls (``None``: no hedges)."""


def check_reaction(reaction: Any) -> Reaction:
    """``reaction`` if it names a reaction model, else a ``ValueError`` naming the parameter."""
    if reaction not in REACTIONS:
        raise ParameterError(
            "reaction", f"expected one of {', '.join(REACTIONS)}, got {reaction!r}"
        )
    return reaction  # type: ignore[no-any-return]


def needs_rewrite(policy: Policy, reaction: str) -> bool:
    """Whether a replay of ``policy`` under ``reaction`` must run the rewrite fixed point
    (:func:`react`): a reaction other than ``as_recorded``, or a breaker. Engines replaying
    ``as_recorded`` on their own (a sweep's fast path) would miss what it changes."""
    return reaction != "as_recorded" or policy.breaker is not None


@dataclass(frozen=True)
class Plan:
    """What a reaction changes in one episode, by recorded call index (0-based, episode order)."""

    reissue_after: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    """Recorded round index (0-based) → the recorded calls re-issued right after that round."""
    skipped: frozenset[int] = frozenset()
    """Recorded calls the model does not issue."""
    withheld: frozenset[CallKey] = frozenset()
    """Calls the breaker withholds: ``(recorded index, is a re-issued copy)``."""

    def __bool__(self) -> bool:
        return bool(self.reissue_after) or bool(self.skipped) or bool(self.withheld)


@dataclass(frozen=True)
class _Origin:
    """Where a call of a rewritten episode comes from."""

    index: int
    """Its recorded call index."""
    reissue: bool
    """Whether it is a re-issued copy."""


def settle_censored(episodes: Sequence[Episode], censored: str, seed: int = 0) -> list[Episode]:
    """The corpus with every censored call's return settled by the censoring assumption.

    Under ``"wedge"`` the corpus is returned as it is. Otherwise each
    still-censored call becomes a completed call of the duration
    :func:`~reviewlab.engines._censoring.completion_times` gives it; a replay of
    the result under ``"wedge"`` equals the replay of ``episodes`` under
    ``censored`` (the engines apply the same times the same way).
    """
    return _settled(episodes, completion_times(episodes, censored, seed))


def _settled(
    episodes: Sequence[Episode], times: Mapping[tuple[str, int], float] | None
) -> list[Episode]:
    """:func:`settle_censored` with the completion times already drawn."""
    if not times:
        return list(episodes)
    out = []
    for episode in episodes:
        index = 0
        rounds = []
        changed = False
        for rnd in episode.rounds:
            calls = []
            for call in rnd.calls:
                duration, completed = effective_observation(call)
                if not completed and (episode.id, index) in times:
                    call = call.model_copy(
                        update={
                            "duration_sec": times[(episode.id, index)],
                            "completed": True,
                            "returned_after_sec": None,
                        }
                    )
                    changed = True
                calls.append(call)
                index += 1
            rounds.append(rnd.model_copy(update={"calls": calls}) if changed else rnd)
        out.append(episode.model_copy(update={"rounds": rounds}) if changed else episode)
    return out


def rewrite(episode: Episode, plan: Plan) -> tuple[Episode, list[_Origin]]:
    """``episode`` as the model would have run it under ``plan``, and the origin of each call."""
    if not plan:
        return episode, [_Origin(i, False) for i in range(len(episode.calls))]
    recorded = list(episode.calls)
    origins: list[_Origin] = []
    rounds: list[Round] = []
    index = 0
    for number, rnd in enumerate(episode.rounds):
        kept = []
        for call in rnd.calls:
            if index not in plan.skipped and (index, False) not in plan.withheld:
                kept.append(call)
                origins.append(_Origin(index, False))
            index += 1
        rounds.append(Round(send_sec=rnd.send_sec, calls=kept))
        again = plan.reissue_after.get(number, ())
        if again:
            sent = [i for i in again if (i, True) not in plan.withheld]
            copies = [_reissued(recorded[i]) for i in sent]
            rounds.append(Round(send_sec=rnd.send_sec, calls=copies))
            origins.extend(_Origin(i, True) for i in sent)
    return episode.model_copy(update={"rounds": rounds}), origins


def _issued_rounds(episode: Episode, plan: Plan) -> list[tuple[float, list[tuple[CallKey, str]]]]:
    """The rounds of ``rewrite(episode, plan)`` with the withheld calls put back (for the
    breaker's walk): per round its ``send_sec`` and its issued calls ``(key, tool)``."""
    recorded = list(episode.calls)
    out: list[tuple[float, list[tuple[CallKey, str]]]] = []
    index = 0
    for number, rnd in enumerate(episode.rounds):
        issued = []
        for call in rnd.calls:
            if index not in plan.skipped:
                issued.append(((index, False), call.tool))
            index += 1
        out.append((rnd.send_sec, issued))
        again = plan.reissue_after.get(number, ())
        if again:
            out.append((rnd.send_sec, [((i, True), recorded[i].tool) for i in again]))
    return out


def _reissued(call: Call) -> Call:
    # No read lines of its own: the original already counts them as asked for.
    return call.model_copy(update={"extent": None})


def next_plan(
    episode: Episode, origins: Sequence[_Origin], abandoned: Sequence[bool], reaction: str
) -> Plan:
    """The plan that the abandonments of a replay of ``rewrite(episode, plan)`` call for.

    ``abandoned`` is per call of the rewritten episode (its call order).
    """
    fate = {
        origin.index: bool(gone)
        for origin, gone in zip(origins, abandoned, strict=True)
        if not origin.reissue
    }
    round_of = [number for number, rnd in enumerate(episode.rounds) for _ in rnd.calls]
    if reaction == "reissue":
        after: dict[int, list[int]] = {}
        for index, gone in sorted(fate.items()):
            if gone:
                after.setdefault(round_of[index], []).append(index)
        return Plan(reissue_after={r: tuple(v) for r, v in after.items()})
    if reaction == "skip_target":
        given_up: set[str] = set()
        skipped: set[int] = set()
        index = 0
        for rnd in episode.rounds:
            abandoned_here: set[str] = set()
            for call in rnd.calls:
                path = call.args.get("path")
                if call.tool == "read_file" and isinstance(path, str) and path in given_up:
                    skipped.add(index)
                elif fate.get(index) and isinstance(path, str):
                    abandoned_here.add(path)
                index += 1
            given_up |= abandoned_here  # only LATER rounds react to this round's abandonments
        return Plan(skipped=frozenset(skipped))
    return Plan()


def react(
    run: Run,
    episodes: Sequence[Episode],
    reaction: str,
    *,
    censored: str,
    seed: int,
    policy: Policy,
) -> ReplayResult:
    """Replay ``episodes`` with ``run`` under ``reaction`` and the breaker and hedges of
    ``policy`` (the policy the result names; ``run`` replays it without its breaker).

    ``run`` gets the corpus rewritten by the current plans and the replay's one hedge plan
    carried to it; see the module docstring for the fixed point, its bound and the frames.
    """
    check_reaction(reaction)
    if not isinstance(policy, Policy):
        raise TypeError(f"policy: expected a Policy (Policy.of), got {policy!r}")
    breaker = policy.breaker
    completion = completion_times(episodes, censored, seed)
    corpus = _settled(episodes, completion)
    hedges = hedge_plan(episodes, policy, completion, seed)  # once, from the corpus as recorded
    plans: dict[str, Plan] = {}
    held_at: dict[tuple[str, CallKey], float] = {}
    passes = MAX_PASSES + 3 * sum(len(episode.calls) for episode in corpus)
    for _ in range(passes):
        rewritten, origins = [], {}
        for episode in corpus:
            copy, origin = rewrite(episode, plans.get(episode.id, Plan()))
            rewritten.append(copy)
            origins[episode.id] = origin
        result = run(rewritten, None if hedges is None else _carried(hedges, corpus, origins))
        gone = result.calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy()
        ids = result.calls["episode_id"].to_numpy()
        bounds = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if ids.size else np.empty(0, int)
        per_episode = dict(
            zip(ids[bounds].tolist(), np.split(gone, bounds[1:]) if ids.size else [], strict=True)
        )
        fresh = {}
        for episode in corpus:
            plan = next_plan(
                episode,
                origins[episode.id],
                per_episode.get(episode.id, np.zeros(0, bool)).tolist(),
                reaction,
            )
            fresh[episode.id] = plan
        if breaker is not None:
            walks = episode_walks(
                result,
                corpus,
                {key: [(o.index, o.reissue) for o in value] for key, value in origins.items()},
                {e.id: _issued_rounds(e, fresh.get(e.id, Plan())) for e in corpus},
            )
            withheld, held_at = withheld_calls(breaker, walks)
            for episode_id, keys in withheld.items():
                fresh[episode_id] = replace(fresh[episode_id], withheld=keys)
        fresh = {episode_id: plan for episode_id, plan in fresh.items() if plan}
        if fresh == plans:
            return _remap(
                result,
                corpus,
                origins,
                plans,
                held_at,
                policy=policy,
                assumptions={"censored": censored, "seed": seed, "reaction": reaction},
            )
        plans = fresh
    raise RuntimeError(
        f"reaction {reaction!r}: the replay did not settle after {passes} rewrite passes"
    )


def _carried(
    hedges: HedgePlan, corpus: Sequence[Episode], origins: Mapping[str, list[_Origin]]
) -> HedgePlan:
    """The replay's hedge plan carried to the calls of the rewritten corpus, by origin: a
    recorded call keeps its row's plan, a re-issued copy never hedges."""
    rows: list[int] = []
    may_hedge: list[bool] = []
    row = 0
    for episode in corpus:
        for origin in origins[episode.id]:
            rows.append(row + origin.index)
            may_hedge.append(not origin.reissue)
        row += len(episode.calls)
    return hedges.carried(np.array(rows, dtype=np.intp), np.array(may_hedge, dtype=bool))


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


def _remap(
    result: ReplayResult,
    corpus: Sequence[Episode],
    origins: Mapping[str, list[_Origin]],
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
    origins: Mapping[str, list[_Origin]],
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

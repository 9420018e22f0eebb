"""Which calls a policy's breaker withholds in a replay (the twin and the vectorized engine).

A replay engine settles an episode's calls without a model in the loop, so it cannot ask a
:class:`~reviewlab.core._breaker.BreakerState` before each call as the live round loop does.
Both replay engines run the breaker through the rewrite fixed point of
:mod:`reviewlab.engines._reaction`: a replay gives every dispatched call's fate and timing;
:func:`withheld_calls` walks each episode's calls in dispatch order with the live loop's
``BreakerState`` and says which it withholds; the corpus is rewritten without them and
replayed, until the set stops changing.

Invariant: the walk mirrors the live loop (model rounds, the episode's clock, slot order), and
a call's decision depends only on earlier calls, so each pass settles one more call. The walk
in full: docs/architecture.md, "The breaker in a replay".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from reviewlab.core._breaker import BreakerRule, BreakerState
from reviewlab.core._vocab import OUTCOMES_ANSWERED, SOURCE_GAP_ABANDONED
from reviewlab.engines._result import ReplayResult
from reviewlab.engines._shared import arrival_times
from reviewlab.recording._schema import Episode

CallKey = tuple[int, bool]
"""A call of a rewritten episode: its recorded index and whether it is a re-issued copy."""
Rounds = list[tuple[float, list[tuple[CallKey, str]]]]
"""An episode's rounds for the walk: per round its ``send_sec`` and its issued calls."""


@dataclass
class EpisodeWalk:
    """One episode as the breaker walks it: its issued calls and what the last replay said."""

    episode_id: str
    slot: str
    start_at: float
    """When it started on the corpus clock (arrival, plus the queue wait of a pool run)."""
    arrival_at: float
    """When it arrived on the corpus clock; the frames' ``start_sec`` counts from here."""
    rounds: Rounds
    """Per round of the rewritten episode (withheld calls included, skipped calls not): its
    ``send_sec`` and its issued calls as ``(key, tool)`` in dispatch order."""
    ran: dict[CallKey, tuple[bool, float, float]] = field(default_factory=dict)
    """Per call dispatched in the last replay: ``(abandoned, start_sec, wait_sec)``."""


def episode_walks(
    result: ReplayResult,
    corpus: Sequence[Episode],
    dispatched: Mapping[str, Sequence[CallKey]],
    issued: Mapping[str, Rounds],
) -> list[EpisodeWalk]:
    """Each episode of ``corpus`` as the breaker walks it.

    ``result`` is the replay of the last rewrite, ``dispatched`` the key of each of its call
    rows per episode (in row order), ``issued`` the rounds of the next rewrite with the withheld
    calls put back (:attr:`EpisodeWalk.rounds`). Times come from the frames: arrival and start
    per episode (a pool run's own, else the recorded arrivals), ``start_sec`` and ``wait_sec``
    per call. A pool run's ``slot_id`` is the simulated slot.
    """
    frame = result.episodes
    if "arrival_sec" in frame:
        arrival = frame["arrival_sec"].to_numpy(dtype=float)
        start = frame["start_sec"].to_numpy(dtype=float)
    else:
        arrival = start = arrival_times(list(corpus))
    order = {episode_id: position for position, episode_id in enumerate(frame["episode_id"])}
    slots = [str(slot) for slot in frame["slot_id"]]
    calls = result.calls
    gone = calls["source_gap"].eq(SOURCE_GAP_ABANDONED).to_numpy()
    ran_rows = calls["outcome"].isin(OUTCOMES_ANSWERED).to_numpy()
    starts = calls["start_sec"].to_numpy(dtype=float)
    waits = calls["wait_sec"].to_numpy(dtype=float)
    ids = calls["episode_id"].to_numpy()
    heads = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if ids.size else np.empty(0, int)
    first_row = {ids[head]: int(head) for head in heads}
    walks = []
    for episode in corpus:
        row = first_row.get(episode.id, 0)
        ran: dict[CallKey, tuple[bool, float, float]] = {}
        for offset, key in enumerate(dispatched[episode.id]):
            if ran_rows[row + offset]:
                ran[key] = (
                    bool(gone[row + offset]),
                    float(starts[row + offset]),
                    float(waits[row + offset]),
                )
        position = order[episode.id]
        walks.append(
            EpisodeWalk(
                episode.id,
                slots[position],
                float(start[position]),
                float(arrival[position]),
                issued[episode.id],
                ran,
            )
        )
    return walks


def withheld_calls(
    rule: BreakerRule, walks: Sequence[EpisodeWalk]
) -> tuple[dict[str, frozenset[CallKey]], dict[tuple[str, CallKey], float]]:
    """The calls ``rule`` withholds, per episode id, and when each was withheld (``start_sec``:
    seconds from its episode's arrival). See the module docstring for the walk."""
    chains: dict[object, list[int]] = {}
    for position, walk in enumerate(walks):
        key: object = (
            ("slot", walk.slot) if rule.scope == "slot" and walk.slot else ("episode", position)
        )
        chains.setdefault(key, []).append(position)
    withheld: dict[str, frozenset[CallKey]] = {}
    times: dict[tuple[str, CallKey], float] = {}
    for positions in chains.values():
        state = BreakerState(rule)
        for position in sorted(positions, key=lambda p: (walks[p].start_at, p)):
            walk = walks[position]
            held, held_at = _walk(state, walk)
            if held:
                withheld[walk.episode_id] = frozenset(held)
                times.update({(walk.episode_id, k): t for k, t in held_at.items()})
    return withheld, times


def _walk(state: BreakerState, walk: EpisodeWalk) -> tuple[set[CallKey], dict[CallKey, float]]:
    """One episode through ``state``: the calls it withholds and their ``start_sec``."""
    state.start_episode()
    held: set[CallKey] = set()
    held_at: dict[CallKey, float] = {}
    clock = walk.start_at - walk.arrival_at  # seconds from arrival, as the frames count
    sends = 0
    for send_sec, calls in walk.rounds:
        clock += send_sec
        if not calls:
            continue  # merged into the next send
        sends += 1
        for key, tool in calls:
            if state.withheld(tool, sends, walk.arrival_at + clock):
                held.add(key)
                held_at[key] = clock
                continue
            fate = walk.ran.get(key)
            if fate is None:
                continue  # withheld last pass: no fate yet (see the module docstring)
            abandoned, start_sec, wait_sec = fate
            clock = start_sec + wait_sec
            state.record(tool, abandoned, sends, walk.arrival_at + clock)
    state.end_episode(sends + 1)
    return held, held_at

"""The twin's episode: one SimPy process per recorded episode, on virtual time.

Lifecycle of an episode process: *arriving* (a timeout until its arrival) →
*queued* (waiting for a reviewer slot, pool runs only) → *running* its rounds
→ *done* (row stored, slot released). A round is one model send (a timeout of
the recorded ``send_sec``) followed by its calls in order.

Lifecycle of a call (as in the real executor): *pending* → *running* → one of
*returned* / *raised* (inside the bound) or *abandoned* (the bound passed first).
A call's fate is decided at its virtual dispatch time by the shared core:
:func:`~reviewlab.policy.resolve_bound` (through :class:`~reviewlab.twin.bounds.BoundResolver`)
with ``remaining_sec`` read on the virtual clock, :func:`~reviewlab.receipts.abandons`,
and the episode's :class:`~reviewlab.receipts.Crediting`. Without a worker pool
nothing else in the simulation can change that fate, so no call is raced
against a timer: the process computes the wait, ``min(duration, bound)``, and
moves its own clock ``t``. It yields to SimPy only where it meets the shared
world — its arrival when it must queue for a reviewer slot, each dispatch to a
shared worker-thread pool, and its end (releasing the slot) — with one timeout
that brings ``env.now`` exactly to ``t``. Between those points no other process
can observe or change anything the episode depends on, so coalescing the waits
changes no outcome; it only saves events (a twin that races every call against
a timeout with ``AnyOf`` is an order of magnitude slower).

The rules are those of the briefing's replay semantics, which the vectorized
and real engines reproduce. In particular ``t`` advances by exactly the
briefing's additions (``t += send_sec``, ``t += wait``), so the figures are
bit-identical to the vectorized engine's.

Invariants: one call row per recorded call, in call order; an episode's
``Crediting`` notes an abandonment only after that call's own credit is
computed; under the pre-fix ``unbounded`` narrowing a censored call silences
the episode for its observed ``duration_sec`` and ends it (later calls are
``withheld``, never started).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

import simpy

from reviewlab.receipts import SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED, Crediting, Outcome, abandons
from reviewlab.recording.schema import Episode
from reviewlab.twin.bounds import BoundResolver
from reviewlab.twin.impute import effective_observation

__all__ = ["EpisodeRun", "Simulation", "episode_process", "sync_to"]

EXECUTED = str(Outcome.EXECUTED)
ERROR = str(Outcome.ERROR)
WITHHELD = str(Outcome.WITHHELD)
_NAN = math.nan
_INF = math.inf


@dataclass(slots=True)
class EpisodeRun:
    """What one simulated episode produced: call rows (``CALL_COLUMNS`` order) and its episode figures."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    slot_id: str = ""
    start_sec: float = 0.0
    end_sec: float = 0.0
    max_silence_sec: float = 0.0


@dataclass
class Simulation:
    """Shared state of one simulation run: the environment, the bound resolver and what is collected."""

    env: simpy.Environment
    resolver: BoundResolver
    runs: list[EpisodeRun]
    imputed: Mapping[tuple[str, int], float] | None = None
    """Completion times of still-censored calls under ``censored="impute"``."""
    loose_starts: list[float] = field(default_factory=list)
    loose_ends: list[float] = field(default_factory=list)
    workers: Any = None
    """A :class:`~reviewlab.twin.pool.WorkerPool`, or ``None`` for unlimited threads."""
    slots: Any = None
    """A :class:`~reviewlab.twin.pool.SlotPool` when reviewer slots are simulated."""
    timeline: Any = None
    """A :class:`~reviewlab.twin.pool.SlotTimeline` when reviewer slots are simulated."""


def sync_to(env: simpy.Environment, at_sec: float) -> simpy.Timeout:
    """A timeout that fires with ``env.now == at_sec`` exactly (SimPy adds a delay to ``now``;
    ``at - now`` may round, so the delay is nudged until the sum lands on ``at_sec``)."""
    now = env.now
    delay = at_sec - now
    while delay > 0 and now + delay > at_sec:
        delay = math.nextafter(delay, -math.inf)
    while now + delay < at_sec:
        delay = math.nextafter(delay, math.inf)
    return env.timeout(max(delay, 0.0))


def _withheld(episode_id: str, round_no: int, index: int, call: Any, duration: float, completed: bool,
              requested: int) -> tuple[Any, ...]:
    return (episode_id, round_no, index, call.tool, duration, completed, _NAN,
            "unbounded", WITHHELD, "", requested, 0, 0.0)


def episode_process(
    sim: Simulation, position: int, episode: Episode, arrival_sec: float
) -> Generator[simpy.Event, Any, None]:
    """The SimPy process of one episode (see the module docstring for its lifecycle)."""
    env = sim.env
    run = sim.runs[position]
    slots = sim.slots
    workers = sim.workers
    timeline = sim.timeline
    imputed = sim.imputed
    t = arrival_sec
    if slots is not None:
        if t > env.now:
            yield sync_to(env, t)
        run.slot_id = yield slots.acquire()
        t = env.now
    else:
        run.slot_id = episode.slot
    run.start_sec = t
    deadline_at = None if episode.deadline_sec is None else arrival_sec + episode.deadline_sec
    bound_for = sim.resolver.bound
    rows = run.rows
    crediting = Crediting()
    credited_lines = crediting.credited_lines
    episode_id = episode.id
    slot_id = run.slot_id
    max_silence = 0.0
    ended = False
    index = 0
    for round_no, rnd in enumerate(episode.rounds, 1):
        if ended:
            for call in rnd.calls:
                duration, completed = effective_observation(call)
                rows.append(_withheld(episode_id, round_no, index, call, duration, completed,
                                      call.requested_lines))
                index += 1
            continue
        send_sec = rnd.send_sec
        if timeline is not None:
            timeline.add(slot_id, "busy", t, t + send_sec, episode_id)
        t += send_sec
        silence = 0.0
        round_start = t
        for call in rnd.calls:
            tool = call.tool
            requested = call.requested_lines
            duration, completed = effective_observation(call)
            if not completed and imputed is not None:
                duration, completed = imputed[(episode_id, index)], True
            if ended:
                rows.append(_withheld(episode_id, round_no, index, call, duration, completed, requested))
                index += 1
                continue
            remaining = None if deadline_at is None else max(0.0, deadline_at - t)
            bound = bound_for(tool, call.args, remaining)
            bound_sec = bound.sec
            gap = ""
            zombie = 0.0
            if workers is not None:
                # A shared thread pool: the wait, the fate and the zombie depend on thread queueing.
                if t > env.now:
                    yield sync_to(env, t)
                wait, abandoned, zombie = yield from workers.run_call(env, duration, completed, bound_sec)
            else:
                abandoned = abandons(duration, completed, bound_sec)
                if abandoned:
                    assert bound_sec is not None
                    wait = bound_sec
                    zombie = duration - bound_sec if completed else _INF
                else:
                    wait = duration
            if abandoned:
                gap, outcome = SOURCE_GAP_ABANDONED, ERROR
            elif bound_sec is None and not completed:
                # Pre-fix: the episode waited the whole observed time, then the log ended.
                gap, outcome, ended = SOURCE_GAP_WEDGED, ERROR, True
            else:
                outcome = ERROR if call.status == "error" else EXECUTED
            if zombie:
                assert bound_sec is not None  # only an abandoned (bounded) call leaves a zombie
                start = t + bound_sec
                sim.loose_starts.append(start)
                sim.loose_ends.append(start + zombie)
            # credited_lines(tool, outcome, 0) is 0 whatever the rule says: skip the call then.
            credited = credited_lines(tool, outcome, requested) if requested else 0
            if abandoned:
                crediting.note_abandoned()
            rows.append((
                episode_id, round_no, index, tool, duration, completed,
                _NAN if bound_sec is None else bound_sec, bound.by, outcome, gap,
                requested, credited, zombie,
            ))
            index += 1
            if workers is not None:
                # Thread queueing put the return on SimPy's clock; follow it exactly.
                wait = env.now - t
                t = env.now
            else:
                t += wait
            silence += wait
        if silence > max_silence:
            max_silence = silence
        if timeline is not None:
            timeline.add(slot_id, "silent", round_start, t, episode_id)
    run.end_sec = t
    run.max_silence_sec = max_silence
    if t > env.now:
        yield sync_to(env, t)
    if slots is not None:
        slots.release(slot_id)

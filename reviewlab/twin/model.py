"""The twin's episode on virtual time: one pass over its rounds, yielding to SimPy only at shared resources.

Lifecycle of an episode: *arriving* (the clock reaches its arrival) → *queued*
(waiting for a reviewer slot, pool runs only) → *running* its rounds → *done*
(rows stored, slot released). A round is one model send (the recorded
``send_sec``) followed by its calls in order.

Lifecycle of a call (as in the real executor): *pending* → *running* → one of
*returned* / *raised* (inside the bound) or *abandoned* (the bound passed first).
A call's fate is decided at its virtual dispatch time by the shared core:
:func:`~reviewlab.policy.resolve_bound` (through :class:`~reviewlab.twin.bounds.BoundResolver`)
with ``remaining_sec`` read on the virtual clock, :func:`~reviewlab.receipts.abandons`,
and the episode's :class:`~reviewlab.receipts.Crediting`. Without a worker pool
nothing else in the simulation can change that fate, so no call is raced
against a timer: :func:`run_episode` computes the wait, ``min(duration, bound)``,
and moves the episode's own clock ``t``. It yields to SimPy only where the
episode meets the shared world — each dispatch to a shared worker-thread pool —
so a SimPy process drives it:

* **no pool** (:func:`corpus_process`): the episodes share nothing, so ONE
  process walks them in arrival order, brings ``env.now`` to each arrival, runs
  the episode through (it never yields) and finally brings ``env.now`` to the
  latest end. ~1,000 processes and their events collapse into one process;
* **reviewer slots and/or worker threads** (:func:`episode_process`): one
  process per episode, which queues for a slot, runs the episode (yielding at
  each worker dispatch), brings ``env.now`` exactly to its end and frees the slot.

Coalescing waits changes no outcome, only saves events (a twin that races
every call against a timeout with ``AnyOf`` is an order of magnitude slower).
``t`` advances by exactly the briefing's additions (``t += send_sec``,
``t += wait``), so the figures are bit-identical to the vectorized engine's.

Invariants: one call row per recorded call, an episode's rows in call order
(:class:`CallColumns` puts them in corpus order whatever order the episodes
ran in); an episode's ``Crediting`` notes an abandonment only after
that call's own credit is computed; under the pre-fix ``unbounded`` narrowing a
censored call silences the episode for its observed ``duration_sec`` and ends
it (later calls are ``withheld``, never started).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from typing import Any

import simpy

from reviewlab.receipts import SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED, Crediting, Outcome, abandons
from reviewlab.recording.schema import Episode
from reviewlab.twin.bounds import BoundResolver
from reviewlab.twin.impute import effective_observation

__all__ = ["CallColumns", "Simulation", "corpus_process", "episode_process", "run_episode", "sync_to"]

EXECUTED = str(Outcome.EXECUTED)
ERROR = str(Outcome.ERROR)
WITHHELD = str(Outcome.WITHHELD)
_NAN = math.nan
_INF = math.inf

Row = tuple[Any, ...]
"""One call row, in :data:`~reviewlab.metrics.CALL_COLUMNS` order."""


class CallColumns:
    """The call rows of a run, column by column, in the order the calls were decided.

    Columns, not row tuples: appending floats and shared strings to a few lists
    allocates nothing the cyclic garbage collector tracks, whereas one tuple per
    call would (and a corpus-sized batch of tracked survivors triggers full
    collections that cost as much as the simulation). ``episode`` holds the
    episode's corpus position instead of its id; a stable sort by it gives the
    frame's order (corpus order, then call order: an episode decides its calls
    in order, though with worker threads episodes interleave).
    """

    __slots__ = ("episode", "round", "call_index", "tool", "duration_sec", "completed", "bound_sec", "bound_by",
                 "outcome", "source_gap", "requested_lines", "credited_lines", "zombie_sec")

    def __init__(self) -> None:
        self.episode: list[int] = []
        self.round: list[int] = []
        self.call_index: list[int] = []
        self.tool: list[str] = []
        self.duration_sec: list[float] = []
        self.completed: list[bool] = []
        self.bound_sec: list[float] = []
        self.bound_by: list[str] = []
        self.outcome: list[str] = []
        self.source_gap: list[str] = []
        self.requested_lines: list[int] = []
        self.credited_lines: list[int] = []
        self.zombie_sec: list[float] = []

    def append(self, row: Row) -> None:
        """Append one row: the episode's position, then :data:`~reviewlab.metrics.CALL_COLUMNS` after ``episode_id``."""
        (position, rnd, index, tool, duration, completed, bound_sec, bound_by, outcome, gap, requested, credited,
         zombie) = row
        self.episode.append(position)
        self.round.append(rnd)
        self.call_index.append(index)
        self.tool.append(tool)
        self.duration_sec.append(duration)
        self.completed.append(completed)
        self.bound_sec.append(bound_sec)
        self.bound_by.append(bound_by)
        self.outcome.append(outcome)
        self.source_gap.append(gap)
        self.requested_lines.append(requested)
        self.credited_lines.append(credited)
        self.zombie_sec.append(zombie)


class Simulation:
    """Shared state of one simulation run: the environment, the bound resolver and what is collected.

    Per episode (corpus position): ``slot_id``, ``start_sec`` (slot granted;
    the arrival without a pool), ``end_sec`` and ``max_silence_sec``; its calls
    are in ``calls``. Across the corpus: the loose-worker intervals.
    """

    __slots__ = ("env", "resolver", "imputed", "calls", "slot_id", "start_sec", "end_sec", "max_silence_sec",
                 "loose_starts", "loose_ends", "workers", "slots", "timeline")

    def __init__(self, env: simpy.Environment, resolver: BoundResolver, episodes: int,
                 imputed: Mapping[tuple[str, int], float] | None = None) -> None:
        self.env = env
        self.resolver = resolver
        self.imputed = imputed
        """Completion times of still-censored calls under ``censored="impute"``."""
        self.calls = CallColumns()
        self.slot_id: list[str] = [""] * episodes
        self.start_sec: list[float] = [0.0] * episodes
        self.end_sec: list[float] = [0.0] * episodes
        self.max_silence_sec: list[float] = [0.0] * episodes
        self.loose_starts: list[float] = []
        self.loose_ends: list[float] = []
        self.workers: Any = None
        """A :class:`~reviewlab.twin.pool.WorkerPool`, or ``None`` for unlimited threads."""
        self.slots: Any = None
        """A :class:`~reviewlab.twin.pool.SlotPool` when reviewer slots are simulated."""
        self.timeline: Any = None
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


def corpus_process(
    sim: Simulation, episodes: list[Episode], arrivals: list[float]
) -> Generator[simpy.Event, Any, None]:
    """The one process of a run without slots or worker threads: every episode, in arrival order."""
    env = sim.env
    assert sim.slots is None and sim.workers is None, "a pool needs one process per episode"
    latest = env.now
    # sorted() is stable: equal arrivals keep corpus order (the order per-episode processes would start in).
    for position in sorted(range(len(arrivals)), key=arrivals.__getitem__):
        arrival = arrivals[position]
        if arrival > env.now:
            yield sync_to(env, arrival)
        episode = episodes[position]
        sim.slot_id[position] = episode.slot
        sim.start_sec[position] = arrival
        # Without worker threads run_episode never yields: this runs the whole episode at once.
        end = yield from run_episode(sim, position, episode, arrival, arrival)
        if end > latest:
            latest = end
    if latest > env.now:
        yield sync_to(env, latest)


def episode_process(
    sim: Simulation, position: int, episode: Episode, arrival_sec: float
) -> Generator[simpy.Event, Any, None]:
    """The SimPy process of one episode in a pool run (see the module docstring for its lifecycle)."""
    env = sim.env
    slots = sim.slots
    t = arrival_sec
    if slots is not None:
        if t > env.now:
            yield sync_to(env, t)
        sim.slot_id[position] = yield slots.acquire()
        t = env.now
    else:
        sim.slot_id[position] = episode.slot
    sim.start_sec[position] = t
    end = yield from run_episode(sim, position, episode, arrival_sec, t)
    if end > env.now:
        yield sync_to(env, end)
    if slots is not None:
        slots.release(sim.slot_id[position])


def _withheld(position: int, round_no: int, index: int, call: Any, duration: float, completed: bool) -> Row:
    return (position, round_no, index, call.tool, duration, completed, _NAN, "unbounded", WITHHELD, "",
            call.requested_lines, 0, 0.0)


def run_episode(
    sim: Simulation, position: int, episode: Episode, arrival_sec: float, start_sec: float
) -> Generator[simpy.Event, Any, float]:
    """Run one episode's rounds from ``start_sec``; store its rows and figures; return its end time.

    Yields only to dispatch calls to the shared worker pool (never without one).
    The deadline runs from ``arrival_sec``. This is the per-call hot loop of
    the twin: locals are hoisted and nothing but the row tuple is allocated per
    call in the common case.
    """
    env = sim.env
    workers = sim.workers
    timeline = sim.timeline
    imputed = sim.imputed
    bound_for = sim.resolver.bound
    loose_starts = sim.loose_starts
    loose_ends = sim.loose_ends
    columns = sim.calls
    add_episode = columns.episode.append
    add_round, add_index, add_tool = columns.round.append, columns.call_index.append, columns.tool.append
    add_duration, add_completed = columns.duration_sec.append, columns.completed.append
    add_bound, add_by, add_outcome = columns.bound_sec.append, columns.bound_by.append, columns.outcome.append
    add_gap, add_requested = columns.source_gap.append, columns.requested_lines.append
    add_credited, add_zombie = columns.credited_lines.append, columns.zombie_sec.append
    crediting = Crediting()
    credited_lines = crediting.credited_lines
    episode_id = episode.id
    slot_id = sim.slot_id[position]
    deadline_sec = episode.deadline_sec
    deadline_at = None if deadline_sec is None else arrival_sec + deadline_sec
    t = start_sec
    max_silence = 0.0
    ended = False
    index = 0
    round_no = 0
    for rnd in episode.rounds:
        round_no += 1
        if ended:
            for call in rnd.calls:
                duration, completed = effective_observation(call)
                columns.append(_withheld(position, round_no, index, call, duration, completed))
                index += 1
            continue
        send_sec = rnd.send_sec
        if timeline is not None:
            timeline.add(slot_id, "busy", t, t + send_sec, episode_id)
        t += send_sec
        silence = 0.0
        round_start = t
        for call in rnd.calls:
            duration, completed = effective_observation(call)
            if not completed and imputed is not None:
                duration, completed = imputed[(episode_id, index)], True
            if ended:
                columns.append(_withheld(position, round_no, index, call, duration, completed))
                index += 1
                continue
            tool = call.tool
            bound = bound_for(tool, call.args, None if deadline_at is None else max(0.0, deadline_at - t))
            bound_sec = bound.sec
            if workers is None:
                abandoned = abandons(duration, completed, bound_sec)
                if abandoned:
                    assert bound_sec is not None
                    wait = bound_sec
                    zombie = duration - bound_sec if completed else _INF
                else:
                    wait = duration
                    zombie = 0.0
            else:
                # A shared thread pool: the wait, the fate and the zombie depend on thread queueing.
                if t > env.now:
                    yield sync_to(env, t)
                wait, abandoned, zombie = yield from workers.run_call(env, duration, completed, bound_sec)
            if abandoned:
                gap, outcome = SOURCE_GAP_ABANDONED, ERROR
            elif bound_sec is None and not completed:
                # Pre-fix: the episode waited the whole observed time, then the log ended.
                gap, outcome, ended = SOURCE_GAP_WEDGED, ERROR, True
            else:
                gap, outcome = "", ERROR if call.status == "error" else EXECUTED
            if zombie:
                assert bound_sec is not None  # only an abandoned (bounded) call leaves a zombie
                loose_starts.append(t + bound_sec)
                loose_ends.append(t + bound_sec + zombie)
            requested = call.requested_lines
            # credited_lines(tool, outcome, 0) is 0 whatever the rule says: skip the call then.
            credited = credited_lines(tool, outcome, requested) if requested else 0
            if abandoned:
                crediting.note_abandoned()
            add_episode(position)
            add_round(round_no)
            add_index(index)
            add_tool(tool)
            add_duration(duration)
            add_completed(completed)
            add_bound(_NAN if bound_sec is None else bound_sec)
            add_by(bound.by)
            add_outcome(outcome)
            add_gap(gap)
            add_requested(requested)
            add_credited(credited)
            add_zombie(zombie)
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
    sim.end_sec[position] = t
    sim.max_silence_sec[position] = max_silence
    return t

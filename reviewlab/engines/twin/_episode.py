"""The twin's episode on virtual time: one pass over its rounds, yielding to SimPy only at a pool.

Lifecycle of an episode: arriving → queued (pool runs only) → running its rounds → done. A
call's fate is decided at its virtual dispatch time by the shared core (bound, ``abandons``,
the episode's ``Crediting``), so no call is raced against a timer:
:meth:`EpisodeRunner.run_episode` moves the episode's own clock by ``min(duration, bound)``
and yields only at a shared worker-thread pool. Without a pool ONE process runs every episode
(:func:`corpus_process`); with slots or workers, one per episode (:func:`episode_process`).
Hedged rows take :func:`~reviewlab.core._hedge.hedge_fate`; all read and write the run's
:class:`~reviewlab.engines.twin._model.Simulation`.

Invariants: ``t`` advances by exactly ``t += send_sec``, ``t += wait``, so figures are
bit-identical to the vectorized engine's; one row per recorded call, in corpus order; under
the pre-fix ``unbounded`` narrowing a wedge is waited on forever (``inf``, later calls
``withheld``). Why coalescing waits is exact: docs/architecture.md, "The twin's episode".
"""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import Any

import simpy

from reviewlab.core._caps import on_progress_fire_sec
from reviewlab.core._crediting import Crediting, abandons
from reviewlab.core._hedge import hedge_fate
from reviewlab.core._idle import idle_fire_sec
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED, SOURCE_GAP_WEDGED
from reviewlab.engines.twin._corpus import EpisodeTuple
from reviewlab.engines.twin._model import ERROR, EXECUTED, Simulation, sync_to

_INF = math.inf


def corpus_process(sim: Simulation, arrivals: list[float]) -> Generator[simpy.Event, Any, None]:
    """The one process of a run without slots or worker threads: every episode, then the clock to
    the end.

    Why the clock is not moved to each arrival: with no slots and no worker
    threads nothing else is ever scheduled on this environment, and
    :meth:`EpisodeRunner.run_episode` never yields or reads ``env.now`` then — an episode's
    timeline is its own ``t``, starting at its arrival. So no event could
    observe ``env.now`` between two arrivals, and stepping it through all of
    them (a ``Timeout`` and a scheduler step per episode) decides nothing.
    Episodes run in corpus order (independent episodes: the order changes no
    figure; the loose-worker intervals feed an order-free
    :func:`~reviewlab.core._metrics.peak_overlap`), and the clock is brought once,
    exactly, to the latest end — the final ``env.now`` a per-episode run would
    leave.
    """
    env = sim.env
    assert sim.slots is None and sim.workers is None, "a pool needs one process per episode"
    start_sec = sim.start_sec
    latest = env.now
    runner = EpisodeRunner(sim)
    for position, episode in enumerate(sim.corpus.tuples):
        arrival = arrivals[position]
        start_sec[position] = arrival
        # Without worker threads run_episode never yields: this runs the whole episode at once.
        end = yield from runner.run_episode(position, episode, arrival, arrival)
        if end > latest:
            latest = end
    if latest > env.now:
        yield sync_to(env, latest)


def episode_process(
    sim: Simulation, position: int, arrival_sec: float
) -> Generator[simpy.Event, Any, None]:
    """The SimPy process of one episode in a pool run (see the module docstring for its
    lifecycle)."""
    env = sim.env
    slots = sim.slots
    t = arrival_sec
    if slots is not None:
        if t > env.now:
            yield sync_to(env, t)
        sim.slot_id[position] = yield slots.acquire()
        t = env.now
    sim.start_sec[position] = t
    runner = EpisodeRunner(sim)
    end = yield from runner.run_episode(position, sim.corpus.tuples[position], arrival_sec, t)
    if end > env.now:
        yield sync_to(env, end)
    if slots is not None:
        slots.release(sim.slot_id[position])


class EpisodeRunner:
    """Runs episodes of one simulation: its shared columns and rules, hoisted once.

    Lifecycle of a call in :meth:`run_episode`: bound (the resolver's, under what is left of
    the deadline; then an idle timeout the recorded progress fires, :meth:`idled`) →
    fate (a planned hedge, :meth:`hedge_fate`; one attempt on a thread of its own; or a wait
    on the shared worker pool) → outcome (abandoned, wedged or answered) → row stored. After
    a wedge under ``unbounded`` every later call is withheld: its row keeps the defaults and
    starts when the log ended.
    """

    __slots__ = (
        "sim",
        "env",
        "workers",
        "imputed",
        "bound_sec_for",
        "no_deadline",
        "idle_rows",
        "honoured_rows",
        "hedge_rows",
        "on_progress",
        "columns",
    )

    def __init__(self, sim: Simulation) -> None:
        if sim.hedge_rows and sim.workers is not None:
            raise ValueError(
                "hedges: a worker-thread pool (workers=K) does not simulate hedged calls; "
                "replay without workers"
            )
        self.sim, self.env, self.workers, self.imputed = sim, sim.env, sim.workers, sim.imputed
        self.bound_sec_for = sim.resolver.bound_sec
        self.no_deadline = sim.resolver.no_deadline
        self.idle_rows, self.honoured_rows = sim.idle_rows, sim.honoured_rows
        self.hedge_rows = sim.hedge_rows
        self.on_progress = sim.resolver.policy.cap_rule == "checked_on_progress"
        self.columns = sim.calls

    def run_episode(
        self, position: int, episode: EpisodeTuple, arrival_sec: float, start_sec: float
    ) -> Generator[simpy.Event, Any, float]:
        """Run one episode's rounds from ``start_sec``; store its rows and figures; return its
        end time. Yields only to dispatch a call to the shared worker pool (never without one);
        the deadline runs from ``arrival_sec``. The hot loop: the common path is inline on
        hoisted locals, and a call allocates nothing that outlives it."""
        env, workers, imputed, columns = self.env, self.workers, self.imputed, self.columns
        bound_sec_for, no_deadline = self.bound_sec_for, self.no_deadline
        idle_rows, honoured_rows, hedge_rows = self.idle_rows, self.honoured_rows, self.hedge_rows
        starts, waits, timeline = columns.dispatch_sec, columns.wait_sec, self.sim.timeline
        crediting = Crediting()
        credited_lines = crediting.credited_lines
        episode_id, slot_id, row = episode.id, self.sim.slot_id[position], episode.first_row
        deadline_at = None if episode.deadline_sec is None else arrival_sec + episode.deadline_sec
        t, max_silence, ended = start_sec, 0.0, False
        for send_sec, calls in episode.rounds:
            if ended:  # withheld: the rows keep their defaults, "started" when the log ended
                starts[row : row + len(calls)] = [t] * len(calls)
                row += len(calls)
                continue
            if timeline is not None:
                timeline.add(slot_id, "busy", t, t + send_sec, episode_id)
            t += send_sec
            silence, round_start = 0.0, t
            for tool, args, duration, completed, status_error, requested in calls:
                if not completed and imputed is not None:
                    duration, completed = self.impute(episode, row)
                if ended:
                    starts[row] = t
                    row += 1
                    continue
                if deadline_at is None:  # the resolver's per-tool pair (or it fills the pair)
                    pair = no_deadline.get(tool)
                    bound_sec, bound_by = pair or bound_sec_for(tool, args, None)  # a 2-tuple
                else:  # max(0.0, deadline_at - t) without the builtin (-0.0 and NaN included)
                    remaining = deadline_at - t
                    if not remaining > 0.0:
                        remaining = 0.0
                    bound_sec, bound_by = bound_sec_for(tool, args, remaining)
                if idle_rows and bound_sec is not None and row in idle_rows:
                    bound_sec, bound_by = self.idled(row, duration, completed, bound_sec, bound_by)
                fate = self.hedge_fate(row, duration, completed, bound_sec) if hedge_rows else None
                if fate is not None:
                    abandoned, wait, answered = self.note_hedged(row, t, fate)
                else:
                    if honoured_rows and bound_sec is not None and row in honoured_rows:
                        duration, completed = self.honoured(row, duration, completed, bound_sec)
                    if workers is None:
                        abandoned = abandons(duration, completed, bound_sec)
                        if abandoned:
                            assert bound_sec is not None
                            wait, zombie = bound_sec, duration - bound_sec if completed else _INF
                        else:
                            wait, zombie = duration, 0.0
                    else:  # a shared thread pool: wait, fate and zombie depend on its queueing
                        if t > env.now:
                            yield sync_to(env, t)
                        wait, abandoned, zombie = yield from workers.run_call(
                            env, duration, completed, bound_sec
                        )
                    answered = completed
                    if zombie:
                        self.note_loose(row, t, bound_sec, zombie)
                if abandoned:
                    columns.source_gap[row] = SOURCE_GAP_ABANDONED
                    outcome = ERROR
                elif bound_sec is None and not answered:
                    # Pre-fix: the call never returns, so the episode waits on it forever.
                    columns.source_gap[row] = SOURCE_GAP_WEDGED
                    outcome, ended, wait = ERROR, True, _INF
                else:
                    outcome = ERROR if status_error else EXECUTED
                if requested:  # credited_lines(outcome, 0) is 0 whatever the rule says
                    columns.credited_lines[row] = credited_lines(outcome, requested)
                if abandoned:
                    crediting.note_abandoned()
                if bound_sec is not None:
                    columns.bound_sec[row] = bound_sec
                columns.bound_by[row] = bound_by
                columns.outcome[row] = outcome
                starts[row] = t
                if workers is not None and not ended:  # the return is on SimPy's clock
                    wait = env.now - t
                    t = env.now
                else:
                    t += wait
                waits[row] = wait
                row += 1
                silence += wait
            if silence > max_silence:
                max_silence = silence
            if timeline is not None:
                timeline.add(slot_id, "silent", round_start, t, episode_id)
        self.sim.end_sec[position] = t
        self.sim.max_silence_sec[position] = max_silence
        return t

    def impute(self, episode: EpisodeTuple, row: int) -> tuple[float, bool]:
        """A still-censored call's imputed completion (``censored="impute"``), stored in its row."""
        assert self.imputed is not None
        duration = self.imputed[(episode.id, row - episode.first_row)]
        self.columns.duration_sec[row] = duration
        self.columns.completed[row] = True
        return duration, True

    def idled(
        self, row: int, duration: float, completed: bool, bound_sec: float, bound_by: str
    ) -> tuple[float, str]:
        """The idle timeout fires from the recorded progress, before the return and the bound."""
        progress, idle = self.idle_rows[row]
        if self.on_progress:
            # The TypeScript SDK's rule (core/_caps.py): the cap is checked only when a report
            # arrives, so the end may pass the cap; a report past it ends the call there, by the
            # term that set the cap.
            end, why = on_progress_fire_sec(progress, idle, bound_sec)
            return end, "idle" if why == "idle" else bound_by
        until = min(duration if completed else _INF, bound_sec)
        fire = idle_fire_sec(progress, idle, until)
        return (bound_sec, bound_by) if fire is None else (fire, "idle")

    def hedge_fate(
        self, row: int, duration: float, completed: bool, bound_sec: float | None
    ) -> Any:
        """The call's two attempts when the replay's plan hedges it and the second starts
        (:func:`~reviewlab.core._hedge.hedge_fate`), else ``None``."""
        if not self.hedge_rows or row not in self.hedge_rows:
            return None
        after, second = self.hedge_rows[row]
        fate = hedge_fate(duration if completed else _INF, second, after, bound_sec)
        return fate if fate.hedged else None

    def note_hedged(self, row: int, t: float, fate: Any) -> tuple[bool, float, bool]:
        """Two attempts, the first answer used, a loser running on (core/_hedge.py): the row's
        hedge and zombie stored, the losers' loose intervals noted; returns ``(abandoned,
        wait_sec, answered)``."""
        self.columns.hedged[row] = True
        wait = fate.wait_sec
        for loose in fate.zombies_sec:
            if loose:
                self.sim.loose_starts.append(t + wait)
                self.sim.loose_ends.append(t + wait + loose)
        self.columns.zombie_sec[row] = fate.zombie_sec
        return fate.abandoned, wait, fate.answer_sec < _INF

    def honoured(
        self, row: int, duration: float, completed: bool, bound_sec: float
    ) -> tuple[float, bool]:
        """A server seen stopping that long after a cancel stops that long after this one (when
        this call is abandoned): its effective duration and completion."""
        if not abandons(duration, completed, bound_sec):
            return duration, completed
        stop = max(bound_sec + self.honoured_rows[row], math.nextafter(bound_sec, _INF))
        return (min(duration, stop) if completed else stop), True

    def note_loose(self, row: int, t: float, bound_sec: float | None, zombie: float) -> None:
        """An abandoned call's worker runs on for ``zombie`` seconds after the bound."""
        assert bound_sec is not None  # only an abandoned (bounded) call leaves one
        self.sim.loose_starts.append(t + bound_sec)
        self.sim.loose_ends.append(t + bound_sec + zombie)
        self.columns.zombie_sec[row] = zombie

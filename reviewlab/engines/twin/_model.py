"""The twin's shared state: one run's simulation (its environment, bound resolver and pools) and
the decided columns of its call frame.

A :class:`Simulation` holds what every episode process of a run reads and writes
(:mod:`reviewlab.engines.twin._episode` runs them): the preallocated :class:`CallColumns` in
corpus order, per-episode figures, the loose-worker intervals, the rows the replay's hedge plan
lets hedge (:func:`hedge_rows`) and the rows version 2 recordings add (:func:`remote_rows`).
:func:`sync_to` moves SimPy's clock to an exact time.

Invariants: one row per recorded call, in corpus order; a row starts as a withheld call and a
dispatched call overwrites what it decides.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import simpy

from reviewlab.core._policy import Policy
from reviewlab.core._receipts import Outcome
from reviewlab.engines._censoring import HedgePlan, hedge_plan
from reviewlab.engines.twin._bounds import BoundResolver
from reviewlab.engines.twin._corpus import TwinCorpus
from reviewlab.recording._schema import SCHEMA_VERSION

EXECUTED = str(Outcome.EXECUTED)
ERROR = str(Outcome.ERROR)
WITHHELD = str(Outcome.WITHHELD)
_NAN = math.nan
_INF = math.inf


class CallColumns:
    """The decided columns of a run's call frame, preallocated in corpus order (episode, then call).

    Columns, not row tuples: storing floats and shared strings into a few lists
    allocates nothing the cyclic garbage collector tracks, whereas one tuple per
    call would (and a corpus-sized batch of tracked survivors triggers
    collections that cost as much as the simulation). Every row starts as a
    *withheld* call (bound NaN, ``"unbounded"``, no gap, no credit, no zombie);
    a dispatched call overwrites what it decides. ``duration_sec`` and
    ``completed`` start as the effective observation and change only for an
    imputed call. ``dispatch_sec`` and ``wait_sec`` are the episode's own
    timing of the call: its clock ``t`` at dispatch (on the corpus timeline;
    the frame subtracts the arrival to give ``start_sec``, so the hot loop
    does not) and how far it then advanced ``t``. Every row's ``dispatch_sec``
    is written by the run (a withheld row gets the moment its episode's log
    ended); ``wait_sec`` stays 0 for a withheld one. ``hedged``: the call's
    second attempt started (:mod:`reviewlab.core._hedge`). The static columns
    live in :class:`~reviewlab.engines.twin._corpus.TwinCorpus`.
    """

    __slots__ = (
        "duration_sec",
        "completed",
        "bound_sec",
        "bound_by",
        "outcome",
        "source_gap",
        "credited_lines",
        "zombie_sec",
        "dispatch_sec",
        "wait_sec",
        "hedged",
    )

    def __init__(self, corpus: TwinCorpus) -> None:
        n = corpus.calls
        self.duration_sec: list[float] = list(corpus.duration_sec)
        self.completed: list[bool] = list(corpus.completed)
        self.bound_sec: list[float] = [_NAN] * n
        self.bound_by: list[str] = ["unbounded"] * n
        self.outcome: list[str] = [WITHHELD] * n
        self.source_gap: list[str] = [""] * n
        self.credited_lines: list[int] = [0] * n
        self.zombie_sec: list[float] = [0.0] * n
        self.dispatch_sec: list[float] = [0.0] * n
        self.wait_sec: list[float] = [0.0] * n
        self.hedged: list[bool] = [False] * n


class Simulation:
    """Shared state of one simulation run: the environment, the bound resolver and what is
    collected.

    Per episode (corpus position): ``slot_id``, ``start_sec`` (slot granted;
    the arrival without a pool), ``end_sec`` and ``max_silence_sec``; its calls
    are in ``calls``. Across the corpus: the loose-worker intervals.
    """

    __slots__ = (
        "env",
        "resolver",
        "corpus",
        "imputed",
        "calls",
        "slot_id",
        "start_sec",
        "end_sec",
        "max_silence_sec",
        "loose_starts",
        "loose_ends",
        "workers",
        "slots",
        "timeline",
        "idle_rows",
        "honoured_rows",
        "hedge_rows",
        "hedging",
    )

    def __init__(
        self,
        env: simpy.Environment,
        resolver: BoundResolver,
        corpus: TwinCorpus,
        imputed: Mapping[tuple[str, int], float] | None = None,
        seed: int = 0,
        hedges: HedgePlan | None = None,
    ) -> None:
        episodes = len(corpus.tuples)
        self.env = env
        self.resolver = resolver
        self.corpus = corpus
        self.imputed = imputed
        """Completion times of still-censored calls under ``censored="impute"``."""
        self.calls = CallColumns(corpus)
        self.slot_id: list[str] = list(corpus.slots)
        self.start_sec: list[float] = [0.0] * episodes
        self.end_sec: list[float] = [0.0] * episodes
        self.max_silence_sec: list[float] = [0.0] * episodes
        self.loose_starts: list[float] = []
        self.loose_ends: list[float] = []
        self.workers: Any = None
        """A :class:`~reviewlab.engines.twin.WorkerPool`, or ``None`` for unlimited threads."""
        self.slots: Any = None
        """A :class:`~reviewlab.engines.twin._pool.SlotPool` when reviewer slots are simulated."""
        self.timeline: Any = None
        """A :class:`~reviewlab.engines.twin._pool.SlotTimeline` when reviewer slots are
        simulated."""
        self.idle_rows, self.honoured_rows = remote_rows(corpus, resolver.policy)
        """Rows with recorded progress and an idle timeout; rows with a recorded cancel stop
        time."""
        self.hedge_rows, self.hedging = hedge_rows(corpus, resolver.policy, imputed, seed, hedges)
        """Rows that may hedge: ``(after_sec, second_sec)`` of the replay's hedge plan (``hedges``
        when the rewrite fixed point carries it, else planned from the corpus); whether the
        policy hedges at all (then the frame carries the ``hedged`` column)."""


def hedge_rows(
    corpus: TwinCorpus,
    policy: Policy,
    imputed: Mapping[tuple[str, int], float] | None,
    seed: int,
    plan: HedgePlan | None = None,
) -> tuple[dict[int, tuple[float, float]], bool]:
    """The rows the replay's hedge plan lets hedge, with their delay and second-attempt
    duration, and whether the policy hedges at all. ``plan``: the plan carried to this
    (rewritten) corpus; by default :func:`~reviewlab.engines._censoring.hedge_plan` of it."""
    if plan is None:
        plan = hedge_plan(corpus.episodes, policy, imputed, seed)
    elif not policy.hedges:
        raise ValueError("hedges: a hedge plan was given for a policy that hedges nothing")
    elif plan.planned.size != corpus.calls:
        raise ValueError(
            f"hedges: the plan has {plan.planned.size} rows for a corpus of {corpus.calls} calls"
        )
    if plan is None:
        return {}, False
    rows = {
        row: (float(plan.after_sec[row]), float(plan.second_sec[row]))
        for row in np.flatnonzero(plan.planned).tolist()
    }
    return rows, True


def hedge_columns(sim: Simulation) -> dict[str, np.ndarray]:
    """The call-frame columns hedging adds (:data:`~reviewlab.core._metrics.CALL_HEDGE_COLUMNS`):
    ``{"hedged": ...}`` when the policy hedges, else nothing."""
    if not sim.hedging:
        return {}
    return {"hedged": np.array(sim.calls.hedged, dtype=bool)}


def remote_rows(
    corpus: TwinCorpus, policy: Policy
) -> tuple[dict[int, tuple[tuple[float, ...], float]], dict[int, float]]:
    """What version 2 recordings add, by call row: ``(progress_sec, idle_sec)`` for calls the
    policy gives an idle timeout, and ``cancel_honoured_sec`` for servers seen stopping after a
    cancel. Empty for version 1 corpora (nothing is read then)."""
    idle_rows: dict[int, tuple[tuple[float, ...], float]] = {}
    honoured_rows: dict[int, float] = {}
    if all(episode.schema_version == SCHEMA_VERSION for episode in corpus.episodes):
        return idle_rows, honoured_rows
    row = 0
    for episode in corpus.episodes:
        for rnd in episode.rounds:
            for call in rnd.calls:
                if call.progress_sec is not None:
                    idle = policy.idle_for(call.tool)
                    if idle is not None:
                        idle_rows[row] = (tuple(call.progress_sec), idle)
                if call.cancel_honoured_sec is not None:
                    honoured_rows[row] = call.cancel_honoured_sec
                row += 1
    return idle_rows, honoured_rows


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

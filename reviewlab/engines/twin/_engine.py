"""``simulate``: replay a corpus on the twin and return a
:class:`~reviewlab.engines._result.ReplayResult`.

One run: compile the corpus (kept by its handle), fix arrivals (recorded or Poisson), impute
censored durations when asked, start the SimPy process(es) — one for the whole corpus without
a pool, one per episode with slots or worker threads — run the environment to exhaustion,
then build the frames column-wise. Without ``slots`` and ``workers`` the episodes are
independent, and the vectorized and real engines reproduce the result.

Frames: ``calls`` (:data:`~reviewlab.core._metrics.ENGINE_CALL_COLUMNS`, the effective
observation the replay used), ``episodes`` (``wall_sec`` from arrival; a pool run adds
``arrival_sec``, ``start_sec``, ``queue_wait_sec``) and, for pool runs, ``slots``
(:class:`~reviewlab.engines.twin._pool.SlotTimeline`); a pool run's summary adds
``queue_wait_mean_sec`` and ``queue_wait_share``. Columns: docs/metrics.md, "The call frame".
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import simpy

from reviewlab.core import _metrics as metrics
from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core._vocab import (
    CENSORING_MODES,
    DEFAULT_CENSORING,
    OUTCOME_ERROR,
    OUTCOME_EXECUTED,
    SOURCE_GAP_ABANDONED,
    SOURCE_GAPS_HELD_BACK,
    ArrivalMode,
    CensoringMode,
)
from reviewlab.engines._censoring import HedgePlan, completion_times
from reviewlab.engines._corpus import Corpus, CorpusSource, open_corpus
from reviewlab.engines._honours import TWIN
from reviewlab.engines._result import (
    EpisodeArrays,
    FramesOnDemand,
    PoolFrames,
    ReplayResult,
    assemble,
)
from reviewlab.engines._shared import arrival_times, check_corpus
from reviewlab.engines.twin._bounds import BoundResolver
from reviewlab.engines.twin._corpus import TwinCorpus
from reviewlab.engines.twin._episode import corpus_process, episode_process
from reviewlab.engines.twin._model import Simulation, hedge_columns
from reviewlab.engines.twin._pool import PoolShape, SlotPool, SlotTimeline, WorkerPool
from reviewlab.recording._files import paused_gc
from reviewlab.recording._schema import Episode


def columns_frame(sim: Simulation, arrival: np.ndarray) -> pd.DataFrame:
    """The ``calls`` frame of a run: the corpus's static columns and the run's decided ones.

    Built column-wise, one array per column (``DataFrame`` copies them, so the
    cached static columns are never shared with a caller). ``arrival`` is the
    run's arrival per episode: ``start_sec`` is the dispatch clock minus it
    (the same float subtraction ``t - arrival`` the vectorized engine makes).
    """
    corpus, columns = sim.corpus, sim.calls
    data = {
        "episode_id": corpus.episode_id,
        "round": corpus.round,
        "call_index": corpus.call_index,
        "tool": corpus.tool,
        "requested_lines": corpus.requested_lines,
    }
    for name in metrics.ENGINE_CALL_COLUMNS:  # the run's decided columns
        if name not in data and name != "start_sec":
            data[name] = np.array(getattr(columns, name), dtype=metrics.CALL_DTYPES[name])
    first_rows = np.array(
        [episode.first_row for episode in corpus.tuples] + [corpus.calls], dtype=np.intp
    )
    data["start_sec"] = np.array(columns.dispatch_sec, dtype=float) - np.repeat(
        arrival, np.diff(first_rows)
    )
    return pd.DataFrame(data, columns=list(metrics.ENGINE_CALL_COLUMNS))


NO_POOL = PoolShape()
"""Independent episodes: no reviewer slots, a thread per call, the recorded arrivals."""


def _arrivals(corpus: TwinCorpus, mode: str | None, rate: float | None, seed: int) -> np.ndarray:
    """:func:`arrival_times` of a compiled corpus (recorded arrivals computed once per corpus)."""
    if mode not in (None, "recorded"):
        return arrival_times(corpus.episodes, mode, rate_per_sec=rate, seed=seed)
    if corpus.recorded_arrivals is None:
        corpus.recorded_arrivals = arrival_times(corpus.episodes)
    return corpus.recorded_arrivals.copy()  # the caller's own array: frames may hold it


def simulate(
    episodes: Iterable[Episode] | Corpus,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    censored: CensoringMode = DEFAULT_CENSORING,
    slots: int | None = None,
    arrivals: ArrivalMode | None = None,
    arrival_rate: float | None = None,
    workers: int | None = None,
    seed: int = 0,
    hedges: HedgePlan | None = None,
) -> ReplayResult:
    """Replay ``episodes`` on the SimPy twin under ``policy`` (:meth:`Policy.of` with
    ``narrowing``).

    ``censored``: ``"wedge"`` (a censored call never returns), ``"observed"`` or ``"impute"``
    (it returns at a seeded Kaplan–Meier draw,
    :func:`~reviewlab.engines._censoring.impute_durations`).
    ``slots``: simulate ``N`` reviewer slots (requests queue for a slot).
    ``arrivals``: ``"recorded"`` (default) or ``"poisson"`` with ``arrival_rate``
    requests per second. ``workers``: a pool of ``K`` worker threads shared by
    all calls, in which zombies hold threads. ``seed`` drives imputation, Poisson arrivals and
    second attempts. ``hedges``: the replay's hedge plan when the rewrite fixed point carries
    it (:mod:`reviewlab.engines._reaction`); by default it is planned from ``episodes``.
    A policy with a breaker is refused by name: :func:`reviewlab.replay` replays it (the
    rewrite fixed point withholds the calls, then runs this engine).
    """
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    spine = Policy.of(policy, narrowing)
    TWIN.check(spine, censored, single_pass=True)  # the breaker is the dispatch's fixed point
    try:
        corpus = open_corpus(episodes)  # a list: its kept handle, compiled once
    except TypeError:
        check_corpus(list(episodes))  # a non-episode named as this function's: episodes[i]
        raise
    sim, arrival = run_simulation(
        corpus,
        spine,
        censored=censored,
        pool=PoolShape(slots, workers, arrivals, arrival_rate),
        seed=seed,
        hedges=hedges,
    )
    with paused_gc():
        assumptions = {"censored": censored, "seed": seed}
        return _result(arrival, sim, spine, assumptions, pooled=slots is not None)


def run_simulation(
    corpus: CorpusSource,
    policy: Policy,
    *,
    censored: str = DEFAULT_CENSORING,
    pool: PoolShape = NO_POOL,
    seed: int = 0,
    hedges: HedgePlan | None = None,
) -> tuple[Simulation, np.ndarray]:
    """The simulation itself, without the frames: the per-episode runs (call rows) and the arrival
    times; ``pool``: the reviewer slots, worker threads and arrivals simulated around them."""
    slots, workers = pool.slots, pool.workers
    # The run allocates many small objects and makes no garbage cycles worth collecting mid-run; a
    # collection would rescan the whole corpus (tens of ms for 1k episodes) for nothing.
    with paused_gc():
        twin_corpus = open_corpus(corpus).twin_compiled()  # kept by the handle
        arrival = _arrivals(twin_corpus, pool.arrivals, pool.arrival_rate, seed)
        imputed = completion_times(twin_corpus.episodes, censored, seed)
        env = simpy.Environment()
        sim = Simulation(env, BoundResolver(policy), twin_corpus, imputed, seed, hedges)
        if slots is not None:
            sim.slots = SlotPool(env, slots)
            sim.timeline = SlotTimeline(sim.slots.ids)
        if workers is not None:
            sim.workers = WorkerPool(env, workers)
        arrival_list = arrival.tolist()
        if slots is None and workers is None:
            # Independent episodes: one process runs them all (see reviewlab.engines.twin._episode).
            env.process(corpus_process(sim, arrival_list))
        else:
            for position, arrival_sec in enumerate(arrival_list):
                env.process(episode_process(sim, position, arrival_sec))
        env.run()
    return sim, arrival


def _result(
    arrival: np.ndarray,
    sim: Simulation,
    policy: Policy,
    assumptions: dict[str, Any],
    *,
    pooled: bool,
) -> ReplayResult:
    """The run's :class:`ReplayResult`; without a reviewer pool its frames are built on first
    access (:class:`~reviewlab.engines._result.FramesOnDemand`), its summary at once."""
    end = np.array(sim.end_sec, dtype=float)
    wall = end - arrival if end.size else np.empty(0)
    if not pooled:
        return FramesOnDemand(
            lambda: _assembled(sim, arrival, wall, policy, assumptions, None),
            summary=column_summary(sim, wall),
            engine="twin",
            policy=policy,
            assumptions={"reaction": "as_recorded", **assumptions},
        )
    horizon = float(end.max()) if end.size else 0.0
    pool = PoolFrames(arrival, np.array(sim.start_sec, dtype=float), sim.timeline.frame(horizon))
    return _assembled(sim, arrival, wall, policy, assumptions, pool)


def _assembled(
    sim: Simulation,
    arrival: np.ndarray,
    wall: np.ndarray,
    policy: Policy,
    assumptions: dict[str, Any],
    pool: PoolFrames | None,
) -> ReplayResult:
    """The full result through :func:`~reviewlab.engines._result.assemble` (frames and summary)."""
    return assemble(
        columns_frame(sim, arrival).assign(**hedge_columns(sim)),
        EpisodeArrays(sim.corpus.ids, sim.slot_id, wall, sim.max_silence_sec),
        peak_loose_workers=metrics.peak_overlap(sim.loose_starts, sim.loose_ends),
        engine="twin",
        policy=policy,
        assumptions=assumptions,
        pool=pool,
    )


def column_summary(sim: Simulation, wall: np.ndarray) -> dict[str, Any]:
    """The run's summary from its decided columns, without building a frame.

    :func:`~reviewlab.core._metrics.summarize_arrays` given exactly the arrays
    :func:`~reviewlab.core._metrics.summarize` reads off the frames :func:`_assembled`
    builds (the same values in the same row order), so it is that summary to the bit
    (``tests/engines/test_twin.py`` compares the two).
    """
    columns = sim.calls
    outcome = np.array(columns.outcome, dtype=object)
    gap = np.array(columns.source_gap, dtype=object)
    bound_by = np.array(columns.bound_by, dtype=object)
    requested = sim.corpus.requested_lines
    credited = np.array(columns.credited_lines, dtype=np.int64)
    abandoned = gap == SOURCE_GAP_ABANDONED
    executed = outcome == OUTCOME_EXECUTED
    arrays = metrics.SummaryArrays(
        dispatched=executed | (outcome == OUTCOME_ERROR),
        abandoned=abandoned,
        zombie_sec=np.array(columns.zombie_sec, dtype=float),
        bounded=bound_by != "unbounded",
        by_deadline=bound_by == "deadline",
        requested_lines=requested,
        credited_lines=credited,
        timeout_lost_lines=metrics.timeout_lost_lines(
            requested, credited, abandoned, executed, np.isin(gap, SOURCE_GAPS_HELD_BACK)
        ),
        wall_sec=wall,
        max_silence_sec=np.array(sim.max_silence_sec, dtype=float),
        peak_loose_workers=metrics.peak_overlap(sim.loose_starts, sim.loose_ends),
        hedged=hedge_columns(sim).get("hedged"),
    )
    return metrics.summarize_arrays(arrays)

""":func:`replay_real`: every recorded episode through a real ReviewEpisode and BoundedExecutor,
under one :class:`~reviewlab.core._deadline.ScaledClock` (see the package docstring)."""

from __future__ import annotations

import gc
import math
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from reviewlab.core._breaker import BreakerRule, BreakerState
from reviewlab.core._deadline import ScaledClock, clock_scope, execution_deadline_scope
from reviewlab.core._policy import Policy, SupportsTimeoutFor
from reviewlab.core._vocab import (
    CENSORING_MODES,
    DEFAULT_CENSORING,
    DEFAULT_REACTION,
    CensoringMode,
    Reaction,
)
from reviewlab.engines._censoring import HedgePlan, completion_times, hedge_plan
from reviewlab.engines._honours import REAL
from reviewlab.engines._reaction import check_reaction
from reviewlab.engines._result import ReplayResult
from reviewlab.engines._shared import arrival_times, check_corpus
from reviewlab.engines.real._actors import PlannedHedges, ReplayModel, ReplayRegistry
from reviewlab.engines.real._calibrate import clock_resolution_sec, default_time_scale
from reviewlab.engines.real._frames import RealRun, overhead, replay_result, settle_loose
from reviewlab.engines.real._plan import plan_episode
from reviewlab.live._episode import ReviewEpisode
from reviewlab.live._executor import BoundedExecutor
from reviewlab.recording._files import paused_gc
from reviewlab.recording._schema import Episode


def replay_real(
    episodes: Iterable[Episode],
    policy: Policy | SupportsTimeoutFor | None = None,
    *,
    censored: CensoringMode = DEFAULT_CENSORING,
    reaction: Reaction = DEFAULT_REACTION,
    time_scale: float | None = None,
    seed: int = 0,
    concurrency: int = 32,
    settle_sec: float = 2.0,
) -> ReplayResult:
    """Replay ``episodes`` through the real episode and executor on threads, under ``policy``
    (a :class:`Policy`, or a bare rule :meth:`Policy.of` reads), every part of it honoured.

    ``time_scale`` is the real seconds one recorded second lasts (default:
    :func:`default_time_scale`); ``concurrency`` episodes run at once; ``settle_sec`` is how
    long (real seconds) to wait at the end for loose workers that will return.
    """
    _check_options(censored, reaction, time_scale, concurrency)
    spine = Policy.of(policy)
    REAL.check(spine, censored, reaction)
    corpus = list(episodes)
    check_corpus(corpus)
    imputed = completion_times(corpus, censored, seed)
    hedges = hedge_plan(corpus, spine, imputed, seed)
    scale = float(time_scale) if time_scale is not None else default_time_scale(corpus)
    runner = _Runner(spine, reaction, ScaledClock(scale), hedges)
    runs = runner.runs(corpus, imputed)
    try:
        runner.run_all(runs, concurrency)
        settle_loose(runs, settle_sec)
        # The clock's measured resolution in recorded seconds: within it, a window is a tie.
        tie_sec = clock_resolution_sec() / scale
        assumptions = {"censored": censored, "seed": seed, "time_scale": scale, "tie_sec": tie_sec}
        replayed = replay_result(runs, spine, assumptions, hedging=hedges is not None)
        replayed.assumptions["reaction"] = reaction
        replayed.assumptions.update(overhead(replayed, runs, scale))
        return replayed
    finally:
        runner.release.set()
        runner.executor.shutdown()


def _check_options(
    censored: object, reaction: Reaction, time_scale: object, concurrency: object
) -> None:
    """Refuse a bad censoring mode, reaction, time scale or concurrency, naming it."""
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    check_reaction(reaction)
    if time_scale is not None and (
        isinstance(time_scale, bool)
        or not isinstance(time_scale, int | float)
        or not (math.isfinite(time_scale) and time_scale > 0)
    ):
        raise ValueError(f"time_scale: expected a positive finite factor, got {time_scale!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(
            f"concurrency: expected a positive number of episode threads, got {concurrency!r}"
        )


class _Runner:
    """One real replay's shared parts: the policy, the scaled clock, the one executor every
    episode submits to, and the event that releases the wedged calls at the end.

    Lifecycle: :meth:`runs` plans every episode; :meth:`run_all` runs them on threads, each
    run's result, error and clock times recorded on it; the caller then sets ``release`` and
    shuts the executor down.
    """

    def __init__(
        self, spine: Policy, reaction: Reaction, clock: ScaledClock, hedges: HedgePlan | None
    ) -> None:
        self.spine = spine
        self.reaction = reaction
        self.clock = clock
        self.hedges = hedges
        self.release = threading.Event()
        self.executor = BoundedExecutor(
            loose_cap=None,
            name="replay-real",
            hedging=None if hedges is None else PlannedHedges(spine.hedges, hedges.planned),
        )
        self.clock_zero = 0.0  # the clock when the episodes start (set by run_all)

    def runs(self, corpus: list[Episode], imputed: Any) -> list[RealRun]:
        """Every episode's plan and stand-in registry, call rows numbered across the corpus."""
        unbounded = self.spine.narrowing.mode == "unbounded"
        runs = []
        first_row = 0
        for episode, arrival_sec in zip(corpus, arrival_times(corpus).tolist(), strict=True):
            plan = plan_episode(episode, arrival_sec, imputed, self.hedges, first_row)
            first_row += len(plan.calls)
            registry = ReplayRegistry(plan, self.clock, self.release, unbounded)
            runs.append(RealRun(plan, registry))
        return runs

    def run_all(self, runs: list[RealRun], concurrency: int) -> None:
        """Run every chain of episodes on ``concurrency`` threads; an episode that failed is
        raised, naming it, once every thread has finished."""
        chains = _chains(runs, self.spine.breaker)
        self.clock_zero = self.clock.now()
        # The run is a measurement on the real clock: a full collection of the caller's heap
        # (hundreds of ms in a big process) would stop every episode thread at once and show up
        # as latency. Collect once before, then keep the collector off while the clock runs.
        gc.collect()
        with (
            paused_gc(),
            ThreadPoolExecutor(
                max_workers=concurrency, thread_name_prefix="replay-episode"
            ) as pool,
        ):
            list(pool.map(self.run_chain, chains))
        for run in runs:
            if run.error is not None:
                raise RuntimeError(
                    f"episode {run.plan.episode.id!r}: real replay failed: {run.error!r}"
                ) from run.error

    def run_chain(self, chain: list[RealRun]) -> None:
        """Run a chain's episodes one after another, on one thread."""
        rule, clock = self.spine.breaker, self.clock
        with clock_scope(clock):
            # A slot-scoped breaker: one state, the slot's episodes in start order.
            shared = BreakerState(rule) if rule is not None and rule.scope == "slot" else None
            for run in chain:
                if shared is not None and shared.rule.cooldown_sec is not None:
                    # A cool-down in seconds runs on the corpus clock: start at the arrival.
                    clock.sleep_for(self.clock_zero + run.plan.arrival_sec - clock.now())
                self.run_one(run, shared if shared is not None else rule)

    def run_one(self, run: RealRun, breaker: BreakerRule | BreakerState | None) -> None:
        """One episode through a real ReviewEpisode, under its recorded deadline."""
        registry, clock = run.registry, self.clock
        model = run.model = ReplayModel(run.plan, registry, clock, self.reaction)
        episode = ReviewEpisode(
            ".",
            model,
            policy=self.spine,
            registry_factory=registry.factory,
            executor=self.executor,
            breaker=breaker,
        )
        deadline = run.plan.episode.deadline_sec
        run.started = clock.now()
        try:
            with execution_deadline_scope(None if deadline is None else run.started + deadline):
                run.result = episode.execute()
        except BaseException as exc:  # noqa: BLE001 - reported after every thread has finished
            run.error = exc
        run.ended = clock.now()


def _chains(runs: list[RealRun], rule: BreakerRule | None) -> list[list[RealRun]]:
    """The runs as chains run one after another: a slot's episodes in start order under a
    slot-scoped breaker (slot ``""``: a chain of its own), else every run alone."""
    if rule is None or rule.scope != "slot":
        return [[run] for run in runs]
    chains: dict[object, list[tuple[float, int, RealRun]]] = {}
    for position, run in enumerate(runs):
        slot = run.plan.episode.slot
        key: object = slot if slot else ("alone", position)
        chains.setdefault(key, []).append((run.plan.arrival_sec, position, run))
    return [[run for _, _, run in sorted(chain, key=lambda c: c[:2])] for chain in chains.values()]

"""Hedge delays from a corpus, and the sweep over them that the hedging chart draws.

"Hedge ``read_file`` at its p95" needs the tool's p95 *duration*, and recorded durations are
right-censored (the wedged calls are exactly the long ones): :func:`hedge_delays` reads the
delays off the tool's Kaplan–Meier estimate; a quantile past the last observed return has no
finite delay and is left out.

:func:`sweep_hedge_delays` replays the corpus under a base policy with the tool
hedged at each delay — a :func:`~reviewlab.analysis.sweep.sweep` of
``make_grid(base, hedges={tool: delays})`` — and returns that frame with the
quantile of each delay (``hedge.quantile``) and the base's summary without hedges, the
two inputs of :func:`reviewlab.ui.charts._hedging.hedge_tradeoff` (p99 wall
against extra load). With ``held_out`` the delays come from one part of the corpus and the
figures from the other, so the best delay is not reported on the data that picked it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reviewlab.analysis._holdout import split_episodes
from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._vocab import DEFAULT_CENSORING, CensoringMode, EngineName
from reviewlab.engines._censoring import KaplanMeier, effective_observation
from reviewlab.engines._replay import replay
from reviewlab.recording._schema import Episode

DEFAULT_QUANTILES = (0.5, 0.75, 0.9, 0.95, 0.99)
"""The duration quantiles a hedge-delay sweep tries unless told otherwise."""


def hedge_delays(
    episodes: Sequence[Episode], tool: str, quantiles: Sequence[float] = DEFAULT_QUANTILES
) -> dict[float, float]:
    """``{quantile: delay}``: the tool's censoring-aware duration quantiles, in seconds.

    Quantiles past the last observed return are left out (no finite delay);
    a tool the corpus never calls, or never saw returning, is an error naming it.
    """
    times, events = [], []
    for episode in episodes:
        for call in episode.calls:
            if call.tool == tool:
                duration, completed = effective_observation(call)
                times.append(duration)
                events.append(completed)
    if not times:
        raise ParameterError("tool", f"the corpus never calls {tool!r}")
    estimate = KaplanMeier(times, events)
    if not estimate.estimable:
        raise ParameterError(
            "tool", f"no call of {tool!r} ever returned; no delay can be estimated"
        )
    delays = {}
    for q in quantiles:
        delay = estimate.quantile(float(q))
        if delay != float("inf") and delay > 0:
            delays[float(q)] = delay
    return delays


@dataclass(frozen=True)
class HedgeAxis:
    """The hedge a delay sweep tries: ``tool`` hedged at each of its duration ``quantiles``
    (:func:`hedge_delays`), at most ``max_share`` of its calls at each point."""

    tool: str
    quantiles: Sequence[float] = DEFAULT_QUANTILES
    max_share: float = 0.05


def sweep_hedge_delays(
    episodes: Sequence[Episode],
    axis: HedgeAxis,
    *,
    base: Policy | TimeoutPolicy | None = None,
    engine: EngineName = "vectorized",
    censored: CensoringMode = DEFAULT_CENSORING,
    seed: int = 0,
    held_out: float | None = None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replay ``episodes`` with the ``axis`` tool hedged at each of its duration quantiles.

    Returns the sweep frame (one row per delay, in quantile order, with
    ``hedge.quantile``, ``hedge.<tool>.after_sec``, ``hedges``,
    ``extra_call_share``, ``wall_p99_sec`` and every other summary figure) and
    the summary of ``base`` without hedges (the chart's reference line). With ``held_out``
    (a share), the delays are read off a seeded ``1 - held_out`` share of the episodes and
    every figure is replayed on the rest, which the delays never saw
    (:func:`~reviewlab.analysis._holdout.split_episodes`); ``frame.attrs`` says how many
    episodes each part had.
    """
    corpus = list(episodes)
    chosen_on = corpus
    if held_out is not None:
        chosen_on, corpus = split_episodes(corpus, held_out, seed)
    base_policy = Policy.of(base)
    tool = axis.tool
    delays = hedge_delays(chosen_on, tool, axis.quantiles)
    if not delays:
        raise ParameterError("quantiles", f"none gives {tool!r} a finite hedge delay")
    by_delay: dict[float, float] = {}
    for q, delay in delays.items():
        by_delay.setdefault(delay, q)  # two quantiles at one delay: the lower names it
    grid = make_grid(base_policy, hedges={tool: list(by_delay)}, hedge_share=axis.max_share)
    frame = sweep(corpus, grid, engine=engine, censored=censored, seed=seed)
    frame.insert(0, "hedge.quantile", frame[f"hedge.{tool}.after_sec"].map(by_delay))
    without_hedges = base_policy.replace(hedges={})
    reference = replay(corpus, without_hedges, engine=engine, censored=censored, seed=seed).summary
    frame = frame.sort_values("hedge.quantile", kind="stable").reset_index(drop=True)
    frame.attrs["delays_chosen_on"] = len(chosen_on)
    frame.attrs["reported_on"] = len(corpus)
    return frame, reference

"""Replay recorded episodes under another policy: one entry point, one result type, three engines.

* ``engine="twin"`` — the SimPy discrete-event twin (:mod:`reviewlab.engines.twin`), the
  reference; the only engine that simulates a reviewer pool (``slots=N``).
* ``engine="vectorized"`` — NumPy over all calls of all episodes at once
  (:mod:`reviewlab.engines.vectorized`); exactly the twin's answers for episodes
  without a pool, far faster.
* ``engine="real"`` — every episode through the real :class:`ReviewEpisode` and
  :class:`BoundedExecutor` on threads (:mod:`reviewlab.engines.real`), with tools
  that sleep their recorded duration times ``time_scale``.

Every engine returns a :class:`ReplayResult` whose frames have the columns of
:data:`reviewlab.core.metrics.CALL_FRAME_COLUMNS` and :data:`reviewlab.core.metrics.EPISODE_COLUMNS`
and whose summary is :func:`reviewlab.core.metrics.summarize`.

A replay is a counterfactual resting on two assumptions (design §5a), the same
for every policy and engine and named in ``ReplayResult.assumptions``: what a
censored call does (``censored``: ``wedge`` never returns, ``observed`` returns
at its censoring time, ``impute`` at a seeded Kaplan–Meier draw) and what the
model does after an abandonment (``reaction``:
:mod:`reviewlab.engines.reaction`). :func:`replay_bounds` shows both censoring
ends side by side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from reviewlab.core.breaker import breaker_rule, unbroken
from reviewlab.core.policy import Narrowing, SupportsTimeoutFor, TimeoutPolicy
from reviewlab.core.vocab import CENSORING_MODES, ENGINES, CensoringMode, EngineName, Reaction
from reviewlab.engines.reaction import check_reaction, needs_rewrite, react
from reviewlab.engines.real import replay_real
from reviewlab.engines.result import ReplayResult
from reviewlab.engines.twin import simulate
from reviewlab.engines.vectorized import replay_vectorized
from reviewlab.recording.schema import Episode

__all__ = ["BOUNDS_COLUMNS", "ReplayBounds", "replay", "replay_bounds"]


BOUNDS_COLUMNS = ("optimistic", "pessimistic")
"""The two columns of :attr:`ReplayBounds.summary`: ``censored="observed"`` and
``censored="wedge"``."""


def replay(
    episodes: Iterable[Episode],
    policy: SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    engine: EngineName = "twin",
    censored: CensoringMode = "wedge",
    reaction: Reaction = "as_recorded",
    slots: int | None = None,
    time_scale: float | None = None,
    **options: Any,
) -> ReplayResult:
    """Replay ``episodes`` under ``policy`` (default :meth:`TimeoutPolicy.ouroboros`) and
    ``narrowing``.

    ``censored``: what a call that never returned in the recording does —
    ``"wedge"`` never returns (an unbounded replay then waits forever),
    ``"observed"`` returns at its recorded censoring time, ``"impute"`` at a
    time drawn (seeded by ``options["seed"]``) from the tool's censoring-aware
    duration distribution. ``reaction``: what the model does after an
    abandonment (:mod:`reviewlab.engines.reaction`). ``slots`` simulates a
    reviewer pool (twin only). ``time_scale`` multiplies recorded durations for
    ``engine="real"`` (default: chosen so its overhead stays under 1 % of wall
    time, see :func:`reviewlab.engines.real.replay_real`).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    check_reaction(reaction)
    policy = policy if policy is not None else TimeoutPolicy.ouroboros()
    narrowing = narrowing or Narrowing()
    episodes = list(episodes)
    if slots is not None and engine != "twin":
        raise ValueError(
            f"slots: a reviewer pool is simulated only by engine='twin', not {engine!r}"
        )
    if time_scale is not None and engine != "real":
        raise ValueError(f"time_scale: used only by engine='real', not {engine!r}")
    if engine == "real":
        return replay_real(
            episodes,
            policy,
            narrowing,
            censored=censored,
            reaction=reaction,
            time_scale=time_scale,
            **options,
        )
    seed = int(options.get("seed", 0))

    # The engines replay calls; the breaker's withholding is the fixed point's (below).
    bare = unbroken(policy)

    def run(corpus: list[Episode], censored_mode: CensoringMode = censored) -> ReplayResult:
        if engine == "twin":
            return simulate(corpus, bare, narrowing, censored=censored_mode, slots=slots, **options)
        return replay_vectorized(corpus, bare, narrowing, censored=censored_mode, **options)

    if not needs_rewrite(policy, reaction):
        return run(episodes)
    # A reaction or a breaker: the rewrite fixed point (reviewlab.engines.reaction).
    return react(
        lambda corpus: run(corpus, "wedge"),
        episodes,
        reaction,
        censored=censored,
        seed=seed,
        breaker=breaker_rule(policy),
        policy=policy,
    )


@dataclass
class ReplayBounds:
    """Both censoring ends of one replay: ``observed`` (optimistic) and ``wedge`` (pessimistic)."""

    optimistic: ReplayResult
    """The replay under ``censored="observed"``: every censored call returns when last seen."""
    pessimistic: ReplayResult
    """The replay under ``censored="wedge"``: no censored call ever returns."""

    @property
    def summary(self) -> pd.DataFrame:
        """One row per summary metric, the optimistic and pessimistic values side by side."""
        keys = list(self.optimistic.summary)
        return pd.DataFrame(
            {
                "optimistic": pd.Series([self.optimistic.summary[k] for k in keys], dtype=object),
                "pessimistic": pd.Series(
                    [self.pessimistic.summary.get(k) for k in keys], dtype=object
                ),
            }
        ).set_axis(pd.Index(keys, name="metric"))

    @property
    def assumptions(self) -> dict[str, Any]:
        """What both ends share (engine, reaction, seed); ``censored`` is ``"bounds"``."""
        return {**self.optimistic.assumptions, "censored": "bounds"}


def replay_bounds(
    episodes: Iterable[Episode],
    policy: SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    **kwargs: Any,
) -> ReplayBounds:
    """:func:`replay` under both censoring ends; the other arguments as :func:`replay`'s."""
    if "censored" in kwargs:
        raise ValueError("censored: replay_bounds replays both 'observed' and 'wedge' itself")
    episodes = list(episodes)
    return ReplayBounds(
        optimistic=replay(episodes, policy, narrowing, censored="observed", **kwargs),
        pessimistic=replay(episodes, policy, narrowing, censored="wedge", **kwargs),
    )

"""Replay recorded episodes under another policy: one entry point, one result type, three engines.

``engine="twin"`` is the SimPy reference (:mod:`reviewlab.engines.twin`, the only one with a
reviewer pool, ``slots=N``); ``engine="vectorized"`` NumPy over every call at once
(:mod:`reviewlab.engines.vectorized`), the twin's answers without a pool, far faster;
``engine="real"`` every episode through the real executor on threads
(:mod:`reviewlab.engines.real`). Each returns a :class:`ReplayResult` whose frames have
:data:`reviewlab.core.metrics.CALL_FRAME_COLUMNS` and
:data:`reviewlab.core.metrics.EPISODE_COLUMNS`.

A replay is a counterfactual resting on two assumptions, named in
``ReplayResult.assumptions``: what a censored call does (``censored``) and what the model does
after an abandonment (``reaction``: :mod:`reviewlab.engines.reaction`); docs/semantics.md,
"What a replay assumes". :func:`replay_bounds` shows both censoring ends side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from reviewlab.core.policy import Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core.vocab import CENSORING_MODES, ENGINES, CensoringMode, EngineName, Reaction
from reviewlab.engines.censoring import HedgePlan
from reviewlab.engines.corpus import CorpusSource, open_corpus
from reviewlab.engines.reaction import check_reaction, needs_rewrite, react
from reviewlab.engines.real import replay_real
from reviewlab.engines.result import ReplayResult
from reviewlab.engines.twin import simulate
from reviewlab.engines.vectorized import replay_vectorized
from reviewlab.recording.schema import Episode

__all__ = ["BOUNDS_COLUMNS", "ReplayBounds", "episodes_needed", "replay", "replay_bounds"]


BOUNDS_COLUMNS = ("optimistic", "pessimistic")
"""The two columns of :attr:`ReplayBounds.summary`: ``censored="observed"`` and
``censored="wedge"``."""


def replay(
    corpus: CorpusSource,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    engine: EngineName = "twin",
    censored: CensoringMode = "wedge",
    reaction: Reaction = "as_recorded",
    slots: int | None = None,
    time_scale: float | None = None,
    client: Any = None,
    **options: Any,
) -> ReplayResult:
    """Replay ``corpus`` under ``policy`` (a :class:`Policy`, or a bare timeout rule with
    ``narrowing``: :meth:`Policy.of`; default :meth:`Policy.ouroboros`).

    ``corpus``: anything :func:`~reviewlab.engines.corpus.open_corpus` takes — a path (JSONL,
    JSONL.gz, Parquet, a partition directory), episodes, a compiled corpus or an open
    :class:`~reviewlab.engines.corpus.Corpus`. The vectorized engine replays its compiled
    columns (no ``Episode`` object: the summary and the frames come from the columns); the
    twin, the real engine, hedges, a breaker and a reaction other than ``as_recorded`` need the
    objects, and load them once through the handle, saying why (:func:`episodes_needed`).

    ``censored``: what a call that never returned in the recording does —
    ``"wedge"`` never returns (an unbounded replay then waits forever),
    ``"observed"`` returns at its recorded censoring time, ``"impute"`` at a
    time drawn (seeded by ``options["seed"]``) from the tool's censoring-aware
    duration distribution. ``reaction``: what the model does after an
    abandonment (:mod:`reviewlab.engines.reaction`). ``slots`` simulates a
    reviewer pool (twin only). ``time_scale`` multiplies recorded durations for
    ``engine="real"`` (default: chosen so its overhead stays under 1 % of wall
    time, see :func:`reviewlab.engines.real.replay_real`).

    Every part of the policy is honoured on every path: the engines replay its timeouts,
    narrowing, idle timeouts and hedges; its breaker is replayed here, by the rewrite fixed
    point (:mod:`reviewlab.engines.reaction`), which hands the engines the policy without it.

    ``client``: a ``distributed.Client`` or a scheduler address; the corpus's Parquet
    partitions are replayed on the cluster's workers and only the summary comes back
    (:mod:`reviewlab.engines.cluster`; ``engine="vectorized"``, no frames).
    """
    if client is not None:  # partitions replayed where they live, the summary merged exactly
        from reviewlab.engines.cluster import replay_on_cluster

        spine = Policy.of(policy, narrowing)
        return replay_on_cluster(
            corpus, spine, client=client, engine=engine, censored=censored, reaction=reaction,
            slots=slots, time_scale=time_scale, **options
        )  # fmt: skip
    if engine not in ENGINES:
        raise ValueError(f"engine: expected one of {', '.join(ENGINES)}, got {engine!r}")
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    check_reaction(reaction)
    spine = Policy.of(policy, narrowing)
    source = open_corpus(corpus)
    if slots is not None and engine != "twin":
        raise ValueError(
            f"slots: a reviewer pool is simulated only by engine='twin', not {engine!r}"
        )
    if time_scale is not None and engine != "real":
        raise ValueError(f"time_scale: used only by engine='real', not {engine!r}")
    seed = int(options.get("seed", 0))
    why = episodes_needed(spine, engine, reaction)
    if why is None:  # the compiled columns answer it, summary and frames
        compiled = source.compiled(censored, seed)
        return replay_vectorized(compiled, spine, censored=censored, **options)
    episodes = source.episodes(reason=why)
    if engine == "real":
        return replay_real(
            episodes,
            spine,
            censored=censored,
            reaction=reaction,
            time_scale=time_scale,
            **options,
        )
    if not needs_rewrite(spine, reaction):
        return _run(engine, episodes, spine, censored, slots, options)
    # The engines replay calls; the breaker's withholding is the fixed point's.
    bare = spine.replace(breaker=None)

    def run(corpus: list[Episode], hedges: HedgePlan | None) -> ReplayResult:
        return _run(engine, corpus, bare, "wedge", slots, options, hedges)

    return react(run, episodes, reaction, censored=censored, seed=seed, policy=spine)


def _run(
    engine: EngineName,
    corpus: list[Episode],
    policy: Policy,
    censored: CensoringMode,
    slots: int | None,
    options: dict[str, Any],
    hedges: HedgePlan | None = None,
) -> ReplayResult:
    """One replay of ``corpus`` by a simulated engine (``hedges``: a plan carried by the
    rewrite fixed point; ``None``: the engine plans from ``corpus``)."""
    if engine == "twin":
        return simulate(corpus, policy, censored=censored, slots=slots, hedges=hedges, **options)
    return replay_vectorized(corpus, policy, censored=censored, hedges=hedges, **options)


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


def episodes_needed(policy: Policy, engine: str, reaction: str) -> str | None:
    """Why a replay needs ``Episode`` objects rather than the compiled columns (``None``: it
    does not — the vectorized engine, ``as_recorded``, no hedges and no breaker)."""
    if engine == "twin":
        return "engine='twin' replays Episode objects"
    if engine == "real":
        return "engine='real' runs Episode objects through ReviewEpisode"
    if policy.hedges:
        return "hedges: the hedge plan rewrites the hedged calls of the episodes"
    if policy.breaker is not None:
        return "breaker: the breaker's fixed point rewrites the episodes"
    if reaction != "as_recorded":
        return f"reaction={reaction!r}: the reaction's fixed point rewrites the episodes"
    return None


def replay_bounds(
    corpus: CorpusSource,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    **kwargs: Any,
) -> ReplayBounds:
    """:func:`replay` under both censoring ends, on one opened corpus (compiled once per end,
    its episodes loaded at most once); the other arguments as :func:`replay`'s."""
    if "censored" in kwargs:
        raise ValueError("censored: replay_bounds replays both 'observed' and 'wedge' itself")
    source = open_corpus(corpus)
    return ReplayBounds(
        optimistic=replay(source, policy, narrowing, censored="observed", **kwargs),
        pessimistic=replay(source, policy, narrowing, censored="wedge", **kwargs),
    )

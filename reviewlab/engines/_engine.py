"""Engines as objects: what a caller chooses, each saying what it honours.

:class:`Twin` (the SimPy reference; ``slots=`` simulates a reviewer pool, ``workers=`` a shared
thread pool), :class:`Vectorized` (NumPy over every call), :class:`Real` (the real executor on
threads, ``time_scale=`` real seconds per recorded second) and :class:`Cluster` (the vectorized
engine on a Dask cluster's partitions, a summary only). Each carries an
:class:`~reviewlab.engines._honours.Honours` (``honours``), and answers :meth:`Engine.result`
and :meth:`Engine.summary` for an opened corpus and a :class:`~reviewlab.core._policy.Policy`;
:meth:`Engine.admit` is its one refusal. :func:`engine_of` maps a name (``"twin"``) to an
object with its defaults. :func:`reviewlab.engines._replay.replay` is the one dispatch every
caller goes through.
"""

from __future__ import annotations

import math
import numbers
import operator
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Policy
from reviewlab.core._vocab import ENGINES
from reviewlab.engines._corpus import Corpus
from reviewlab.engines._honours import CLUSTER, REAL, TWIN, VECTORIZED, Honours
from reviewlab.engines._result import ReplayResult, ReplaySummary


class Engine(ABC):
    """An engine a caller chooses: its name, what it honours, and its answers.

    Lifecycle of one replay: :meth:`admit` (refuse by name what it does not honour, before any
    work) → :meth:`result` (frames and summary; a :class:`ReplaySummary` for an engine without
    frames) or :meth:`summary` (the summary alone, as cheaply as the engine can).
    """

    name: ClassVar[str]
    """The engine's name in results and assumptions (``ReplayResult.engine``)."""
    honours: ClassVar[Honours]
    """What it honours: policy parts, censoring modes, reactions, options, frames."""

    def admit(
        self, policy: Policy, censored: str, reaction: str, options: Iterable[str] = ()
    ) -> None:
        """Refuse by name what this engine does not honour (:meth:`Honours.check`)."""
        self.honours.check(policy, censored, reaction, options)

    @abstractmethod
    def result(
        self, corpus: Corpus, policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> ReplayResult | ReplaySummary:
        """The replay of ``corpus`` under ``policy`` (admitted)."""

    def summary(
        self, corpus: Corpus, policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> dict[str, Any]:
        """The summary of the replay (:data:`~reviewlab.core.SUMMARY_KEYS` and more)."""
        return self.result(corpus, policy, censored=censored, reaction=reaction, seed=seed).summary

    def with_options(self, **options: Any) -> Engine:
        """A copy with some of its own fields set (``Twin().with_options(slots=6)``); an option
        it has no field for is a ``ValueError`` naming it and the engine."""
        if not options:
            return self
        own = set(self.honours.options)  # the declared options are the object's fields
        unknown = sorted(set(options) - own)
        if unknown:
            homes = [
                f"engine={name!r}"
                for name, kind in _BY_NAME.items()
                if set(unknown) <= set(kind.honours.options)
            ]
            raise ParameterError(
                f"{', '.join(unknown)}",
                f"not an option of {type(self).__name__} "
                f"(engine={self.name!r}), which takes {', '.join(sorted(own)) or 'none'}"
                + (f"; it belongs to {' or '.join(homes)}" if homes else ""),
            )
        return replace(self, **options)  # type: ignore[type-var]


def _simulated(
    engine: Twin | Vectorized,
    corpus: Corpus,
    policy: Policy,
    censored: str,
    reaction: str,
    seed: int,
) -> ReplayResult:
    """A replay by an engine that simulates calls: one pass, or the rewrite fixed point around
    its passes when a breaker or a reaction changes the rounds (reviewlab.engines._reaction)."""
    from reviewlab.engines._reaction import needs_rewrite, react

    why = episodes_needed(policy, engine.name, reaction)
    if why is None:  # the compiled columns answer it, summary and frames
        from reviewlab.engines.vectorized import replay_vectorized

        compiled = corpus.compiled(censored, seed)
        return replay_vectorized(compiled, policy, censored=censored, seed=seed)  # type: ignore[arg-type]
    episodes = corpus.episodes(reason=why)
    if not needs_rewrite(policy, reaction):
        return engine.one_pass(corpus, policy, censored, seed)
    bare = policy.replace(breaker=None)  # the engines replay calls; withholding is the point's

    def run(rewritten: list[Any], hedges: Any) -> ReplayResult:
        # A pass that rewrote nothing replays the corpus's own episodes: its handle's compiled
        # forms answer; a rewritten corpus is a handle of its own, kept by nobody.
        same = len(rewritten) == len(episodes) and all(map(operator.is_, rewritten, episodes))
        passed = corpus if same else Corpus(episodes=rewritten)
        return engine.one_pass(passed, bare, "wedge", seed, hedges)

    return react(run, episodes, reaction, censored=censored, seed=seed, policy=policy)


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


@dataclass(frozen=True)
class Twin(Engine):
    """The SimPy reference: every replayed part; the only engine with a reviewer pool.

    ``slots``: ``N`` reviewer slots (requests queue for one); ``workers``: ``K`` worker threads
    shared by all calls, held by zombies; ``arrivals`` (``recorded`` | ``poisson``) and
    ``arrival_rate`` (requests per second) with a pool.
    """

    slots: int | None = None
    workers: int | None = None
    arrivals: str | None = None
    arrival_rate: float | None = None
    name: ClassVar[str] = "twin"
    honours: ClassVar[Honours] = TWIN

    def __post_init__(self) -> None:
        for field_name in ("slots", "workers"):
            value = getattr(self, field_name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1
            ):
                raise ParameterError(field_name, f"expected a whole number >= 1, got {value!r}")

    def one_pass(
        self, corpus: Corpus, policy: Policy, censored: str, seed: int, hedges: Any = None
    ) -> ReplayResult:
        """One pass of the twin over ``corpus`` (no breaker: the fixed point's)."""
        from reviewlab.engines.twin import simulate

        return simulate(
            corpus,
            policy,
            censored=censored,  # type: ignore[arg-type]
            slots=self.slots,
            arrivals=self.arrivals,  # type: ignore[arg-type]
            arrival_rate=self.arrival_rate,
            workers=self.workers,
            seed=seed,
            hedges=hedges,
        )

    def result(
        self, corpus: Corpus, policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> ReplayResult:
        """The twin's replay (the fixed point around it for a breaker or a reaction)."""
        return _simulated(self, corpus, policy, censored, reaction, seed)


@dataclass(frozen=True)
class Vectorized(Engine):
    """NumPy over every call of every episode: the twin's answers without a pool, far faster.
    A corpus it can replay from its compiled columns never becomes ``Episode`` objects."""

    name: ClassVar[str] = "vectorized"
    honours: ClassVar[Honours] = VECTORIZED

    def one_pass(
        self, corpus: Corpus, policy: Policy, censored: str, seed: int, hedges: Any = None
    ) -> ReplayResult:
        """One pass over ``corpus`` (no breaker: the fixed point's)."""
        from reviewlab.engines.vectorized import replay_vectorized

        return replay_vectorized(
            corpus,
            policy,
            censored=censored,  # type: ignore[arg-type]
            seed=seed,
            hedges=hedges,
        )

    def result(
        self, corpus: Corpus, policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> ReplayResult:
        """The vectorized replay: from the compiled columns when it can, else the episodes."""
        return _simulated(self, corpus, policy, censored, reaction, seed)

    def summary(
        self, corpus: Corpus, policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> dict[str, Any]:
        """The summary alone: from the compiled columns without building a frame when the
        policy and reaction allow it."""
        if episodes_needed(policy, self.name, reaction) is None:
            return corpus.compiled(censored, seed).summary(policy)
        return self.result(corpus, policy, censored=censored, reaction=reaction, seed=seed).summary


@dataclass(frozen=True)
class Real(Engine):
    """Every episode through the real episode and executor on threads, every part honoured
    but another SDK's cap rule. ``time_scale``: real seconds per recorded second (default:
    chosen so the overhead stays under 1 % of wall time); ``concurrency`` episodes at once;
    ``settle_sec`` to wait at the end for loose workers that will return."""

    time_scale: float | None = None
    concurrency: int = 32
    settle_sec: float = 2.0
    name: ClassVar[str] = "real"
    honours: ClassVar[Honours] = REAL

    def __post_init__(self) -> None:
        scale = self.time_scale
        if scale is not None and (
            isinstance(scale, bool)
            or not isinstance(scale, numbers.Real)
            or not 0.0 < float(scale) < math.inf
        ):
            raise ParameterError("time_scale", f"expected a positive finite factor, got {scale!r}")

    def result(
        self, corpus: Corpus, policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> ReplayResult:
        """The real replay of the corpus's episodes."""
        from reviewlab.engines.real import replay_real

        return replay_real(
            corpus.episodes(reason="engine='real' runs Episode objects through ReviewEpisode"),
            policy,
            censored=censored,  # type: ignore[arg-type]
            reaction=reaction,  # type: ignore[arg-type]
            time_scale=self.time_scale,
            seed=seed,
            concurrency=self.concurrency,
            settle_sec=self.settle_sec,
        )


@dataclass(frozen=True)
class Cluster(Engine):
    """The vectorized engine on a Dask cluster (``client``: a ``distributed.Client`` or a
    scheduler address): each worker replays its Parquet partitions and only the summary comes
    back, merged exactly (:mod:`reviewlab.engines.cluster`). Needs the ``cluster`` extra."""

    client: Any = None
    name: ClassVar[str] = "vectorized"
    honours: ClassVar[Honours] = CLUSTER

    def __post_init__(self) -> None:
        if self.client is None:
            raise ParameterError(
                "client", "Cluster(client) needs a distributed.Client or an address"
            )

    def result(
        self, corpus: Corpus, policy: Policy, *, censored: str, reaction: str, seed: int
    ) -> ReplaySummary:
        """The summary merged from the partitions; no frame is gathered to the caller."""
        from reviewlab.engines.cluster import replay_on_cluster

        return replay_on_cluster(corpus, policy, client=self.client, censored=censored, seed=seed)


_BY_NAME: dict[str, type[Engine]] = {"twin": Twin, "vectorized": Vectorized, "real": Real}


def engine_of(engine: Engine | str | None = None, *, client: Any = None, **options: Any) -> Engine:
    """The engine object a caller chose: itself, or the object a name stands for with its
    defaults and ``options`` (``"twin"``, ``slots=6`` → ``Twin(slots=6)``); ``None`` is the
    twin, or :class:`Cluster` with a ``client``. A name with a ``client`` must be
    ``"vectorized"`` (the cluster's engine); the twin and the real engine say in one line why
    they cannot run there."""
    if client is not None:
        if isinstance(engine, Cluster):
            raise ParameterError("client", "given twice (Cluster(client) and client=); give one")
        if not (engine in (None, "vectorized") or isinstance(engine, Vectorized)):
            shown = engine if isinstance(engine, str) else type(engine).__name__
            raise ParameterError(
                "engine",
                "a replay on a cluster is Cluster(client)'s, the vectorized engine on "
                f"the partitions; {shown!r} replays Episode objects in-process",
            )
        return Cluster(client).with_options(**options)
    if engine is None:
        engine = "twin"
    if isinstance(engine, Engine):
        return engine.with_options(**options)
    if engine not in _BY_NAME:
        raise ParameterError(
            "engine",
            f"expected one of {', '.join(ENGINES)} or an engine object "
            f"(Twin(), Vectorized(), Real(), Cluster(client)), got {engine!r}",
        )
    return _BY_NAME[engine]().with_options(**options)

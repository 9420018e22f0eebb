"""Replay recorded episodes under another policy: one entry point, one dispatch, four engines.

The engines are objects (:mod:`reviewlab.engines._engine`): ``Twin()`` the SimPy reference
(the only one with a reviewer pool, ``slots=N``), ``Vectorized()`` NumPy over every call at
once, ``Real()`` every episode through the real executor on threads, ``Cluster(client)`` the
vectorized engine on a Dask cluster's partitions. A name (``engine="twin"``) stands for the
object with its defaults. :func:`dispatch` is where every caller's replay goes: the engine
admits the policy by its declaration (``engine.honours``) or refuses by name, then answers with
a :class:`ReplayResult` (frames with :data:`reviewlab.core._metrics.CALL_FRAME_COLUMNS` and
:data:`reviewlab.core._metrics.EPISODE_COLUMNS`) or, without frames, a :class:`ReplaySummary`.

A replay is a counterfactual resting on two assumptions, named in
``ReplayResult.assumptions``: what a censored call does (``censored``) and what the model does
after an abandonment (``reaction``: :mod:`reviewlab.engines._reaction`); docs/semantics.md,
"What a replay assumes". :func:`replay_bounds` shows both censoring ends side by side.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, overload

import pandas as pd

from reviewlab.core._display import RichDisplay
from reviewlab.core._errors import ParameterError
from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core._timeouts import TimeoutPolicy
from reviewlab.core._vocab import (
    CENSORING_MODES,
    DEFAULT_CENSORING,
    DEFAULT_REACTION,
    CensoringMode,
    EngineName,
    Reaction,
)
from reviewlab.engines._corpus import CorpusSource, open_corpus
from reviewlab.engines._engine import (
    Cluster,
    Engine,
    Real,
    Twin,
    Vectorized,
    engine_of,
)
from reviewlab.engines._reaction import check_reaction
from reviewlab.engines._result import ReplayResult, ReplaySummary

BOUNDS_COLUMNS = ("optimistic", "pessimistic")
"""The two columns of :attr:`ReplayBounds.summary`: ``censored="observed"`` and
``censored="wedge"``."""


@overload
def replay(
    corpus: CorpusSource,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    engine: Twin | Vectorized | Real | EngineName | str | None = None,
    censored: CensoringMode | str = DEFAULT_CENSORING,
    reaction: Reaction | str = DEFAULT_REACTION,
    seed: int = 0,
    client: None = None,
    **options: Any,
) -> ReplayResult: ...


@overload
def replay(
    corpus: CorpusSource,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    engine: Engine | EngineName | str | None = None,
    censored: CensoringMode | str = DEFAULT_CENSORING,
    reaction: Reaction | str = DEFAULT_REACTION,
    seed: int = 0,
    client: Any = None,
    **options: Any,
) -> ReplayResult | ReplaySummary: ...


def replay(
    corpus: CorpusSource,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    engine: Engine | EngineName | str | None = None,
    censored: CensoringMode | str = DEFAULT_CENSORING,
    reaction: Reaction | str = DEFAULT_REACTION,
    seed: int = 0,
    client: Any = None,
    **options: Any,
) -> ReplayResult | ReplaySummary:
    """Replay ``corpus`` under ``policy`` (a :class:`Policy`, or a bare timeout rule with
    ``narrowing``: :meth:`Policy.of`, the one conversion; default :meth:`Policy.ouroboros`).

    ``corpus``: anything :func:`~reviewlab.engines._corpus.open_corpus` takes — a path (JSONL,
    JSONL.gz, Parquet, a partition directory), episodes, a compiled corpus or an open
    :class:`~reviewlab.engines._corpus.Corpus`.

    ``engine``: an engine object (:class:`~reviewlab.engines._engine.Twin` ``(slots=,
    workers=)``, :class:`~reviewlab.engines._engine.Vectorized`,
    :class:`~reviewlab.engines._engine.Real` ``(time_scale=)``,
    :class:`~reviewlab.engines._engine.Cluster` ``(client)``) or a name that stands for one
    with its defaults; ``options`` set the chosen engine's own fields (``slots=6``,
    ``time_scale=0.1``). Default: the twin, or with ``client`` (a ``distributed.Client`` or a
    scheduler address) the cluster, which answers with a
    :class:`~reviewlab.engines._result.ReplaySummary` (no frames); what the cluster cannot
    replay is refused in one line saying why.

    ``censored``: what a call that never returned in the recording does — ``"wedge"`` never
    returns (an unbounded replay then waits forever), ``"observed"`` returns at its recorded
    censoring time, ``"impute"`` at a time drawn (seeded by ``seed``) from the tool's
    censoring-aware duration distribution. ``reaction``: what the model does after an
    abandonment (:mod:`reviewlab.engines._reaction`).

    Every engine honours what its declaration (``engine.honours``) lists and refuses the rest
    by name before any work: this is the one dispatch every caller goes through.
    """
    if censored not in CENSORING_MODES:
        raise ParameterError(
            "censored", f"expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    check_reaction(reaction)
    spine = (
        _default_policy() if policy is None and narrowing is None else Policy.of(policy, narrowing)
    )
    chosen = engine_of(engine, client=client, **options)
    return dispatch(corpus, spine, chosen, censored=censored, reaction=reaction, seed=seed)


@functools.cache
def _default_policy() -> Policy:
    """The reference policy (what :meth:`Policy.of` makes of nothing), made once: a policy is
    frozen, and the engines keep what they resolve of it while the same object comes back."""
    return Policy(timeouts=TimeoutPolicy.ouroboros(), narrowing=Narrowing())


def dispatch(
    corpus: CorpusSource,
    policy: Policy,
    engine: Engine,
    *,
    censored: str = DEFAULT_CENSORING,
    reaction: str = DEFAULT_REACTION,
    seed: int = 0,
) -> ReplayResult | ReplaySummary:
    """The one dispatch: ``engine`` admits ``policy`` (or refuses by name), then answers for
    the opened corpus. Callers inside the library that hold a :class:`Policy` and an engine
    object come here; :func:`replay` is the public door."""
    engine.admit(policy, censored, reaction)
    if isinstance(engine, Cluster):  # its partitions are read where they live
        return engine.result(corpus, policy, censored=censored, reaction=reaction, seed=seed)  # type: ignore[arg-type]
    source = open_corpus(corpus)
    return engine.result(source, policy, censored=censored, reaction=reaction, seed=seed)


@dataclass
class ReplayBounds(RichDisplay, display="replay_bounds"):
    """Both censoring ends of one replay: ``observed`` (optimistic) and ``wedge`` (pessimistic)."""

    optimistic: ReplayResult | ReplaySummary
    """The replay under ``censored="observed"``: every censored call returns when last seen."""
    pessimistic: ReplayResult | ReplaySummary
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
    corpus: CorpusSource,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    **kwargs: Any,
) -> ReplayBounds:
    """:func:`replay` under both censoring ends, on one opened corpus (compiled once per end,
    its episodes loaded at most once); the other arguments as :func:`replay`'s."""
    if "censored" in kwargs:
        raise ParameterError("censored", "replay_bounds replays both 'observed' and 'wedge' itself")
    spine = Policy.of(policy, narrowing)
    source = open_corpus(corpus) if kwargs.get("client") is None else corpus
    return ReplayBounds(
        optimistic=replay(source, spine, censored="observed", **kwargs),
        pessimistic=replay(source, spine, censored="wedge", **kwargs),
    )

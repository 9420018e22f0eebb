"""The vectorized engine's entry: compile a corpus once, keep it while it is replayed, replay it.

:func:`compile_corpus` builds a :class:`~reviewlab.engines.vectorized._compiled.CompiledCorpus`;
:func:`cached_corpus` keeps the last :data:`CACHE_SIZE` of them for the very episode objects
replayed again; :func:`replay_vectorized` is the ``engine="vectorized"`` entry of
:func:`reviewlab.engines._replay.replay` (hedges through
:mod:`reviewlab.engines.vectorized._hedging`; a breaker and a cap rule refused by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core._vocab import CensoringMode
from reviewlab.engines._censoring import HedgePlan
from reviewlab.engines._corpus_cache import CorpusCache
from reviewlab.engines._honours import VECTORIZED
from reviewlab.engines._result import ReplayResult
from reviewlab.engines.vectorized._compiled import CompiledCorpus
from reviewlab.engines.vectorized._hedging import replay_hedged
from reviewlab.recording._schema import Episode


def compile_corpus(
    episodes: Sequence[Episode], *, censored: str = "wedge", seed: int = 0
) -> CompiledCorpus:
    """Compile ``episodes`` once for many replays (``censored`` and ``seed`` fix the imputed
    durations)."""
    return CompiledCorpus(list(episodes), censored=censored, seed=seed)


CACHE_SIZE = 2
"""Compiled corpora :func:`replay_vectorized` keeps (least recently used goes first)."""
_CACHE: CorpusCache[CompiledCorpus] = CorpusCache(CACHE_SIZE)


def cached_corpus(episodes: Sequence[Episode], *, censored: str, seed: int) -> CompiledCorpus:
    """The compiled corpus of these very episode objects, compiled once while they are replayed.

    As the twin's cache (:func:`reviewlab.engines.twin._corpus.compiled`, both a
    :class:`~reviewlab.engines._corpus_cache.CorpusCache`): the same episodes in the same
    order, with ``censored`` and ``seed``. Episodes are frozen; :func:`clear_compiled` after
    mutating their lists.
    """
    episodes = episodes if isinstance(episodes, list) else list(episodes)
    corpus = _CACHE.get(episodes, censored, seed)
    if corpus is None:
        corpus = _CACHE.put(
            episodes,
            compile_corpus(episodes, censored=censored, seed=seed),
            censored,
            seed,
        )
    return corpus


def clear_compiled() -> None:
    """Forget the compiled corpora :func:`replay_vectorized` kept."""
    _CACHE.clear()


def replay_vectorized(
    episodes: Sequence[Episode] | CompiledCorpus,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    censored: CensoringMode = "wedge",
    seed: int = 0,
    hedges: HedgePlan | None = None,
    **options: Any,
) -> ReplayResult:
    """Replay ``episodes`` (or an already compiled corpus) with the vectorized engine; the twin's
    answers, fast.

    ``policy`` as :meth:`Policy.of` takes it, with ``narrowing``. A list of episodes is
    compiled once and kept while the same objects are replayed again (:func:`cached_corpus`);
    a corpus on disk is compiled from its columns by
    :func:`reviewlab.engines.vectorized._columns.compile_columns` (pass its result). A hedging
    policy is replayed from the episodes (:mod:`reviewlab.engines.vectorized._hedging`;
    ``hedges``: the plan the rewrite fixed point carries, else planned from ``episodes``).
    A breaker is refused by name: :func:`reviewlab.replay` replays it.
    """
    spine = Policy.of(policy, narrowing)
    VECTORIZED.check(spine, censored, single_pass=True)  # the breaker: the dispatch's point
    if spine.hedges:  # hedged calls: one settling pass of a rewritten corpus
        return replay_hedged(
            compile_corpus, episodes, spine, censored=censored, seed=seed, plan=hedges, **options
        )
    if hedges is not None:
        raise ValueError("hedges: a hedge plan was given for a policy that hedges nothing")
    if options:
        raise ValueError(f"replay_vectorized: unsupported option(s) {', '.join(sorted(options))}")
    if isinstance(episodes, CompiledCorpus):
        if episodes.censored != censored or episodes.seed != seed:
            raise ValueError(
                "replay_vectorized: the compiled corpus was built with another censored/seed"
            )
        corpus = episodes
    else:
        corpus = cached_corpus(episodes, censored=censored, seed=seed)
    return corpus.result(spine)

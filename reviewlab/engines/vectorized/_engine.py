"""The vectorized engine's entry: compile a corpus, replay it.

:func:`compile_corpus` builds a :class:`~reviewlab.engines.vectorized._compiled.CompiledCorpus`
(kept by nothing: the corpus handle keeps compiled forms,
:meth:`~reviewlab.engines._corpus.Corpus.compiled`); :func:`replay_vectorized` is the
``engine="vectorized"`` entry of :func:`reviewlab.engines._replay.replay` (hedges through
:mod:`reviewlab.engines.vectorized._hedging`; a breaker and a cap rule refused by name).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core._vocab import DEFAULT_CENSORING, CensoringMode
from reviewlab.engines._censoring import HedgePlan
from reviewlab.engines._honours import VECTORIZED
from reviewlab.engines._result import ReplayResult
from reviewlab.engines.vectorized._compiled import CompiledCorpus
from reviewlab.engines.vectorized._hedging import replay_hedged
from reviewlab.recording._schema import Episode

if TYPE_CHECKING:  # the handle imports this package's compiled corpus: imported when called
    from reviewlab.engines._corpus import Corpus


def compile_corpus(
    episodes: Sequence[Episode], *, censored: str = DEFAULT_CENSORING, seed: int = 0
) -> CompiledCorpus:
    """Compile ``episodes`` once for many replays (``censored`` and ``seed`` fix the imputed
    durations)."""
    return CompiledCorpus(list(episodes), censored=censored, seed=seed)


def replay_vectorized(
    episodes: Sequence[Episode] | Corpus | CompiledCorpus,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    *,
    censored: CensoringMode = DEFAULT_CENSORING,
    seed: int = 0,
    hedges: HedgePlan | None = None,
    **options: Any,
) -> ReplayResult:
    """Replay ``episodes`` (or an already compiled corpus) with the vectorized engine; the twin's
    answers, fast.

    ``policy`` as :meth:`Policy.of` takes it, with ``narrowing``. A list of episodes is
    compiled by its handle (:func:`~reviewlab.engines._corpus.open_corpus`), which keeps it
    while the same episodes are replayed again; a corpus on disk is compiled from its columns by
    :func:`reviewlab.engines.vectorized._columns.compile_columns` (pass its result). A hedging
    policy is replayed from the episodes (:mod:`reviewlab.engines.vectorized._hedging`;
    ``hedges``: the plan the rewrite fixed point carries, else planned from ``episodes``).
    A breaker is refused by name: :func:`reviewlab.replay` replays it.
    """
    from reviewlab.engines._corpus import Corpus, open_corpus

    spine = Policy.of(policy, narrowing)
    VECTORIZED.check(spine, censored, single_pass=True)  # the breaker: the dispatch's point
    if spine.hedges:  # hedged calls: one settling pass of a rewritten corpus
        if isinstance(episodes, Corpus):
            episodes = episodes.episodes(reason="hedges: the hedge plan rewrites the hedged calls")
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
        corpus = open_corpus(episodes).compiled(censored, seed)
    return corpus.result(spine)

"""Vectorized replay: NumPy over every call of every episode at once (no reviewer pool).

Lifecycle: :func:`compile_corpus` turns a corpus into a :class:`CompiledCorpus`
once; :meth:`CompiledCorpus.evaluate` replays it under one policy and
narrowing, as often as a sweep likes, without a Python object per call;
:meth:`~CompiledCorpus.summary` stops at the summary dict and
:meth:`~CompiledCorpus.result` builds the twin's frames.
:func:`replay_vectorized` is the ``engine="vectorized"`` entry of
:func:`reviewlab.engines.replay.replay`. Every entry takes a
:class:`~reviewlab.core.policy.Policy` (or what :meth:`Policy.of` converts) and reads its
parts by name.

Modules: this one is the entry (:func:`compile_corpus`, the cache, :func:`replay_vectorized`);
:mod:`~reviewlab.engines.vectorized.compiled` holds :class:`CompiledCorpus`,
:mod:`~reviewlab.engines.vectorized.layout` :class:`PrefixLayout` (the ragged
column layout of the static clocks), :mod:`~reviewlab.engines.vectorized.windows` what a
narrowing makes of the deadline calls, :mod:`~reviewlab.engines.vectorized.settle` one
bounded replay (steps 1–3 below), :mod:`~reviewlab.engines.vectorized.evaluation` its
answer, :class:`Evaluation`, and :mod:`~reviewlab.engines.vectorized.frames` the frames built
from it; :mod:`~reviewlab.engines.vectorized.hedging` replays hedged calls. All public names
are importable from here.

Why most of a replay is known before the policy. An episode's clock is
``t = arrival`` plus, in event order, each model send and each call's wait; a
call that is not abandoned waits exactly its duration. So the *static* clock
(every wait = its duration) is compiled once, with the wall times, the round
silences and the time left before the deadline at every call it implies; under
a policy it is wrong only in episodes where some call's wait is not its
duration. One replay:

1. Static pass. Without a deadline a call's bound depends only on the policy,
   its tool and :meth:`TimeoutPolicy.args_key`: resolved once per key with
   :func:`~reviewlab.core.policy.resolve_bound`, looked up per call; fates by
   :func:`~reviewlab.core.crediting.abandons_array`.
2. Deadline pass (a narrowing that reads the clock, or a clamped tool): the
   calls of episodes with a deadline get their bounds from the static time
   left, by :meth:`TimeoutPolicy.clamp_array` and :meth:`Narrowing.narrow_array`.
3. Settling. Episodes in which a call was abandoned or a wait changed (few:
   in an episode where every wait is its duration the static clock, hence
   every bound above, is exact) are iterated to their fixed point on a small
   ``[event, episode]`` block: clock → bounds → waits. An event's wait
   depends only on earlier waits, so each iteration fixes at least one more
   event; it ends within the block's depth, in practice after two or three.

Under a policy resolved per key (its ``timeouts`` part a ``TimeoutPolicy``) and without
idle timeouts, a replay does none of this per call:
the calls a key's bound abandons are found by one binary search in the key's
calls sorted by duration, the deadline pass counts and decides per key and
narrowing, and the :class:`Evaluation` keeps only what differs from the static
replay (its per-call arrays are built when read); see
:mod:`reviewlab.engines.vectorized.settle`. A sweep point then costs time in
proportion to the keys and the settled episodes, plus the summary's zombie
seconds and wall-time quantiles.

Invariants (the contract with the twin, briefing "Replay semantics"):

* Clocks are accumulated exactly like the twin's: ``t = arrival``, then one
  addition per event in order (column-wise running sums of
  :class:`PrefixLayout`, ``cumsum`` down a block column), so every float —
  time left, deadline bound, wall time, loose-worker start — is bit-identical
  to the twin's; a round's silence likewise adds its waits in call order.
* Bounds, clamps, fates and credits come from the shared rules only (above,
  and :meth:`~reviewlab.core.crediting.Crediting.credited_lines_array`); the summary
  is :func:`reviewlab.core.metrics.summarize_arrays`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reviewlab.core.policy import Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core.vocab import CensoringMode
from reviewlab.engines.censoring import HedgePlan
from reviewlab.engines.corpus_cache import CorpusCache
from reviewlab.engines.result import ReplayResult
from reviewlab.engines.vectorized.compiled import CompiledCorpus
from reviewlab.engines.vectorized.evaluation import Evaluation
from reviewlab.engines.vectorized.hedging import replay_hedged
from reviewlab.engines.vectorized.layout import PrefixLayout
from reviewlab.engines.vectorized.windows import DeadlineWindows, RemoteCalls
from reviewlab.recording.schema import Episode

__all__ = [
    "CACHE_SIZE",
    "CompiledCorpus",
    "DeadlineWindows",
    "Evaluation",
    "PrefixLayout",
    "RemoteCalls",
    "cached_corpus",
    "clear_compiled",
    "compile_corpus",
    "replay_vectorized",
]


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

    As the twin's cache (:func:`reviewlab.engines.twin.corpus.compiled`, both a
    :class:`~reviewlab.engines.corpus_cache.CorpusCache`): the same episodes in the same
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
    :func:`reviewlab.engines.vectorized.columns.compile_columns` (pass its result). A hedging
    policy is replayed from the episodes (:mod:`reviewlab.engines.vectorized.hedging`;
    ``hedges``: the plan the rewrite fixed point carries, else planned from ``episodes``).
    A breaker is refused by name: :func:`reviewlab.replay` replays it.
    """
    spine = Policy.of(policy, narrowing)
    spine.refuse("replay_vectorized", "breaker", "cap_rule")
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

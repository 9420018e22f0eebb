"""Vectorized replay: NumPy over every call of every episode at once (no reviewer pool).

Lifecycle: :func:`compile_corpus` turns a corpus into a :class:`CompiledCorpus` once;
:meth:`CompiledCorpus.evaluate` replays it under one policy as often as a sweep likes, without
a Python object per call; :meth:`~CompiledCorpus.summary` stops at the summary and
:meth:`~CompiledCorpus.result` builds the twin's frames. :func:`replay_vectorized` is the
``engine="vectorized"`` entry of :func:`reviewlab.engines._replay.replay`.

Invariant: every clock is accumulated as the twin accumulates it, so the answers are the
twin's to the bit; bounds, fates and credits come from the shared rules only. How (the static
clock, the deadline pass, settling): docs/architecture.md, "The vectorized engine". This
package only re-exports: ``engine`` (the entry), ``compiled`` with ``static`` (its derived
layout), ``columns`` with ``reading``, ``layout``, ``windows``, ``tables`` (a policy resolved),
``settle``, ``decisions``, ``evaluation``, ``finish``, ``frames``, ``hedging``.
"""

from reviewlab.engines.vectorized._compiled import CompiledCorpus
from reviewlab.engines.vectorized._engine import compile_corpus, replay_vectorized
from reviewlab.engines.vectorized._evaluation import Evaluation
from reviewlab.engines.vectorized._layout import PrefixLayout
from reviewlab.engines.vectorized._windows import DeadlineWindows, RemoteCalls

__all__ = [
    "CompiledCorpus",
    "DeadlineWindows",
    "Evaluation",
    "PrefixLayout",
    "RemoteCalls",
    "compile_corpus",
    "replay_vectorized",
]

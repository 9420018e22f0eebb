"""Replay engines as objects, behind one dispatch.

The engines a caller chooses are :class:`Twin` (the SimPy reference, the only one with a
reviewer pool), :class:`Vectorized` (NumPy over every call), :class:`Real` (the real executor
on threads) and :class:`Cluster` (the vectorized engine on a Dask cluster's partitions, a
:class:`ReplaySummary`); each declares what it honours (``engine.honours``). :func:`replay` is
the one dispatch, over a corpus :func:`open_corpus` opens once (the handle keeps every compiled
form; a list of episodes opened again is the same handle until :func:`clear_corpora`); every
engine assembles its answer in one place (``reviewlab.engines._result``). The names are
imported on first use, so importing one engine module loads no other.
"""

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
    from reviewlab.engines._censoring import KaplanMeier
    from reviewlab.engines._corpus import Corpus, clear_corpora, open_corpus
    from reviewlab.engines._engine import Cluster, Engine, Real, Twin, Vectorized
    from reviewlab.engines._replay import ReplayBounds, replay, replay_bounds
    from reviewlab.engines._result import ReplayResult, ReplaySummary

_HOMES = {
    "Cluster": "reviewlab.engines._engine",
    "Corpus": "reviewlab.engines._corpus",
    "Engine": "reviewlab.engines._engine",
    "KaplanMeier": "reviewlab.engines._censoring",
    "Real": "reviewlab.engines._engine",
    "ReplayBounds": "reviewlab.engines._replay",
    "ReplayResult": "reviewlab.engines._result",
    "ReplaySummary": "reviewlab.engines._result",
    "Twin": "reviewlab.engines._engine",
    "Vectorized": "reviewlab.engines._engine",
    "clear_corpora": "reviewlab.engines._corpus",
    "open_corpus": "reviewlab.engines._corpus",
    "replay": "reviewlab.engines._replay",
    "replay_bounds": "reviewlab.engines._replay",
}
"""Where each public name lives: imported on first use, so importing ``reviewlab.engines`` loads
only what is asked for."""

__all__ = [
    "Cluster",
    "Corpus",
    "Engine",
    "KaplanMeier",
    "Real",
    "ReplayBounds",
    "ReplayResult",
    "ReplaySummary",
    "Twin",
    "Vectorized",
    "clear_corpora",
    "open_corpus",
    "replay",
    "replay_bounds",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

"""Replay engines as objects, behind one dispatch.

The engines a caller chooses are :class:`Twin` (the SimPy reference, the only one with a
reviewer pool), :class:`Vectorized` (NumPy over every call), :class:`Real` (the real executor
on threads) and :class:`Cluster` (the vectorized engine on a Dask cluster's partitions, a
:class:`ReplaySummary`); each declares what it honours (``engine.honours``,
:mod:`~reviewlab.engines.honours`). :func:`reviewlab.engines.replay.replay` is the one
dispatch; every engine assembles its answer with :func:`reviewlab.engines.result.assemble`.
What a replay assumes lives in :mod:`~reviewlab.engines.censoring` (censored calls) and
:mod:`~reviewlab.engines.reaction` (the model's reaction to an abandonment). The names are
imported on first use, so importing one engine module loads no other.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reviewlab.engines.engine import Cluster, Engine, Real, Twin, Vectorized
    from reviewlab.engines.result import ReplaySummary

_HOMES = {
    "Cluster": "reviewlab.engines.engine",
    "Engine": "reviewlab.engines.engine",
    "Real": "reviewlab.engines.engine",
    "ReplaySummary": "reviewlab.engines.result",
    "Twin": "reviewlab.engines.engine",
    "Vectorized": "reviewlab.engines.engine",
}

__all__ = ["Cluster", "Engine", "Real", "ReplaySummary", "Twin", "Vectorized"]


def __getattr__(name: str) -> Any:
    """A public name, imported from its home on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'reviewlab.engines' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value

"""Replay engines: the SimPy twin, the vectorized evaluator and the real executor, behind one entry.

:func:`reviewlab.engines.replay.replay` dispatches to :mod:`~reviewlab.engines.twin`,
:mod:`~reviewlab.engines.vectorized` or :mod:`~reviewlab.engines.real`; every engine assembles
its answer with :func:`reviewlab.engines.result.assemble`. What a replay assumes lives in
:mod:`~reviewlab.engines.censoring` (censored calls) and :mod:`~reviewlab.engines.reaction` (the
model's reaction to an abandonment). The public names are re-exported by :mod:`reviewlab`.
"""

__all__: list[str] = []

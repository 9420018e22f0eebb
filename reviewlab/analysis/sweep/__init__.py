"""Policy sweeps: one replay per policy point, in-process or on a Dask cluster, as one tidy frame.

A :class:`Grid` of :class:`PolicyPoint` objects (:func:`make_grid`: base policies × scales ×
per-tool timeouts × hedges × breakers × narrowings) is replayed by :func:`sweep`, one row per
point: the point's parameters (``policy_name``, ``scale``, ``timeout.<tool>``,
``narrowing.*``, ``hedge.*``, ``breaker.*``) followed by every
:data:`reviewlab.core._metric_names.SUMMARY_KEYS` metric, and with ``prices`` the cost columns of
:mod:`reviewlab.analysis._cost`. :func:`pareto` reads the front of a sweep. The grid axes and
the columns: docs/metrics.md, "Sweeps". The frame is a :class:`SweepFrame`: a DataFrame that
keeps its assumptions and shows itself in a notebook. Internals: ``_grid``, ``_run``, ``_pareto``,
``_frame``.
"""

from reviewlab.analysis.sweep._frame import SweepFrame
from reviewlab.analysis.sweep._grid import (
    Grid,
    PolicyPoint,
    make_grid,
    points_grid,
    replays_episodes,
)
from reviewlab.analysis.sweep._pareto import (
    OBJECTIVE_ALIASES,
    PARETO_OBJECTIVES,
    objective_column,
    pareto,
)
from reviewlab.analysis.sweep._run import MAX_THREADS, default_threads, sweep, tool_curves

__all__ = [
    "MAX_THREADS",
    "OBJECTIVE_ALIASES",
    "PARETO_OBJECTIVES",
    "Grid",
    "PolicyPoint",
    "SweepFrame",
    "default_threads",
    "make_grid",
    "objective_column",
    "pareto",
    "points_grid",
    "replays_episodes",
    "sweep",
    "tool_curves",
]

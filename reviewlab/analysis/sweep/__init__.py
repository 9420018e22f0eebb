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

from typing import TYPE_CHECKING

from reviewlab.core._lazy import lazy_names

if TYPE_CHECKING:
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

_HOMES = {
    "Grid": "reviewlab.analysis.sweep._grid",
    "MAX_THREADS": "reviewlab.analysis.sweep._run",
    "OBJECTIVE_ALIASES": "reviewlab.analysis.sweep._pareto",
    "PARETO_OBJECTIVES": "reviewlab.analysis.sweep._pareto",
    "PolicyPoint": "reviewlab.analysis.sweep._grid",
    "SweepFrame": "reviewlab.analysis.sweep._frame",
    "default_threads": "reviewlab.analysis.sweep._run",
    "make_grid": "reviewlab.analysis.sweep._grid",
    "objective_column": "reviewlab.analysis.sweep._pareto",
    "pareto": "reviewlab.analysis.sweep._pareto",
    "points_grid": "reviewlab.analysis.sweep._grid",
    "replays_episodes": "reviewlab.analysis.sweep._grid",
    "sweep": "reviewlab.analysis.sweep._run",
    "tool_curves": "reviewlab.analysis.sweep._run",
}
"""Where each public name lives: imported on first use, so importing
``reviewlab.analysis.sweep`` loads only what is asked for."""

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

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

"""Reading a sweep: the Pareto front of its points, and the objective names it takes.

:func:`pareto` marks the points no other point dominates (every objective minimised; ``inf``
worse than every number, NaN read as ``inf``); :func:`objective_column` maps a short objective
name (:data:`OBJECTIVE_ALIASES`) to its summary column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from reviewlab.analysis._cost import COST_KEYS
from reviewlab.core._errors import ParameterError
from reviewlab.core._metric_names import SUMMARY_KEYS

PARETO_OBJECTIVES = ("timeout_coverage_loss_rate", "wall_p95_sec", "max_silence_sec")
"""What :func:`pareto` trades by default: the coverage the timeouts cost, p95 wall time, and the
longest silence (so a policy that never bounds a wedged call is not on the front)."""
OBJECTIVE_ALIASES = {
    "wall_p50": "wall_p50_sec",
    "wall_p95": "wall_p95_sec",
    "wall_p99": "wall_p99_sec",
    "wall_max": "wall_max_sec",
    "p50_wall": "wall_p50_sec",
    "p95_wall": "wall_p95_sec",
    "p99_wall": "wall_p99_sec",
    "max_wall": "wall_max_sec",
    "max_silence": "max_silence_sec",
    "zombie": "zombie_sec",
    "timeout_coverage_loss": "timeout_coverage_loss_rate",
    "coverage_loss": "coverage_loss_rate",
    "abandoned_rate": "abandoned_call_rate",
    "cost": "cost_per_episode",
}
"""Short names of summary columns, as the CLI and
:func:`reviewlab.analysis._tune.recommend` take them."""


def objective_column(name: str) -> str:
    """The summary column an objective name stands for (an alias or the column itself)."""
    if name in OBJECTIVE_ALIASES:
        return OBJECTIVE_ALIASES[name]
    if name in SUMMARY_KEYS or name in PARETO_OBJECTIVES or name in COST_KEYS:
        return name
    raise ParameterError(
        "objective",
        f"expected one of {', '.join(OBJECTIVE_ALIASES)} or a summary column "
        f"({', '.join(SUMMARY_KEYS + COST_KEYS)}), got {name!r}",
    )


def pareto(
    frame: pd.DataFrame, objectives: Sequence[str] | str | None = None, *more: str
) -> pd.Series:
    """Which points no other point dominates, every objective to be minimised (a boolean Series).

    ``objectives``: the columns to trade (default :data:`PARETO_OBJECTIVES`, the
    columns of it the frame has; ``coverage_loss_rate`` stands in for the
    timeout share in a frame without it); names may be
    :data:`OBJECTIVE_ALIASES`. The two-column form ``pareto(frame, x, y)`` is
    accepted too. A point dominates another when it is no worse on every
    objective and better on one; ``inf`` is worse than every number and NaN is
    read as ``inf``; identical points are all kept.
    """
    if isinstance(objectives, str):
        columns = [objective_column(c) for c in (objectives, *more)]
    elif objectives is None:
        columns = [c for c in PARETO_OBJECTIVES if c in frame.columns]
        if "timeout_coverage_loss_rate" not in frame.columns and "coverage_loss_rate" in frame:
            columns.insert(0, "coverage_loss_rate")
    else:
        columns = [objective_column(c) for c in (*objectives, *more)]
    if not columns:
        raise ParameterError("pareto", "no objective columns to trade")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ParameterError(
            "pareto",
            f"the frame has no column(s) {', '.join(missing)}; "
            f"objectives are among {', '.join(SUMMARY_KEYS)}",
        )
    values = np.nan_to_num(
        frame[columns].to_numpy(dtype=float), nan=math.inf, posinf=math.inf, neginf=-math.inf
    )
    n = len(values)
    front = np.ones(n, dtype=bool)
    for i in range(n):
        if not front[i]:
            continue
        # Points that i dominates: no better anywhere, worse somewhere.
        dominated = np.all(values >= values[i], axis=1) & np.any(values > values[i], axis=1)
        front &= ~dominated
    return pd.Series(front, index=frame.index, name="pareto")

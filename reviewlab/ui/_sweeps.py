"""A sweep's rows as a person reads them: the parameters that matter, identical rows collapsed.

:func:`sweep_view` narrows a :func:`~reviewlab.analysis.sweep.sweep` frame to the parameters
that vary and the key metrics. :func:`front_table` is what the demo and ``reviewlab sweep``
print: the points of the Pareto front on the objectives it names (in its title), every
parameter axis with no effect on the figures shown named once in a note and dropped, rows
with identical figures collapsed into one with a ``points`` count, the first ``top`` rows.
Nothing is computed here but the layout; the front itself is
:func:`reviewlab.analysis.sweep.pareto`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from reviewlab.core._vocab import DEFAULT_CENSORING
from reviewlab.ui._numbers import cell, column_kind, label_of
from reviewlab.ui._tables import Table, as_table

SWEEP_METRICS = (
    "abandoned_call_rate",
    "timeout_coverage_loss_rate",
    "coverage_loss_rate",
    "wall_p95_sec",
    "max_silence_sec",
    "zombie_sec",
    "peak_loose_workers",
)
"""The metrics :func:`sweep_view` shows (the written sweep file keeps every column)."""

_PARAMETER_PREFIXES = ("timeout.", "narrowing.", "scale", "hedge.", "breaker.", "prices")


def parameter_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of a sweep frame that name a point (timeouts, narrowing, scale, hedges …)."""
    return [c for c in frame.columns if str(c).startswith(_PARAMETER_PREFIXES)]


def sweep_view(
    frame: pd.DataFrame, *, sort_by: str | None = None, top: int | None = None
) -> pd.DataFrame:
    """A sweep frame narrowed for reading: the parameters that vary,
    the key metrics, the Pareto flag."""
    metric_columns = [c for c in SWEEP_METRICS if c in frame.columns]
    params = [
        c
        for c in frame.columns
        if c not in metric_columns and str(c).startswith(("timeout.", "narrowing.", "scale"))
    ]
    # Per-tool timeouts and the narrowing mode always name a point; the other
    # parameters only when they vary.
    kept = [
        c
        for c in params
        if c.startswith("timeout.") or c == "narrowing.mode" or frame[c].nunique(dropna=False) > 1
    ] or params[:1]
    view = frame[[*kept, *metric_columns, *(["pareto"] if "pareto" in frame.columns else [])]]
    if sort_by is not None:
        view = view.sort_values(sort_by, kind="stable")
    view = view.reset_index(drop=True)
    return view.head(top) if top is not None else view


def sweep_assumptions(
    engine: str = "vectorized", censored: str = DEFAULT_CENSORING, seed: int | None = None
) -> dict[str, Any]:
    """What a sweep's replays assume (every point under the same ones; the model keeps its
    recorded rounds)."""
    found: dict[str, Any] = {"censored": censored, "reaction": "as_recorded", "engine": engine}
    if seed is not None:
        found["seed"] = seed
    return found


def _axis_values(values: pd.Series) -> str:
    kind = column_kind(str(values.name))
    distinct = sorted(values.dropna().unique(), key=lambda v: (str(type(v)), v))
    return ", ".join(cell(v, kind) for v in distinct)


def no_effect_axes(frame: pd.DataFrame, params: Sequence[str], metrics: Sequence[str]) -> list[str]:
    """The parameters whose values change none of ``metrics``: within every group of points that
    agree on all the other parameters, the metrics are the same whatever this one is."""
    found = []
    for param in params:
        if frame[param].nunique(dropna=False) < 2:
            continue
        others = [p for p in params if p != param and p not in found]
        groups = frame.groupby(others, dropna=False, sort=False) if others else [(None, frame)]
        if all(
            (group[list(metrics)].astype(str).nunique(dropna=False) <= 1).all()
            for _, group in groups
        ):
            found.append(param)
    return found


def _values_text(values: pd.Series, limit: int = 4) -> str:
    kind = column_kind(str(values.name))
    distinct = sorted(values.dropna().unique(), key=lambda v: (str(type(v)), v))
    texts = [
        cell(v, kind).removesuffix(" s") if kind == "seconds" else cell(v, kind) for v in distinct
    ]
    unit = " s" if kind == "seconds" else ""
    if len(texts) <= limit:
        return ", ".join(texts) + unit
    return f"{texts[0]} … {texts[-1]}{unit} ({len(texts)} values)"


def collapse_points(
    frame: pd.DataFrame, params: Sequence[str], metrics: Sequence[str]
) -> pd.DataFrame:
    """Rows with identical ``metrics`` as one row: each parameter the values it takes there
    (``15, 30, 60 s``), and ``points``, how many points the row stands for. Row order is the
    order each group first appears in."""
    if frame.empty:
        return frame.assign(points=pd.Series(dtype=int))[[*params, "points", *metrics]]
    key = frame[list(metrics)].astype(str).agg("|".join, axis=1)
    rows = []
    for _, group in frame.groupby(key, sort=False):
        row: dict[str, Any] = {}
        for param in params:
            values = group[param]
            row[param] = (
                values.iloc[0] if values.nunique(dropna=False) == 1 else _values_text(values)
            )
        row["points"] = len(group)
        row.update(group.iloc[0][list(metrics)].to_dict())
        rows.append(row)
    return pd.DataFrame(rows, columns=[*params, "points", *metrics])


def front_table(
    points: pd.DataFrame,
    objectives: Sequence[str],
    *,
    metrics: Sequence[str] = SWEEP_METRICS,
    top: int | None = 10,
    assumptions: Mapping[str, Any] | str | None = None,
    front: pd.Series | None = None,
    collapse: bool = True,
) -> Table:
    """The Pareto front of ``points`` on ``objectives`` (named in the title), for reading.

    ``front`` (default :func:`~reviewlab.analysis.sweep.pareto` on ``objectives``) picks the
    rows; they are sorted by the first objective. With ``collapse`` the parameter axes with no
    effect on the figures shown are dropped (one note names them and their values) and rows with
    identical figures are collapsed with a ``points`` count; ``top`` keeps the first rows
    (a note says how many more there are). ``assumptions`` default to a
    :class:`~reviewlab.analysis.sweep.SweepFrame`'s own.
    """
    from reviewlab.analysis.sweep import SweepFrame, objective_column, pareto

    if assumptions is None and isinstance(points, SweepFrame):
        assumptions = points.assumptions or None

    columns = [objective_column(o) for o in objectives]
    mask = pareto(points, columns) if front is None else front
    chosen = points[mask.to_numpy(dtype=bool)]
    shown_metrics = list(dict.fromkeys([*columns, *[m for m in metrics if m in points.columns]]))
    params = [p for p in parameter_columns(points) if p not in shown_metrics]
    # Constant parameters name nothing on the front; they stay in the sweep file.
    params = [p for p in params if points[p].nunique(dropna=False) > 1]
    notes = []
    if collapse:
        idle = no_effect_axes(points, params, shown_metrics)
        if idle:
            notes.append(
                "no effect on the figures shown, dropped: "
                + "; ".join(f"{p} ({_axis_values(points[p])})" for p in idle)
            )
        params = [p for p in params if p not in idle]
    rows = chosen.sort_values(columns, kind="stable")
    body = (
        collapse_points(rows, params, shown_metrics)
        if collapse
        else rows[[*params, *shown_metrics]].reset_index(drop=True)
    )
    total = len(body)
    if top is not None and total > top:
        body = body.head(top)
        notes.append(f"{total - top} more row(s) of the front not shown (--top, --verbose)")
    names = ", ".join(label_of(c) for c in columns)
    title = (
        f"Pareto front on {names} (all minimised): {int(mask.sum())} of {len(points)} "
        "policy points" + (f", {total} distinct row(s)" if collapse else "")
    )
    return as_table(body, title=title, assumptions=assumptions, notes=notes)

"""The output of ``reviewlab sweep``: the leading rows with the Pareto flag, the whole table
written to ``-o``, and the ``--json`` document.

Invariant: with ``--json`` stdout holds the document alone; every view names the Pareto flag's
objectives, the order of the rows and the sweep's assumptions.
"""

from __future__ import annotations

import argparse
from typing import Any

from reviewlab.cli._args import echo
from reviewlab.cli._errors import UserError
from reviewlab.cli._json import document, emit, is_json


def report_sweep(
    frame: Any, args: argparse.Namespace, prices: Any, objectives: Any, out: Any
) -> None:
    """The Pareto flag added; the leading rows printed, the table written to ``-o``, and the
    ``--json`` document emitted, as the options say."""
    from reviewlab.analysis.sweep import pareto
    from reviewlab.ui._report import write_table

    frame["pareto"] = pareto(frame, objectives)
    if args.sort is not None and args.sort not in frame.columns:
        raise UserError(
            f"--sort: no column {args.sort!r}; try one of {', '.join(frame.columns[-14:])}"
        )
    if not args.json:
        _print_view(frame, args, prices, objectives)
    if out is not None and not is_json(out):
        write_table(frame, out)
        if not args.json:  # with --json, stdout holds the document alone
            echo(f"wrote {len(frame)} policy points to {out}")
    if args.json or is_json(out):
        emit(_document(frame, args, objectives), stdout=args.json, out=out)


def _document(frame: Any, args: argparse.Namespace, objectives: Any) -> dict[str, Any]:
    """The ``--json`` document: every policy point (sorted as ``--sort`` says), with the
    Pareto flag and the objectives it trades."""
    from reviewlab.analysis.sweep import PARETO_OBJECTIVES
    from reviewlab.ui._sweeps import sweep_assumptions

    chosen = objectives or [c for c in PARETO_OBJECTIVES if c in frame.columns]
    shown = frame.sort_values(args.sort, kind="stable") if args.sort else frame
    return document(
        "sweep",
        assumptions=sweep_assumptions(args.engine, "wedge", args.seed),
        summary={"points": len(frame), "pareto_points": int(frame["pareto"].sum())},
        tables={"points": shown.reset_index(drop=True)},
        units={"pareto_points": "count"},
        notes=[
            "pareto: on the Pareto front on " + ", ".join(chosen) + " (all minimised)",
            "points: " + (f"sorted by {args.sort}" if args.sort else "in grid order"),
        ],
    )


def _print_view(frame: Any, args: argparse.Namespace, prices: Any, objectives: Any) -> None:
    """The leading rows, with the hedge, breaker and cost columns that name or price a point,
    under a heading naming the Pareto flag's objectives, with the sweep's assumptions."""
    from reviewlab.analysis.sweep import PARETO_OBJECTIVES
    from reviewlab.ui._numbers import label_of
    from reviewlab.ui._sweeps import sweep_assumptions, sweep_view
    from reviewlab.ui._tables import as_table

    view = sweep_view(frame, sort_by=args.sort, top=args.top)
    shown = frame.sort_values(args.sort, kind="stable") if args.sort else frame
    shown = shown.reset_index(drop=True).head(args.top)
    # The hedge and breaker parameters name their points (the view knows timeouts and scales).
    named = [
        c
        for c in frame.columns
        if c.startswith("hedge.")
        and c.endswith(".after_sec")
        or c in ("breaker.consecutive", "breaker.cooldown")
    ]
    for index, column in enumerate(named):
        view.insert(index, column, shown[column].to_numpy())
    if any(c.startswith("hedge.") for c in named):  # what the hedges cost, before the flag
        for column in ("hedges", "extra_call_share"):
            if column in shown.columns:
                view.insert(len(view.columns) - 1, column, shown[column].to_numpy())
    if prices is not None:  # the cost columns go before the Pareto flag
        for column in ("prices", "cost_per_episode", "unpriced_rounds"):
            if column in shown.columns:
                view.insert(len(view.columns) - 1, column, shown[column].to_numpy())
    notes = []
    if prices is not None:
        tables = prices.values() if isinstance(prices, dict) else [prices]
        currencies = sorted({table.currency for table in tables})
        notes.append(
            f"cost_per_episode in {', '.join(currencies)}; per-point cost columns in -o's table"
        )
    if len(frame) > args.top:
        notes.append(f"({len(frame)} policy points; {args.top} shown)")
    chosen = objectives or [c for c in PARETO_OBJECTIVES if c in frame.columns]
    order = f"sorted by {args.sort}" if args.sort else "in grid order"
    title = (
        f"{len(frame)} policy points, {order}; pareto: on the Pareto front on "
        f"{', '.join(label_of(c) for c in chosen)} (all minimised)"
    )
    assumptions = sweep_assumptions(args.engine, "wedge", args.seed)
    echo(as_table(view, title=title, assumptions=assumptions, notes=notes).text())

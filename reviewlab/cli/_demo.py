"""``reviewlab demo``: the guided tour, written as a report with its charts."""

from __future__ import annotations

import argparse
from pathlib import Path

from reviewlab.cli._args import echo
from reviewlab.cli._command import Command


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out", default="out", metavar="DIR", help="where the report goes (default: out)"
    )
    p.add_argument("--quick", action="store_true", help="a smaller corpus and grid (a smoke run)")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="print the full tables (the report always holds them), not the short form",
    )
    p.add_argument(
        "--top",
        type=int,
        default=None,
        metavar="N",
        help="rows of the Pareto front to print (default 8; the report holds all)",
    )


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the demo into ``--out`` (OUT/report.html with PNG charts)."""
    from reviewlab.cli._errors import UserError
    from reviewlab.ui._demo import DEFAULT_TOP, run_demo

    if args.top is not None and args.top < 1:
        raise UserError(f"--top: expected a positive number of rows, got {args.top}")
    if args.top is not None and args.verbose:
        raise UserError("--top: --verbose prints every row; give one or the other")
    top = DEFAULT_TOP if args.top is None else args.top
    run_demo(out_dir=Path(args.out), quick=args.quick, echo=echo, verbose=args.verbose, top=top)
    return 0


DEMO = Command(
    name="demo",
    help="run the main job: a live episode with a wedged tool, the incident and the "
    "bundled corpus replayed under the pre-fix and the ouroboros policies, a sweep, a "
    "recommended policy and a report (OUT/report.html with PNG charts)",
    arguments=_arguments,
    handler=cmd_demo,
    examples="  reviewlab demo                     # writes out/report.html\n"
    "  reviewlab demo --quick --out quick-report\n"
    "  reviewlab demo --verbose          # the full tables on the terminal too",
)

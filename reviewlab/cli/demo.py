"""``reviewlab demo``: the guided tour, written as a report with its charts."""

from __future__ import annotations

import argparse
from pathlib import Path

from reviewlab.cli._args import echo
from reviewlab.cli._command import Command

__all__ = ["DEMO", "cmd_demo"]


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--out", default="out", metavar="DIR", help="where the report goes (default: out)"
    )
    p.add_argument("--quick", action="store_true", help="a smaller corpus and grid (a smoke run)")


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the demo into ``--out`` (OUT/report.html with PNG charts)."""
    from reviewlab.ui.demo import run_demo

    run_demo(out_dir=Path(args.out), quick=args.quick, echo=echo)
    return 0


DEMO = Command(
    name="demo",
    help="run the main job: a live episode with a wedged tool, the incident and the "
    "bundled corpus replayed under the pre-fix and the ouroboros policies, a sweep, a "
    "recommended policy and a report (OUT/report.html with PNG charts)",
    arguments=_arguments,
    handler=cmd_demo,
    examples="  reviewlab demo                     # writes out/report.html\n"
    "  reviewlab demo --quick --out /tmp/r",
)

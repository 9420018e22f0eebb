"""``reviewlab lesson``: the interactive lesson (the scenes of notebooks 01 and 07) served with
Voilà, for a classroom without Jupyter."""

from __future__ import annotations

import argparse
import shlex

from reviewlab.cli._args import echo, port
from reviewlab.cli._command import Command
from reviewlab.cli._lab import require_lab_extra


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default 8867)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")


def cmd_lesson(args: argparse.Namespace) -> int:
    """Serve the lesson page (a missing ``lab`` extra is one line before any server starts)."""
    require_lab_extra("reviewlab lesson", "voila", "ipykernel")
    from reviewlab.ui import _lesson as lesson

    port(args.port)
    if args.dry_run:
        echo(shlex.join(lesson.lesson_command(args.port, open_browser=not args.no_browser)))
        return 0
    return int(lesson.run_lesson(args.port, open_browser=not args.no_browser))


LESSON = Command(
    name="lesson",
    help="serve the interactive lesson (abandonment semantics, four ways tool calls hang)",
    arguments=_arguments,
    handler=cmd_lesson,
    examples="  reviewlab lesson --port 8867",
)

"""``reviewlab dashboard``: the interactive dashboard served with Voilà."""

from __future__ import annotations

import argparse
import shlex

from reviewlab.cli._args import CORPUS_HELP, EXAMPLE_CORPUS, echo, port
from reviewlab.cli._command import Command
from reviewlab.cli._corpus import open_for, require_episodes
from reviewlab.cli._errors import UserError
from reviewlab.cli._lab import require_lab_extra


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "corpus_path",
        nargs="?",
        default=None,
        metavar="CORPUS",
        help=CORPUS_HELP + ", or a gateway's recording folder (the same as --corpus)",
    )
    p.add_argument(
        "--corpus",
        default=None,
        help=CORPUS_HELP + ", or a gateway's recording folder (default: the bundled corpus)",
    )
    p.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default 8866)")
    p.add_argument("--no-browser", action="store_true", help="do not open a browser tab")
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")


def cmd_dashboard(args: argparse.Namespace) -> int:
    """Serve the dashboard on ``--corpus`` (checked here first: a bad corpus is one line before
    any server starts; so is a missing ``lab`` extra)."""
    require_lab_extra("reviewlab dashboard", "voila", "ipykernel")
    from reviewlab.ui import _dashboard as dashboard

    port(args.port)
    if args.corpus_path is not None and args.corpus is not None:
        raise UserError("give the corpus once: as CORPUS or as --corpus, not both")
    text = args.corpus if args.corpus is not None else args.corpus_path
    corpus = None
    if text is not None:
        opened = open_for(text)
        require_episodes(opened, text)
        opened.compiled()  # reads and checks every episode's columns
        corpus = opened.path
    if args.dry_run:
        dashboard.dashboard_env(corpus)  # validates the corpus like a real start would
        argv = dashboard.dashboard_command(args.port, corpus, open_browser=not args.no_browser)
        prefix = f"{dashboard.CORPUS_ENV}={shlex.quote(str(corpus.resolve()))} " if corpus else ""
        echo(prefix + shlex.join(argv))
        return 0
    return int(dashboard.main(args.port, corpus, open_browser=not args.no_browser))


DASHBOARD = Command(
    name="dashboard",
    help="serve the interactive dashboard with Voilà",
    arguments=_arguments,
    handler=cmd_dashboard,
    examples=f"  reviewlab dashboard --corpus {EXAMPLE_CORPUS} --port 8866\n"
    "  reviewlab dashboard recordings/  # a gateway's --record folder, read on each visit",
)

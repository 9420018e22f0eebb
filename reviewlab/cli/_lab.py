"""``reviewlab lab``: JupyterLab opened on the notebooks.

Before anything else (a copy, a command, a URL) :func:`require_lab_extra` checks that the
``lab`` extra is installed, and says in one line how to install it when it is not; ``reviewlab
dashboard`` makes the same check.
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from reviewlab.cli._args import echo, port
from reviewlab.cli._command import Command
from reviewlab.cli._errors import UserError

LAB_EXTRA = "pip install 'reviewlab[lab]'"
"""The one line that installs what ``reviewlab lab`` and ``reviewlab dashboard`` run."""


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--notebooks", default=None, metavar="DIR", help="notebook folder (default notebooks/)"
    )
    p.add_argument("--port", type=int, default=None, help="port for JupyterLab")
    p.add_argument("--dry-run", action="store_true", help="print the command instead of running it")


def require_lab_extra(command: str, *modules: str) -> None:
    """A :class:`UserError` naming the extra to install when one of ``modules`` (top-level
    module names) cannot be imported; nothing is imported here, only looked up."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(
            f"{command} needs the lab extra ({', '.join(missing)} not installed): {LAB_EXTRA}"
        )


def launch(argv: Sequence[str], dry_run: bool) -> int:
    """Run ``argv`` until it exits or this command is told to stop (SIGTERM, SIGHUP, Ctrl-C, its
    parent gone: the server and its kernels are stopped too; status 0), or print it with
    ``dry_run``."""
    if dry_run:
        echo(shlex.join(argv))
        return 0
    from reviewlab.ui._serving import start_server, supervise

    try:
        process = start_server(argv)
    except FileNotFoundError:
        raise UserError(f"cannot start {argv[0]}: not installed") from None
    return supervise(process)


def _working_notebooks() -> Path:
    """``./notebooks``, filled with a copy of the shipped notebooks when it does not exist yet."""
    import shutil

    from reviewlab.resources import notebooks_dir

    target = Path.cwd() / "notebooks"
    if not target.exists():
        shutil.copytree(notebooks_dir(), target, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        print(f"copied the reviewlab notebooks to {target}", file=sys.stderr)
    return target


def cmd_lab(args: argparse.Namespace) -> int:
    """Start JupyterLab on ``--notebooks`` (default ``./notebooks``, copied there first)."""
    require_lab_extra("reviewlab lab", "jupyterlab", "ipykernel")
    notebooks = Path(args.notebooks) if args.notebooks else _working_notebooks()
    if not notebooks.is_dir():
        raise UserError(f"--notebooks {notebooks}: no such directory")
    port(args.port)
    from reviewlab.ui._dashboard import lab_command

    return launch(lab_command(notebooks, args.port), args.dry_run)


LAB = Command(
    name="lab",
    help="open JupyterLab on the notebooks/",
    arguments=_arguments,
    handler=cmd_lab,
    examples="  reviewlab lab --dry-run",
)

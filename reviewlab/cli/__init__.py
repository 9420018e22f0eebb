"""The ``reviewlab`` command line: one module per subcommand, thin over the library.

Each subcommand is a module of this package holding its options beside its handler, as one
:class:`~reviewlab.cli._command.Command`; shared argument syntax is in ``_args``, corpus
handling in ``_corpus``, the error mapping in ``_errors``. This module registers the commands
and runs one: parse → the handler (opens the corpus, calls the library function a user would)
→ exit status; :func:`main` returns the status, so tests can call it.

Invariants: a user error is ONE stderr line, ``reviewlab: error: …``, exit status 2, never a
traceback (``--debug`` re-raises), and a library error names the option; outputs are written
whole or not at all; heavy imports happen inside the handler that needs them, and
:func:`main` adds only the running command's options (some read the library), so
``reviewlab --help`` answers at once; :func:`build_parser` has every command's options.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from reviewlab.cli._check import CHECK
from reviewlab.cli._clocks import CLOCKS
from reviewlab.cli._command import Command
from reviewlab.cli._convert import CONVERT
from reviewlab.cli._dashboard import DASHBOARD
from reviewlab.cli._demo import DEMO
from reviewlab.cli._errors import EXIT_USER_ERROR, PROG, UserError, run_reporting
from reviewlab.cli._export import EXPORT
from reviewlab.cli._gateway import GATEWAY
from reviewlab.cli._import_log import IMPORT
from reviewlab.cli._incident import INCIDENT
from reviewlab.cli._lab import LAB
from reviewlab.cli._lesson import LESSON
from reviewlab.cli._policy import POLICY
from reviewlab.cli._presets import PRESETS
from reviewlab.cli._record import RECORD
from reviewlab.cli._replay import REPLAY
from reviewlab.cli._sweep import SWEEP
from reviewlab.cli._synth import SYNTH
from reviewlab.cli._tune import TUNE
from reviewlab.cli._tune_baselines import TUNE_BASELINES
from reviewlab.cli._tune_guarantee import TUNE_GUARANTEE
from reviewlab.cli._tune_learned import TUNE_LEARNED

__all__ = ["COMMANDS", "UserError", "build_parser", "main"]

COMMANDS: tuple[Command, ...] = (
    DEMO,
    RECORD,
    GATEWAY,
    REPLAY,
    SWEEP,
    TUNE,
    TUNE_GUARANTEE,
    TUNE_BASELINES,
    TUNE_LEARNED,
    PRESETS,
    POLICY,
    CLOCKS,
    INCIDENT,
    CHECK,
    SYNTH,
    CONVERT,
    IMPORT,
    EXPORT,
    LAB,
    DASHBOARD,
    LESSON,
)
"""Every subcommand, in the order ``reviewlab --help`` lists them."""

_DESCRIPTION = """\
Tool-call timeout policy for LLM reviewer-agent loops: bound every tool call,
abandon the ones that outlive their bound, and measure what that costs.
Run `reviewlab demo` for the guided tour (live episode, incident replay, sweep,
recommendation, out/report.html)."""


class _Commands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """The subcommands, where a command named by two words (``tune guarantee``) is typed as two
    words, and a command's former spelling (:attr:`Command.rewrite`) becomes today's.

    ``pending`` holds the commands whose options are not added yet: :func:`main` adds only the
    options of the command that runs, when the command's words are read, so a command (or
    ``--help``) never imports what another command's options need (``policy`` reads the export
    targets)."""

    rewrites: dict[str, Any]
    pending: dict[str, Command]

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        name, *words = values
        rewrite = self.rewrites.get(name)
        if rewrite is not None:
            try:
                words = rewrite(words) or words
            except UserError as exc:
                self._name_parser_map[name].error(str(exc))
        if words and f"{name} {words[0]}" in self._name_parser_map:
            name, words = f"{name} {words[0]}", words[1:]
        command = self.pending.pop(name, None)
        if command is not None:
            _add_options(command, self._name_parser_map[name])
        super().__call__(parser, namespace, [name, *words], option_string)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the subcommand's ``--help``."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{PROG}: error: {message} (see '{self.prog} --help')\n")
        raise SystemExit(EXIT_USER_ERROR)


def build_parser() -> argparse.ArgumentParser:
    """The full ``reviewlab`` parser; each subparser's ``handler`` runs the subcommand."""
    return _build(every_option=True)


def _add_options(command: Command, parser: argparse.ArgumentParser) -> None:
    """Give ``command``'s parser its options and its handler."""
    command.arguments(parser)
    parser.set_defaults(handler=command.handler, parser=parser)


def _build(*, every_option: bool) -> argparse.ArgumentParser:
    """The parser with every command; without ``every_option``, a command's options are added
    when its words are read (the commands, their help and examples are all there at once)."""
    parser = _Parser(
        prog=PROG, description=_DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks for errors (for bug reports)"
    )
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser, action=_Commands
    )
    sub.required = True
    assert isinstance(sub, _Commands)
    sub.rewrites = {c.name: c.rewrite for c in COMMANDS if c.rewrite is not None}
    sub.pending = {}
    for command in COMMANDS:
        p = sub.add_parser(
            command.name,
            help=command.help,
            description=command.help,
            epilog=f"examples:\n{command.examples}" if command.examples else None,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if every_option:
            _add_options(command, p)
        else:
            sub.pending[command.name] = command
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``reviewlab`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = _build(every_option=False)
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:  # reported by the subcommand's parser, so the hint names its --help
            getattr(args, "parser", parser).error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:  # --help (0) or a usage error (2, already printed)
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    return run_reporting(args.handler, args, getattr(args, "parser", None))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

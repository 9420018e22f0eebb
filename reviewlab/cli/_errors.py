"""How the command line reports a problem: one line on stderr, named by the option it concerns.

A user error (:class:`UserError`, or the library's ``ValueError``/``OSError``/``ImportError``)
is one line ``reviewlab: error: ...`` and exit status :data:`EXIT_USER_ERROR`; anything else is
an internal error, still one line, with :data:`EXIT_INTERNAL_ERROR`. A library error that
concerns a parameter is a :class:`~reviewlab.core._errors.ParameterError`: its ``parameter``
attribute is looked up among the command's options by their ``dest`` (:func:`option_for`), so
``time_scale`` is printed as ``--time-scale`` and the command line never re-checks what the
library checks, nor reads the library's wording.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator

from reviewlab.core._errors import ParameterError

PROG = "reviewlab"
EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 70  # EX_SOFTWARE


class UserError(Exception):
    """Something the user can fix (an argument, a file); shown as one line, no traceback."""


def one_line(exc: BaseException) -> str:
    """An exception as one readable line."""
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    text = str(exc).strip() or type(exc).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    # pydantic appends a "For further information visit https://errors.pydantic.dev/..." line.
    lines = [line for line in lines if not line.startswith("For further information")]
    return "; ".join(lines)


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and, depth first, the parsers of its sub-commands."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _parsers(sub)


def option_for(parameter: str, parser: argparse.ArgumentParser | None) -> str | None:
    """The command's option for the library's ``parameter``: the option whose ``dest`` is that
    name (``time_scale`` → ``--time-scale``); a field inside it keeps its path
    (``tools.read_file`` → ``--tool read_file``). ``None`` when the command has no such option."""
    if parser is None:
        return None
    head, dot, field = parameter.partition(".")
    for candidate in _parsers(parser):
        for action in candidate._actions:
            if action.option_strings and action.dest == head:
                flag = max(action.option_strings, key=len)  # the long spelling
                return f"{flag} {field}" if dot else flag
    return None


def error_line(exc: BaseException, parser: argparse.ArgumentParser | None) -> str:
    """The one line for a user error: a library error about a parameter names the option."""
    if isinstance(exc, ParameterError):
        flag = option_for(exc.parameter, parser)
        if flag is not None:
            return f"{flag}: {one_line(ValueError(exc.reason))}"
    return one_line(exc)


def _user_error_types() -> tuple[type[BaseException], ...]:
    # ValueError covers PolicyError, pydantic's ValidationError and the recording errors;
    # OSError covers missing, unreadable and unwritable files.
    return (UserError, ValueError, OSError, ImportError)


def run_reporting(
    handler: Callable[[argparse.Namespace], int],
    args: argparse.Namespace,
    parser: argparse.ArgumentParser | None,
) -> int:
    """Run a subcommand's handler; every failure becomes one stderr line and an exit status
    (``--debug`` or ``$REVIEWLAB_DEBUG`` re-raise instead)."""
    debug = bool(getattr(args, "debug", False) or os.environ.get("REVIEWLAB_DEBUG"))
    command = getattr(args, "command", "")
    try:
        return int(handler(args))
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (`reviewlab replay ... | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except _user_error_types() as exc:
        if debug:
            raise
        sys.stderr.write(f"{PROG}: error: {error_line(exc, parser)}\n")
        return EXIT_USER_ERROR
    except MemoryError:
        if debug:
            raise
        sys.stderr.write(
            f"{PROG}: error: {command}: out of memory; the input or an option asks for more "
            "than this machine has (try a smaller corpus, grid or count)\n"
        )
        return EXIT_USER_ERROR
    except Exception as exc:  # a bug, or an input no check foresaw: still one line, no traceback
        if debug:
            raise
        sys.stderr.write(
            f"{PROG}: internal error: {type(exc).__name__}: {one_line(exc)} "
            f"(run '{PROG} --debug {command} ...' for the traceback and report it)\n"
        )
        return EXIT_INTERNAL_ERROR

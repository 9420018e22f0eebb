"""How the command line reports a problem: one line on stderr, named by the option it concerns.

A user error (:class:`UserError`, or the library's ``ValueError``/``OSError``/``ImportError``)
is one line ``reviewlab: error: ...`` and exit status :data:`EXIT_USER_ERROR`; anything else is
an internal error, still one line, with :data:`EXIT_INTERNAL_ERROR`. The library names its
parameters (``slots: ...``); :func:`flag_message` names the command's option instead
(``--slots: ...``), so the command line never re-checks what the library checks.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable

__all__ = [
    "EXIT_INTERNAL_ERROR",
    "EXIT_USER_ERROR",
    "PROG",
    "UserError",
    "flag_message",
    "one_line",
    "run_reporting",
]

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


_PARAMETER = re.compile(r"([a-z][a-z0-9_]*)(?=[:\[])")


def flag_message(text: str, parser: argparse.ArgumentParser | None) -> str:
    """``text`` with a leading library parameter name (``time_scale: ...``) replaced by the
    command's option of that name (``--time-scale: ...``) when the command has one."""
    if parser is None:
        return text
    found = _PARAMETER.match(text)
    if found is None:
        return text
    flag = "--" + found.group(1).replace("_", "-")
    if flag not in parser._option_string_actions:
        return text
    return flag + text[found.end() :]


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
        text = one_line(exc)
        # A library error names its parameter; the user typed the option (a file error names
        # the file, which may look like a parameter).
        if not isinstance(exc, UserError | OSError) and not hasattr(exc, "path"):
            text = flag_message(text, parser)
        sys.stderr.write(f"{PROG}: error: {text}\n")
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

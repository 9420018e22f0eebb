"""One subcommand as a value: its name, help, examples, options and handler, side by side.

Each command module (``reviewlab/cli/_replay.py`` …) defines one :class:`Command`;
:func:`reviewlab.cli.build_parser` registers them in order. A handler parses nothing itself:
it reads the :class:`argparse.Namespace` its ``arguments`` filled, calls one library function
and returns the exit status. A command named by two words (``tune guarantee``: one mode of a
command, with only its options) is typed as two words.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A subcommand: ``arguments`` adds its options to its parser, ``handler`` runs it."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]
    examples: str = ""
    rewrite: Callable[[list[str]], list[str] | None] | None = None
    """A former spelling kept working: the words after the command's name as today's parser
    reads them (which may start with a mode's word), or ``None`` when they are today's."""

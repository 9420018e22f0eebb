"""One subcommand as a value: its name, help, examples, options and handler, side by side.

Each command module (``reviewlab/cli/replay.py`` …) defines one :class:`Command`;
:func:`reviewlab.cli.build_parser` registers them in order. A handler parses nothing itself:
it reads the :class:`argparse.Namespace` its ``arguments`` filled, calls one library function
and returns the exit status.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Command"]


@dataclass(frozen=True)
class Command:
    """A subcommand: ``arguments`` adds its options to its parser, ``handler`` runs it."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]
    examples: str = ""

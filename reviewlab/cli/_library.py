"""Options that feed a library parameter: the library's name as ``dest``, its default as theirs.

An option made by :func:`library_option` defaults to ``None``, and :func:`given` passes only
the options the user gave, so a parameter left out takes the library function's own default:
a change of default in the library is the command line's change too. The help shows that
default through ``%(library_default)s``, read from the function's signature (or a constant
the library exports) when the help is formatted, so ``reviewlab --help`` imports nothing
heavy. The ``dest`` being the library's name is also what names the option in a library
error (:func:`reviewlab.cli._errors.option_for`).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LibraryDefault:
    """The default of ``parameter`` of the function ``target`` (``"module:function"``), or
    the constant ``target`` names when ``parameter`` is ``None``; read when shown."""

    target: str
    parameter: str | None = None

    def value(self) -> Any:
        """The library's value, read now."""
        module, _, name = self.target.partition(":")
        found = getattr(importlib.import_module(module), name)
        if self.parameter is None:
            return found
        return inspect.signature(found).parameters[self.parameter].default

    def __str__(self) -> str:
        value = self.value()
        if value is None:
            return "none"
        if isinstance(value, float):
            return f"{value:g}"
        return str(value)


def library_option(
    parser: argparse.ArgumentParser,
    *flags: str,
    target: str,
    dest: str | None = None,
    shown: LibraryDefault | None = None,
    **kwargs: Any,
) -> argparse.Action:
    """Add an option feeding ``target``'s parameter ``dest`` (default: the flag's name): its
    default is ``None`` (the library's own); ``shown`` is the default the help shows when the
    signature's is a stand-in (``None`` meaning "the library's constant")."""
    action = parser.add_argument(*flags, dest=dest, default=None, **kwargs)
    # argparse formats a help string with the action's attributes: %(library_default)s.
    action.library_default = shown or LibraryDefault(target, action.dest)  # type: ignore[attr-defined]
    action.library_target = target  # type: ignore[attr-defined]
    return action


def given(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The named options the user gave (not ``None``), as keyword arguments."""
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}

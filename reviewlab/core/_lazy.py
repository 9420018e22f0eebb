"""A package's public names, imported from their homes on first use (PEP 562).

A package ``__init__`` lists its names in ``__all__`` and the private module each one lives in
in a ``_HOMES`` map, then takes its module-level ``__getattr__`` and ``__dir__`` from
:func:`lazy_names`. Importing the package imports none of the homes; the first read of a name
imports its home and keeps the value in the package's namespace, so every later read is a plain
attribute read. A name that is neither there nor in ``_HOMES`` is an ``AttributeError`` worded
as Python words it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``(__getattr__, __dir__)`` of ``package`` (its ``__name__``, already importing),
    whose public names live in the modules ``homes`` maps them to."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return __getattr__, __dir__

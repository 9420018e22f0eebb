"""Files shipped inside the package: the bundled corpus, the incident day,
the demo workspace, notebooks.

Everything is read through :mod:`importlib.resources`, so it works the same from a
source checkout and from an installed wheel (the checkout's top-level ``data`` and
``notebooks`` are links into the package).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = [
    "BUNDLED_CORPUS",
    "INCIDENT_DAY",
    "corpus_path",
    "data_path",
    "incident_path",
    "notebooks_dir",
    "workspace_dir",
]

BUNDLED_CORPUS = "episodes/synthetic-1k.jsonl.gz"
"""The bundled synthetic corpus, relative to :func:`data_path`."""
INCIDENT_DAY = "incidents/wedged-query-code.jsonl"
"""The wedged-``query_code`` incident day, relative to :func:`data_path`."""


def _package_dir(name: str) -> Path:
    return Path(str(files("reviewlab").joinpath(name)))


def data_path(relative: str = "") -> Path:
    """The path of a shipped data file, e.g. ``data_path(BUNDLED_CORPUS)``."""
    base = _package_dir("data")
    return base / relative if relative else base


def workspace_dir() -> Path:
    """The bundled demo workspace (a tiny Python package under review)."""
    return data_path("workspace")


def notebooks_dir() -> Path:
    """The shipped notebooks."""
    return _package_dir("notebooks")


def corpus_path() -> Path:
    """The bundled 1,000-episode synthetic corpus (``reviewlab.episode/1``, gzip)."""
    return data_path(BUNDLED_CORPUS)


def incident_path() -> Path:
    """The wedged-``query_code`` incident day: 377 episodes on 6 reviewer slots."""
    return data_path(INCIDENT_DAY)

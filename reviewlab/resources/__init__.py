"""Files shipped inside the package: the bundled corpus, the incident day, the demo workspace,
real logs of other agents (with their provenance and licences), the notebooks.

Everything is read through :mod:`importlib.resources`, so it works the same from a
source checkout and from an installed wheel (the checkout's top-level ``data`` and
``notebooks`` are links into the package). A shipped file also has a name every command and
function that takes a path accepts: ``bundled:corpus``, ``bundled:incident``,
``bundled:real-logs/<file>`` (:func:`bundled`).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = [
    "BUNDLED_CORPUS",
    "BUNDLED_NAMES",
    "BUNDLED_PREFIX",
    "INCIDENT_DAY",
    "REAL_LOGS",
    "bundled",
    "corpus_path",
    "data_path",
    "incident_path",
    "notebooks_dir",
    "real_logs_dir",
    "resolve",
    "workspace_dir",
]

BUNDLED_CORPUS = "episodes/synthetic-1k.jsonl.gz"
"""The bundled synthetic corpus, relative to :func:`data_path`."""
INCIDENT_DAY = "incidents/wedged-query-code.jsonl"
"""The wedged-``query_code`` incident day, relative to :func:`data_path`."""
REAL_LOGS = "real-logs"
"""Real logs of other agents (OpenHands, Inspect AI, SWE-agent), relative to :func:`data_path`."""
BUNDLED_PREFIX = "bundled:"
"""The prefix of a shipped file's name (:func:`bundled`)."""
BUNDLED_NAMES = {
    "corpus": BUNDLED_CORPUS,
    "incident": INCIDENT_DAY,
    "real-logs": REAL_LOGS,
    "workspace": "workspace",
    "prices": "prices.toml",
}
"""The short names :func:`bundled` knows, and the shipped path each stands for."""


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


def real_logs_dir() -> Path:
    """The shipped real logs of other agents (``README.md`` gives their provenance,
    ``LICENSES.md`` their licences)."""
    return data_path(REAL_LOGS)


def bundled(name: str) -> Path:
    """The path of a shipped file by its short name: ``corpus``, ``incident``, ``real-logs``,
    ``workspace``, ``prices``, or ``real-logs/<file>``; with or without the ``bundled:``
    prefix. An unknown name is a ``ValueError`` listing the known ones."""
    short = name.removeprefix(BUNDLED_PREFIX)
    head, _, rest = short.partition("/")
    if head not in BUNDLED_NAMES or (rest and head != "real-logs"):
        known = ", ".join(f"{BUNDLED_PREFIX}{key}" for key in BUNDLED_NAMES)
        raise ValueError(f"{name}: no such shipped file; known: {known}, bundled:real-logs/<file>")
    path = data_path(BUNDLED_NAMES[head])
    if rest:
        path = path / rest
        if not path.exists():
            logs = real_logs_dir()
            shipped = sorted(
                p.relative_to(logs).as_posix()
                for p in logs.rglob("*")
                if p.is_file() and p.suffix != ".md"
            )
            raise ValueError(
                f"{name}: no such shipped log; under bundled:real-logs/ there are: "
                + ", ".join(shipped)
            )
    return path


def resolve(source: str | Path) -> Path:
    """``source`` as a path: a ``bundled:`` name resolved by :func:`bundled`, anything else as
    given (the one place every entry point turns a user's path into a file)."""
    if isinstance(source, str) and source.startswith(BUNDLED_PREFIX):
        return bundled(source)
    return Path(source)

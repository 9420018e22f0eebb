"""The corpus a subcommand reads: opened with :func:`~reviewlab.engines._corpus.open_corpus`, never
loaded first.

Lifecycle: :func:`open_for` opens the handle (a missing path is one line naming it; nothing is
read yet) → the subcommand hands it to the same library function a user would call, which
compiles or loads what it needs → :func:`report_skipped` writes one stderr line per line or
row ``--on-error skip`` dropped, and one total, and :func:`require_episodes` refuses a corpus
with no episode. Arithmetic the corpus's numbers break (1e308 doubled) is one line naming the
corpus (:func:`computing_on`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reviewlab.cli._errors import PROG, UserError, one_line

if TYPE_CHECKING:
    from reviewlab.engines._corpus import Corpus


def open_for(text: str, on_error: str = "raise") -> Corpus:
    """The corpus at ``text`` (JSONL, JSONL.gz, Parquet, a partition directory), opened."""
    from reviewlab.engines._corpus import open_corpus

    try:
        return open_corpus(text, on_error="skip" if on_error == "skip" else "raise")
    except FileNotFoundError:
        raise UserError(f"{text}: no such file") from None


def report_skipped(corpus: Corpus, text: str) -> None:
    """One stderr line per line (or row) ``--on-error skip`` dropped, then the total."""
    for skipped in corpus.skipped:  # nothing is dropped without a line saying so
        sys.stderr.write(
            f"{PROG}: skipped {text}:{skipped.line}: {skipped.field}: {skipped.message}\n"
        )
    if corpus.skipped:
        sys.stderr.write(
            f"{PROG}: skipped {len(corpus.skipped)} line(s) of {text} (--on-error skip); "
            f"loaded {len(corpus)} episode(s)\n"
        )


def require_episodes(corpus: Corpus, text: str) -> None:
    """Refuse a corpus that holds no episode (a JSONL file is read up to its first line with
    content, not compiled: the command's own replay compiles it under its censoring)."""
    path = corpus.path
    jsonl = path is not None and path.is_file() and path.suffix != ".parquet"
    if jsonl and not corpus.loaded and corpus.on_error == "raise":
        assert path is not None
        if not _has_content(path):
            raise UserError(f"{text}: holds no episodes")
    elif len(corpus) == 0:
        raise UserError(f"{text}: holds no episodes")


def _has_content(path: Path) -> bool:
    """Whether a JSONL file has a line that is not blank (a damaged file counts as content:
    the reader names what is wrong with it)."""
    import zlib

    from reviewlab.recording._file_errors import open_decompressed

    try:
        with open_decompressed(path) as stream:
            return any(line.strip() for line in stream)
    except (OSError, EOFError, zlib.error):
        return True


@contextlib.contextmanager
def computing_on(text: str, *, derives_policy: bool = False) -> Iterator[None]:
    """Numbers the corpus holds that arithmetic cannot take (1e308 doubled) name the corpus;
    with ``derives_policy`` (tune) so does a policy derived from them that cannot be held."""
    from reviewlab.core._policy import PolicyError

    try:
        yield
    except ArithmeticError as exc:  # OverflowError, ZeroDivisionError, FloatingPointError
        raise UserError(
            f"{text}: values too extreme to compute with ({type(exc).__name__}: {one_line(exc)})"
        ) from None
    except PolicyError as exc:
        if not derives_policy:
            raise
        raise UserError(f"{text}: {one_line(exc)}") from None


def dask_client(address: str, timeout_sec: float) -> Any:
    """Connect to an existing Dask scheduler (``--scheduler``); an unreachable address is a
    user error."""
    import logging

    from reviewlab.core._errors import ParameterError
    from reviewlab.engines.cluster import distributed_module

    try:
        Client = distributed_module().Client
    except ParameterError as exc:  # the library's client is this command's --scheduler
        raise UserError(f"--scheduler: {exc.reason}") from None

    for name in ("distributed", "distributed.client"):  # Dask's log lines would break the
        logging.getLogger(name).setLevel(logging.CRITICAL)  # one-line errors (SchedulerLost)
    try:
        return Client(address, timeout=f"{timeout_sec}s")
    except (OSError, TimeoutError) as exc:
        raise UserError(f"--scheduler {address}: cannot connect ({exc})") from None

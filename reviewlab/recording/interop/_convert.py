"""Convert a corpus between the recorded formats: JSONL (plain or gzip) and columnar Parquet.

:func:`convert_corpus` streams: it reads the source one episode (or one
Parquet batch) at a time through :func:`~reviewlab.recording._files.iter_episodes`,
so every episode passes the full schema validation, and writes the
destination atomically through :func:`~reviewlab.recording._files.save_episodes`
(which chooses the format by the destination's suffix: ``.jsonl``,
``.jsonl.gz``, ``.parquet``, or a directory of partitions). A failure leaves
the destination as it was. Converting JSONL → Parquet → JSONL gives back the
same bytes. Either end may be an fsspec URL (:mod:`reviewlab.recording._locations`) holding
Parquet: ``convert_corpus("c.jsonl.gz", "s3://bucket/corpus", rows_per_partition=125_000)``
writes the partitions a Dask cluster's workers read.
"""

from __future__ import annotations

import os
from pathlib import Path

from reviewlab.core._vocab import OnError
from reviewlab.recording._files import SkippedLine, iter_episodes, paused_gc, save_episodes
from reviewlab.recording._locations import is_url


def convert_corpus(
    source: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    *,
    on_error: OnError = "raise",
    skipped: list[SkippedLine] | None = None,
    rows_per_partition: int | None = None,
) -> int:
    """Copy the episodes of ``source`` into ``destination`` in its format; return the count.

    ``on_error="skip"`` drops bad episodes and reports each into ``skipped``
    (required then). ``rows_per_partition`` writes a directory of partitions.
    """
    if is_url(source) or is_url(destination):
        return _convert_url(source, destination, on_error, skipped, rows_per_partition)
    src, dst = Path(source), Path(destination)
    if src.exists() and dst.exists() and os.path.samefile(src, dst):
        raise ValueError(f"{dst}: is the source itself; write the conversion elsewhere")
    episodes = iter_episodes(src, on_error=on_error, skipped=skipped)
    with paused_gc():
        return save_episodes(episodes, dst, rows_per_partition=rows_per_partition)


def _convert_url(
    source: str | os.PathLike[str],
    destination: str | os.PathLike[str],
    on_error: OnError,
    skipped: list[SkippedLine] | None,
    rows_per_partition: int | None,
) -> int:
    """A conversion from or to an fsspec URL (:mod:`reviewlab.recording._locations`): only
    Parquet lives behind a URL, a ``.parquet`` object or a directory of partitions."""
    from reviewlab.recording.columnar import PARTITION_ROWS, iter_columnar, write_columnar

    if str(source).rstrip("/") == str(destination).rstrip("/"):
        raise ValueError(f"{destination}: is the source itself; write the conversion elsewhere")
    if is_url(source):
        if on_error == "skip" and skipped is None:
            raise ValueError("on_error='skip' needs a list to report skipped rows into")
        episodes = iter_columnar(str(source), on_error=on_error, skipped=skipped)
    else:
        episodes = iter_episodes(Path(source), on_error=on_error, skipped=skipped)
    with paused_gc():
        if is_url(destination):
            return write_columnar(
                episodes, destination, rows_per_partition=rows_per_partition or PARTITION_ROWS
            )
        return save_episodes(episodes, destination, rows_per_partition=rows_per_partition)

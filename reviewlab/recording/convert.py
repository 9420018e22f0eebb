"""Convert a corpus between the recorded formats: JSONL (plain or gzip) and columnar Parquet.

:func:`convert_corpus` streams: it reads the source one episode (or one
Parquet batch) at a time through :func:`~reviewlab.recording.files.iter_episodes`,
so every episode passes the full schema validation, and writes the
destination atomically through :func:`~reviewlab.recording.files.save_episodes`
(which chooses the format by the destination's suffix: ``.jsonl``,
``.jsonl.gz``, ``.parquet``, or a directory of partitions). A failure leaves
the destination as it was. Converting JSONL → Parquet → JSONL gives back the
same bytes.
"""

from __future__ import annotations

import os
from pathlib import Path

from reviewlab.recording.files import OnError, SkippedLine, iter_episodes, paused_gc, save_episodes

__all__ = ["convert_corpus"]


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
    src, dst = Path(source), Path(destination)
    if src.exists() and dst.exists() and os.path.samefile(src, dst):
        raise ValueError(f"{dst}: is the source itself; write the conversion elsewhere")
    episodes = iter_episodes(src, on_error=on_error, skipped=skipped)
    with paused_gc():
        return save_episodes(episodes, dst, rows_per_partition=rows_per_partition)

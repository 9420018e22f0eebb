"""Before a cluster sweep: each partition's size and first arrival, and ids unique across
every partition, checked on the workers.

Lifecycle: :func:`survey` (a worker task per partition) reads the ``id`` and ``started_at``
columns of its partition, keeps its ids as 64-bit hashes split into buckets, and
:func:`survey_head` hands the client only the row count and the earliest ``started_at`` (the
origin of every clock is the corpus's earliest arrival). :func:`check_bucket` (a task per
bucket) receives bucket ``b`` of every partition — the ids move between workers, never
through the client — and returns the hash repeats; the client has the partitions read the ids
at those rows (:func:`ids_at`) to tell a repeated id from a hash collision, and reports the
first repeat in corpus order as the in-process compile does (the later partition and row,
and where the id came first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

REPEATS_SHOWN = 64
"""Hash repeats one bucket returns at most (the earliest by their second occurrence)."""


@dataclass
class Survey:
    """One partition's row count, earliest ``started_at`` (µs; ``None`` when empty) and ids
    as hashes with their 1-based rows, by bucket."""

    rows: int
    first_started_us: int | None
    buckets: list[tuple[np.ndarray, np.ndarray]]


def _read_columns(part: str, columns: list[str]) -> Any:
    import pyarrow as pa

    from reviewlab.recording._file_errors import EpisodeFormatError
    from reviewlab.recording._locations import location_of
    from reviewlab.recording.columnar._read import _open

    handle = _open(location_of(part))  # the version checks name the partition
    try:
        return handle.read(columns=columns)
    except (pa.ArrowException, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise EpisodeFormatError(part, 0, "<parquet>", f"unreadable ({exc})") from None


def survey(part: str, buckets: int) -> Survey:
    """Read ``part``'s ids and arrivals (a worker task)."""
    import pandas as pd
    import pyarrow.compute as pc

    table = _read_columns(part, ["id", "started_at"])
    ids = table.column("id").to_numpy(zero_copy_only=False).astype(object)
    first = pc.min(table.column("started_at").cast("int64")).as_py()
    hashes = pd.util.hash_array(ids) if ids.size else np.zeros(0, dtype=np.uint64)
    rows = np.arange(1, ids.size + 1, dtype=np.int64)
    bucket = (hashes % np.uint64(buckets)).astype(np.intp)
    split = [(hashes[bucket == b], rows[bucket == b]) for b in range(buckets)]
    return Survey(int(ids.size), None if first is None else int(first), split)


def survey_head(s: Survey) -> tuple[int, int | None]:
    """What the client needs of a survey: the row count and the earliest ``started_at``."""
    return s.rows, s.first_started_us


def survey_bucket(s: Survey, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """One bucket of a survey (its hashes and rows)."""
    return s.buckets[bucket]


def check_bucket(*pieces: tuple[np.ndarray, np.ndarray]) -> list[tuple[int, list[tuple[int, int]]]]:
    """The hash repeats of one bucket over every partition (``pieces[p]``: partition ``p``'s
    hashes and rows): ``(hash, [(partition, row), ...])`` per repeated hash, occurrences in
    corpus order, the earliest second occurrences first, at most :data:`REPEATS_SHOWN`."""
    hashes = np.concatenate([h for h, _ in pieces]) if pieces else np.zeros(0, np.uint64)
    if not hashes.size:
        return []
    parts = np.concatenate([np.full(h.size, p, dtype=np.int64) for p, (h, _) in enumerate(pieces)])
    rows = np.concatenate([r for _, r in pieces])
    order = np.lexsort((rows, parts, hashes))
    hashes, parts, rows = hashes[order], parts[order], rows[order]
    repeated = np.flatnonzero(hashes[1:] == hashes[:-1]) + 1  # the later occurrences
    if not repeated.size:
        return []
    groups: dict[int, list[tuple[int, int]]] = {}
    for at in np.unique(np.r_[repeated - 1, repeated]):
        groups.setdefault(int(hashes[at]), []).append((int(parts[at]), int(rows[at])))
    ranked = sorted(groups.items(), key=lambda item: item[1][1])
    return ranked[:REPEATS_SHOWN]


def ids_at(part: str, rows: list[int]) -> list[str]:
    """The ids at 1-based ``rows`` of ``part`` (a worker task)."""
    column = _read_columns(part, ["id"]).column("id")
    return [column[row - 1].as_py() for row in rows]

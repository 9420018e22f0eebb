"""Reading columnar corpora: partitions, version checks, vectorized validation, Episodes.

Lifecycle of a read: :func:`partition_paths` lists the files (one ``.parquet`` file, or a
directory's ``*.parquet`` in name order) → :func:`iter_tables` opens each, refuses a file
without the version metadata, and yields its rows as tables (whole or in batches), each
through :func:`read_table` (conform, then check: bad rows raise one
:class:`~reviewlab.recording.columnar.ColumnarFormatError`, or with ``on_error="skip"`` are
dropped with a record each) → the engines take the columns, code that wants objects takes
``Episode`` s (:func:`iter_columnar`).

Invariants: ids are unique across every file of a corpus; rows are numbered from 1 within
their file and errors name that file; nothing is skipped without a record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from reviewlab.core._vocab import ON_ERROR_MODES
from reviewlab.recording._file_errors import EpisodeFormatError, SkippedLine, field_of
from reviewlab.recording._locations import is_url, open_input, url_parquet_parts
from reviewlab.recording._schema import SCHEMA_VERSIONS, Episode
from reviewlab.recording.columnar._bad_values import ColumnarFormatError
from reviewlab.recording.columnar._checks import check_table, conform
from reviewlab.recording.columnar._write import FILE_SCHEMA, LAYOUT, LAYOUT_KEY, SCHEMA_KEY

_BATCH = 8192
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def partition_paths(path: str | os.PathLike[str]) -> list[Path]:
    """The Parquet files of a corpus: ``[path]`` for a file, else the directory's, by name.

    A URL (:mod:`reviewlab.recording._locations`) lists its partitions as URLs (strings)."""
    if is_url(path):
        return url_parquet_parts(path)  # type: ignore[arg-type,return-value]
    where = Path(path)
    if where.is_dir():
        parts = sorted(p for p in where.iterdir() if p.suffix == ".parquet")
        if not parts:
            raise EpisodeFormatError(where, 0, "<parquet>", "directory holds no .parquet file")
        return parts
    if not where.exists():
        raise FileNotFoundError(2, "No such file or directory", str(where))
    return [where]


def _open(path: Path | str) -> pq.ParquetFile:
    try:
        # A URL is opened through fsspec (a missing object names the URL).
        handle = pq.ParquetFile(open_input(path) if is_url(path) else path)  # type: ignore[arg-type]
    except FileNotFoundError:
        raise
    except (pa.ArrowInvalid, OSError) as exc:
        raise EpisodeFormatError(path, 0, "<parquet>", f"not a Parquet file ({exc})") from None
    metadata = handle.schema_arrow.metadata or {}
    version = metadata.get(SCHEMA_KEY)
    if version is None:
        raise EpisodeFormatError(
            path, 0, "schema", f"missing schema version metadata (expected {FILE_SCHEMA!r})"
        )
    if version.decode() not in SCHEMA_VERSIONS:
        raise EpisodeFormatError(
            path,
            0,
            "schema",
            f"unsupported schema version {version.decode()!r} "
            f"(expected one of {', '.join(map(repr, SCHEMA_VERSIONS))})",
        )
    layout = metadata.get(LAYOUT_KEY, b"").decode()
    if layout != LAYOUT:
        raise EpisodeFormatError(
            path, 0, "<layout>", f"unsupported columnar layout {layout!r} (expected {LAYOUT!r})"
        )
    return handle


def iter_tables(
    path: str | os.PathLike[str],
    *,
    on_error: str = "raise",
    skipped: list[SkippedLine] | None = None,
    batch_rows: int | None = None,
) -> Iterator[tuple[Path, pa.Table]]:
    """Validated tables of the corpus at ``path``: ``(file, table)`` per file or per batch.

    ``batch_rows=None`` yields each file whole; otherwise batches of that many
    rows (bounded memory). Ids are checked unique across everything yielded.
    In skip mode bad rows are dropped and reported into ``skipped``.
    """
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if on_error == "skip" and skipped is None:
        raise ValueError("on_error='skip' needs a list to report skipped rows into (skipped=[])")
    seen: dict[str, tuple[Path, int]] = {}
    for part in partition_paths(path):
        handle = _open(part)
        row = 1
        batches: Iterable[Any] = (
            [handle.read()]
            if batch_rows is None
            else (pa.Table.from_batches([b]) for b in handle.iter_batches(batch_size=batch_rows))
        )
        for raw in batches:
            table = read_table(part, raw, first_row=row, seen=seen, on_error=on_error, out=skipped)
            row += raw.num_rows
            yield part, table


def read_table(
    part: Path,
    raw: pa.Table,
    *,
    first_row: int = 1,
    seen: dict[str, tuple[Path, int]] | None = None,
    on_error: str = "raise",
    out: list[SkippedLine] | None = None,
) -> pa.Table:
    """``raw`` conformed to :data:`ARROW_SCHEMA` and checked; bad rows raise or are dropped."""
    table = conform(part, raw)
    problems = check_table(table, part, first_row=first_row, seen=seen)
    if not problems:
        return table
    if on_error == "raise":
        raise ColumnarFormatError(part, problems)
    assert out is not None
    bad = sorted({p.row for p in problems})
    for problem in problems:
        out.append(
            SkippedLine(
                problem.row, problem.field, f"episode {problem.episode_id!r}: {problem.message}"
            )
        )
    keep = pa.array([True] * table.num_rows)
    mask = keep.to_numpy(zero_copy_only=False).copy()
    mask[[r - first_row for r in bad]] = False
    return table.filter(pa.array(mask))


def _row_dicts(table: pa.Table) -> Iterator[dict[str, Any]]:
    """Each row as a plain dict with its aware ``started_at``; ``args`` still JSON text."""
    micros = table.column("started_at").cast(pa.int64()).to_pylist()
    offsets = table.column("utc_offset_sec").to_pylist()
    zones: dict[int, Any] = {0: UTC}
    plain = table.drop_columns(["started_at", "utc_offset_sec"]).to_pylist()
    for row, us, off in zip(plain, micros, offsets, strict=True):
        zone = zones.get(off)
        if zone is None:
            zone = zones[off] = timezone(timedelta(seconds=off))
        row["started_at"] = (_EPOCH + timedelta(microseconds=us)).astimezone(zone)
        row["meta"] = dict(row["meta"] or ())
        tokens = row.pop("round_tokens", None)
        if tokens is not None:  # checked: one entry per round
            for rnd, counts in zip(row["rounds"], tokens, strict=True):
                rnd.update(counts)
        if row.get("model") is None:
            row.pop("model", None)
        yield row


def _decode_args(row: dict[str, Any]) -> tuple[str, str] | None:
    """Decode every call's ``args`` in place; the dotted field of the first that is not JSON."""
    for r, rnd in enumerate(row["rounds"]):
        for c, call in enumerate(rnd["calls"]):
            try:
                call["args"] = json.loads(call["args"])
            except json.JSONDecodeError as exc:
                return f"rounds.{r}.calls.{c}.args", f"not JSON ({exc})"
    return None


def iter_columnar(
    path: str | os.PathLike[str],
    *,
    on_error: str = "raise",
    skipped: list[SkippedLine] | None = None,
) -> Iterator[Episode]:
    """Yield the episodes of a columnar corpus in order, a batch at a time (bounded memory)."""
    from pydantic import ValidationError

    for part, table in iter_tables(path, on_error=on_error, skipped=skipped, batch_rows=_BATCH):
        for data in _row_dicts(table):
            bad = _decode_args(data)
            try:
                if bad is None:
                    yield Episode.model_validate(data)
                    continue
                field, message = bad
            except ValidationError as exc:  # what the vectorized checks leave to pydantic (args)
                field, message = field_of(exc)
            row = _row_of(part, data["id"])
            message = f"episode {data['id']!r}: {message}"
            if on_error == "raise":
                raise EpisodeFormatError(part, row, field, message)
            assert skipped is not None
            skipped.append(SkippedLine(row, field, message))


def _row_of(part: Path, episode_id: str) -> int:
    """The 1-based row of ``episode_id`` in ``part`` (only for an error, so a scan is fine)."""
    ids = pq.read_table(part, columns=["id"]).column("id").to_pylist()
    return ids.index(episode_id) + 1 if episode_id in ids else 0

"""Episode files: JSON Lines (plain or gzip) in and out, and the per-call frame.

One :class:`~reviewlab.recording._schema.Episode` per line, UTF-8 JSON ending in ``\\n``; a
name ending in ``.gz`` is written gzip-compressed, and a file is read as gzip when it starts
with the gzip magic bytes. :func:`iter_episodes` decodes one line at a time (bounded memory),
:func:`load_episodes` collects them; a ``.parquet`` path or a directory is the columnar form
(:mod:`reviewlab.recording.columnar`), a directory of ``*.session.jsonl`` files a gateway's
sessions (:mod:`reviewlab.recording.journal`). :func:`episodes_frame` is one row per call.

Invariants: line numbers are 1-based in the decompressed text, blank lines ignored but
counted; ids are unique within a file (:mod:`reviewlab.recording._ids`); every defect is one
:class:`EpisodeFormatError` naming file, line and field, raised, or with ``on_error="skip"``
recorded as a :class:`SkippedLine`, never dropped silently; :func:`save_episodes` is atomic
and gzip output deterministic. The rules in full: docs/recording-format.md, "JSON Lines
files".
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from reviewlab.core._vocab import ON_ERROR_MODES, OnError
from reviewlab.recording._file_errors import (
    GZIP_FIELD,
    EpisodeFormatError,
    SkippedLine,
    field_of,
    open_decompressed,
)
from reviewlab.recording._ids import duplicate_id
from reviewlab.recording._schema import SCHEMA_VERSION, Episode


class LoadedEpisodes(list[Episode]):
    """The episodes of one file, in file order, plus the report of lines skipped.

    It is a plain ``list`` of episodes for every other purpose. ``skipped`` is
    empty unless the file was loaded with ``on_error="skip"`` and had defects.
    """

    def __init__(
        self,
        episodes: Iterable[Episode] = (),
        *,
        path: str = "",
        skipped: list[SkippedLine] | None = None,
    ) -> None:
        super().__init__(episodes)
        self.path = path
        self.skipped: list[SkippedLine] = list(skipped or [])

    @property
    def ok(self) -> bool:
        """True when no line was skipped."""
        return not self.skipped


def iter_episodes(
    path: str | os.PathLike[str],
    *,
    on_error: OnError = "raise",
    skipped: list[SkippedLine] | None = None,
) -> Iterator[Episode]:
    """Yield the episodes of ``path`` one line at a time (bounded memory).

    With ``on_error="raise"`` the first defect raises :class:`EpisodeFormatError`.
    With ``on_error="skip"`` every defective line is appended to ``skipped``
    (pass a list to receive the report; it is required in skip mode, so that
    nothing is dropped without a record) and the read goes on.
    """
    if on_error not in ON_ERROR_MODES:
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if on_error == "skip" and skipped is None:
        raise ValueError("on_error='skip' needs a list to report skipped lines into (skipped=[])")
    where = Path(path)
    if where.is_dir():
        from reviewlab.recording.journal import is_session_folder, iter_sessions

        if is_session_folder(where):  # a gateway's recording: one episode per session file
            yield from iter_sessions(where, on_error=on_error, skipped=skipped)
            return
    if where.suffix == ".parquet" or where.is_dir():  # a columnar corpus (file or partitions)
        from reviewlab.recording.columnar import iter_columnar

        yield from iter_columnar(where, on_error=on_error, skipped=skipped)
        return
    seen: dict[str, int] = {}

    def refuse(line: int, field: str, message: str) -> None:
        if on_error == "raise":
            raise EpisodeFormatError(where, line, field, message)
        assert skipped is not None
        skipped.append(SkippedLine(line, field, message))

    number = 0
    stream = open_decompressed(where)
    with stream:
        lines = iter(stream)
        while True:
            try:
                raw = next(lines)
            except StopIteration:
                return
            except (EOFError, OSError, zlib.error) as exc:
                # The compressed stream is damaged or cut: nothing after it is readable.
                refuse(number + 1, GZIP_FIELD, f"damaged or truncated gzip stream ({exc})")
                return
            number += 1
            if not raw.strip():
                continue
            try:
                episode = Episode.model_validate_json(raw)
            except ValidationError as exc:
                field, message = field_of(exc)
                if not raw.endswith(b"\n"):
                    message = f"truncated last line (no newline at end of file): {message}"
                refuse(number, field, message)
                continue
            if "schema_version" not in episode.model_fields_set:
                refuse(
                    number,
                    "schema",
                    f'missing schema version (expected "schema": {SCHEMA_VERSION!r})',
                )
                continue
            first = seen.setdefault(episode.id, number)
            if first != number:
                refuse(number, "id", duplicate_id(episode.id, f"line {first}"))
                continue
            yield episode


def load_episodes(path: str | os.PathLike[str], *, on_error: OnError = "raise") -> LoadedEpisodes:
    """All episodes of ``path`` as a :class:`LoadedEpisodes` list (``.skipped`` is the report)."""
    skipped: list[SkippedLine] = []
    with paused_gc():
        episodes = LoadedEpisodes(
            iter_episodes(path, on_error=on_error, skipped=skipped), path=str(path), skipped=skipped
        )
    episodes.skipped = skipped
    return episodes


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many objects that form no cycles.

    Why: every few hundred allocations CPython's collector scans the young
    objects, and the ever-growing list of live episodes makes the older
    generations' full scans quadratic overall: loading 100k episodes took 4×
    longer with it on. Reference counting still frees everything; the
    collector is re-enabled (if it was on) however the block ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def save_episodes(
    episodes: Iterable[Episode],
    path: str | os.PathLike[str],
    *,
    rows_per_partition: int | None = None,
) -> int:
    """Write ``episodes`` to ``path`` atomically; gzip when it ends in ``.gz``. Returns the count.

    ``episodes`` may be any iterable (a generator is consumed once, never held
    whole). Ids must be unique, as the reader requires; a repeated id raises
    :class:`ValueError` before the destination is touched. A ``.parquet`` path,
    an existing directory or ``rows_per_partition`` writes the columnar format
    (:mod:`reviewlab.recording.columnar`; a directory of partitions unless the
    path ends in ``.parquet``).
    """
    target = Path(path)
    if target.suffix == ".parquet" or target.is_dir() or rows_per_partition is not None:
        from reviewlab.recording.columnar import PARTITION_ROWS, write_columnar

        return write_columnar(
            episodes, target, rows_per_partition=rows_per_partition or PARTITION_ROWS
        )
    directory = target.parent if str(target.parent) else Path(".")
    fd, temp_name = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=".tmp")
    count = 0
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as raw:
            if target.name.endswith(".gz"):
                # mtime=0 and an empty name make the bytes a function of the episodes only.
                with gzip.GzipFile(
                    filename="", fileobj=raw, mode="wb", compresslevel=6, mtime=0
                ) as packed:
                    count = _write_lines(episodes, packed.write, target)
            else:
                count = _write_lines(episodes, raw.write, target)
            raw.flush()
            os.fsync(raw.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(
            temp_name, 0o666 & ~umask
        )  # mkstemp makes 0600; give the file ordinary permissions
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise
    return count


def _write_lines(
    episodes: Iterable[Episode], write: Callable[[bytes], object], target: Path
) -> int:
    """Encode and write episodes in batches (fewer, larger writes keep gzip fast)."""
    seen: set[str] = set()
    batch: list[str] = []
    count = 0
    for episode in episodes:
        if episode.id in seen:
            raise ValueError(f"{target}: {duplicate_id(episode.id)}")
        seen.add(episode.id)
        batch.append(episode.to_json_line())
        count += 1
        if len(batch) >= 512:
            write(("\n".join(batch) + "\n").encode("utf-8"))
            batch.clear()
    if batch:
        write(("\n".join(batch) + "\n").encode("utf-8"))
    return count


FRAME_COLUMNS = (
    "episode_id",
    "source",
    "slot",
    "started_at",
    "arrival_sec",
    "deadline_sec",
    "end_reason",
    "round",
    "send_sec",
    "call_index",
    "tool",
    "duration_sec",
    "completed",
    "status",
    "result_chars",
    "requested_lines",
    "extent_path",
    "extent_start_line",
    "extent_end_line",
    "returned_after_sec",
)
"""Columns of :func:`episodes_frame`, one row per call:

* ``episode_id``, ``source``, ``slot``, ``end_reason``: copied from the episode.
* ``started_at``: the episode's arrival wall time (tz-aware ``Timestamp``).
* ``arrival_sec``: seconds from the earliest ``started_at`` of the episodes given.
* ``deadline_sec``: inherited deadline in seconds from start, NaN when none.
* ``round``: 1-based round number; ``send_sec``: that round's model-send time.
* ``call_index``: 0-based index of the call within its episode.
* ``tool``, ``duration_sec``, ``completed``, ``status``, ``result_chars``: the call's fields.
* ``requested_lines``: lines the read extent asks for (0 without an extent).
* ``extent_path`` (``""`` when none), ``extent_start_line``, ``extent_end_line``
  (``<NA>`` when none; nullable ``Int64``).
* ``returned_after_sec``: when an abandoned call's loose worker came back, NaN when unknown.
"""


def episodes_frame(episodes: Iterable[Episode]) -> pd.DataFrame:
    """One row per call of ``episodes`` with exactly :data:`FRAME_COLUMNS` (see there)."""
    episodes = list(episodes)
    cols: dict[str, list[Any]] = {name: [] for name in FRAME_COLUMNS}
    origin = min((ep.started_at for ep in episodes), default=None)
    nan = float("nan")
    for ep in episodes:
        arrival = (ep.started_at - origin).total_seconds() if origin is not None else 0.0
        deadline = nan if ep.deadline_sec is None else ep.deadline_sec
        index = 0
        for number, rnd in enumerate(ep.rounds, start=1):
            for call in rnd.calls:
                extent = call.extent
                cols["episode_id"].append(ep.id)
                cols["source"].append(ep.source)
                cols["slot"].append(ep.slot)
                cols["started_at"].append(ep.started_at)
                cols["arrival_sec"].append(arrival)
                cols["deadline_sec"].append(deadline)
                cols["end_reason"].append(ep.end_reason)
                cols["round"].append(number)
                cols["send_sec"].append(rnd.send_sec)
                cols["call_index"].append(index)
                cols["tool"].append(call.tool)
                cols["duration_sec"].append(call.duration_sec)
                cols["completed"].append(call.completed)
                cols["status"].append(call.status)
                cols["result_chars"].append(call.result_chars)
                cols["requested_lines"].append(extent.lines if extent is not None else 0)
                cols["extent_path"].append(extent.path if extent is not None else "")
                cols["extent_start_line"].append(extent.start_line if extent is not None else None)
                cols["extent_end_line"].append(extent.end_line if extent is not None else None)
                cols["returned_after_sec"].append(
                    nan if call.returned_after_sec is None else call.returned_after_sec
                )
                index += 1
    frame = pd.DataFrame(cols, columns=list(FRAME_COLUMNS))
    frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True)
    for name in ("arrival_sec", "deadline_sec", "send_sec", "duration_sec", "returned_after_sec"):
        frame[name] = frame[name].astype("float64")
    for name in ("round", "call_index", "result_chars", "requested_lines"):
        frame[name] = frame[name].astype("int64")
    for name in ("extent_start_line", "extent_end_line"):
        frame[name] = frame[name].astype("Int64")
    frame["completed"] = frame["completed"].astype(bool)
    return frame

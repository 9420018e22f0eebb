"""Compile a corpus for the vectorized engine straight from its columns: no ``Episode`` per row.

Lifecycle: :func:`compile_columns` takes a path (``.parquet``, a partition directory, or JSONL
through :mod:`reviewlab.recording.jsonl`), an Arrow table, or a list of episodes; reads and
checks the columns (:mod:`reviewlab.recording.columnar`), flattens the nested rounds and calls
once, builds the arrays ``CompiledCorpus._compile`` builds from objects and hands them to
``CompiledCorpus._compile_columns``, the one place the rest is derived.

Invariants: replays are bit-identical to those of ``compile_corpus`` (arrivals on integer
microseconds, the effective observation and the same seeded completion times, the same policy
keys); memory is in proportion to the columns. In full: docs/architecture.md, "Compiling from
columns".
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeAlias, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.core._vocab import CENSORING_MODES
from reviewlab.engines._censoring import KaplanMeier
from reviewlab.engines._prefetch import BATCH_ROWS, take
from reviewlab.engines.vectorized._compiled import CompiledCorpus, CorpusEvents
from reviewlab.engines.vectorized._gather import Gathered
from reviewlab.engines.vectorized._windows import RemoteCalls
from reviewlab.recording._locations import is_url, location_of
from reviewlab.recording._schema import Episode
from reviewlab.recording.columnar import (
    ColumnarFormatError,
    FlatColumns,
    check_table,
    conform,
    flat_columns,
    repeated_id_error,
)

JSONL_BATCH_LINES = 8192
"""Lines per batch when compiling a JSONL corpus (each is a Python object until gathered)."""

CorpusSource: TypeAlias = str | os.PathLike[str] | pa.Table | Sequence[Episode]


class ArgsColumn(Sequence[Any]):
    """Every call's arguments, decoded when first needed (only custom policy objects read them).

    ``load`` returns the arguments' JSON texts in corpus order; for a corpus on disk
    it reads them again from the file, so a compiled corpus holds no argument text.
    """

    def __init__(self, size: int, load: Callable[[], list[str]]) -> None:
        self._size = size
        self._load: Callable[[], list[str]] | None = load
        self._decoded: list[Any] | None = None
        self._lock = threading.Lock()  # a sweep's threads may all ask first

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a Dask worker may hand a compiled partition to another): the lock stays."""
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def _all(self) -> list[Any]:
        decoded = self._decoded
        if decoded is None:
            with self._lock:
                if self._decoded is None:
                    assert self._load is not None
                    self._decoded = [json.loads(text) for text in self._load()]
                    self._load = None
                decoded = self._decoded
        return decoded

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())


def corpus_table(source: CorpusSource) -> tuple[pa.Table, FlatColumns]:
    """The checked Arrow table of a corpus path, table or episode list, and its flat columns.

    Every bad value is an error naming file, row, episode and field; ids are unique
    across the partitions of a directory (checked on all ids at once).
    """
    from reviewlab.recording.columnar import episodes_table

    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.suffix == ".parquet" or path.is_dir():
            return _parquet_table(path)
        from reviewlab.recording.jsonl import jsonl_table

        table = jsonl_table(path)
        return table, flat_columns(table)
    where = Path("<table>")
    table = conform(where, source if isinstance(source, pa.Table) else episodes_table(source))
    flat = flat_columns(table)
    problems = check_table(table, where, flat=flat)
    if problems:
        raise ColumnarFormatError(where, problems)
    return table, flat


def _parquet_table(path: Path) -> tuple[pa.Table, FlatColumns]:
    from reviewlab.recording.columnar._read import _open, partition_paths

    parts = partition_paths(path)
    tables = []
    for part in parts:
        table = conform(part, _open(part).read())
        flat = flat_columns(table)
        problems = check_table(table, part, flat=flat)
        if problems:
            raise ColumnarFormatError(part, problems)
        tables.append(table)
    if len(tables) == 1:
        return tables[0], flat
    combined = pa.concat_tables(tables)
    ids = combined.column("id").combine_chunks()
    if len(pc.unique(ids)) != len(ids):  # a repeat across partitions: name the later one
        seen: dict[str, tuple[Path, int]] = {}
        for part, table in zip(parts, tables, strict=True):
            for row, episode_id in enumerate(table.column("id").to_pylist(), start=1):
                first = seen.setdefault(episode_id, (part, row))
                if first != (part, row):
                    raise repeated_id_error(part, row, episode_id, first[0], first[1])
    del tables
    return combined, flat_columns(combined)


def compile_columns(
    source: CorpusSource,
    *,
    censored: str = "wedge",
    seed: int = 0,
    origin_us: int | None = None,
    batch_rows: int = BATCH_ROWS,
) -> CompiledCorpus:
    """A :class:`CompiledCorpus` of ``source`` built from columns (see the module docstring).

    ``origin_us``: the instant (microseconds since the epoch) arrivals are measured
    from; default the earliest ``started_at`` of ``source``. A partition of a larger
    corpus is compiled with the whole corpus's origin, so its clocks are the whole
    corpus's clocks to the bit. A Parquet corpus is read ``batch_rows`` episodes at a
    time: only the compact NumPy columns of the batches read so far are held.
    """
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    gathered = Gathered()
    if isinstance(source, str | os.PathLike) and (
        # an fsspec URL holds Parquet only (reviewlab.recording._locations)
        is_url(source) or Path(source).suffix == ".parquet" or Path(source).is_dir()
    ):
        path = location_of(source)
        for part, first_row, flat in _parquet_batches(path, batch_rows):
            gathered.add(flat, part, first_row)
            del flat  # the batch's buffers are free for the next batch to reuse
        _return_freed_memory()  # and go back to the system before the corpus is compiled
        load: Callable[[], list[str]] = functools.partial(_parquet_args, path, batch_rows)
    elif isinstance(source, str | os.PathLike):  # JSONL through the fast decoder, in batches
        from reviewlab.recording.jsonl import jsonl_batches

        path = Path(source)
        # Lines are decoded to Python objects first: smaller batches keep those few.
        for lines, _, flat in jsonl_batches(path, min(batch_rows, JSONL_BATCH_LINES)):
            gathered.add(flat, path, int(lines[0]) if lines.size else 1, lines)
            del flat
            _return_freed_memory()
        load = functools.partial(_jsonl_args, path, batch_rows)
    else:
        _, flat = corpus_table(source)
        gathered.add(flat, Path("<table>"), 1)
        load = functools.partial(_args, flat)
    gathered.check_unique()
    corpus = _compile(gathered, censored=censored, seed=seed, origin_us=origin_us, load=load)
    del gathered
    _return_freed_memory()
    return corpus


def _return_freed_memory() -> None:
    """Give freed memory back to the system: Arrow's pool keeps the pages of freed buffers, and
    glibc's heap the holes left by the many batch-sized arrays a compile frees, both counted in
    the process's resident size until returned. (Only where glibc is the allocator.)"""
    pa.default_memory_pool().release_unused()
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim() -> Any:
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): nothing to trim
        return None


_TRIM = _malloc_trim()


def _parquet_args(path: Path | str, rows: int) -> list[str]:
    """Every call's argument text of a Parquet corpus, read again from its file."""
    return [t for _, _, f in _parquet_batches(path, rows) for t in _args(f)]


def _jsonl_args(path: Path, rows: int) -> list[str]:
    """Every call's argument text of a JSONL corpus, read again from its file."""
    from reviewlab.recording.jsonl import jsonl_batches

    return [t for _, _, f in jsonl_batches(path, rows) for t in _args(f)]


def _args(flat: FlatColumns) -> list[str]:
    return list(flat.calls["args"].to_pylist())


def _parquet_batches(path: Path | str, rows: int) -> Iterator[tuple[Path, int, FlatColumns]]:
    """Each partition's checked batches: ``(file, first row, flat columns)``."""
    from reviewlab.recording.columnar._read import _open, partition_paths

    for part in partition_paths(path):
        handle = _open(part)  # the version and layout checked, whoever decodes the batches
        first_row = 1
        prefetched = take(part, rows)  # decoded while the caller was importing (_prefetch)
        batches = (
            prefetched
            if prefetched is not None
            else _read_ahead(handle.iter_batches(batch_size=rows))
        )
        for batch in batches:
            table = conform(part, pa.Table.from_batches([batch]))
            flat = flat_columns(table)
            problems = check_table(table, part, first_row=first_row, flat=flat)
            if problems:
                raise ColumnarFormatError(part, problems)
            yield part, first_row, flat
            first_row += table.num_rows
            # Freed, not given back: the next batch, of the same size, reuses the pages (giving
            # them back after every batch made each batch fault them in again).
            del table, flat, batch


def _read_ahead(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The batches, each next one decoded in a thread while the caller checks and gathers the
    current one (Arrow decodes without the GIL: the two overlap on a second core). At most one
    batch is read ahead."""
    with ThreadPoolExecutor(1, thread_name_prefix="reviewlab-read") as pool:
        ahead = pool.submit(next, batches, None)
        while True:
            batch = ahead.result()
            if batch is None:
                return
            ahead = pool.submit(next, batches, None)
            yield batch
            del batch


def _numpy(array: pa.Array | pa.ChunkedArray, fill: Any = None) -> np.ndarray:
    if fill is not None:
        array = array.fill_null(fill)
    return np.asarray(array.to_numpy(zero_copy_only=False))


def _first_appearance(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber ``codes`` by first appearance; returns (new codes, first row of each new code).

    Codes in a small range (tool × argument key pairs, as here) are renumbered without a sort.
    """
    if not codes.size:
        return codes.astype(np.intp), np.zeros(0, dtype=np.intp)
    low, high = int(codes.min()), int(codes.max())
    if high - low > 4 * codes.size + 1_000_000:  # sparse codes: sort
        unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        return rank[inverse].astype(np.intp), first[order]
    dense = (codes - low).astype(np.intp)
    first = np.full(high - low + 1, codes.size, dtype=np.intp)
    np.minimum.at(first, dense, np.arange(codes.size))
    present = np.flatnonzero(first < codes.size)
    order = present[np.argsort(first[present], kind="stable")]
    rank = np.zeros(first.size, dtype=np.intp)
    rank[order] = np.arange(order.size)
    return rank[dense], first[order]


def _compile(
    g: Gathered,
    *,
    censored: str,
    seed: int,
    origin_us: int | None,
    load: Callable[[], list[str]],
) -> CompiledCorpus:
    c = CompiledCorpus.__new__(CompiledCorpus)
    c.censored = censored
    c.seed = seed
    c._string_columns = None
    c.episode_ids = g.ids
    c.slot_ids = g.slots
    started = g.array("started", np.int64)
    n_ep = started.size
    origin = int(started.min()) if origin_us is None and n_ep else (origin_us or 0)
    c.arrival_sec = ((started - origin) / 1e6 if n_ep else np.zeros(0)).astype(float)
    del started
    c.deadline_at_sec = c.arrival_sec + g.array("deadline", float)

    tools = list(g.tools)
    ix = np.int32 if g.calls + g.rounds + 2 * n_ep < 2**31 - 1 else np.intp  # index width
    tool_code = g.array("tool_code", ix)
    duration, completed = _settle_censored(
        g.array("duration", float), g.array("completed", bool), tool_code, censored, seed
    )
    arg_key = g.array("arg_key", np.int64)
    keys_per_tool = int(arg_key.max(initial=0)) + 1
    key_code, first_rows = _first_appearance(tool_code.astype(np.int64) * keys_per_tool + arg_key)
    key_tools = [tools[tool_code[row]] for row in first_rows]
    c.key_args = [
        json.loads(g.first_args[(int(tool_code[row]), int(arg))])
        for row, arg in zip(first_rows, arg_key[first_rows], strict=True)
    ]
    del arg_key
    c.call_args = cast(list[Any], ArgsColumn(duration.size, load))  # read by zip(): any sequence

    # Events in corpus order: per round its send, then its calls.
    n_calls = g.array("n_calls", np.intp)
    round_episode = g.array("round_episode", np.intp)
    call_round = g.array("call_round", np.intp)
    call_episode = g.array("call_episode", ix)
    send_pos = np.arange(n_calls.size) + (np.cumsum(n_calls) - n_calls)  # each round's send
    n_events = np.zeros(n_ep, dtype=np.intp)
    np.add.at(n_events, round_episode, n_calls + 1)
    del round_episode
    episode_event_start = np.cumsum(n_events) - n_events
    call_pos = send_pos[call_round] + 1 + g.array("call_position", np.intp)
    event_sec = np.empty(int(n_events.sum()))
    event_sec[send_pos] = g.array("send_sec", float)
    event_sec[call_pos] = duration
    with_calls = n_calls > 0
    round_with_calls = np.cumsum(with_calls) - 1
    index_columns = [
        call_episode,
        (g.array("round_position", ix)[call_round] + 1).astype(ix),
        tool_code,
        key_code.astype(ix),
        (call_pos - episode_event_start[call_episode]).astype(ix),
        round_with_calls[call_round].astype(ix),
        g.array("requested_lines", ix),
    ]
    del key_code
    status_error = g.array("status_error", bool)
    g.columns.clear()
    remote = RemoteCalls()
    remote.progress_calls, remote.progress_sec = g.progress_calls, g.progress_sec
    remote.honoured_calls, remote.honoured_sec = g.honoured_calls, g.honoured_sec
    round_sizes = n_calls[with_calls].astype(ix)
    del call_pos, send_pos, episode_event_start, call_round, round_with_calls, with_calls, n_calls
    handed = [event_sec]  # handed over, not kept here: the events are freed once placed
    del event_sec
    c._compile_columns(
        index_columns,
        duration,
        completed,
        status_error,
        tools=tools,
        key_tools=key_tools,
        events=CorpusEvents(n_events, handed.pop(), round_sizes),
        remote=remote,
    )
    return c


def _settle_censored(
    duration: np.ndarray, completed: np.ndarray, tool_code: np.ndarray, censored: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Completion times of still-censored calls, as :func:`completion_times` gives them."""
    pending = np.flatnonzero(~completed)
    if censored == "wedge" or not pending.size:
        return duration, completed
    observed = duration
    duration = duration.copy()
    done = completed.copy()
    done[pending] = True
    if censored == "observed":
        return duration, done
    pooled = KaplanMeier(observed, completed)
    if not pooled.estimable:
        raise ValueError(
            "impute: no call in the corpus ever completed, so no duration distribution can be "
            "estimated; replay with censored='wedge'"
        )
    draws = np.random.default_rng(seed).random(pending.size)
    estimates: dict[int, KaplanMeier] = {}
    for row, u in zip(pending.tolist(), draws.tolist(), strict=True):
        code = int(tool_code[row])
        estimate = estimates.get(code)
        if estimate is None:
            mine = tool_code == code
            estimate = estimates[code] = KaplanMeier(observed[mine], completed[mine])
        duration[row] = (estimate if estimate.estimable else pooled).draw_beyond(
            float(observed[row]), u
        )
    return duration, done

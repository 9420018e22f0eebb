"""The compact columns of a corpus read batch by batch, for the vectorized engine's compiler.

Lifecycle: :func:`reviewlab.engines.vectorized._columns.compile_columns` makes one
:class:`Gathered`, :meth:`Gathered.add` s every checked batch in corpus order, calls
:meth:`Gathered.check_unique`, then takes each column whole with :meth:`Gathered.array`
(which drops that column's batches, so a column is held once). Only NumPy arrays of fixed-width
numbers, the ids and slots, and the first argument text of each policy key are kept; version 2
fields are kept sparse, for the calls that recorded them.

Invariants: episode, round and call indices are global; tool codes and argument keys are
numbered across batches in order of first appearance; a call's duration and completion are its
effective observation (``returned_after_sec`` wins).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.core._policy import TimeoutPolicy
from reviewlab.recording.columnar import FlatColumns, repeated_id_error


def _numpy(array: pa.Array | pa.ChunkedArray, fill: Any = None) -> np.ndarray:
    nulls = array.null_count
    if fill is not None and nulls:
        if nulls == len(array):  # nothing to read (a version 2 field in a version 1 corpus)
            return np.full(nulls, fill, dtype=array.type.to_pandas_dtype())
        array = array.fill_null(fill)
    return np.asarray(array.to_numpy(zero_copy_only=False))


_TIMEOUT_KEY = re.compile(rb'"timeout(_sec)?"\s*:')
"""A key ``timeout`` or ``timeout_sec`` (any spacing before its colon)."""
_ESCAPE = re.compile(rb"\\")
"""Any escape (one could spell such a key)."""


def _rows_containing(
    strings: pa.Array, searches: Sequence[tuple[re.Pattern[bytes], bytes]]
) -> np.ndarray:
    """The rows (ascending) of a string array whose text matches one of the ``searches``, each
    a pattern every match of which contains its literal.

    One copy of the array's character buffer, scanned by C searches that touch only the
    matches; a match counted only when it lies inside one row; null rows never match. Much
    cheaper than a per-row kernel when matches are rare, as here; when a literal is nowhere in
    the buffer (the usual case) a ``bytes.find`` — several times faster than the regular
    expression's scan — says so and the expression never runs.
    """
    if isinstance(strings, pa.ChunkedArray):
        strings = strings.combine_chunks()
    n = len(strings)
    buffers = strings.buffers()
    if not n or buffers[2] is None:
        return np.zeros(0, dtype=np.intp)
    width = np.int64 if pa.types.is_large_string(strings.type) else np.int32
    offsets = np.frombuffer(buffers[1], dtype=width, count=strings.offset + n + 1)
    offsets = offsets[strings.offset :].astype(np.int64)
    low = int(offsets[0])
    text = bytes(memoryview(buffers[2])[low : int(offsets[-1])])
    spans = [
        match.span()
        for pattern, literal in searches
        if literal in text
        for match in pattern.finditer(text)
    ]
    if not spans:
        return np.zeros(0, dtype=np.intp)
    found = np.array(spans, dtype=np.int64) + low
    rows = np.searchsorted(offsets, found[:, 0], side="right") - 1
    ends = np.asarray(offsets[rows + 1], dtype=np.int64)
    rows = rows[found[:, 1] <= ends]  # not across a row boundary
    if strings.null_count:
        rows = rows[_numpy(strings.is_valid(), False).astype(bool)[rows]]
    return np.unique(rows).astype(np.intp)


class StringColumn(Sequence[str]):
    """A column of strings (episode ids, slots) held as Arrow — a few bytes a string — and
    decoded to Python ``str`` objects only when read (frames, errors), then kept."""

    def __init__(self, chunks: list[pa.Array]) -> None:
        self.array = pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())
        self._decoded: list[str] | None = None

    def _all(self) -> list[str]:
        if self._decoded is None:
            self._decoded = self.array.to_pylist()
        return self._decoded

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self._all(), dtype=object if dtype is None else dtype)

    def distinct(self) -> bool:
        """Whether no string repeats."""
        return bool(pc.count_distinct(self.array).as_py() == len(self.array))


class Gathered:
    """The compact columns of every batch read so far (corpus order), offsets made global."""

    def __init__(self) -> None:
        self._id_chunks: list[pa.Array] = []
        self._slot_chunks: list[pa.Array] = []
        self._ids: StringColumn | None = None
        self._slots: StringColumn | None = None
        self.episodes = 0
        # (file, first row, first episode, row numbers when not consecutive: JSONL lines)
        self.where: list[tuple[Path, int, int, np.ndarray | None]] = []
        self.columns: dict[str, list[np.ndarray]] = {}
        self.tools: dict[str, int] = {}
        self.arg_keys: dict[Any, int] = {TimeoutPolicy.args_key({}): 0}
        self.first_args: dict[tuple[int, int], str] = {}
        self.rounds = 0
        self.calls = 0
        self.progress_calls: list[int] = []
        self.progress_sec: list[tuple[float, ...]] = []
        self.honoured_calls: list[int] = []
        self.honoured_sec: list[float] = []

    @property
    def ids(self) -> StringColumn:
        """Every episode id so far, in order (one Arrow array, built once per batch added)."""
        if self._ids is None:
            self._ids = StringColumn(self._id_chunks)
            self._id_chunks = [self._ids.array]
        return self._ids

    @property
    def slots(self) -> StringColumn:
        """Every episode's slot so far, in order."""
        if self._slots is None:
            self._slots = StringColumn(self._slot_chunks)
            self._slot_chunks = [self._slots.array]
        return self._slots

    def _put(self, **arrays: np.ndarray) -> None:
        for name, array in arrays.items():
            self.columns.setdefault(name, []).append(array)

    def add(
        self, flat: FlatColumns, part: Path, first_row: int, rows: np.ndarray | None = None
    ) -> None:
        """Append one checked batch (``rows``: its row numbers, when they are not consecutive)."""
        table, calls = flat.table, flat.calls
        episodes = self.episodes
        self.where.append((part, first_row, episodes, rows))
        self._id_chunks.append(flat.ids)
        self._slot_chunks.append(table.column("slot").combine_chunks())
        self._ids = self._slots = None
        self.episodes += len(flat.ids)
        returned = calls["returned_after_sec"]
        came_back = ~_numpy(returned.is_null(), False).astype(bool)
        tool_dict = pc.dictionary_encode(calls["tool"])
        lookup = np.array(
            [self.tools.setdefault(t, len(self.tools)) for t in tool_dict.dictionary.to_pylist()]
            or [0],
            dtype=np.intp,
        )
        tool_code = lookup[np.asarray(tool_dict.indices.to_numpy(zero_copy_only=False), np.intp)]
        arg_key = self._arg_keys(calls["args"], tool_code)
        self._put(
            started=_numpy(table.column("started_at").cast(pa.int64())),
            deadline=_numpy(table.column("deadline_sec"), np.nan).astype(float),
            n_rounds=flat.n_rounds.astype(np.int32),
            round_episode=(flat.round_episode + episodes).astype(np.int32),
            round_position=flat.round_position.astype(np.int32, copy=False),
            n_calls=flat.n_calls.astype(np.int32),
            send_sec=_numpy(flat.rounds["send_sec"], 0.0).astype(float),
            call_round=(flat.call_round + self.rounds).astype(np.int64),
            call_position=flat.call_position.astype(np.int32, copy=False),
            call_episode=(flat.call_episode + episodes).astype(np.int32),
            requested_lines=flat.requested_lines.astype(np.int32),
            duration=np.where(
                came_back, _numpy(returned, 0.0), _numpy(calls["duration_sec"], 0.0)
            ).astype(float),
            completed=came_back | _numpy(calls["completed"], True).astype(bool),
            status_error=_numpy(pc.equal(calls["status"], "error"), False).astype(bool),
            tool_code=tool_code.astype(np.int32),
            arg_key=arg_key.astype(np.int32),
        )
        self.rounds += flat.n_calls.size
        self._add_remote(calls)
        self.calls += len(calls)

    def _add_remote(self, calls: pa.Table) -> None:
        """What version 2 calls recorded (progress times, cancel stop times), kept sparse."""
        honoured = calls["cancel_honoured_sec"]
        if honoured.null_count < len(honoured):
            rows = np.flatnonzero(~_numpy(honoured.is_null(), False).astype(bool))
            values = _numpy(honoured, np.nan)[rows]
            self.honoured_calls.extend((rows + self.calls).tolist())
            self.honoured_sec.extend(values.astype(float).tolist())
        progress = calls["progress_sec"]
        if progress.null_count < len(progress):
            rows = np.flatnonzero(~_numpy(progress.is_null(), False).astype(bool))
            self.progress_calls.extend((rows + self.calls).tolist())
            taken = progress.take(pa.array(rows)).to_pylist()
            self.progress_sec.extend(tuple(moments) for moments in taken)

    def _arg_keys(self, args: pa.Array, tool_code: np.ndarray) -> np.ndarray:
        """Per call, the number of its ``args_key`` (0: that of ``{}``); first texts kept."""
        # A key "timeout" or "timeout_sec" (any spacing), or any escape that could spell one.
        rows = _rows_containing(args, [(_TIMEOUT_KEY, b'"timeout'), (_ESCAPE, b"\\")])
        arg_key = np.zeros(tool_code.size, dtype=np.int64)
        if rows.size:
            for row, text in zip(rows, args.take(pa.array(rows)).to_pylist(), strict=True):
                key = TimeoutPolicy.args_key(json.loads(text))
                arg_key[row] = self.arg_keys.setdefault(key, len(self.arg_keys))
        # The first call of each (tool, key) pair: by tool for the calls of key 0 (no sort), one by
        # one for the few others.
        plain = np.flatnonzero(arg_key == 0)
        first = np.full(len(self.tools), tool_code.size, dtype=np.intp)
        np.minimum.at(first, tool_code[plain], plain)
        n = tool_code.size
        firsts = [((tool, 0), row) for tool, row in enumerate(first.tolist()) if row < n]
        firsts += [((int(tool_code[row]), int(arg_key[row])), int(row)) for row in rows]
        for pair, row in firsts:
            if pair not in self.first_args:
                self.first_args[pair] = args[row].as_py()
        return arg_key

    def array(self, name: str, dtype: Any = None) -> np.ndarray:
        """One column over every batch, handed over: its batches are dropped (memory)."""
        parts = self.columns.pop(name, [])
        joined = np.concatenate(parts) if parts else np.zeros(0)
        del parts
        return joined.astype(dtype, copy=False) if dtype is not None else joined

    def check_unique(self) -> None:
        """Ids are unique across batches and partitions (the batches checked their own)."""
        if self.ids.distinct():
            return
        seen: dict[str, int] = {}
        for index, episode_id in enumerate(self.ids):
            first = seen.setdefault(episode_id, index)
            if first != index:
                part, row = self._locate(index)
                first_part, first_row = self._locate(first)
                raise repeated_id_error(part, row, episode_id, first_part, first_row)

    def _locate(self, index: int) -> tuple[Path, int]:
        for part, first_row, first_episode, rows in reversed(self.where):
            if index >= first_episode:
                if rows is not None:
                    return part, int(rows[index - first_episode])
                return part, first_row + index - first_episode
        raise AssertionError(index)

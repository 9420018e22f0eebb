"""Compile a corpus for the vectorized engine straight from its columns: no ``Episode`` per row.

Lifecycle: :func:`compile_columns` takes a corpus as a path (``.parquet``, a
partition directory, or JSONL through the fast decoder of
:mod:`reviewlab.recording.jsonl_columns`), an Arrow table of
:data:`~reviewlab.recording.columnar.ARROW_SCHEMA`, or a list of episodes; it
reads and checks the columns (:mod:`reviewlab.recording.column_checks`: every
bad value is an error naming row, episode and field), flattens the nested
rounds and calls once, and builds exactly the arrays
:meth:`CompiledCorpus._compile` builds from episode objects — the per-call rows,
the events in corpus order, the rounds with calls — then hands them to
:meth:`CompiledCorpus._compile_columns`, the one place the rest is derived.

Invariants (so replays are bit-identical to those of ``compile_corpus``):

* arrival times are ``(started_at - earliest) / 1 s`` on integer microseconds,
  correctly rounded as :meth:`datetime.timedelta.total_seconds` is; a deadline
  is ``arrival + deadline_sec``;
* a call's effective observation is
  :func:`~reviewlab.engines.censoring.effective_observation`'s
  (``returned_after_sec`` wins), and a still-censored call gets the completion
  time of :func:`~reviewlab.engines.censoring.completion_times` — for
  ``"impute"`` the same Kaplan–Meier estimates and the same one uniform per
  censored call in corpus order;
* a call's policy key is ``(tool, TimeoutPolicy.args_key(args))``; only
  arguments whose JSON text mentions ``"timeout`` (or escapes a character) are
  decoded to compute it, every other call has the key of ``{}``. Custom policy
  objects see every call's decoded arguments (:class:`ArgsColumn`, decoded on
  first use).

Memory is in proportion to the columns: a few NumPy arrays per call and per
event, plus one reference per call in ``tool_names``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TypeAlias, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.core.policy import TimeoutPolicy
from reviewlab.core.vocab import CENSORING_MODES
from reviewlab.engines.censoring import KaplanMeier
from reviewlab.engines.vectorized import CompiledCorpus
from reviewlab.recording.column_checks import (
    ColumnarFormatError,
    FlatColumns,
    check_table,
    conform,
    flat_columns,
)
from reviewlab.recording.schema import Episode

__all__ = ["ArgsColumn", "compile_columns", "corpus_table"]

CorpusSource: TypeAlias = str | os.PathLike[str] | pa.Table | Sequence[Episode]


class ArgsColumn(Sequence[Any]):
    """Every call's arguments, decoded from their JSON text when first needed (custom policies)."""

    def __init__(self, text: pa.Array) -> None:
        self._text = text
        self._decoded: list[Any] | None = None

    def _all(self) -> list[Any]:
        if self._decoded is None:
            self._decoded = [json.loads(t) for t in self._text.to_pylist()]
        return self._decoded

    def __len__(self) -> int:
        return len(self._text)

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._all())


def corpus_table(source: CorpusSource) -> pa.Table:
    """The checked Arrow table of a corpus path, table or episode list (errors name the value)."""
    from reviewlab.recording.columnar import episodes_table

    if isinstance(source, pa.Table):
        table = conform(Path("<table>"), source)
        problems = check_table(table, Path("<table>"))
        if problems:
            raise ColumnarFormatError("<table>", problems)
        return table
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.suffix == ".parquet" or path.is_dir():
            from reviewlab.recording.columnar_read import iter_tables

            tables = [table for _, table in iter_tables(path)]
            return pa.concat_tables(tables) if len(tables) != 1 else tables[0]
        from reviewlab.recording.jsonl_columns import jsonl_table

        return jsonl_table(path)
    return episodes_table(source)


def compile_columns(
    source: CorpusSource,
    *,
    censored: str = "wedge",
    seed: int = 0,
    origin_us: int | None = None,
) -> CompiledCorpus:
    """A :class:`CompiledCorpus` of ``source`` built from columns (see the module docstring).

    ``origin_us``: the instant (microseconds since the epoch) arrivals are measured
    from; default the earliest ``started_at`` of ``source``. A partition of a larger
    corpus is compiled with the whole corpus's origin, so its clocks are the whole
    corpus's clocks to the bit.
    """
    if censored not in CENSORING_MODES:
        raise ValueError(
            f"censored: expected one of {', '.join(CENSORING_MODES)}, got {censored!r}"
        )
    table = corpus_table(source)
    return _compile(flat_columns(table), censored=censored, seed=seed, origin_us=origin_us)


def _numpy(array: pa.Array | pa.ChunkedArray, fill: Any = None) -> np.ndarray:
    if fill is not None:
        array = array.fill_null(fill)
    return np.asarray(array.to_numpy(zero_copy_only=False))


def _first_appearance(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Renumber ``codes`` by first appearance; returns (new codes, first row of each new code)."""
    unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse].astype(np.intp), first[order]


def _compile(
    flat: FlatColumns, *, censored: str, seed: int, origin_us: int | None
) -> CompiledCorpus:
    table = flat.table
    c = CompiledCorpus.__new__(CompiledCorpus)
    c.censored = censored
    c.seed = seed
    c._string_columns = None
    c.episode_ids = flat.ids.to_pylist()
    c.slot_ids = table.column("slot").to_pylist()
    started = _numpy(table.column("started_at").cast(pa.int64()))
    n_ep = started.size
    origin = int(started.min()) if origin_us is None and n_ep else (origin_us or 0)
    arrival = (started - origin) / 1e6 if n_ep else np.zeros(0)
    c.arrival_sec = arrival.astype(float)
    c.deadline_at_sec = c.arrival_sec + _numpy(table.column("deadline_sec"), np.nan).astype(float)

    calls = flat.calls
    n_calls_total = flat.call_round.size
    returned = calls["returned_after_sec"]
    came_back = ~_numpy(returned.is_null(), False).astype(bool)
    duration = np.where(
        came_back, _numpy(returned, 0.0), _numpy(calls["duration_sec"], 0.0)
    ).astype(float)
    completed = came_back | _numpy(calls["completed"], True).astype(bool)
    tool_dict = pc.dictionary_encode(calls["tool"])
    tool_code = np.asarray(tool_dict.indices.to_numpy(zero_copy_only=False), dtype=np.intp)
    tools = tool_dict.dictionary.to_pylist()
    duration, completed = _settle_censored(duration, completed, tool_code, censored, seed)
    status_error = _numpy(pc.equal(calls["status"], "error"), False).astype(bool)

    key_code, key_tools, key_args = _keys(calls["args"], tool_code, tools)
    c.key_args = key_args
    c.call_args = cast(list[Any], ArgsColumn(calls["args"]))  # read by zip(): any sequence

    # Events in corpus order: per round its send, then its calls.
    n_calls = flat.n_calls
    calls_before = np.cumsum(n_calls) - n_calls
    send_pos = np.arange(n_calls.size) + calls_before  # global event index of each round's send
    episode_rounds_before = np.cumsum(flat.n_rounds) - flat.n_rounds
    n_events = np.zeros(n_ep, dtype=np.intp)
    np.add.at(n_events, flat.round_episode, n_calls + 1)
    episode_event_start = np.cumsum(n_events) - n_events
    call_pos = send_pos[flat.call_round] + 1 + flat.call_position
    event_sec = np.empty(int(n_events.sum()))
    event_sec[send_pos] = _numpy(flat.rounds["send_sec"], 0.0)
    event_sec[call_pos] = duration
    with_calls = n_calls > 0
    round_with_calls = np.cumsum(with_calls) - 1
    del episode_rounds_before
    index_columns = [
        flat.call_episode.astype(np.intp),
        (flat.round_position[flat.call_round] + 1).astype(np.intp),
        tool_code,
        key_code,
        (call_pos - episode_event_start[flat.call_episode]).astype(np.intp),
        round_with_calls[flat.call_round].astype(np.intp),
        flat.requested_lines.astype(np.intp),
    ]
    assert all(column.size == n_calls_total for column in index_columns)
    c._compile_columns(
        index_columns,
        duration,
        completed,
        status_error,
        tools=tools,
        key_tools=key_tools,
        n_events=n_events,
        event_sec=event_sec,
        round_sizes=n_calls[with_calls].astype(np.intp),
    )
    return c


def _keys(
    args: pa.Array, tool_code: np.ndarray, tools: list[str]
) -> tuple[np.ndarray, list[str], list[Any]]:
    """Policy keys per call, in first-appearance order, with each key's tool and first args."""
    no_args = TimeoutPolicy.args_key({})
    maybe = pc.or_(pc.match_substring(args, '"timeout'), pc.match_substring(args, "\\"))
    rows = np.flatnonzero(_numpy(maybe, False).astype(bool))
    arg_key = np.zeros(tool_code.size, dtype=np.int64)  # 0: the key of {}
    distinct: dict[Any, int] = {no_args: 0}
    if rows.size:
        for row, text in zip(rows, args.take(pa.array(rows)).to_pylist(), strict=True):
            key = TimeoutPolicy.args_key(json.loads(text))
            arg_key[row] = distinct.setdefault(key, len(distinct))
    combined = tool_code.astype(np.int64) * len(distinct) + arg_key
    key_code, first_rows = _first_appearance(combined)
    key_tools = [tools[tool_code[row]] for row in first_rows]
    key_args = [json.loads(text) for text in args.take(pa.array(first_rows)).to_pylist()]
    return key_code, key_tools, key_args


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

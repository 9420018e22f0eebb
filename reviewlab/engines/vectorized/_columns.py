"""Compile a corpus for the vectorized engine straight from its columns: no ``Episode`` per row.

Lifecycle: :func:`compile_columns` takes a path (``.parquet``, a partition directory, or JSONL
through :mod:`reviewlab.recording.jsonl`), an Arrow table, or a list of episodes; reads and
checks the columns (:mod:`reviewlab.engines.vectorized._reading`), flattens the nested rounds
and calls once, builds the arrays ``CompiledCorpus._compile`` builds from objects and hands
them to :meth:`~reviewlab.engines.vectorized._static.StaticLayout._compile_columns`, the one
place the rest is derived.

Invariants: replays are bit-identical to those of ``compile_corpus`` (arrivals on integer
microseconds, the effective observation and the same seeded completion times, the same policy
keys); memory is in proportion to the columns. In full: docs/architecture.md, "Compiling from
columns".
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow as pa

from reviewlab.core._vocab import CENSORING_MODES, DEFAULT_CENSORING
from reviewlab.engines._censoring import KaplanMeier
from reviewlab.engines._prefetch import BATCH_ROWS
from reviewlab.engines.vectorized._compiled import CompiledCorpus
from reviewlab.engines.vectorized._gather import Gathered
from reviewlab.engines.vectorized._reading import (
    JSONL_BATCH_LINES,
    ArgsColumn,
    CorpusSource,
    argument_texts,
    corpus_table,
    jsonl_args,
    parquet_args,
    parquet_batches,
    return_freed_memory,
)
from reviewlab.engines.vectorized._static import CorpusEvents
from reviewlab.engines.vectorized._windows import RemoteCalls
from reviewlab.recording._locations import is_url, location_of


def compile_columns(
    source: CorpusSource,
    *,
    censored: str = DEFAULT_CENSORING,
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
        for part, first_row, flat in parquet_batches(path, batch_rows):
            gathered.add(flat, part, first_row)
            del flat  # the batch's buffers are free for the next batch to reuse
        return_freed_memory()  # and go back to the system before the corpus is compiled
        load: Callable[[], list[str]] = functools.partial(parquet_args, path, batch_rows)
    elif isinstance(source, str | os.PathLike):  # JSONL through the fast decoder, in batches
        from reviewlab.recording.jsonl import jsonl_batches

        path = Path(source)
        # Lines are decoded to Python objects first: smaller batches keep those few.
        for lines, _, flat in jsonl_batches(path, min(batch_rows, JSONL_BATCH_LINES)):
            gathered.add(flat, path, int(lines[0]) if lines.size else 1, lines)
            del flat
            return_freed_memory()
        load = functools.partial(jsonl_args, path, batch_rows)
    else:
        _, flat = corpus_table(source)
        gathered.add(flat, Path("<table>"), 1)
        load = functools.partial(argument_texts, flat)
    gathered.check_unique()
    corpus = _compile(gathered, censored=censored, seed=seed, origin_us=origin_us, load=load)
    del gathered
    return_freed_memory()
    return corpus


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

"""Synthetic corpora written straight from the draws as Arrow columns (no object per episode).

:func:`synth_tables` turns the :class:`~reviewlab.recording.synth.Draws` of
:func:`~reviewlab.recording.synth.draw` into tables of
:data:`~reviewlab.recording.columnar.ARROW_SCHEMA`, a batch of episodes at a
time, with array operations only: which calls and rounds an episode keeps (a
wedge ends it), the call fields, the arguments' JSON text and the read
extents. The rules are those of :func:`reviewlab.recording.synth._corpus._episode_row`;
the invariant, tested, is that the tables equal
:func:`~reviewlab.recording.columnar.episodes_table` of
:func:`~reviewlab.recording.synth.synth_corpus` with the same ``n``, seed and
spec, value for value.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.recording._schema import SCHEMA_VERSION
from reviewlab.recording.columnar import CALL_TYPE, EXTENT_TYPE, assemble_table
from reviewlab.recording.synth._draws import SEARCH_WORDS, Draws

BATCH_EPISODES = 65_536
"""Episodes per table (one Parquet row group each)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def synth_tables(d: Draws, batch: int = BATCH_EPISODES) -> Iterator[pa.Table]:
    """The corpus of ``d`` as tables of at most ``batch`` episodes, in order."""
    if d.n == 0:
        yield _table(d, 0, 0)
    for lo in range(0, d.n, batch):
        yield _table(d, lo, min(d.n, lo + batch))


def _join(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _table(d: Draws, lo: int, hi: int) -> pa.Table:
    """Episodes ``lo:hi`` of ``d`` as one table."""
    spec = d.spec
    n = hi - lo
    tool_rounds = d.tool_rounds[lo:hi].astype(np.int64)
    r0 = int(d.round_first[lo]) if n else 0
    r1 = r0 + int(tool_rounds.sum())
    c0, c1 = int(d.call_first[r0]), int(d.call_first[r1])
    episode_of_round = np.repeat(np.arange(n), tool_rounds)  # tool rounds, local
    calls_in_round = np.diff(d.call_first[r0 : r1 + 1])
    round_of_call = np.repeat(np.arange(r1 - r0), calls_in_round)
    episode_of_call = episode_of_round[round_of_call]
    # A wedge ends its episode: keep calls up to the first wedge, rounds that start by then.
    wedged = d.wedged[c0:c1]
    first_wedge = np.full(n, np.iinfo(np.int64).max)
    hit = np.flatnonzero(wedged)
    np.minimum.at(first_wedge, episode_of_call[hit], hit)
    call_ids = np.arange(c1 - c0)
    keep_call = call_ids <= first_wedge[episode_of_call]
    round_start = d.call_first[r0:r1] - c0
    keep_round = round_start <= first_wedge[episode_of_round]
    has_wedge = first_wedge < np.iinfo(np.int64).max

    # Rounds in episode order: its kept tool rounds, then its final round unless it wedged.
    kept_rounds = np.bincount(episode_of_round[keep_round], minlength=n) + ~has_wedge
    round_offsets = np.concatenate([[0], np.cumsum(kept_rounds)])
    tool_pos = round_offsets[:-1][episode_of_round] + (
        np.arange(r1 - r0) - (np.cumsum(tool_rounds) - tool_rounds)[episode_of_round]
    )
    sends = np.empty(int(round_offsets[-1]))
    n_calls = np.zeros(sends.size, dtype=np.int64)
    send_first = d.send_first[lo:hi]
    local_round = np.arange(r1 - r0) - (np.cumsum(tool_rounds) - tool_rounds)[episode_of_round]
    sends[tool_pos[keep_round]] = d.sends[send_first[episode_of_round] + local_round][keep_round]
    n_calls[tool_pos[keep_round]] = np.bincount(round_of_call[keep_call], minlength=r1 - r0)[
        keep_round
    ]
    finals = np.flatnonzero(~has_wedge)
    sends[round_offsets[finals + 1] - 1] = d.sends[send_first[finals] + tool_rounds[finals]]
    call_offsets = np.concatenate([[0], np.cumsum(n_calls)])

    call_array = _calls(d, np.arange(c0, c1)[keep_call])
    start = spec.start
    offset = start.utcoffset() or timedelta(0)
    start_us = round((start - _EPOCH) / timedelta(microseconds=1))
    episodes = {
        "schema": pa.array([SCHEMA_VERSION] * n, pa.string()),
        "id": [d.episode_id(i) for i in range(lo, hi)],
        "source": [spec.source] * n,
        "slot": [f"slot-{s}" for s in d.slots[lo:hi].tolist()],
        "started_at": start_us + np.rint(d.offsets[lo:hi] * 1e6).astype(np.int64),
        "utc_offset_sec": np.full(n, int(offset.total_seconds()), dtype=np.int32),
        "deadline_sec": pa.array(d.deadlines[lo:hi], mask=~d.has_deadline[lo:hi]),
        "end_reason": np.where(has_wedge, "wedged", "final_answer").tolist(),
        "task": [""] * n,
    }
    meta_keys = ["generator", "seed"] * n
    meta_values = ["reviewlab.synth", str(d.seed)] * n
    return assemble_table(
        episodes,
        np.arange(0, 2 * n + 1, 2),
        meta_keys,
        meta_values,
        round_offsets,
        sends,
        call_offsets,
        call_array,
    )


def _decode(codes: np.ndarray, values: list[str]) -> pa.Array:
    """``values[codes]`` as a plain Arrow string array (through a dictionary: no Python strings)."""
    dictionary = pa.DictionaryArray.from_arrays(
        pa.array(codes, pa.int32()), pa.array(values, pa.string())
    )
    return dictionary.cast(pa.string())


def _calls(d: Draws, c: np.ndarray) -> pa.StructArray:
    """The calls with global indices ``c`` (kept calls, in order) as one struct array."""
    tool_code = d.tool_index[c].astype(np.int32)
    tool = _decode(tool_code, d.names)
    lengths = np.array([length for _, length in d.tree], dtype=np.int64)
    pick = d.file_pick[c].astype(np.int32)
    length = lengths[pick]
    first = 1 + (d.start_u[c] * length).astype(np.int64)
    last = np.minimum(length, first + d.span[c].astype(np.int64) - 1)
    chars_u = d.chars_u[c]
    words = _decode(d.word_pick[c].astype(np.int32), list(SEARCH_WORDS))
    path = _decode(pick, [p for p, _ in d.tree])
    is_read, is_list, is_search = (
        tool_code == (d.names.index(name) if name in d.names else -1)
        for name in ("read_file", "list_files", "search_code")
    )
    chars = np.where(
        is_read,
        38 * (last - first + 1),
        np.where(
            is_list,
            (chars_u / 2).astype(np.int64),
            np.where(is_search, chars_u.astype(np.int64), (chars_u * 2).astype(np.int64)),
        ),
    )
    # Each kind's JSON is joined on its own calls only, then put back in call order.
    kinds = (is_read, is_list, is_search, ~(is_read | is_list | is_search))
    where = [np.flatnonzero(kind) for kind in kinds]
    folders = _decode(pick, [p.rsplit("/", 1)[0] for p, _ in d.tree])
    pieces = [
        _join(
            '{"path":"',
            path.take(where[0]),
            '","start_line":',
            pc.cast(pa.array(first[where[0]]), pa.string()),
            ',"end_line":',
            pc.cast(pa.array(last[where[0]]), pa.string()),
            "}",
        ),
        _join('{"path":"', folders.take(where[1]), '"}'),
        _join('{"pattern":"', words.take(where[2]), '","path":"src"}'),
        _join('{"query":"callers of ', words.take(where[3]), '"}'),
    ]
    back = np.empty(c.size, dtype=np.int64)
    back[np.concatenate(where)] = np.arange(c.size)
    args = pa.concat_arrays(pieces).take(pa.array(back))
    wedged = d.wedged[c]
    failed = d.failed[c] & ~wedged
    duration = np.where(wedged, d.wedge_sec[c], d.durations[c])
    chars = np.where(wedged, 0, np.where(failed, 120, chars))
    extent = pa.StructArray.from_arrays(
        [path, pa.array(first), pa.array(last)],
        fields=list(EXTENT_TYPE),
        mask=pa.array(~is_read),
    )
    fields = {
        "tool": tool,
        "args": args,
        "duration_sec": pa.array(duration, pa.float64()),
        "completed": pa.array(~wedged),
        "status": _decode(failed.astype(np.int32), ["ok", "error"]),
        "result_chars": pa.array(chars.astype(np.int64)),
        "extent": extent,
        "returned_after_sec": pa.nulls(c.size, pa.float64()),
        "transport": pa.nulls(c.size, pa.string()),
        "progress_sec": pa.nulls(c.size, pa.list_(pa.float64())),
        "cancel_sent": pa.nulls(c.size, pa.bool_()),
        "cancel_honoured_sec": pa.nulls(c.size, pa.float64()),
        "late_result_sec": pa.nulls(c.size, pa.float64()),
        "late_result_chars": pa.nulls(c.size, pa.int64()),
        "ended_by": pa.nulls(c.size, pa.string()),
        "task_states": pa.nulls(c.size, pa.list_(pa.string())),
        "server": pa.nulls(c.size, pa.string()),
        "args_sha256": pa.nulls(c.size, pa.string()),
        "args_chars": pa.nulls(c.size, pa.int64()),
    }
    return pa.StructArray.from_arrays([fields[f.name] for f in CALL_TYPE], fields=list(CALL_TYPE))

"""A columnar corpus table flattened once: episodes, rounds and calls as arrays with parents.

:func:`flat_columns` takes a table conformed to
:data:`~reviewlab.recording.columnar.ARROW_SCHEMA` and hands out, without a
Python object per row, the per-round and per-call arrays of its nested lists
with each value's parent (Arrow's list flattening) and its position within
that parent. The checks (:mod:`reviewlab.recording.columnar._checks`) and the
vectorized engine's compiler (:mod:`reviewlab.engines.vectorized._columns`)
both read these.

Invariant: null lists count as empty here (the checks report them); positions
are 0-based within the parent, values in corpus order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.recording.columnar._arrays import numbers


def _position(counts: np.ndarray) -> np.ndarray:
    """Each value's 0-based position within its parent, from the parents' value counts (in
    order)."""
    starts = np.cumsum(counts) - counts
    total = int(starts[-1] + counts[-1]) if counts.size else 0
    width = np.int32 if total < 2**31 else np.intp  # half the memory to fill (a value per call)
    return np.arange(total, dtype=width) - np.repeat(starts.astype(width), counts)


@dataclass
class FlatColumns:
    """A corpus table flattened once: episodes, rounds and calls as arrays (corpus order).

    Per episode: ``ids`` (Arrow strings), ``n_rounds``. Per round:
    ``round_episode`` (its row), ``round_position`` (0-based in its episode),
    ``send_sec``, ``n_calls``. Per call: ``call_round``, ``call_episode``,
    ``call_position`` (0-based in its round), the call fields as Arrow arrays
    in ``calls`` and ``extent`` (struct), and ``requested_lines`` (0 without an
    extent). Null lists count as empty here; :func:`check_table` reports them.
    """

    table: pa.Table
    n_rounds: np.ndarray
    round_episode: np.ndarray
    round_position: np.ndarray
    rounds: dict[str, pa.Array]
    n_calls: np.ndarray
    call_round: np.ndarray
    call_episode: np.ndarray
    call_position: np.ndarray
    calls: dict[str, pa.Array]
    extent: dict[str, pa.Array]
    has_extent: np.ndarray
    requested_lines: np.ndarray

    @property
    def ids(self) -> pa.Array:
        """Episode ids (Arrow strings)."""
        return self.table.column("id").combine_chunks()


def flat_columns(table: pa.Table) -> FlatColumns:
    """Flatten the nested rounds and calls of a conformed table (no Python object per row)."""
    column = table.column("rounds")
    if column.num_chunks == 1:
        rounds_list = column.chunk(0)  # a batch read whole: no copy
    elif column.num_chunks == 0:  # an empty table
        rounds_list = pa.array([], column.type)
    else:
        rounds_list = column.combine_chunks()
    n_rounds = numbers(pc.list_value_length(rounds_list), 0).astype(np.intp)
    round_episode = np.asarray(pc.list_parent_indices(rounds_list).to_numpy(), dtype=np.intp)
    round_struct = pc.list_flatten(rounds_list)
    send, calls_list = round_struct.flatten()
    n_calls = numbers(pc.list_value_length(calls_list), 0).astype(np.intp)
    call_round = np.asarray(pc.list_parent_indices(calls_list).to_numpy(), dtype=np.intp)
    call_struct = pc.list_flatten(calls_list)
    call_fields = dict(zip([f.name for f in call_struct.type], call_struct.flatten(), strict=True))
    extent_struct = call_fields["extent"]
    has_extent = np.asarray(extent_struct.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    extent = dict(zip(["path", "start_line", "end_line"], extent_struct.flatten(), strict=True))
    start = numbers(extent["start_line"], 0)
    end = numbers(extent["end_line"], 0)
    lines = end - start + 1
    requested = np.where(has_extent & (lines > 0), lines, 0).astype(np.int64, copy=False)
    return FlatColumns(
        table=table,
        n_rounds=n_rounds,
        round_episode=round_episode,
        round_position=_position(n_rounds),
        rounds={"send_sec": send},
        n_calls=n_calls,
        call_round=call_round,
        call_episode=round_episode[call_round],
        call_position=_position(n_calls),
        calls=call_fields,
        extent=extent,
        has_extent=has_extent,
        requested_lines=requested,
    )

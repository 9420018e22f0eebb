"""The checks of the version 2 fields of a columnar corpus: transport, cancellation, late
results, task states, progress, the gateway's digest, and token usage.

Each check is a set of array operations over the flat call (or episode) columns that reports
its bad values to :class:`~reviewlab.recording.columnar._bad_values.Found`; the version 1
checks and the order they run in: :func:`~reviewlab.recording.columnar.check_table`.

Invariants: a version 2 field is null in a version 1 episode (else a bad value saying so);
the vocabularies are :mod:`reviewlab.core._vocab`'s; ``args_sha256`` and ``args_chars`` are
both recorded or neither; ``round_tokens`` has one entry per round.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from reviewlab.core._vocab import CLOCK_NAMES, TASK_STATES, TRANSPORTS
from reviewlab.recording._schema import SCHEMA_VERSION, V2_CALL_FIELDS
from reviewlab.recording.columnar._arrays import matches, not_in, null_mask, numbers, text_lengths
from reviewlab.recording.columnar._bad_values import (
    Text,
    negative,
    rank,
    seconds_rules,
    with_value,
)
from reviewlab.recording.columnar._flat import FlatColumns


def check_v2(flat: FlatColumns, schema: Text, rows: np.ndarray, where: Any, report: Any) -> None:
    """The version 2 call fields: their values, and their absence from version 1 episodes."""
    calls = flat.calls
    transport = calls["transport"]
    text = Text(transport)
    report(
        ~null_mask(transport) & not_in(transport, TRANSPORTS),
        rows,
        where("transport"),
        lambda k: f"{text[k]!r} is not one of {', '.join(TRANSPORTS)}",
    )
    for name in ("cancel_honoured_sec", "late_result_sec"):
        seconds = calls[name]
        for mask, message in seconds_rules(seconds, optional=True):
            report(mask, rows, where(name), with_value(message, seconds))
    chars = calls["late_result_chars"]
    report(
        negative(chars),
        rows,
        where("late_result_chars"),
        with_value("must not be negative", chars),
    )
    ended = calls["ended_by"]
    ended_text = Text(ended)
    report(
        ~null_mask(ended) & not_in(ended, CLOCK_NAMES),
        rows,
        where("ended_by"),
        lambda k: f"{ended_text[k]!r} is not one of {', '.join(CLOCK_NAMES)}",
    )
    _check_task_states(calls["task_states"], rows, where, report)
    _check_progress(calls["progress_sec"], rows, where, report)
    _check_gateway(calls, rows, where, report)
    v1 = schema.equals(SCHEMA_VERSION)[rows]
    for name in V2_CALL_FIELDS:
        report(
            v1 & ~null_mask(calls[name]),
            rows,
            where(name),
            f"needs schema 'reviewlab.episode/2' (this episode is {SCHEMA_VERSION!r})",
        )


def _check_task_states(states: pa.Array, rows: np.ndarray, where: Any, report: Any) -> None:
    """Each call's task states: every one in the vocabulary."""
    bounds = np.asarray(states.offsets.to_numpy(), dtype=np.intp)
    if bounds[-1] == bounds[0]:  # no state recorded
        return
    owner_of = np.repeat(np.arange(len(states)), np.diff(bounds))
    values = states.values.slice(int(bounds[0]), len(owner_of))
    value_text = Text(values)
    report(
        not_in(values, TASK_STATES),
        rows[owner_of],
        lambda k: where("task_states")(owner_of[k]),
        lambda k: f"{value_text[k]!r} is not one of {', '.join(TASK_STATES)}",
    )


def _check_progress(progress: pa.Array, rows: np.ndarray, where: Any, report: Any) -> None:
    """Each call's progress times: finite seconds >= 0, none before the one before it."""
    offsets = np.asarray(progress.offsets.to_numpy(), dtype=np.intp)
    if offsets[-1] == offsets[0]:  # no progress recorded
        return
    moments = numbers(progress.values.slice(offsets[0], offsets[-1] - offsets[0]), np.nan)
    owner = np.repeat(np.arange(len(progress)), np.diff(offsets))
    position = rank(owner)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(moments) | (moments < 0)
        earlier = np.zeros(moments.size, dtype=bool)
        earlier[1:] = (position[1:] > 0) & (moments[1:] < moments[:-1])
    report(
        bad | earlier,
        rows[owner],
        lambda k: f"{where('progress_sec')(owner[k])}.{position[k]}",
        lambda k: (
            f"must be finite seconds >= 0 and not before the one before it, got {moments[k]!r}"
        ),
    )


def _check_gateway(calls: dict[str, pa.Array], rows: np.ndarray, where: Any, report: Any) -> None:
    """The gateway's call fields: a server name of 1 to 200 characters, a digest of 64 lower
    hex digits with its size (>= 0), both or neither."""
    server = calls["server"]
    server_len = text_lengths(server, 1)
    report(
        ~null_mask(server) & ((server_len < 1) | (server_len > 200)),
        rows,
        where("server"),
        "must be a string of 1 to 200 characters, or null",
    )
    digest = calls["args_sha256"]
    hexed = matches(digest, r"^[0-9a-f]{64}$")
    report(
        ~hexed, rows, where("args_sha256"), "must be 64 lowercase hex digits (a SHA-256), or null"
    )
    chars = calls["args_chars"]
    report(
        negative(chars),
        rows,
        where("args_chars"),
        with_value("must not be negative", chars),
    )
    no_digest, no_chars = null_mask(digest), null_mask(chars)
    report(
        ~no_digest & no_chars,
        rows,
        where("args_chars"),
        "args_sha256 is set without args_chars: record both or neither",
    )
    report(
        no_digest & ~no_chars,
        rows,
        where("args_chars"),
        "args_chars is set without args_sha256: record both or neither",
    )


def check_usage(table: pa.Table, flat: FlatColumns, schema: Text, report: Any) -> None:
    """The version 2 usage columns: the model name, one token entry per round, counts >= 0."""
    v1 = schema.equals(SCHEMA_VERSION)
    model = table.column("model").combine_chunks()
    model_len = text_lengths(model, 1)
    present = ~null_mask(model)
    report(
        present & ((model_len < 1) | (model_len > 200)),
        None,
        "model",
        "must be a string of 1 to 200 characters, or null",
    )
    report(
        v1 & present,
        None,
        "model",
        f"needs schema 'reviewlab.episode/2' (this episode is {SCHEMA_VERSION!r})",
    )
    tokens = table.column("round_tokens").combine_chunks()
    if isinstance(tokens, pa.ChunkedArray):  # an empty table
        tokens = pa.array([], tokens.type)
    has = ~null_mask(tokens)
    report(
        v1 & has,
        None,
        "round_tokens",
        f"needs schema 'reviewlab.episode/2' (this episode is {SCHEMA_VERSION!r})",
    )
    count = numbers(pc.list_value_length(tokens), 0).astype(np.intp)
    report(
        has & (count != flat.n_rounds),
        None,
        "round_tokens",
        lambda k: f"has {count[k]} entries for {flat.n_rounds[k]} rounds",
    )
    entries = pc.list_flatten(tokens)
    owner = np.asarray(pc.list_parent_indices(tokens).to_numpy(), dtype=np.intp)
    position = rank(owner)
    for name, values in zip(("input_tokens", "output_tokens"), entries.flatten(), strict=True):
        tokens_of = numbers(values, 0)
        report(
            ~null_mask(values) & (tokens_of < 0),
            owner,
            lambda k, n=name: f"rounds.{position[k]}.{n}",
            lambda k, v=tokens_of: f"must be an integer >= 0, got {int(v[k])}",
        )

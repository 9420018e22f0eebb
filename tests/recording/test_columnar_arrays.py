"""The whole-column answers of the columnar checks, and the checks built on them, held to per-row
references on crafted columns and tables (multi-byte text, white space, nulls, slices)."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from reviewlab.core._vocab import CLOCK_NAMES, TASK_STATES, TRANSPORTS
from reviewlab.recording._schema import Call, Episode, Round
from reviewlab.recording.columnar import ARROW_SCHEMA, check_table, conform, episodes_table
from reviewlab.recording.columnar._arrays import (
    json_object_shaped,
    matches,
    not_in,
    null_mask,
    numbers,
    text_lengths,
)

TEXTS = [
    "read_file",
    "",
    None,
    "é" * 200,
    "中文字",
    "🙂" * 3,
    "a🙂é中z",
    " ",
    None,
    "x",
]
"""Strings of 1- to 4-byte characters, empty ones and nulls."""

ARGS = [
    '{"a": 1}',
    ' {"a": 1} ',
    "\t{}\n",
    "\r\n{}\r\n",
    "\u3000{}\u3000",
    "[1, 2]",
    "",
    "{",
    "}",
    "x{}",
    "{}x",
    '{"é": "ü"}',
    "{é}",
    "é{}",
    None,
    "{}",
    "  ",
]
"""Argument texts: objects with and without surrounding white space, and texts that are not."""

WHITE = " \t\n\r\u3000"
"""The white space in ARGS (white space to Arrow's trim and to Python's strip alike)."""


def shapes(values: list[Any]) -> np.ndarray:
    """A per-row reference of json_object_shaped: strip, then look at both ends."""
    out = []
    for text in values:
        trimmed = None if text is None else text.strip(WHITE)
        out.append(trimmed is not None and trimmed.startswith("{") and trimmed.endswith("}"))
    return np.array(out, dtype=bool)


def variants(values: list[Any], kind: pa.DataType) -> list[tuple[pa.Array | pa.ChunkedArray, list]]:
    """The column whole, sliced (a non-zero offset into shared buffers) and in two chunks, each
    with the Python values it holds."""
    whole = pa.array(values, kind)
    chunked = pa.chunked_array([pa.array(values[:3], kind), pa.array(values[3:], kind)])
    return [(whole, values), (whole.slice(2, len(values) - 3), values[2:-1]), (chunked, values)]


def test_text_lengths_count_characters_not_bytes() -> None:
    """Each row's length is its number of code points (Python's len), the fill where null."""
    for column, values in variants(TEXTS, pa.string()):
        expected = [-7 if v is None else len(v) for v in values]
        assert text_lengths(column, -7).tolist() == expected
    ascii_only = pa.array(["ab", None, "", "abcd"])
    assert text_lengths(ascii_only, 0).tolist() == [2, 0, 0, 4]
    assert text_lengths(pa.array([None, None], pa.string()), 5).tolist() == [5, 5]
    assert text_lengths(pa.array([], pa.string()), 0).tolist() == []


def test_json_object_shaped_trims_white_space_as_arrow_does() -> None:
    """An argument text is an object's when, trimmed, it begins with { and ends with }."""
    for column, values in variants(ARGS, pa.string()):
        assert json_object_shaped(column).tolist() == shapes(values).tolist()
    whole = pa.array(ARGS)
    kernel = pc.and_(
        pc.starts_with(pc.utf8_trim_whitespace(whole), "{"),
        pc.ends_with(pc.utf8_trim_whitespace(whole), "}"),
    ).fill_null(False)
    assert json_object_shaped(whole).tolist() == kernel.to_pylist()
    assert json_object_shaped(pa.array([None, None], pa.string())).tolist() == [False, False]


@pytest.mark.parametrize("values", [[1.5, None, -2.0], [None, None], [0.0, 3.0], []])
def test_nulls_and_numbers_agree_with_the_python_values(values: list[Any]) -> None:
    """null_mask and numbers answer row by row, for mixed, all-null, null-free and empty columns."""
    column = pa.array(values, pa.float64())
    assert null_mask(column).tolist() == [v is None for v in values]
    filled = numbers(column, math.nan)
    assert filled.dtype == np.float64
    assert [None if math.isnan(x) else x for x in filled.tolist()] == values
    assert numbers(pa.array([None, None], pa.int64()), 0).dtype == np.int64


def test_vocabularies_and_patterns_count_a_null_as_outside() -> None:
    """not_in is True for values outside the vocabulary and for nulls; matches is True for nulls."""
    values = ["ok", "error", None, "crashed"]
    assert not_in(pa.array(values), ("ok", "error")).tolist() == [False, False, True, True]
    assert not_in(pa.array([None], pa.string()), ("ok",)).tolist() == [True]
    digests = ["0123456789abcdef" * 4, "ABCDEF0123456789" * 4, None, "12"]
    pattern = r"^[0-9a-f]{64}$"
    expected = [d is None or re.fullmatch("[0-9a-f]{64}", d) is not None for d in digests]
    assert matches(pa.array(digests), pattern).tolist() == expected
    assert matches(pa.array([None, None], pa.string()), pattern).tolist() == [True, True]


# -- the checks on crafted tables ------------------------------------------------------------

HEX = "0123456789abcdef" * 4
HEX_RE = "[0-9a-f]{64}"
POOLS: dict[str, list[Any]] = {
    "tool": ["read_file", "", "é" * 200, "é" * 201, "🙂" * 200, "🙂" * 201, "a" * 201, None],
    "args": ARGS,
    "server": [None, "s", "", "é" * 200, "é" * 201],
    "digest": [(None, None), (HEX, 5), (HEX.upper(), 5), (HEX, None), (None, 5), (HEX, -1)],
    "late_result_chars": [None, 0, 7, -1],
    "cancel_honoured_sec": [None, 0.0, 2.5, -1.0, math.nan, math.inf],
    "late_result_sec": [None, 1.0, -0.5, math.inf],
    "extent": [None, ("a.py", 1, 2), ("", 1, 2), ("é", 3, 3), (None, 1, 2)],
    "transport": [None, *TRANSPORTS, "smoke-signal"],
    "ended_by": [None, CLOCK_NAMES[0], "sundial"],
    "task_states": [None, [], [TASK_STATES[0]], [TASK_STATES[1], "bogus"]],
    "progress_sec": [None, [], [0.5, 1.0], [1.0, 0.5], [-1.0], [math.nan, 2.0]],
}


def _bad_text(value: Any, high: int = 200) -> bool:
    return value is None or not 1 <= len(value) <= high


def _bad_seconds(value: Any) -> bool:
    return value is not None and (not math.isfinite(value) or value < 0)


def reference(rows: list[dict[str, Any]]) -> set[tuple[int, str]]:
    """Per row, in Python, the (1-based row, field) of every value the rules refuse among the
    fields the crafted tables vary."""
    bad: set[tuple[int, str]] = set()
    for number, row in enumerate(rows, start=1):
        model = row["model"]
        if model is not None and _bad_text(model):
            bad.add((number, "model"))
        for r, rnd in enumerate(row["rounds"]):
            for c, call in enumerate(rnd["calls"]):
                at = f"rounds.{r}.calls.{c}."
                found = []
                found += ["tool"] * _bad_text(call["tool"])
                found += ["args"] * (not shapes([call["args"]])[0])
                server = call["server"]
                found += ["server"] * (server is not None and _bad_text(server))
                digest, chars = call["args_sha256"], call["args_chars"]
                found += ["args_sha256"] * (digest is not None and not re.fullmatch(HEX_RE, digest))
                found += ["args_chars"] * ((digest is None) != (chars is None))
                found += ["args_chars"] * (chars is not None and chars < 0)
                late = call["late_result_chars"]
                found += ["late_result_chars"] * (late is not None and late < 0)
                for name in ("cancel_honoured_sec", "late_result_sec"):
                    found += [name] * _bad_seconds(call[name])
                extent = call["extent"]
                found += ["extent.path"] * (extent is not None and not extent["path"])
                transport, ended = call["transport"], call["ended_by"]
                found += ["transport"] * (transport is not None and transport not in TRANSPORTS)
                found += ["ended_by"] * (ended is not None and ended not in CLOCK_NAMES)
                states = call["task_states"] or []
                found += ["task_states"] * any(s not in TASK_STATES for s in states)
                moments = call["progress_sec"] or []
                for i, moment in enumerate(moments):
                    earlier = i > 0 and moment < moments[i - 1]
                    if not math.isfinite(moment) or moment < 0 or earlier:
                        found.append(f"progress_sec.{i}")
                bad.update((number, at + name) for name in found)
    return bad


def crafted(seed: int, episodes: int = 40) -> list[dict[str, Any]]:
    """Version 2 rows whose calls take values drawn from POOLS (good and bad), seeded."""
    draw = random.Random(seed)
    call = Call(tool="read_file", args={"path": "a.py"}, duration_sec=0.5, result_chars=10)
    template = Episode.model_validate(
        {
            "schema": "reviewlab.episode/2",
            "id": "template",
            "source": "live",
            "slot": "s",
            "started_at": "2025-05-01T09:00:00+00:00",
            "rounds": [Round(send_sec=1.0, calls=[call, call, call]), Round(send_sec=0.5)],
            "task": "t",
        }
    )
    rows = episodes_table(
        [template.model_copy(update={"id": f"e{i}"}) for i in range(episodes)]
    ).to_pylist()
    for row in rows:
        row["model"] = draw.choice([None, "gpt", "", "é" * 201, "é" * 200])
        for one in row["rounds"][0]["calls"]:
            for name, pool in POOLS.items():
                if draw.random() < 0.7:  # most values stay good, so the bad ones stand apart
                    continue
                value = draw.choice(pool)
                if name == "digest":
                    one["args_sha256"], one["args_chars"] = value
                elif name == "extent":
                    one["extent"] = (
                        None
                        if value is None
                        else dict(zip(("path", "start_line", "end_line"), value, strict=True))
                    )
                else:
                    one[name] = value
    return rows


VARIED = [
    "tool",
    "args",
    "server",
    "args_sha256",
    "args_chars",
    "late_result_chars",
    "cancel_honoured_sec",
    "late_result_sec",
    "extent.path",
    "transport",
    "ended_by",
    "task_states",
    "progress_sec",
    "model",
]


def _varied(field: str) -> bool:
    parts = field.split(".")
    name = ".".join(parts[4:]) if parts[0] == "rounds" else field
    return name in VARIED or name.startswith("progress_sec.")


@pytest.mark.parametrize("seed", range(6))
def test_checks_name_the_rows_and_fields_a_per_row_reference_refuses(seed: int) -> None:
    """On crafted tables, check_table names exactly the (row, field) pairs the Python rules do."""
    rows = crafted(seed)
    table = conform(Path("t.parquet"), pa.Table.from_pylist(rows, schema=ARROW_SCHEMA))
    found = check_table(table, Path("t.parquet"))
    assert {(p.row, p.field) for p in found if _varied(p.field)} == reference(rows)
    assert all(_varied(p.field) for p in found), [p for p in found if not _varied(p.field)]
    assert reference(rows), "the crafted table holds bad values"


def test_checks_in_batches_number_rows_from_the_batch_start() -> None:
    """A batch checked with first_row names the same values as the whole table, rows shifted."""
    rows = crafted(11)
    table = conform(Path("t"), pa.Table.from_pylist(rows, schema=ARROW_SCHEMA))
    whole = {(p.row, p.field) for p in check_table(table, Path("t"))}
    tail = {(p.row, p.field) for p in check_table(table.slice(25), Path("t"), first_row=26)}
    assert tail == {(row, field) for row, field in whole if row >= 26}
    assert tail


def test_a_long_multi_byte_tool_name_is_refused_with_its_place() -> None:
    """201 four-byte characters are too long, 200 are not, whatever their 800 bytes say."""
    rows = crafted(0, episodes=2)
    for row in rows:
        for call in row["rounds"][0]["calls"]:
            call.update(POOL_GOOD)
    rows[1]["rounds"][0]["calls"][2]["tool"] = "🙂" * 201
    rows[0]["rounds"][0]["calls"][1]["tool"] = "🙂" * 200
    rows[0]["model"] = rows[1]["model"] = None
    table = conform(Path("t"), pa.Table.from_pylist(rows, schema=ARROW_SCHEMA))
    found = check_table(table, Path("t"))
    assert [(p.row, p.episode_id, p.field, p.message) for p in found] == [
        (2, "e1", "rounds.0.calls.2.tool", "must be a string of 1 to 200 characters")
    ]


POOL_GOOD: dict[str, Any] = {
    "tool": "read_file",
    "args": "{}",
    "server": None,
    "args_sha256": None,
    "args_chars": None,
    "late_result_chars": None,
    "cancel_honoured_sec": None,
    "late_result_sec": None,
    "extent": None,
    "transport": None,
    "ended_by": None,
    "task_states": None,
    "progress_sec": None,
}
"""Good values of every varied call field."""


def test_the_crafted_tables_reach_every_rule() -> None:
    """The seeds of the table test refuse a value of every varied field at least once."""
    fields = set()
    for seed in range(6):
        for _, field in reference(crafted(seed)):
            parts = field.split(".")
            name = ".".join(parts[4:]) if parts[0] == "rounds" else field
            fields.add("progress_sec" if name.startswith("progress_sec.") else name)
    assert fields == {*VARIED}

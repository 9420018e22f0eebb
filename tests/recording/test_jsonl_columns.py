"""The fast JSONL decoder gives the episode reader's table, and its errors, without Episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_columnar import BUNDLED, imported, one, v2

from reviewlab.recording._files import EpisodeFormatError, load_episodes, save_episodes
from reviewlab.recording.columnar import ColumnarFormatError, episodes_table
from reviewlab.recording.jsonl import jsonl_table


def test_bundled_and_imported_corpora_decode_to_the_readers_table(tmp_path: Path) -> None:
    """On the bundled corpus and real imported logs the table equals the one built from Episodes."""
    source = BUNDLED / "synthetic-1k.jsonl.gz"
    assert jsonl_table(source).equals(episodes_table(load_episodes(source)))
    save_episodes([*imported(), one("x"), v2("y")], tmp_path / "mixed.jsonl")
    expected = episodes_table(load_episodes(tmp_path / "mixed.jsonl"))
    assert jsonl_table(tmp_path / "mixed.jsonl").equals(expected)


def test_lines_pydantic_would_coerce_take_the_pydantic_path(tmp_path: Path) -> None:
    """Numbers as strings, a spaced time stamp and missing defaults
    decode as the reader decodes them."""
    line = json.loads(one("a").to_json_line())
    line["rounds"][0]["calls"][0]["duration_sec"] = "0.25"
    line["started_at"] = "2025-05-01 09:00:00.123456-05:00"
    del line["task"]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n" + json.dumps(line) + "\n\n" + one("b").to_json_line() + "\n")
    assert jsonl_table(path).equals(episodes_table(load_episodes(path)))


def test_errors_name_the_line(tmp_path: Path) -> None:
    """A bad value found by the column checks, or by pydantic, is
    named by its line (blanks count)."""
    good = one("a").to_json_line()
    bad = json.loads(one("b").to_json_line())
    bad["rounds"][0]["calls"][1]["duration_sec"] = -1.0
    path = tmp_path / "bad.jsonl"
    path.write_text(good + "\n\n" + json.dumps(bad) + "\n")
    with pytest.raises(ColumnarFormatError) as caught:
        jsonl_table(path)
    assert [(p.row, p.episode_id, p.field) for p in caught.value.problems] == [
        (3, "b", "rounds.0.calls.1.duration_sec")
    ]
    bad = json.loads(good)
    bad["colour"] = "red"
    path.write_text(good.replace('"a"', '"z"') + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(EpisodeFormatError, match=r"bad\.jsonl:2: colour: unknown field"):
        jsonl_table(path)


def test_compiling_jsonl_in_batches_names_a_repeated_id_by_its_line(tmp_path: Path) -> None:
    """An id repeated in a later batch of a JSONL corpus is named by its line (blanks count)."""
    from reviewlab.engines.vectorized._columns import compile_columns

    lines = [one(f"e{i}").to_json_line() for i in range(4)] + [one("e1").to_json_line()]
    path = tmp_path / "dup.jsonl"
    path.write_text("\n\n".join(lines) + "\n")
    with pytest.raises(ColumnarFormatError, match=r"dup\.jsonl:9: id: .*first on row 3"):
        compile_columns(path, batch_rows=2)

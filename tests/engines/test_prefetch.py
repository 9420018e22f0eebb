"""A Parquet corpus decoded ahead of its compile: the compile takes the batches only when they are
its own file's, unchanged, checks them as its own, and a reading nobody takes is stopped."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reviewlab.core._policy import TimeoutPolicy
from reviewlab.engines import _prefetch
from reviewlab.engines._prefetch import prefetch
from reviewlab.engines.vectorized._columns import compile_columns
from reviewlab.recording.columnar import ARROW_SCHEMA, ColumnarFormatError, episodes_table
from reviewlab.recording.synth import synth_corpus, write_synthetic

ROWS = 40
"""Episodes per batch in these tests: a 300-episode file is 8 batches, more than the queue holds."""


@pytest.fixture
def decoders(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the threads that ask Arrow for a file's batches, in order."""
    names: list[str] = []
    real = pq.ParquetFile.iter_batches

    def recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", recorded)
    yield names
    prefetch("")  # stop whatever a test left running


def pending() -> Any:
    """The reading not yet taken (None when there is none)."""
    return _prefetch._PENDING


def same(a: Any, b: Any) -> None:
    """Two compiled corpora hold the same calls and replay alike."""
    assert list(a.episode_ids) == list(b.episode_ids)
    for name in ("duration_sec", "completed", "episode_index", "key_code", "requested_lines"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    for policy in (TimeoutPolicy.ouroboros(), TimeoutPolicy.uniform(5.0)):
        assert a.summary(policy) == b.summary(policy)


def test_the_compile_takes_the_batches_decoded_ahead(tmp_path: Path, decoders: list[str]) -> None:
    """After prefetch the compile reads no batch itself and compiles the corpus it would have."""
    path = tmp_path / "c.parquet"
    write_synthetic(path, 300, seed=3)
    assert prefetch(path, ROWS)
    reading = pending()
    ahead = compile_columns(path, batch_rows=ROWS)
    reading.thread.join(10)
    assert not reading.thread.is_alive() and pending() is None
    assert decoders == ["reviewlab-prefetch"]
    own = compile_columns(path, batch_rows=ROWS)
    assert decoders == ["reviewlab-prefetch", "MainThread"]
    same(ahead, own)


def test_a_file_changed_since_is_read_again(tmp_path: Path, decoders: list[str]) -> None:
    """A file rewritten after prefetch is compiled from its new content; the reading is stopped."""
    path = tmp_path / "c.parquet"
    write_synthetic(path, 300, seed=3)
    assert prefetch(path, ROWS)
    reading = pending()
    write_synthetic(path, 120, seed=4)
    compiled = compile_columns(path, batch_rows=ROWS)
    assert len(compiled.episode_ids) == 120
    reading.thread.join(10)
    assert not reading.thread.is_alive()
    assert "MainThread" in decoders


def test_another_batch_size_is_not_taken(tmp_path: Path, decoders: list[str]) -> None:
    """A compile in batches of another size reads its own batches (rows are numbered by them)."""
    path = tmp_path / "c.parquet"
    write_synthetic(path, 100, seed=1)
    assert prefetch(path, ROWS)
    compile_columns(path, batch_rows=ROWS + 1)
    assert "MainThread" in decoders


def test_bad_values_are_refused_as_the_reader_refuses_them(tmp_path: Path) -> None:
    """A prefetched file with bad values raises the same error, naming the same rows and fields."""
    rows = episodes_table(synth_corpus(90, seed=2)).to_pylist()
    rows[5]["rounds"][0]["calls"][0]["duration_sec"] = -1.0
    rows[77]["source"] = "carrier-pigeon"
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=ARROW_SCHEMA), path)
    errors = []
    for ahead in (True, False):
        if ahead:
            assert prefetch(path, ROWS)
        with pytest.raises(ColumnarFormatError) as caught:
            compile_columns(path, batch_rows=ROWS)
        errors.append([(p.row, p.episode_id, p.field, p.message) for p in caught.value.problems])
    assert errors[0] == errors[1]
    assert [(row, field) for row, _, field, _ in errors[0]] == [
        (6, "rounds.0.calls.0.duration_sec")
    ]  # the first bad batch raises; row 78 is in a later one


def test_a_new_prefetch_stops_the_reading_not_taken(tmp_path: Path, decoders: list[str]) -> None:
    """Prefetching another file stops the first reading, which then holds no thread."""
    first, second = tmp_path / "a.parquet", tmp_path / "b.parquet"
    write_synthetic(first, 300, seed=1)
    write_synthetic(second, 60, seed=2)
    assert prefetch(first, ROWS)
    reading = pending()
    assert prefetch(second, ROWS)
    reading.thread.join(10)
    assert not reading.thread.is_alive()
    assert len(compile_columns(second, batch_rows=ROWS).episode_ids) == 60
    assert decoders.count("MainThread") == 0


def test_only_a_local_parquet_file_is_prefetched(tmp_path: Path) -> None:
    """A JSONL file, a folder, a missing file and a URL start no reading."""
    write_synthetic(tmp_path / "c.jsonl", 5, seed=1)
    (tmp_path / "parts").mkdir()
    for path in (
        tmp_path / "c.jsonl",
        tmp_path / "parts",
        tmp_path / "missing.parquet",
        "s3://bucket/c.parquet",
    ):
        assert not prefetch(path)
        assert pending() is None

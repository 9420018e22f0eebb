"""Atomic writes: the destination is the old file, byte-identical, or the complete new one."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pandas as pd
import pytest

from reviewlab.core._atomic import atomic_path, write_bytes_atomic, write_text_atomic
from reviewlab.ui._report import write_table


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    """An exception inside the block keeps the old bytes and removes the temporary file."""
    target = tmp_path / "out.csv"
    target.write_bytes(b"old\n")
    with pytest.raises(RuntimeError, match="half way"), atomic_path(target) as temp:
        temp.write_bytes(b"new but incomplete")
        raise RuntimeError("half way")
    assert target.read_bytes() == b"old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["out.csv"]


def test_a_successful_write_replaces_the_file_with_ordinary_permissions(tmp_path: Path) -> None:
    """On success the new bytes are in place, with 0o666 less the umask (not mkstemp's 0o600)."""
    target = tmp_path / "policy.toml"
    target.write_text("old", encoding="utf-8")
    write_text_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [path.name for path in tmp_path.iterdir()] == ["policy.toml"]


def test_the_temporary_name_keeps_the_suffixes(tmp_path: Path) -> None:
    """Writers that pick a format by extension see the destination's suffixes."""
    with atomic_path(tmp_path / "corpus.jsonl.gz") as temp:
        assert temp.name.endswith(".jsonl.gz") and temp.parent == tmp_path
        temp.write_bytes(b"x")
    assert (tmp_path / "corpus.jsonl.gz").read_bytes() == b"x"


def test_write_table_failing_half_way_keeps_the_previous_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CSV write that dies after writing some rows leaves the previous table untouched."""
    target = tmp_path / "sweep.csv"
    write_table(pd.DataFrame({"a": [1, 2]}), target)
    before = target.read_bytes()

    def dies_half_way(self: pd.DataFrame, path: Path, **_: object) -> None:
        Path(path).write_text("a\n1\n", encoding="utf-8")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", dies_half_way)
    with pytest.raises(OSError, match="No space"):
        write_table(pd.DataFrame({"a": [3, 4, 5]}), target)
    assert target.read_bytes() == before
    assert [path.name for path in tmp_path.iterdir()] == ["sweep.csv"]


def test_write_bytes_into_a_missing_folder_fails_without_a_trace(tmp_path: Path) -> None:
    """A destination whose folder does not exist raises and creates nothing."""
    with pytest.raises(FileNotFoundError):
        write_bytes_atomic(tmp_path / "nope" / "x.bin", b"x")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_in_the_way_is_named_not_the_temporary(tmp_path: Path) -> None:
    """A destination that is a folder is refused naming it, before anything is written."""
    target = tmp_path / "out.csv"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as raised:
        write_bytes_atomic(target, b"x")
    assert raised.value.filename == str(target)
    assert [path.name for path in tmp_path.iterdir()] == ["out.csv"]

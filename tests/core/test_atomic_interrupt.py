"""Atomic writes interrupted by KeyboardInterrupt (reviewlab/core/_atomic.py): the old file stays
byte-identical, no temporary file remains, and the interrupt is not swallowed."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from reviewlab.core import _atomic as atomic
from reviewlab.core._atomic import atomic_path, write_bytes_atomic, write_text_atomic

OLD = b"old, complete\n"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    path = tmp_path / "table.csv"
    path.write_bytes(OLD)
    return path


def _untouched(target: Path) -> None:
    assert target.read_bytes() == OLD
    assert [path.name for path in target.parent.iterdir()] == [target.name]


def test_an_interrupt_inside_the_block_removes_the_temporary(target: Path) -> None:
    """Ctrl-C while the caller writes the temporary file: old file kept, temporary removed."""
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as temp:
        temp.write_bytes(b"new but only ha")
        raise KeyboardInterrupt
    _untouched(target)


def test_an_interrupt_half_way_through_write_text_atomic_removes_the_temporary(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C in the middle of write_text_atomic's own write: the same guarantees."""
    real_write = Path.write_bytes

    def half_then_interrupt(self: Path, data: bytes) -> int:
        real_write(self, data[: len(data) // 2])
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_bytes", half_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_text_atomic(target, "a much longer new table\n" * 100)
    monkeypatch.undo()
    _untouched(target)


def test_an_interrupt_while_flushing_to_disk_removes_the_temporary(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the fsync before the rename: the rename never happens, nothing remains."""

    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_bytes_atomic(target, b"new\n")
    monkeypatch.undo()
    _untouched(target)


def test_an_interrupt_right_after_the_temporary_is_created_removes_it(
    target: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as the new temporary file's descriptor is closed, before the caller gets its path:
    the temporary is removed too."""
    real_mkstemp, real_close = tempfile.mkstemp, os.close
    created: list[int] = []

    def mkstemp(*args, **kwargs):
        fd, name = real_mkstemp(*args, **kwargs)
        created.append(fd)
        return fd, name

    def close(fd: int) -> None:
        real_close(fd)
        if fd in created:  # only the temporary's descriptor; every other close is left alone
            created.remove(fd)
            raise KeyboardInterrupt

    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)
    monkeypatch.setattr(atomic.os, "close", close)
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as temp:
        temp.write_bytes(b"never reached")
    monkeypatch.undo()
    _untouched(target)

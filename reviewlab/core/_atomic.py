"""Write a file whole or not at all: a temporary file beside it, renamed over it on success.

Lifecycle of one write: :func:`atomic_path` creates an empty temporary file in the
destination's directory and hands its path to the caller → the caller writes it by any means
→ on a clean exit the file is flushed and :func:`os.replace` d over the destination; on any
exception it is deleted and the exception propagates.

Invariants: a reader (or a crash) sees the previous destination, byte-identical, or the
complete new one; a failed write leaves nothing behind; the new file gets ordinary
permissions (``0o666`` less the umask).
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write; it replaces ``path`` only when the block succeeds.

    The temporary name keeps the destination's suffixes (``.x.csv`` → ``.x.csv.<random>.csv``)
    so that writers choosing a format by extension choose the same one.
    """
    target = Path(path)
    if target.is_dir():  # said about the destination, not about the temporary file
        raise IsADirectoryError(errno.EISDIR, "is a directory, expected a file", str(target))
    directory = target.parent if str(target.parent) else Path(".")
    suffix = "".join(target.suffixes[-2:]) or ".tmp"
    fd, temp_name = tempfile.mkstemp(dir=directory, prefix=f".{target.name}.", suffix=suffix)
    temp = Path(temp_name)
    try:  # from here on, even a KeyboardInterrupt removes the temporary file
        os.close(fd)
        yield temp
        with open(temp, "rb+") as handle:  # the writer may have closed its own handle unsynced
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)
        try:
            os.replace(temp, target)
        except OSError as exc:  # name the destination the user gave, not the temporary file
            raise type(exc)(exc.errno, exc.strerror, str(target)) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` whole or not at all; returns the path."""
    with atomic_path(path) as temp:
        temp.write_bytes(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` whole or not at all; returns the path."""
    return write_bytes_atomic(path, text.encode("utf-8"))

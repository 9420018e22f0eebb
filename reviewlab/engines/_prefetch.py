"""A Parquet corpus decoded on another thread while the command that will compile it is still
importing the library (the why: docs/architecture.md, "Compiling from columns").

Lifecycle: :func:`prefetch` (a local ``.parquet`` file) starts a daemon thread that decodes the
file's batches into a queue of :data:`AHEAD_BATCHES` → the compile's reader calls :func:`take`
with the file and batch size it is about to read, and gets the batches in order when they are
the reading's and the file is unchanged (size, modification time), else ``None`` → once the
reader is done, the thread gives the batches' memory back and ends; a reading not taken is
stopped by the next :func:`prefetch`, or ends with the process.

Invariants: the batches are those ``ParquetFile.iter_batches`` gives the reader, which checks
them as its own; an error of the thread is raised by the reader; importing this module loads
only the standard library (the thread imports Arrow).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BATCH_ROWS = 32_768
"""Episodes per batch when a Parquet corpus is compiled (the reading's default too)."""
AHEAD_BATCHES = 1
"""Decoded batches the reading queues before the reader takes them (its memory bound: a batch
of the default size is about 100 MB decoded; with the one being decoded, the reader's own read
ahead holds as many)."""

_END = object()
"""Put on the queue after the last batch."""

_LOCK = threading.Lock()
_PENDING: _Reading | None = None


def _identity(path: str | os.PathLike[str], batch_rows: int) -> tuple[Any, ...] | None:
    """What must not change between the reading and the reader: the file and its batch size."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (os.path.realpath(path), stat.st_size, stat.st_mtime_ns, batch_rows)


class _Reading:
    """One file decoded on a daemon thread into a bounded queue, until read or stopped."""

    def __init__(self, path: Path, batch_rows: int, identity: tuple[Any, ...]) -> None:
        self.identity = identity
        self.batches: queue.Queue[Any] = queue.Queue(AHEAD_BATCHES)
        self.stopped = threading.Event()
        self.thread = threading.Thread(
            target=self._decode, args=(path, batch_rows), name="reviewlab-prefetch", daemon=True
        )
        self.thread.start()

    def _decode(self, path: Path, batch_rows: int) -> None:
        import pyarrow as pa

        try:
            import pyarrow.parquet as pq

            if self.stopped.is_set():  # stopped while Arrow was being imported
                return
            # Decoded on this thread alone, so the batches' memory is this thread's to give back.
            reader = pq.ParquetFile(path).iter_batches(batch_size=batch_rows, use_threads=False)
            for batch in reader:
                if not self._put(batch):
                    return
            self._put(_END)
        except BaseException as exc:  # handed to the reader, which raises it as its own
            self._put(exc)
        finally:
            # Arrow's allocator keeps the pages of freed buffers in the heap of the thread that
            # allocated them: once the reader is done with the batches, give them back from here.
            self.stopped.wait()
            pa.default_memory_pool().release_unused()

    def _put(self, item: Any) -> bool:
        """Queue ``item`` once there is room; False when stopped first."""
        while not self.stopped.is_set():
            try:
                self.batches.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Iterator[Any]:
        """The batches in file order (an error of the decoding thread is raised here)."""
        try:
            while True:
                item = self.batches.get()
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop decoding (the thread ends at its next batch)."""
        self.stopped.set()


def prefetch(path: str | os.PathLike[str], batch_rows: int = BATCH_ROWS) -> bool:
    """Start decoding the Parquet file at ``path`` in batches of ``batch_rows`` episodes (a
    reading not yet taken is stopped); True if started (a local ``.parquet`` file)."""
    global _PENDING
    where = Path(path)
    identity = _identity(where, batch_rows) if where.suffix == ".parquet" else None
    with _LOCK:
        if _PENDING is not None:
            _PENDING.stop()
            _PENDING = None
        if identity is None or not where.is_file():
            return False
        _PENDING = _Reading(where, batch_rows, identity)
    return True


def take(path: str | os.PathLike[str], batch_rows: int) -> Iterator[Any] | None:
    """The batches of the reading of ``path`` in batches of ``batch_rows``, if one was started
    with them and the file has not changed since; else ``None`` (a reading of another file is
    left running; one of this file with another batch size, or of a changed file, is
    stopped)."""
    global _PENDING
    with _LOCK:
        reading = _PENDING
        if reading is None or reading.identity[0] != os.path.realpath(path):
            return None
        _PENDING = None
    if reading.identity != _identity(path, batch_rows):
        reading.stop()
        return None
    return iter(reading)

"""The :class:`Recorder`: collects episodes as they really ran and writes them atomically.

Lifecycle: open → ``record`` … → ``close`` (or leave the ``with`` block). A
recorder holds its episodes in memory and writes the whole file with
:func:`~reviewlab.recording._files.save_episodes` (temp file + rename) on
``close``, on ``flush`` and when its ``with`` block exits, also by an exception:
every recorded episode is complete, so it is worth keeping. A process that dies
before then leaves the destination exactly as it was: never a half file.

``record`` accepts an :class:`~reviewlab.recording._schema.Episode` as it is, or a live
:class:`~reviewlab.live._episode.EpisodeResult`, converted by
:func:`~reviewlab.recording.capture.episode_from_result` (abandoned calls censored at
their bound). Ids default to ``<prefix>-<n>`` with ``n`` counting from 1 over
the episodes of the file, so they stay unique when ``append=True`` keeps the
episodes already in it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType

from reviewlab.core._vocab import SOURCES, Source
from reviewlab.live._episode import EpisodeResult
from reviewlab.recording._files import load_episodes, save_episodes
from reviewlab.recording._ids import duplicate_id
from reviewlab.recording._schema import Episode
from reviewlab.recording.capture._live import episode_from_result


class Recorder:
    """Accumulates episodes and writes them to ``path`` atomically.

    ``slot`` and ``source`` label every live result it converts. With
    ``append=True`` an existing file's episodes are loaded (and validated)
    first and kept ahead of the new ones. Thread-safe: slots running in
    parallel may share one recorder.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        slot: str = "",
        source: Source = "live",
        prefix: str | None = None,
        append: bool = False,
    ) -> None:
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        self.path = Path(path)
        self.slot = slot
        self.source = source
        self.prefix = prefix if prefix is not None else self.path.name.split(".")[0] or source
        self._lock = threading.Lock()
        self._episodes: list[Episode] = []
        self._ids: set[str] = set()
        self._closed = False
        if append and self.path.exists():
            for episode in load_episodes(self.path):
                self._keep(episode)

    @property
    def episodes(self) -> list[Episode]:
        """A copy of the episodes recorded so far (including appended ones)."""
        with self._lock:
            return list(self._episodes)

    @property
    def closed(self) -> bool:
        """True once ``close`` ran; ``record`` then refuses."""
        return self._closed

    def record(self, result: EpisodeResult | Episode, *, id: str | None = None) -> Episode:
        """Add one episode (an ``Episode``, or a live ``EpisodeResult`` converted); return it."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"recorder for {self.path} is closed")
            if isinstance(result, Episode):
                episode = result
            elif isinstance(result, EpisodeResult):
                episode_id = id if id is not None else self._next_id()
                episode = episode_from_result(
                    result, id=episode_id, slot=self.slot, source=self.source
                )
            else:
                kind = type(result).__name__
                raise TypeError(f"expected an Episode or EpisodeResult, got {kind}")
            self._keep(episode)
            return episode

    def flush(self) -> None:
        """Write every episode recorded so far (atomically; the file is complete afterwards)."""
        with self._lock:
            save_episodes(self._episodes, self.path)

    def close(self) -> None:
        """Write the file and refuse further records. Closing twice writes once."""
        if self._closed:
            return
        self.flush()
        self._closed = True

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Written also when the block raised: each recorded episode is whole.
        self.close()

    def __repr__(self) -> str:
        return (
            f"Recorder({str(self.path)!r}, episodes={len(self._episodes)}, closed={self._closed})"
        )

    def _next_id(self) -> str:
        number = len(self._episodes) + 1
        while f"{self.prefix}-{number}" in self._ids:
            number += 1
        return f"{self.prefix}-{number}"

    def _keep(self, episode: Episode) -> None:
        if episode.id in self._ids:
            raise ValueError(f"{self.path}: {duplicate_id(episode.id)}")
        self._ids.add(episode.id)
        self._episodes.append(episode)

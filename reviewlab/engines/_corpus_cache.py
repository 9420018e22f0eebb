"""The compiled corpora an engine keeps while the same episodes are replayed again.

An engine compiles a list of episodes once (the twin's :class:`~reviewlab.engines.twin._corpus.
TwinCorpus`, the vectorized :class:`~reviewlab.engines.vectorized.CompiledCorpus`) and answers
a later replay of that list from :class:`CorpusCache`. Lifecycle of an entry: put after a
compile → hit while the same episodes come back → dropped when ``size`` newer entries are put
(least recently used first) or on :meth:`CorpusCache.clear`.

A hit needs the same episodes in the same order: the entry is found by a fingerprint (the
number of episodes and the identity of the first and last, with the engine's options) and
then checked by list equality over all of them, whose identity shortcut makes it a pointer
comparison per episode (an episode equal to the compiled one but another object compares by
value, and compiles to the same corpus). An entry holds its episode objects, so an identity
in a fingerprint is never reused while the entry lives. Episodes are frozen; clear the cache
after mutating their lists in place.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

Compiled = TypeVar("Compiled")


class CorpusCache(Generic[Compiled]):
    """At most ``size`` compiled corpora, by the episodes (and options) they were compiled
    from."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"size: expected at least 1 entry, got {size!r}")
        self.size = size
        self._entries: OrderedDict[tuple[Hashable, ...], tuple[list[object], Compiled]] = (
            OrderedDict()
        )

    @staticmethod
    def _key(episodes: Sequence[object], options: tuple[Hashable, ...]) -> tuple[Hashable, ...]:
        if not episodes:
            return (0, 0, 0, *options)
        return (len(episodes), id(episodes[0]), id(episodes[-1]), *options)

    def get(self, episodes: Sequence[object], *options: Hashable) -> Compiled | None:
        """The corpus compiled from these episodes with these options, or ``None``."""
        if not isinstance(episodes, list):
            episodes = list(episodes)
        key = self._key(episodes, options)
        entry = self._entries.get(key)
        if entry is None or entry[0] != episodes:
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def put(self, episodes: Sequence[object], compiled: Compiled, *options: Hashable) -> Compiled:
        """Keep ``compiled`` for these episodes and options (dropping the oldest entries past
        ``size``); returns it."""
        key = self._key(episodes, options)
        self._entries[key] = (list(episodes), compiled)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return compiled

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

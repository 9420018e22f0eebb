"""What the vectorized engine gathers beside a compiled corpus: the version 2 facts of its calls
(:class:`RemoteCalls`, while compiling) and what one narrowing makes of its deadline calls
(:class:`DeadlineWindows`, kept per narrowing by
:meth:`~reviewlab.engines.vectorized.CompiledCorpus.deadline_windows`).

Invariants: both are read-only once built; a :class:`DeadlineWindows` depends on the corpus and
the narrowing alone, never on the policy (its per-key counts are remembered by key and tool
timeout).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from reviewlab.core._policy import Narrowing

CompiledCorpus = Any
"""The corpus type of :mod:`reviewlab.engines.vectorized._compiled` (which imports this module,
so naming it here would close an import cycle)."""


class RemoteCalls:
    """What version 2 calls add, gathered by call index while compiling: progress times (calls
    that reported any, even none) and cancel stop times (calls whose server was seen
    stopping)."""

    def __init__(self) -> None:
        self.progress_calls: list[int] = []
        self.progress_sec: list[tuple[float, ...]] = []
        self.honoured_calls: list[int] = []
        self.honoured_sec: list[float] = []

    def add(self, call: int, progress: Any, honoured: float | None) -> None:
        """Note call ``call``'s progress times (``None``: none recorded) and cancel stop time."""
        if progress is not None:
            self.progress_calls.append(call)
            self.progress_sec.append(tuple(progress))
        if honoured is not None:
            self.honoured_calls.append(call)
            self.honoured_sec.append(float(honoured))


class DeadlineWindows:
    """What one narrowing makes of the deadline calls' static time left, whatever the policy.

    ``window``: per deadline call, the narrowing's window (:meth:`Narrowing.narrow_array` of an
    infinite tool timeout and the call's static time left), grouped by key (``key_order``:
    positions in ``dl_calls``, ``key_offsets``: where each key's group starts), and
    ``remaining``, the static time left, grouped alike; ``over``: the positions (ascending) of
    the calls whose threshold (duration; infinite if censored) passes their window.
    """

    def __init__(
        self,
        narrowing: Narrowing,
        window: np.ndarray,
        key_order: np.ndarray,
        key_offsets: np.ndarray,
        over: np.ndarray,
        remaining: np.ndarray,
    ) -> None:
        self.narrowing = narrowing
        self.window = window
        self.key_order = key_order
        self.key_offsets = key_offsets
        self.over = over
        self.remaining = remaining
        self._deadline_bounds: dict[tuple[int, float], int] = {}

    def deadline_bounds(self, key: int, tool_sec: float) -> int:
        """How many deadline calls of ``key`` the deadline bounds when the key's tool timeout is
        ``tool_sec``: :meth:`Narrowing.narrow_array` (the shared rule, exact) of
        ``tool_sec`` and their static time left, remembered per ``(key, tool_sec)`` (a sweep
        asks again for every key it does not vary)."""
        found = self._deadline_bounds.get((key, tool_sec))
        if found is None:
            left = self.remaining[self.key_offsets[key] : self.key_offsets[key + 1]]
            _, by = self.narrowing.narrow_array(np.full(left.size, tool_sec), left)
            found = self._deadline_bounds[(key, tool_sec)] = int(np.count_nonzero(by))
        return found

    @classmethod
    def of(cls, c: CompiledCorpus, narrowing: Narrowing) -> DeadlineWindows:
        """The windows of ``narrowing`` over the deadline calls of ``c``."""
        window, _ = narrowing.narrow_array(np.full(c.dl_calls.size, np.inf), c.dl_remaining)
        threshold = np.where(c.dl_completed, c.dl_duration, np.inf)
        over = np.flatnonzero(threshold > window)
        n_keys = len(c.key_args)
        narrow = c.dl_key.astype(np.int16) if n_keys < 2**15 else c.dl_key
        order = np.argsort(narrow, kind="stable")
        counts = np.bincount(c.dl_key, minlength=n_keys)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.intp)
        return cls(narrowing, window[order], order, offsets, over, c.dl_remaining[order])

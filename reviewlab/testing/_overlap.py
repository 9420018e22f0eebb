"""Real-clock replays side by side: one thread each, the caller's heap frozen while they run.

The real engine collects the heap before each run and keeps the collector off while its clock
runs (``engines/real``). Runs that overlap would otherwise stop one another's threads for a full
collection of the caller's heap (a test process's takes hundreds of ms, past the conformance
corpus's 200 ms margins). Frozen (:func:`gc.freeze`), that heap is out of every collection, so a
run's collection scans only what the runs made; it is unfrozen when the last run has ended
(unless it was frozen before).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Answer = TypeVar("Answer")


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Collect once, then keep every object alive now out of the collector's scans until the
    block ends. In a heap someone had already frozen (a test session freezes what collection
    made), what the block adds stays frozen with theirs: unfreezing would undo theirs too."""
    already = gc.get_freeze_count()
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        if not already:
            gc.unfreeze()


def side_by_side(
    run: Callable[[Item], Answer],
    items: Sequence[Item],
    *,
    workers: int,
    caught: tuple[type[Exception], ...] = (),
) -> list[Answer | Exception]:
    """``run(item)`` for every item, ``workers`` at a time on threads under :func:`frozen_heap`,
    answers in the order of ``items``; an item whose run raises one of ``caught`` answers that
    exception (any other is raised once every run has ended)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers: expected a positive number of threads, got {workers!r}")

    def one(item: Item) -> Answer | Exception:
        try:
            return run(item)
        except caught as failure:
            return failure

    with frozen_heap(), ThreadPoolExecutor(workers, thread_name_prefix="reviewlab-side") as pool:
        return list(pool.map(one, items))

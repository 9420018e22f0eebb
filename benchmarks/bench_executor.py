"""Benchmark the bounded executor against a bare thread pool.

Prints, measured in one run:

* the median per-call overhead of :meth:`BoundedExecutor.run` against a bare
  ``ThreadPoolExecutor.submit(fn).result()`` round trip, as a ratio (goal ≤ 1.2×);
* how long after the bound control returns to the caller when a call is
  abandoned (p50 / p99 in ms; goal p99 ≤ 2 ms).

Run: ``.venv/bin/python benchmarks/bench_executor.py [--calls N] [--abandons N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from reviewlab.core.policy import Bound
from reviewlab.live.executor import BoundedExecutor


def _noop() -> int:
    return 1


def _batch(run, size: int) -> float:
    """Seconds per call over one batch of ``size`` calls."""
    start = time.perf_counter()
    for _ in range(size):
        run()
    return (time.perf_counter() - start) / size


def bench_overhead(calls: int, batch: int = 50) -> tuple[float, float, float]:
    """Median seconds per call (bare pool, ours) and the ratio of the medians.

    The two are measured in alternating small batches so that load from other
    processes on the machine hits both alike.
    """
    bound = Bound(30.0, "tool_timeout", 30.0)
    with ThreadPoolExecutor(max_workers=1) as pool, BoundedExecutor(loose_cap=None) as bounded:

        def bare() -> None:
            pool.submit(_noop).result()

        def ours() -> None:
            bounded.run(_noop, bound=bound, name="noop")

        for run in (bare, ours):  # warm up threads and caches
            _batch(run, 1000)
        bare_runs: list[float] = []
        our_runs: list[float] = []
        for index in range(max(1, calls // batch)):
            # Alternate which goes first, so neither always follows the other.
            pair = (bare, ours) if index % 2 == 0 else (ours, bare)
            for run in pair:
                (bare_runs if run is bare else our_runs).append(_batch(run, batch))
    bare_sec = statistics.median(bare_runs)
    our_sec = statistics.median(our_runs)
    return bare_sec, our_sec, our_sec / bare_sec


@contextlib.contextmanager
def one_cpu() -> Iterator[bool]:
    """Pin this thread (and the threads it starts) to one CPU for the
    block; yields whether it could."""
    if not hasattr(os, "sched_setaffinity"):
        yield False
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})
    try:
        yield True
    finally:
        os.sched_setaffinity(0, before)


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def bench_abandon(abandons: int, bound_sec: float) -> tuple[list[float], list[float]]:
    """Lateness after the bound (ms) of abandoned calls, and of a bare ``Lock.acquire(timeout)``.

    The two are sampled alternately, one of each in turn, so that load from
    other processes hits the executor and the machine's floor alike.
    """
    release = threading.Event()
    ours_ms: list[float] = []
    floor_ms: list[float] = []
    lock = threading.Lock()
    lock.acquire()
    with BoundedExecutor(loose_cap=None) as bounded:
        for _ in range(abandons):
            start = time.monotonic()
            result = bounded.run(release.wait, 5.0, bound=bound_sec, name="wedged")
            back = time.monotonic()
            assert result.status == "abandoned", result.status
            ours_ms.append((back - start - bound_sec) * 1000.0)
            start = time.monotonic()
            lock.acquire(timeout=bound_sec)
            floor_ms.append((time.monotonic() - start - bound_sec) * 1000.0)
        release.set()
        bounded.ledger.wait_settled(10.0)
    return ours_ms, floor_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--abandons", type=int, default=300)
    parser.add_argument("--bound", type=float, default=0.005)
    options = parser.parse_args()

    # Pinned to one CPU, the caller and the worker hand off on one core: what is left is the
    # software overhead. Unpinned, a handoff may wake an idle second core; that wake-up latency
    # (tens of microseconds here) lands on whichever pool's worker the scheduler put elsewhere.
    with one_cpu() as pinned:
        bare, ours, ratio = bench_overhead(options.calls)
    where = "pinned to one CPU" if pinned else "not pinned (no sched_setaffinity here)"
    print(
        f"per-call round trip, {where}:  ThreadPoolExecutor: {bare * 1e6:7.1f} us   "
        f"BoundedExecutor: {ours * 1e6:7.1f} us   ratio {ratio:.2f}x (goal <= 1.20x) "
        f"{'OK' if ratio <= 1.2 else 'OVER'}"
    )
    bare, ours, ratio = bench_overhead(options.calls // 4)
    print(
        "  for information, unpinned (includes cross-core wake-ups): ThreadPoolExecutor: "
        f"{bare * 1e6:7.1f} us"
        f"   BoundedExecutor: {ours * 1e6:7.1f} us   ratio {ratio:.2f}x"
    )
    ours_ms, floor_ms = bench_abandon(options.abandons, options.bound)
    p99 = _p99(ours_ms)
    print(
        f"control back after the bound on abandonment ({options.abandons} calls, bound "
        f"{options.bound * 1000:g} ms): p50 {statistics.median(ours_ms):.3f} ms  p99 {p99:.3f} ms  "
        f"max {max(ours_ms):.3f} ms (goal p99 <= 2 ms) {'OK' if p99 <= 2.0 else 'OVER'}"
    )
    print(
        f"  machine floor, bare Lock.acquire(timeout) lateness, sampled alternately: "
        f"p50 {statistics.median(floor_ms):.3f} ms  p99 {_p99(floor_ms):.3f} ms  max "
        f"{max(floor_ms):.3f} ms"
    )


if __name__ == "__main__":
    main()

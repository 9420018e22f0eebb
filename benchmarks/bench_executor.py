"""Benchmark the bounded executor against a bare thread pool, as a user's machine runs it.

Prints, measured in one run, with a verdict per goal (exit status 1 when one is missed):

* the per-call overhead of :meth:`BoundedExecutor.run` against a bare
  ``ThreadPoolExecutor.submit(fn).result()`` round trip, as a ratio (goal <= 1.2x), judged
  UNPINNED: the caller and the workers run wherever the scheduler puts them, so a cross-core
  hand-off counts against whoever pays it. Both are measured in many short interleaved
  rounds (the order alternates), so load from other processes hits both alike; the verdict
  is on the median of the per-round ratios (the ratio of the medians is printed too). The
  same measurement pinned to one CPU is printed for information only;
* how long after the bound control returns to the caller when a call is abandoned
  (p50 / p99 in ms; goal p99 <= 2 ms), with the machine's floor (a bare
  ``Lock.acquire(timeout)``) sampled alternately beside it.

Run: ``.venv/bin/python benchmarks/bench_executor.py [--rounds N] [--batch N] [--abandons N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
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


def bench_overhead(rounds: int, batch: int) -> tuple[float, float, list[float]]:
    """Median seconds per call (bare pool, ours) and every round's ratio ours / bare.

    Each round times one batch of each, in alternating order, so that load from other
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
        for index in range(rounds):
            if index % 2 == 0:
                bare_runs.append(_batch(bare, batch))
                our_runs.append(_batch(ours, batch))
            else:
                our_runs.append(_batch(ours, batch))
                bare_runs.append(_batch(bare, batch))
    ratios = [o / b for o, b in zip(our_runs, bare_runs, strict=True)]
    return statistics.median(bare_runs), statistics.median(our_runs), ratios


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


OVERHEAD_GOAL = 1.2
LATENESS_GOAL_MS = 2.0


def main() -> int:
    """Measure, print the figures and a verdict per goal; 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="interleaved rounds")
    parser.add_argument("--batch", type=int, default=100, help="calls per side per round")
    parser.add_argument("--abandons", type=int, default=300)
    parser.add_argument("--bound", type=float, default=0.005)
    options = parser.parse_args()

    bare, ours, ratios = bench_overhead(options.rounds, options.batch)
    ratio = statistics.median(ratios)
    ok_overhead = ratio <= OVERHEAD_GOAL
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    print(
        f"per-call round trip, UNPINNED, {options.rounds} interleaved rounds of "
        f"{options.batch} calls each: ThreadPoolExecutor {bare * 1e6:6.1f} us   "
        f"BoundedExecutor {ours * 1e6:6.1f} us"
    )
    print(
        f"  ratio: median of per-round ratios {ratio:.2f}x (quartiles {q1:.2f}-{q3:.2f}), "
        f"ratio of medians {ours / bare:.2f}x (goal <= {OVERHEAD_GOAL:.2f}x): "
        f"{'PASS' if ok_overhead else 'MISS'}"
    )
    with one_cpu() as pinned:
        if pinned:
            p_bare, p_ours, p_ratios = bench_overhead(max(20, options.rounds // 4), options.batch)
            print(
                f"  for information, pinned to one CPU: ThreadPoolExecutor {p_bare * 1e6:6.1f} us"
                f"   BoundedExecutor {p_ours * 1e6:6.1f} us   ratio "
                f"{statistics.median(p_ratios):.2f}x (not judged)"
            )
    ours_ms, floor_ms = bench_abandon(options.abandons, options.bound)
    p99 = _p99(ours_ms)
    ok_late = p99 <= LATENESS_GOAL_MS
    print(
        f"control back after the bound on abandonment ({options.abandons} calls, bound "
        f"{options.bound * 1000:g} ms): p50 {statistics.median(ours_ms):.3f} ms  "
        f"p99 {p99:.3f} ms  max {max(ours_ms):.3f} ms (goal p99 <= {LATENESS_GOAL_MS:g} ms): "
        f"{'PASS' if ok_late else 'MISS'}"
    )
    print(
        f"  machine floor, bare Lock.acquire(timeout) lateness, sampled alternately: "
        f"p50 {statistics.median(floor_ms):.3f} ms  p99 {_p99(floor_ms):.3f} ms  "
        f"max {max(floor_ms):.3f} ms"
    )
    return 0 if ok_overhead and ok_late else 1


if __name__ == "__main__":
    sys.exit(main())

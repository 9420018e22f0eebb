"""Benchmark the asyncio bounded executor against a bare ``asyncio.wait_for``.

Prints, measured in one run on one event loop (unpinned):

* the median per-call time of :meth:`AsyncBoundedExecutor.run` against a bare
  ``asyncio.wait_for(tool(), bound)``, as a ratio (goal ≤ 1.2×). Like with like: the same
  ``async`` tool (one suspension), the same bound, the same loop, alternating small batches so
  that load from other processes hits both alike;
* abandonment lateness: how long after the bound control returns to the caller when a call
  that never returns is abandoned, measured from just before ``run`` is called (so dispatch
  counts against us) — p50 / p99 in ms (goal p99 ≤ 2 ms); the bare ``wait_for``'s figure and
  the machine's own timer floor (how late a blocking ``time.sleep`` of the bound wakes) are
  printed alongside for reference: no event loop can return earlier than its timer wakes it.

Exits non-zero when a goal is missed.
Run: ``.venv/bin/python benchmarks/bench_async.py [--calls N] [--abandons N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time

from reviewlab.core.policy import Bound
from reviewlab.live.aio import AsyncBoundedExecutor

OVERHEAD_GOAL = 1.2
LATENESS_GOAL_MS = 2.0
BOUND = Bound(30.0, "tool_timeout", 30.0)


async def _tool() -> int:
    await asyncio.sleep(0)
    return 1


async def _never() -> None:
    await asyncio.Event().wait()


async def bench_overhead(calls: int, batch: int = 100) -> tuple[float, float, float]:
    """Median seconds per call (bare ``wait_for``, ours) and the ratio of the medians."""
    executor = AsyncBoundedExecutor(loose_cap=None)

    async def bare(size: int) -> float:
        start = time.perf_counter()
        for _ in range(size):
            await asyncio.wait_for(_tool(), 30.0)
        return (time.perf_counter() - start) / size

    async def ours(size: int) -> float:
        start = time.perf_counter()
        for _ in range(size):
            await executor.run(_tool, bound=BOUND, name="tool")
        return (time.perf_counter() - start) / size

    await bare(1000)
    await ours(1000)
    bare_runs: list[float] = []
    our_runs: list[float] = []
    for index in range(max(1, calls // batch)):
        # Alternate which goes first, so neither always follows the other.
        if index % 2:
            bare_runs.append(await bare(batch))
            our_runs.append(await ours(batch))
        else:
            our_runs.append(await ours(batch))
            bare_runs.append(await bare(batch))
    bare_med, our_med = statistics.median(bare_runs), statistics.median(our_runs)
    return bare_med, our_med, our_med / bare_med


def _quantiles_ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return statistics.median(ordered) * 1e3, p99 * 1e3


async def bench_lateness(
    abandons: int, bound_sec: float = 0.005
) -> tuple[list[float], list[float], list[float]]:
    """Lateness samples in seconds: ours, a bare ``wait_for``, and the machine's own oversleep
    of a blocking ``time.sleep(bound_sec)`` (its timer floor), alternating."""
    executor = AsyncBoundedExecutor(loose_cap=None, grace_sec=1.0)
    bound = Bound(bound_sec, "tool_timeout", bound_sec)
    ours: list[float] = []
    bare: list[float] = []
    floor: list[float] = []
    for _ in range(abandons):
        start = time.monotonic()
        time.sleep(bound_sec)
        floor.append(time.monotonic() - start - bound_sec)
        start = time.monotonic()
        result = await executor.run(_never, bound=bound, name="never")
        ours.append(time.monotonic() - start - bound_sec)
        assert result.status == "abandoned"
        start = time.monotonic()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_never(), bound_sec)
        bare.append(time.monotonic() - start - bound_sec)
    return ours, bare, floor


async def main(argv: list[str] | None = None) -> int:
    """Run both measurements, print the figures and a verdict per goal; 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--abandons", type=int, default=400)
    args = parser.parse_args(argv)

    bare, ours, ratio = await bench_overhead(args.calls)
    ok_overhead = ratio <= OVERHEAD_GOAL
    print(
        f"per-call: bare asyncio.wait_for {bare * 1e6:.2f} us, AsyncBoundedExecutor.run "
        f"{ours * 1e6:.2f} us, ratio {ratio:.2f}x (goal <= {OVERHEAD_GOAL}x): "
        f"{'PASS' if ok_overhead else 'MISS'}"
    )
    late, bare_late, floor = await bench_lateness(args.abandons)
    p50, p99 = _quantiles_ms(late)
    bare_p50, bare_p99 = _quantiles_ms(bare_late)
    floor_p50, floor_p99 = _quantiles_ms(floor)
    ok_late = p99 <= LATENESS_GOAL_MS
    print(
        f"abandonment lateness over {len(late)} calls: p50 {p50:.3f} ms, p99 {p99:.3f} ms "
        f"(goal p99 <= {LATENESS_GOAL_MS} ms): {'PASS' if ok_late else 'MISS'}; "
        f"bare wait_for p50 {bare_p50:.3f} ms, p99 {bare_p99:.3f} ms; the machine's timer "
        f"floor (time.sleep oversleep) p50 {floor_p50:.3f} ms, p99 {floor_p99:.3f} ms"
    )
    return 0 if ok_overhead and ok_late else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

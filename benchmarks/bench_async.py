"""Benchmark the asyncio bounded executor against a bare ``asyncio.wait_for``, quiet or busy.

Prints, measured in one run on one event loop (unpinned), the condition (``quiet``, or
``busy`` with ``--busy``: one CPU-bound neighbour process runs throughout, see ``_busy.py``)
beside each figure, and a verdict per goal; exit status 1 when one is missed:

* the per-call time of :meth:`AsyncBoundedExecutor.run` (a call that returns inside its
  bound) against a bare ``asyncio.wait_for(tool(), bound)``, as a ratio (goal <= 1.5x),
  judged on the median of per-round ratios. Like with like: the same ``async`` tool (one
  suspension), the same bound, the same loop; each round times one small batch of each, in
  alternating order, so that load from other processes hits both alike;
* the same for a sync tool (goal <= 1.5x): the executor runs it on its reused worker threads,
  the bare side is ``asyncio.wait_for(loop.run_in_executor(pool, tool), bound)`` on a reused
  one-thread ``ThreadPoolExecutor``; a fresh pair per round, as in ``bench_executor.py``
  (a thread pair's placement on the CPUs sticks for seconds);
* abandonment lateness: how long after the bound control returns to the caller when a call
  that never returns is abandoned, measured from just before ``run`` is called (so dispatch
  counts against us), p50 / p99 in ms, beside the bare ``wait_for``'s (sampled alternately)
  and the machine's timer floor (how late a blocking ``time.sleep`` of the bound wakes). Goal:
  what the executor adds, its p99 less the bare ``wait_for``'s p99, is at most 2 ms (no event
  loop returns earlier than its timer wakes it, and on a busy machine that alone is several
  ms at p99).

Run: ``.venv/bin/python benchmarks/bench_async.py [--busy] [--calls N] [--abandons N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from _busy import add_busy_flag, machine_label, neighbour

from reviewlab.core import Bound
from reviewlab.live import AsyncBoundedExecutor

OVERHEAD_GOAL = 1.5
LATENESS_GOAL_MS = 2.0
BOUND = Bound(30.0, "tool_timeout", 30.0)


async def _tool() -> int:
    await asyncio.sleep(0)
    return 1


async def _never() -> None:
    await asyncio.Event().wait()


async def bench_overhead(calls: int, batch: int = 50) -> tuple[list[float], list[float]]:
    """Seconds per call of every round: bare ``wait_for``, ours."""
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
    return bare_runs, our_runs


def _sync_tool() -> int:
    return 1


async def bench_sync_tool(rounds: int, batch: int = 50) -> tuple[list[float], list[float]]:
    """Seconds per call of every round for a sync tool: bare ``wait_for(run_in_executor)``,
    ours; each round on a fresh executor and pool, warmed first."""
    loop = asyncio.get_running_loop()
    bare_runs: list[float] = []
    our_runs: list[float] = []
    for index in range(rounds):
        executor = AsyncBoundedExecutor(loose_cap=None)
        with ThreadPoolExecutor(max_workers=1) as pool:

            async def bare(size: int, pool: ThreadPoolExecutor = pool) -> float:
                start = time.perf_counter()
                for _ in range(size):
                    await asyncio.wait_for(loop.run_in_executor(pool, _sync_tool), 30.0)
                return (time.perf_counter() - start) / size

            async def ours(size: int, executor: AsyncBoundedExecutor = executor) -> float:
                start = time.perf_counter()
                for _ in range(size):
                    await executor.run(_sync_tool, bound=BOUND, name="tool")
                return (time.perf_counter() - start) / size

            await bare(10)
            await ours(10)
            if index % 2:
                bare_runs.append(await bare(batch))
                our_runs.append(await ours(batch))
            else:
                our_runs.append(await ours(batch))
                bare_runs.append(await bare(batch))
    return bare_runs, our_runs


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


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


async def measure(calls: int, abandons: int, label: str) -> int:
    """Run both measurements, print the figures and a verdict per goal; 1 when one is missed."""
    bare_runs, our_runs = await bench_overhead(calls)
    ratios = [o / b for o, b in zip(our_runs, bare_runs, strict=True)]
    ratio = statistics.median(ratios)
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    bare, ours = statistics.median(bare_runs), statistics.median(our_runs)
    ok_overhead = ratio <= OVERHEAD_GOAL
    print(
        f"[{label}] per-call, {len(ratios)} interleaved rounds: bare asyncio.wait_for "
        f"{bare * 1e6:.2f} us, AsyncBoundedExecutor.run {ours * 1e6:.2f} us"
    )
    print(
        f"[{label}]   ratio: median of per-round ratios {ratio:.2f}x (quartiles "
        f"{q1:.2f}-{q3:.2f}), ratio of medians {ours / bare:.2f}x (goal <= "
        f"{OVERHEAD_GOAL}x): {_verdict(ok_overhead)}"
    )
    sync_bare, sync_ours = await bench_sync_tool(max(10, calls // 500))
    sync_ratios = [o / b for o, b in zip(sync_ours, sync_bare, strict=True)]
    sync_ratio = statistics.median(sync_ratios)
    ok_sync = sync_ratio <= OVERHEAD_GOAL
    print(
        f"[{label}] a sync tool, {len(sync_ratios)} interleaved rounds (a fresh pair each): "
        f"wait_for(run_in_executor) {statistics.median(sync_bare) * 1e6:.1f} us, "
        f"AsyncBoundedExecutor.run {statistics.median(sync_ours) * 1e6:.1f} us, median of "
        f"per-round ratios {sync_ratio:.2f}x (goal <= {OVERHEAD_GOAL}x): {_verdict(ok_sync)}"
    )
    late, bare_late, floor = await bench_lateness(abandons)
    p50, p99 = _quantiles_ms(late)
    bare_p50, bare_p99 = _quantiles_ms(bare_late)
    floor_p50, floor_p99 = _quantiles_ms(floor)
    ok_late = p99 - bare_p99 <= LATENESS_GOAL_MS
    print(
        f"[{label}] abandonment lateness over {len(late)} calls: p50 {p50:.3f} ms, p99 "
        f"{p99:.3f} ms; bare wait_for p50 {bare_p50:.3f} ms, p99 {bare_p99:.3f} ms; the "
        f"machine's timer floor (time.sleep oversleep) p50 {floor_p50:.3f} ms, p99 "
        f"{floor_p99:.3f} ms"
    )
    print(
        f"[{label}]   added by the executor at p99 over the bare wait_for: "
        f"{p99 - bare_p99:+.3f} ms (goal <= {LATENESS_GOAL_MS} ms): {_verdict(ok_late)}"
    )
    return 0 if ok_overhead and ok_sync and ok_late else 1


def main(argv: list[str] | None = None) -> int:
    """Parse the options and measure, beside a busy neighbour when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--abandons", type=int, default=400)
    add_busy_flag(parser)
    args = parser.parse_args(argv)
    with neighbour(args.busy):
        return asyncio.run(measure(args.calls, args.abandons, machine_label(args.busy)))


if __name__ == "__main__":
    sys.exit(main())

"""Replay and sweep speed, measured in one run.

Prints: vectorized calls evaluated per second per policy on a compiled corpus
(goal ≥ 20 million), the speed-up over the SimPy twin on the same corpus (goal
≥ 100×), and the time of a 1,000-point sweep over 10,000 synthetic episodes
(goal ≤ 20 s on a 2-core machine).

Run: ``.venv/bin/python benchmarks/bench_replay.py [--episodes 10000] [--points 1000]``
"""

from __future__ import annotations

import argparse
import statistics
import time

from reviewlab.policy import Narrowing, TimeoutPolicy
from reviewlab.sweep import make_grid, sweep
from reviewlab.synth import synth_corpus
from reviewlab.twin import simulate
from reviewlab.vectorized import compile_corpus

NARROWINGS = {
    "inherit": Narrowing(),
    "none": Narrowing("none"),
    "reserve-60s": Narrowing("reserve", reserve_sec=60.0),
    "fraction-0.5": Narrowing("fraction", fraction=0.5),
    "unbounded": Narrowing.unbounded(),
}


def timed(fn, repeat: int) -> float:
    """Median seconds of ``repeat`` runs of ``fn`` (after one warm-up run)."""
    fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=1000, help="sweep points (rounded to the grid's product)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    started = time.perf_counter()
    episodes = synth_corpus(args.episodes, seed=args.seed)
    n_calls = sum(len(e.calls) for e in episodes)
    print(f"corpus: {len(episodes):,} synthetic episodes, {n_calls:,} calls (generated in "
          f"{time.perf_counter() - started:.1f} s)")
    started = time.perf_counter()
    corpus = compile_corpus(episodes)
    print(f"compile_corpus: {time.perf_counter() - started:.2f} s (once per corpus)")

    policy = TimeoutPolicy.ouroboros()
    print("\n1. vectorized replay, summary per policy on the compiled corpus (median of 30):")
    rates = []
    for label, narrowing in NARROWINGS.items():
        seconds = timed(lambda n=narrowing: corpus.summary(policy, n), 30)
        rates.append(n_calls / seconds)
        print(f"   ouroboros / {label:<13} {seconds * 1e3:7.2f} ms  {n_calls / seconds / 1e6:6.1f} M calls/s")
    print(f"   => mean over narrowing modes: {statistics.mean(rates) / 1e6:.1f} M calls/s (goal >= 20 M)")

    print("\n2. speed-up over the twin (ouroboros, inherit; same corpus, same answers):")
    twin_sec = timed(lambda: simulate(episodes, policy, Narrowing()), 1)
    summary_sec = timed(lambda: corpus.summary(policy, Narrowing()), 30)
    result_sec = timed(lambda: corpus.result(policy, Narrowing()), 3)
    assert corpus.result(policy, Narrowing()).summary == simulate(episodes, policy, Narrowing()).summary
    print(f"   twin simulate           {twin_sec:8.3f} s   ({n_calls / twin_sec / 1e3:.0f} k calls/s)")
    print(f"   vectorized summary      {summary_sec:8.4f} s   => {twin_sec / summary_sec:6.0f}x (goal >= 100x)")
    print(f"   vectorized full frames  {result_sec:8.4f} s   => {twin_sec / result_sec:6.0f}x (with DataFrames)")

    print(f"\n3. sweep of ~{args.points} points over {len(episodes):,} episodes (in-process, one core):")
    per_tool = max(2, round((args.points / 10) ** 0.5))
    values = [2.0 * 1.6 ** i for i in range(per_tool)]
    grid = make_grid(policy, tools={"read_file": values, "query_code": values}, scales=[1.0, 0.5],
                     narrowings=list(NARROWINGS.values()))
    started = time.perf_counter()
    frame = sweep(episodes, grid, progress=False)
    total = time.perf_counter() - started
    started = time.perf_counter()
    sweep(corpus, grid, progress=False)
    compiled = time.perf_counter() - started
    print(f"   {len(frame)} points: {total:.1f} s including compile, {compiled:.1f} s on the compiled corpus "
          f"({compiled / len(frame) * 1e3:.1f} ms/point; goal <= 20 s)")


if __name__ == "__main__":
    main()

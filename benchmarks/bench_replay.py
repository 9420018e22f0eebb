"""Replay and sweep speed, measured in one run (issue 5's goals).

Prints:

1. vectorized throughput: calls replayed per second by ``CompiledCorpus.summary``
   (every call's bound, fate and wait, every episode's wall time and silences,
   loose workers, credits, then the summary dict; no DataFrames) per narrowing
   mode under the ouroboros policy, on a large compiled corpus (default 100,000
   synthetic episodes) and on the 10,000-episode sweep corpus (goal >= 20 M
   calls/s);
2. the speed-up over the SimPy twin on the SAME large corpus (ouroboros,
   inherit), the answers checked equal, like with like (goal >= 100x for each):
   frames with frames (twin ``simulate()`` vs vectorized ``result()``: both build the
   calls and episodes frames and the summary) and without frames (the twin's bare
   simulation loop vs vectorized ``summary()``, which also computes the summary);
   both sides warm (compiled corpus cached after a warm-up run) and timed the same
   number of times;
3. the time of a 1,000-point sweep over 10,000 synthetic episodes, compile included
   (goal <= 20 s);
4. ``replay(corpus, engine="vectorized").summary`` on the bundled 1,000-episode corpus
   against the warm twin's ``simulate(corpus).summary``, the call a user makes: the
   dispatch's per-call work (the policy, the corpus handle, the engine's checks, the
   resolved tables) is inside the figure (goal >= 10x); both warm, timed in interleaved
   rounds.

``--busy`` runs every measurement beside a CPU-bound neighbour process (``_busy.py``); each
figure and verdict says which condition it was measured in.

Times are the best of N runs (after a warm-up), which resists noisy neighbours
on a shared machine; medians are printed alongside. A verdict is printed per goal and
the exit status is 1 when one is missed.

Run: ``.venv/bin/python benchmarks/bench_replay.py [--episodes 100000]
[--sweep-episodes 10000] [--points 1000] [--busy]``
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
from _busy import add_busy_flag, machine_label, neighbour

from reviewlab.analysis.sweep import make_grid, sweep
from reviewlab.core import Narrowing, Policy, TimeoutPolicy
from reviewlab.engines import replay
from reviewlab.engines._corpus import clear_corpora
from reviewlab.engines.twin import simulate
from reviewlab.engines.twin._engine import run_simulation
from reviewlab.engines.vectorized import CompiledCorpus, compile_corpus
from reviewlab.recording import load_episodes
from reviewlab.recording.synth import synth_corpus
from reviewlab.resources import corpus_path

NARROWINGS = {
    "inherit": Narrowing(),
    "none": Narrowing("none"),
    "reserve-60s": Narrowing("reserve", reserve_sec=60.0),
    "fraction-0.5": Narrowing("fraction", fraction=0.5),
    "unbounded": Narrowing.unbounded(),
}


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """``(best, median)`` seconds of ``repeat`` runs of ``fn`` after one warm-up run."""
    fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return min(samples), statistics.median(samples)


def build(n: int, seed: int) -> tuple[list[Any], CompiledCorpus, int]:
    started = time.perf_counter()
    episodes = synth_corpus(n, seed=seed)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    corpus = compile_corpus(episodes)
    compiled = time.perf_counter() - started
    print(
        f"corpus: {len(episodes):,} synthetic episodes (seed {seed}), {corpus.calls:,} calls; "
        "generated in "
        f"{generated:.1f} s, compile_corpus {compiled:.2f} s (once per corpus)"
    )
    return episodes, corpus, corpus.calls


def throughput(corpus: CompiledCorpus, n_calls: int, repeat: int) -> float:
    bounded = []
    for label, narrowing in NARROWINGS.items():
        policy = Policy.ouroboros().replace(narrowing=narrowing)
        best, median = timed(lambda p=policy: corpus.summary(p), repeat)
        rate = n_calls / best
        if narrowing.mode != "unbounded":
            bounded.append(rate)
        print(
            f"   ouroboros / {label:<13} {best * 1e3:8.2f} ms (median {median * 1e3:7.2f})  "
            f"{rate / 1e6:6.1f} M calls/s"
        )
    print(
        f"   => bounded modes: min {min(bounded) / 1e6:.1f}, mean "
        f"{statistics.mean(bounded) / 1e6:.1f} M calls/s "
        "(goal >= 20 M; 'unbounded' is the policy-independent pre-fix replay, mostly precompiled)"
    )
    return min(bounded)


def versus_twin(
    episodes: list[Any], corpus: CompiledCorpus, n_calls: int, repeat: int
) -> tuple[float, float]:
    """(frames-with-frames ratio, no-frames ratio), each side warm and timed ``repeat`` times."""
    policy = Policy.ouroboros()
    twin = simulate(episodes, policy)  # also the twin's warm-up (caches its compile)
    fast = corpus.result(policy)
    assert corpus.summary(policy) == twin.summary == fast.summary
    pd.testing.assert_frame_equal(twin.calls, fast.calls)
    pd.testing.assert_frame_equal(twin.episodes, fast.episodes)
    print("   answers checked equal: summary dicts, and the calls and episodes frames")
    twin_best, twin_median = timed(lambda: simulate(episodes, policy), repeat)
    result_best, result_median = timed(lambda: corpus.result(policy), repeat)
    sim_best, sim_median = timed(lambda: run_simulation(episodes, policy), repeat)
    summary_best, summary_median = timed(lambda: corpus.summary(policy), repeat)
    frames_ratio = twin_best / result_best
    bare_ratio = sim_best / summary_best
    print("   frames with frames (calls + episodes frames + summary):")
    print(
        f"     twin simulate()        {twin_best:9.4f} s (median {twin_median:.4f})  "
        f"{n_calls / twin_best / 1e3:7.0f} k calls/s"
    )
    print(
        f"     vectorized result()    {result_best:9.4f} s (median {result_median:.4f})  "
        f"=> {frames_ratio:6.1f}x"
    )
    print("   without frames (the twin's loop computes no summary; the vectorized one does):")
    print(f"     twin simulation loop   {sim_best:9.4f} s (median {sim_median:.4f})")
    print(
        f"     vectorized summary()   {summary_best:9.4f} s (median {summary_median:.4f})  "
        f"=> {bare_ratio:6.1f}x"
    )
    return frames_ratio, bare_ratio


def sweep_time(episodes: list[Any], corpus: CompiledCorpus, points: int) -> float:
    policy = TimeoutPolicy.ouroboros()
    per_tool = max(2, round((points / 10) ** 0.5))
    values = [2.0 * 1.6**i for i in range(per_tool)]
    grid = make_grid(
        policy,
        tools={"read_file": values, "query_code": values},
        scales=[1.0, 0.5],
        narrowings=list(NARROWINGS.values()),
    )
    started = time.perf_counter()
    frame = sweep(episodes, grid, progress=False)
    total = time.perf_counter() - started
    started = time.perf_counter()
    sweep(corpus, grid, progress=False)
    compiled = time.perf_counter() - started
    print(
        f"   {len(frame)} points (read_file x query_code timeouts x 2 scales x 5 narrowings): "
        f"{total:.2f} s "
        f"including compile, {compiled:.2f} s on the compiled corpus "
        f"({compiled / len(frame) * 1e3:.2f} ms/point; "
        "goal <= 20 s)"
    )
    return total


def replay_versus_twin(rounds: int) -> float:
    """``replay(...).summary`` (vectorized) against the warm twin on the bundled corpus: the
    ratio of their best times over ``rounds`` interleaved rounds (a twin run, then a batch of
    vectorized runs as long as it)."""
    episodes = list(load_episodes(corpus_path()))
    twin = simulate(episodes).summary  # warms the twin's compile cache
    fast = replay(episodes, engine="vectorized").summary  # and the vectorized one's
    assert fast == twin, "the vectorized replay and the twin disagree"
    twin_best = fast_best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        simulate(episodes).summary  # noqa: B018 - the summary is what is timed
        twin_best = min(twin_best, time.perf_counter() - started)
        for _ in range(10):
            started = time.perf_counter()
            replay(episodes, engine="vectorized").summary  # noqa: B018
            fast_best = min(fast_best, time.perf_counter() - started)
    calls = sum(len(e.calls) for e in episodes)
    print(
        f"   {len(episodes):,} episodes, {calls:,} calls (best of {rounds} interleaved rounds): "
        f"twin simulate().summary {twin_best * 1e3:.2f} ms, vectorized replay().summary "
        f"{fast_best * 1e3:.3f} ms => {twin_best / fast_best:.1f}x"
    )
    return twin_best / fast_best


CONDITION = {"label": machine_label(False)}
"""The condition every verdict names (``quiet``, or ``busy`` under ``--busy``)."""


def verdict(name: str, figure: str, goal: str, ok: bool) -> bool:
    """Print one goal's verdict line; returns ``ok``."""
    print(f"{name} ({CONDITION['label']}): {figure} (goal {goal}): {'PASS' if ok else 'MISS'}")
    return ok


def main() -> int:
    """Run the four measurements, print a verdict per goal; 1 when one is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--episodes", type=int, default=100_000, help="corpus for throughput and the twin ratio"
    )
    parser.add_argument("--sweep-episodes", type=int, default=10_000)
    parser.add_argument(
        "--points", type=int, default=1000, help="sweep points (rounded to the grid's product)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--repeat", type=int, default=30, help="runs per vectorized timing (best is reported)"
    )
    parser.add_argument(
        "--twin-repeat",
        type=int,
        default=5,
        help="runs per timing of the twin ratio, the same for both sides (best is reported)",
    )
    parser.add_argument(
        "--replay-rounds", type=int, default=30, help="interleaved rounds of the replay() ratio"
    )
    add_busy_flag(parser)
    args = parser.parse_args()
    CONDITION["label"] = machine_label(args.busy)
    print(f"condition: {CONDITION['label']}")
    with neighbour(args.busy):
        return measure(args)


def measure(args: argparse.Namespace) -> int:
    """The four measurements and their verdicts; 1 when a goal is missed."""
    print(f"== replay() against the warm twin, bundled corpus ({CONDITION['label']})")
    replay_ratio = replay_versus_twin(args.replay_rounds)

    print("\n== large corpus (throughput and twin ratio)")
    episodes, corpus, n_calls = build(args.episodes, args.seed)
    print(
        f"\n1. vectorized summary throughput on the compiled corpus above (best of {args.repeat}):"
    )
    rate = throughput(corpus, n_calls, args.repeat)
    print(
        f"\n2. speed-up over the twin on the same {len(episodes):,}-episode corpus (ouroboros, "
        "inherit; "
        f"best of {args.twin_repeat} runs on each side):"
    )
    frames_ratio, bare_ratio = versus_twin(episodes, corpus, n_calls, args.twin_repeat)
    del episodes, corpus
    # the kept corpus handles hold the compiled corpora (and so every episode); free them
    clear_corpora()
    gc.collect()

    print(f"\n== sweep corpus ({args.sweep_episodes:,} episodes)")
    episodes, corpus, n_calls = build(args.sweep_episodes, args.seed)
    print(
        f"\n1b. vectorized summary throughput on this smaller corpus (best of {args.repeat * 3}):"
    )
    throughput(corpus, n_calls, args.repeat * 3)
    print(
        f"\n3. sweep of ~{args.points} points over {len(episodes):,} episodes (in-process, one "
        "core):"
    )
    sweep_sec = sweep_time(episodes, corpus, args.points)

    print("\n== verdicts")
    results = [
        verdict(
            "vectorized throughput, slowest bounded mode, large corpus",
            f"{rate / 1e6:.1f} M calls/s",
            ">= 20 M calls/s",
            rate >= 20e6,
        ),
        verdict(
            "speed-up over the twin, frames with frames",
            f"{frames_ratio:.1f}x",
            ">= 100x",
            frames_ratio >= 100,
        ),
        verdict(
            "speed-up over the twin, without frames",
            f"{bare_ratio:.1f}x",
            ">= 100x",
            bare_ratio >= 100,
        ),
        verdict("sweep time, compile included", f"{sweep_sec:.1f} s", "<= 20 s", sweep_sec <= 20),
        verdict(
            "replay(engine='vectorized').summary vs the warm twin, bundled corpus",
            f"{replay_ratio:.1f}x",
            ">= 10x",
            replay_ratio >= 10,
        ),
    ]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: tool calls the twin simulates per second, against a naive SimPy model (AnyOf races).

Run: ``.venv/bin/python benchmarks/bench_twin.py [--repeats N] [--corpus PATH] [--busy]``
(``--busy``: the rounds run beside a CPU-bound neighbour process, ``_busy.py``; every figure
says which condition it was measured in).

Both models replay the bundled corpus (``data/episodes/synthetic-1k.jsonl.gz``,
or 1,000 episodes from ``reviewlab.recording.synth`` with seed 0 when it is absent) under
``Policy.ouroboros()`` (``inherit`` narrowing) and wedges. What is timed:

* **simulation only** — :func:`reviewlab.engines.twin._engine.run_simulation`: the SimPy
  run that decides every call and stores its outcome columns (what the naive
  model does too), no pandas;
* **full simulate()** — :func:`reviewlab.engines.twin.simulate`: the same plus the
  pandas frames (calls, episodes) and the summary;
* each twin figure twice: **warm** — the corpus was compiled by an earlier run
  and is reused (the corpus handle keeps it,
  :meth:`reviewlab.engines.Corpus.twin_compiled`: a sweep, a notebook, any second replay
  of the same episode objects) — and **cold** — the kept handles are forgotten
  (:func:`reviewlab.engines.clear_corpora`) before every timed run, so compiling the
  corpus is included;
* **naive** — one SimPy process per episode that, for every call, resolves its
  bound with ``resolve_bound`` and races a call event (a timeout of the
  duration, or an event that never fires for a wedge) against a bound timeout
  with ``AnyOf``; an abandoned call leaves a zombie process running out its
  duration. It collects only outcomes, no frames.

The box is shared (2 cores, other jobs): every figure is the best of
``--repeats`` runs, the models are timed in interleaved rounds on the same
corpus so they see the same load, and the ratios are printed. The script exits
non-zero if the twin and the naive model disagree on any call's outcome.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import simpy
from _busy import add_busy_flag, machine_label, neighbour

from reviewlab.core import Policy, resolve_bound
from reviewlab.engines._corpus import clear_corpora
from reviewlab.engines._shared import arrival_times
from reviewlab.engines.twin import effective_observation, simulate
from reviewlab.engines.twin._engine import run_simulation
from reviewlab.recording import Episode

CORPUS = Path(__file__).resolve().parents[1] / "data" / "episodes" / "synthetic-1k.jsonl.gz"


def load_corpus(path: Path) -> tuple[list[Episode], str]:
    if path.exists():
        from reviewlab.recording import load_episodes

        return list(load_episodes(path)), str(path)
    from reviewlab.recording.synth import synth_corpus

    return synth_corpus(
        1000, seed=0
    ), "reviewlab.recording.synth.synth_corpus(1000, seed=0) (bundled corpus absent)"


def naive(episodes: list[Episode], policy: Policy) -> list[str]:
    """The naive model: every call is an AnyOf race between the call and its bound timeout."""
    env = simpy.Environment()
    outcomes: dict[tuple[int, int], str] = {}

    def zombie(call_done: simpy.Event) -> Any:
        yield call_done

    def episode(position: int, ep: Episode, arrival: float) -> Any:
        yield env.timeout(arrival)
        start = env.now
        index = 0
        for rnd in ep.rounds:
            yield env.timeout(rnd.send_sec)
            for call in rnd.calls:
                duration, completed = effective_observation(call)
                remaining = (
                    None if ep.deadline_sec is None else max(0.0, start + ep.deadline_sec - env.now)
                )
                bound = resolve_bound(policy, None, call.tool, call.args, remaining_sec=remaining)
                call_done = env.timeout(duration) if completed else env.event()
                if bound.sec is None:
                    yield call_done
                    outcomes[(position, index)] = "executed"
                else:
                    timer = env.timeout(bound.sec)
                    fired = yield call_done | timer
                    if call_done in fired:
                        outcomes[(position, index)] = (
                            "error" if call.status == "error" else "executed"
                        )
                    else:
                        outcomes[(position, index)] = "abandoned"
                        env.process(zombie(call_done))
                index += 1

    for position, (ep, arrival) in enumerate(
        zip(episodes, arrival_times(episodes).tolist(), strict=True)
    ):
        env.process(episode(position, ep, arrival))
    env.run()
    return [outcomes[key] for key in sorted(outcomes)]


def twin_outcomes(calls: Any) -> list[str]:
    return [
        "abandoned" if gap == "native_tool_abandoned" else outcome
        for outcome, gap in zip(calls["outcome"], calls["source_gap"], strict=True)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    add_busy_flag(parser)
    args = parser.parse_args()
    label = machine_label(args.busy)
    episodes, source = load_corpus(args.corpus)
    calls = sum(len(e.calls) for e in episodes)
    policy = Policy.ouroboros()
    runs: dict[str, tuple[Callable[[], Any], bool]] = {
        "sim_warm": (lambda: run_simulation(episodes, policy), False),
        "sim_cold": (lambda: run_simulation(episodes, policy), True),
        "full_warm": (lambda: simulate(episodes, policy), False),
        "full_cold": (lambda: simulate(episodes, policy), True),
        "naive": (lambda: naive(episodes, policy), False),
    }
    best = dict.fromkeys(runs, math.inf)
    values: dict[str, Any] = {}
    simulate(episodes, policy)  # warm the cache and imports before the first timed round
    with neighbour(args.busy):
        for _ in range(max(1, args.repeats)):
            for name, (fn, cold) in runs.items():
                if cold:
                    clear_corpora()
                started = time.perf_counter()
                values[name] = fn()
                best[name] = min(best[name], time.perf_counter() - started)
    rate = {name: calls / sec for name, sec in best.items()}
    ours, theirs = twin_outcomes(values["full_warm"].calls), values["naive"]
    agree = sum(a == b for a, b in zip(ours, theirs, strict=True))
    print(
        f"corpus: {source}: {len(episodes)} episodes, {calls} calls; best of {args.repeats} "
        f"interleaved rounds ({label})"
    )
    names = {
        "sim_warm": "twin simulation only, warm",
        "sim_cold": "twin simulation only, cold (+compile)",
        "full_warm": "twin full simulate() incl. frames, warm",
        "full_cold": "twin full simulate() incl. frames, cold",
        "naive": "naive (AnyOf race per call)",
    }
    for name, shown in names.items():
        print(
            f"{shown:42s}: {best[name] * 1e3:8.1f} ms  {rate[name]:10,.0f} calls/s  "
            f"{rate[name] / rate['naive']:5.1f}x naive  {label}"
        )
    print(
        "goal: >= 200,000 calls/s and >= 10x naive; simulation only (warm) "
        f"{rate['sim_warm']:,.0f} calls/s "
        f"= {rate['sim_warm'] / rate['naive']:.1f}x, full simulate() (warm) "
        f"{rate['full_warm']:,.0f} calls/s "
        f"= {rate['full_warm'] / rate['naive']:.1f}x"
    )
    checks = [
        (
            "twin simulation only (warm)",
            f"{rate['sim_warm']:,.0f} calls/s",
            ">= 200,000 calls/s",
            rate["sim_warm"] >= 200_000,
        ),
        (
            "twin simulation only (warm) vs naive",
            f"{rate['sim_warm'] / rate['naive']:.1f}x",
            ">= 10x",
            rate["sim_warm"] / rate["naive"] >= 10,
        ),
        (
            "outcomes agree with the naive race",
            f"{agree} of {calls} calls",
            "all",
            agree == calls == len(theirs),
        ),
    ]
    for name, figure, goal, ok in checks:
        print(f"{name} ({label}): {figure} (goal {goal}): {'PASS' if ok else 'MISS'}")
    return 0 if all(ok for *_, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())

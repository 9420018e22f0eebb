"""Benchmark: twin simulated tool calls per second, against a naive SimPy model that races calls with AnyOf.

Run: ``.venv/bin/python benchmarks/bench_twin.py [--repeats N] [--corpus PATH]``

Both models replay the bundled corpus (``data/episodes/synthetic-1k.jsonl.gz``,
or 1,000 episodes from ``reviewlab.synth`` with seed 0 when it is absent) under
``TimeoutPolicy.ouroboros()`` with ``inherit`` narrowing and wedges:

* **twin core** — :func:`reviewlab.twin.engine.run_simulation`: the SimPy run
  that decides every call and collects its row (what the naive model does too);
* **twin end to end** — :func:`reviewlab.twin.simulate`: the same plus the
  pandas frames and the summary;
* **naive** — one SimPy process per episode that, for every call, resolves its
  bound with ``resolve_bound`` and races a call event (a timeout of the
  duration, or an event that never fires for a wedge) against a bound timeout
  with ``AnyOf``; an abandoned call leaves a zombie process running out its
  duration. It collects only outcomes, no frames.

Each figure is the best of ``--repeats`` runs (the box is shared; the best run
is the least disturbed). The two models' outcomes are checked to agree.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import simpy

from reviewlab.policy import Narrowing, TimeoutPolicy, resolve_bound
from reviewlab.recording.schema import Episode
from reviewlab.twin import effective_observation, simulate
from reviewlab.twin.engine import arrival_times, run_simulation

CORPUS = Path(__file__).resolve().parents[1] / "data" / "episodes" / "synthetic-1k.jsonl.gz"


def load_corpus(path: Path) -> tuple[list[Episode], str]:
    if path.exists():
        from reviewlab.recording.files import load_episodes

        return list(load_episodes(path)), str(path)
    from reviewlab.synth import synth_corpus

    return synth_corpus(1000, seed=0), "reviewlab.synth.synth_corpus(1000, seed=0) (bundled corpus absent)"


def naive(episodes: list[Episode], policy: Any, narrowing: Narrowing) -> list[str]:
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
                remaining = None if ep.deadline_sec is None else max(0.0, start + ep.deadline_sec - env.now)
                bound = resolve_bound(policy, None, call.tool, call.args, narrowing=narrowing,
                                      remaining_sec=remaining)
                call_done = env.timeout(duration) if completed else env.event()
                if bound.sec is None:
                    yield call_done
                    outcomes[(position, index)] = "executed"
                else:
                    timer = env.timeout(bound.sec)
                    fired = yield call_done | timer
                    if call_done in fired:
                        outcomes[(position, index)] = "error" if call.status == "error" else "executed"
                    else:
                        outcomes[(position, index)] = "abandoned"
                        env.process(zombie(call_done))
                index += 1

    for position, (ep, arrival) in enumerate(zip(episodes, arrival_times(episodes).tolist(), strict=True)):
        env.process(episode(position, ep, arrival))
    env.run()
    return [outcomes[key] for key in sorted(outcomes)]


def best_of(repeats: int, fn: Any) -> tuple[float, Any]:
    best, value = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args()
    episodes, source = load_corpus(args.corpus)
    calls = sum(len(e.calls) for e in episodes)
    policy, narrowing = TimeoutPolicy.ouroboros(), Narrowing()
    core_sec, _ = best_of(args.repeats, lambda: run_simulation(episodes, policy, narrowing))
    twin_sec, result = best_of(args.repeats, lambda: simulate(episodes, policy, narrowing))
    naive_sec, outcomes = best_of(max(1, args.repeats // 2), lambda: naive(episodes, policy, narrowing))
    twin_outcomes = ["abandoned" if gap == "native_tool_abandoned" else outcome
                     for outcome, gap in zip(result.calls["outcome"], result.calls["source_gap"], strict=True)]
    agree = sum(a == b for a, b in zip(twin_outcomes, outcomes, strict=True))
    core_rate, twin_rate, naive_rate = calls / core_sec, calls / twin_sec, calls / naive_sec
    print(f"corpus: {source}: {len(episodes)} episodes, {calls} calls")
    print(f"twin core (run_simulation)        : {core_sec * 1e3:8.1f} ms  {core_rate:12,.0f} calls/s  (goal >= 200,000)")
    print(f"twin end to end (frames + summary): {twin_sec * 1e3:8.1f} ms  {twin_rate:12,.0f} calls/s")
    print(f"naive (AnyOf race per call)       : {naive_sec * 1e3:8.1f} ms  {naive_rate:12,.0f} calls/s")
    print(f"ratio twin core / naive: {core_rate / naive_rate:.1f}x  (goal >= 10x); "
          f"end to end / naive: {twin_rate / naive_rate:.1f}x")
    print(f"outcomes agree on {agree} of {calls} calls")


if __name__ == "__main__":
    main()

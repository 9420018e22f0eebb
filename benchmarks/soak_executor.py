"""Soak the bounded executor: thousands of real episodes, many at once, tools that misbehave.

Not run by CI or ``make bench`` (it takes several minutes). It runs ``--episodes`` (2,000)
:class:`~reviewlab.live._episode.ReviewEpisode` s, ``--concurrency`` (50) at a time, all on
ONE shared :class:`~reviewlab.live._executor.BoundedExecutor` with a loose-worker cap, over
the bundled workspace. Each model send takes a little time (an LLM's latency); each round
asks for one to three tool calls drawn from:

* fast reads and listings (return well inside the bound, credited);
* slow reads and searches (some return inside the bound, some are abandoned and then
  return late: their loose worker stamps the shared ``last_read_view`` afterwards);
* a raising tool (``flaky_tool``: status raised, an error receipt);
* wedging calls (``query_code`` and wedged reads, 3%): most hold their worker for 1 to 15
  seconds, a few hold it until the end of the run (``release``).

It samples threads, RSS and loose workers every second and reports, with a verdict per goal:

* receipts lost: tool calls the model asked for without exactly one receipt (goal 0);
* late credits: a read credited after its episode's first abandonment, a credited extent
  that is not the path the call asked for, or any receipt that changed after its episode
  returned (receipts are compared again once every loose worker is back) (goal 0);
* threads and RSS flat once the wedged workers hit the cap: the last third of the run
  may exceed the middle third by at most 10 threads and 20% RSS;
* loose workers back to 0 after ``release`` (within 60 s), and the ledger's count of
  abandoned calls equals the abandoned receipts.

Run: ``.venv/bin/python benchmarks/soak_executor.py [--episodes N] [--concurrency N]``;
exits non-zero when a goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewlab.core import TimeoutPolicy
from reviewlab.live import (
    BoundedExecutor,
    ReviewEpisode,
    ScriptedModel,
    demo_workspace,
    inspection_registry,
    tool_call,
)

BOUND_SEC = 0.25
"""Every tool's timeout (a uniform policy): slow calls straddle it."""

READABLE = ["inventory/pricing.py", "inventory/stock.py", "inventory/__init__.py", "README.md"]
EXTRA_SCHEMAS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"soak tool {name}",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for name in ("query_code", "flaky_tool")
]


class SoakRegistry:
    """The inspection registry plus misbehaviour chosen by the call's own arguments.

    ``delay_sec`` sleeps before the real tool runs; ``hold_sec`` waits on ``release`` at
    most that long (``None``: until ``release``); ``query_code`` only waits; ``flaky_tool``
    raises. A read that runs late still stamps ``last_read_view``, as a real one would.
    """

    def __init__(self, inner: Any, release: threading.Event) -> None:
        self.inner = inner
        self.release = release

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def execute(self, name: str, args: Any) -> str:
        """Run one call, misbehaving as its arguments say."""
        args = dict(args or {})
        delay = args.pop("delay_sec", 0.0)
        hold = args.pop("hold_sec", 0.0)
        if delay:
            time.sleep(delay)
        if hold != 0.0:
            self.release.wait(hold)
        if name == "flaky_tool":
            raise RuntimeError("flaky_tool failed by design")
        if name == "query_code":
            return "no callers found"
        return str(self.inner.execute(name, args))


def soak_factory(release: threading.Event) -> Any:
    """A registry factory for ``ReviewEpisode``: a :class:`SoakRegistry` per episode."""

    def build(root: Any, drive_root: Any = None, task_id: str = "") -> tuple[Any, Any, Any]:
        registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
        return SoakRegistry(registry, release), ctx, [*schemas, *EXTRA_SCHEMAS]

    return build


class SlowModel(ScriptedModel):
    """A scripted model whose every send takes ``send_sec`` (an LLM's latency)."""

    def __init__(self, script: list[dict[str, Any]], send_sec: float) -> None:
        super().__init__(script)
        self.send_sec = send_sec

    def chat(self, **kwargs: Any) -> dict[str, Any]:
        """Wait, then answer with the next reply of the script."""
        time.sleep(self.send_sec)
        return super().chat(**kwargs)


def _call(rng: random.Random, number: int, forever_left: list[int]) -> dict[str, Any]:
    """One tool call of the mix (see the module docstring)."""
    path = rng.choice(READABLE)
    pick = rng.random()
    call_id = f"c{number}"
    if pick < 0.42:
        return tool_call("read_file", {"path": path}, call_id)
    if pick < 0.57:
        return tool_call("list_files", {"path": "inventory"}, call_id)
    if pick < 0.74:
        return tool_call(
            "search_code", {"pattern": "def", "delay_sec": rng.uniform(0, 0.4)}, call_id
        )
    if pick < 0.86:
        return tool_call("read_file", {"path": path, "delay_sec": rng.uniform(0.1, 0.5)}, call_id)
    if pick < 0.97:
        return tool_call("flaky_tool", {}, call_id)
    if forever_left[0] > 0 and rng.random() < 0.05:
        forever_left[0] -= 1
        hold: float | None = None
    else:
        hold = rng.uniform(1.0, 15.0)
    tool = "read_file" if rng.random() < 0.5 else "query_code"
    args = {"path": path, "hold_sec": hold} if tool == "read_file" else {"hold_sec": hold}
    return tool_call(tool, args, call_id)


def episode_script(rng: random.Random, forever_left: list[int]) -> list[dict[str, Any]]:
    """Two to five rounds of one to three calls, then a final answer."""
    script: list[dict[str, Any]] = []
    number = 0
    for _ in range(rng.randint(2, 5)):
        calls = []
        for _ in range(rng.randint(1, 3)):
            number += 1
            calls.append(_call(rng, number, forever_left))
        script.append({"tool_calls": calls})
    script.append({"content": "[]"})
    return script


@dataclass
class Tally:
    """What the episodes produced, checked as they finish and again after release."""

    asked: int = 0
    receipts: int = 0
    lost: int = 0
    late_credits: int = 0
    abandoned: int = 0
    refused: int = 0
    raised: int = 0
    failures: list[str] = field(default_factory=list)
    kept: list[tuple[list[Any], int]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def check_episode(script: list[dict[str, Any]], receipts: list[dict[str, Any]]) -> tuple[int, int]:
    """(receipts lost, late credits) of one finished episode."""
    asked = [call["id"] for answer in script for call in answer.get("tool_calls", [])]
    got = [receipt.get("call_id") for receipt in receipts]
    lost = sum(abs(got.count(call_id) - 1) for call_id in asked) + len(set(got) - set(asked))
    wanted = {
        call["id"]: call["function"]["arguments"]
        for answer in script
        for call in answer.get("tool_calls", [])
    }
    late = 0
    seen_abandonment = False
    for receipt in receipts:
        credited = receipt.get("opened_path") is not None
        if credited and (seen_abandonment or receipt["outcome"] != "executed"):
            late += 1
        if credited and f'"{receipt["opened_path"]}"' not in wanted.get(receipt["call_id"], ""):
            late += 1  # the stamp of another call
        if receipt.get("source_gap") == "native_tool_abandoned":
            seen_abandonment = True
    return lost, late


def run_one(
    index: int,
    executor: BoundedExecutor,
    release: threading.Event,
    tally: Tally,
    send_sec: float,
    forever_left: list[int],
) -> None:
    """Run episode ``index`` and add what it produced to ``tally``."""
    rng = random.Random(index)
    with tally.lock:
        script = episode_script(rng, forever_left)
    model = SlowModel(script, send_sec * rng.uniform(0.5, 1.5))
    try:
        result = ReviewEpisode(
            demo_workspace(),
            model,
            policy=TimeoutPolicy.uniform(BOUND_SEC),
            registry_factory=soak_factory(release),
            executor=executor,
        ).execute()
    except Exception as exc:  # noqa: BLE001 - a soak records every failure and goes on
        with tally.lock:
            tally.failures.append(f"episode {index}: {type(exc).__name__}: {exc}")
        return
    receipts = [dict(receipt) for receipt in result.usage["native_tool_receipts"]]
    lost, late = check_episode(script, receipts)
    with tally.lock:
        tally.asked += sum(len(answer.get("tool_calls", [])) for answer in script)
        tally.receipts += len(receipts)
        tally.lost += lost
        tally.late_credits += late
        tally.abandoned += sum(r.get("source_gap") == "native_tool_abandoned" for r in receipts)
        tally.refused += sum(r["outcome"] == "refused" for r in receipts)
        tally.raised += sum(r["outcome"] == "error" and not r.get("source_gap") for r in receipts)
        # Keep only the live receipt objects and their published form (a few KB an episode),
        # so the benchmark's own bookkeeping does not pass for the executor's memory.
        tally.kept.append((list(result.receipts), _fingerprint(receipts)))


def _fingerprint(receipts: list[dict[str, Any]]) -> int:
    """A hash of an episode's published receipts."""
    return hash(json.dumps(receipts, sort_keys=True, default=str))


def rss_mib() -> float:
    """This process's resident set size in MiB (Linux /proc)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class Sample:
    """One look at the process: seconds since start, threads, RSS, loose workers, done."""

    at: float
    threads: int
    rss: float
    loose: int
    done: int


def main() -> int:
    """Run the soak, print the samples and a verdict per goal; non-zero when one is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--loose-cap", type=int, default=24)
    parser.add_argument("--send-sec", type=float, default=1.2, help="mean model send latency")
    parser.add_argument("--forever", type=int, default=8, help="calls wedged until release")
    options = parser.parse_args()

    release = threading.Event()
    tally = Tally()
    forever_left = [options.forever]
    executor = BoundedExecutor(loose_cap=options.loose_cap, name="soak")
    samples: list[Sample] = []
    stop = threading.Event()
    started = time.monotonic()
    baseline_threads = threading.active_count()

    def monitor() -> None:
        while not stop.wait(1.0):
            samples.append(
                Sample(
                    time.monotonic() - started,
                    threading.active_count(),
                    rss_mib(),
                    executor.loose,
                    len(tally.kept) + len(tally.failures),
                )
            )

    watcher = threading.Thread(target=monitor, name="soak-monitor", daemon=True)
    watcher.start()
    with ThreadPoolExecutor(options.concurrency, thread_name_prefix="slot") as slots:
        for future in [
            slots.submit(run_one, i, executor, release, tally, options.send_sec, forever_left)
            for i in range(options.episodes)
        ]:
            future.result()
    ran_sec = time.monotonic() - started
    loose_at_end = executor.loose
    release.set()
    settled = executor.ledger.wait_settled(60.0)
    stop.set()
    watcher.join()
    executor.shutdown()

    # Nothing an episode handed back may change once its loose workers came back.
    changed = sum(
        _fingerprint([receipt.to_dict() for receipt in live]) != published
        for live, published in tally.kept
    )
    ledger = executor.ledger.snapshot()

    print(
        f"soak: {options.episodes} episodes, {options.concurrency} at a time, one executor "
        f"(loose cap {options.loose_cap}, bound {BOUND_SEC} s), {ran_sec:.0f} s"
    )
    print(
        f"calls asked {tally.asked:,}; receipts {tally.receipts:,}; abandoned {tally.abandoned:,}"
        f"; refused at the cap {tally.refused:,}; raised {tally.raised:,}; "
        f"threads started {executor.threads_started:,}"
    )
    print("  t (s)  threads  RSS (MiB)  loose  episodes done")
    step = max(1, len(samples) // 20)
    for sample in samples[::step]:
        print(
            f"  {sample.at:5.0f}  {sample.threads:7d}  {sample.rss:9.1f}  {sample.loose:5d}  "
            f"{sample.done:13,d}"
        )
    running = [s for s in samples if s.at <= ran_sec]
    third = max(1, len(running) // 3)
    middle, last = running[third : 2 * third] or running, running[2 * third :] or running
    threads_mid, threads_last = max(s.threads for s in middle), max(s.threads for s in last)
    rss_mid, rss_last = max(s.rss for s in middle), max(s.rss for s in last)

    goals = [
        (
            "receipts lost",
            tally.lost + len(tally.failures),
            "0",
            tally.lost + len(tally.failures) == 0,
        ),
        ("late credits", tally.late_credits + changed, "0", tally.late_credits + changed == 0),
        (
            "threads, max of last third vs middle third",
            f"{threads_last} vs {threads_mid}",
            "last <= middle + 10",
            threads_last <= threads_mid + 10,
        ),
        (
            "RSS MiB, max of last third vs middle third",
            f"{rss_last:.0f} vs {rss_mid:.0f}",
            "last <= 1.2 x middle",
            rss_last <= 1.2 * rss_mid,
        ),
        (
            "loose workers after release",
            f"{loose_at_end} -> {executor.loose}",
            "0 within 60 s",
            settled and executor.loose == 0,
        ),
        (
            "ledger abandoned vs abandoned receipts",
            f"{ledger['abandoned']} vs {tally.abandoned}",
            "equal",
            ledger["abandoned"] == tally.abandoned,
        ),
    ]
    for failure in tally.failures[:5]:
        print(f"  failed: {failure}")
    missed = 0
    for name, value, goal, ok in goals:
        missed += not ok
        print(f"{name}: {value} (goal {goal}) {'OK' if ok else 'MISSED'}")
    threads_after = threading.active_count()
    print(
        f"threads: {baseline_threads} before, {threads_after} after shutdown; "
        f"median RSS {statistics.median(s.rss for s in samples):.0f} MiB"
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())

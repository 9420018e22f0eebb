"""Stress: many concurrent episodes on one shared executor, with fast,
slow, raising and wedged tools.

Real threads throughout. Wedged tools block on one event that the test sets
only after every episode has finished, so which calls are abandoned is decided
by events, never by timing; the fast and slow tools return hundreds of times
inside their bound.
"""

from __future__ import annotations

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from reviewlab.core._policy import TimeoutPolicy
from reviewlab.live._episode import EpisodeResult, ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live._executor import BoundedExecutor

WAIT = 30.0
LATE = "LATE-VALUE"
TOOLS = ("read_file", "fast", "slow", "boom", "wedge")
# Generous bounds for tools that return; a short one for the tool that never does until released.
POLICY = TimeoutPolicy.uniform(10.0).with_tools(wedge=0.1)


class Ctx:
    def __init__(self) -> None:
        self.last_read_view: dict[str, Any] | None = None


class StressRegistry:
    """A fake registry: ``wedge`` blocks until ``release``, then stamps the reader view late."""

    def __init__(self, episode: int, ctx: Ctx, release: threading.Event) -> None:
        self.episode = episode
        self.ctx = ctx
        self.release = release

    def execute(self, name: str, args: dict[str, Any]) -> str:
        if name == "read_file":
            self.ctx.last_read_view = {
                "opened_path": args["path"],
                "opened_root": "active_workspace",
                "first_line": 1,
                "end_line": 10,
                "total_lines": 10,
            }
            return f"body of {args['path']}"
        if name == "fast":
            return f"fast {self.episode}"
        if name == "slow":
            time.sleep(0.005)  # slow, but 2000x inside its 10 s bound
            return f"slow {self.episode}"
        if name == "boom":
            raise RuntimeError(f"boom in episode {self.episode}")
        if name == "wedge":
            self.release.wait(WAIT * 2)
            self.ctx.last_read_view = {
                "opened_path": "late.txt",
                "first_line": 1,
                "end_line": 99,
                "total_lines": 99,
            }
            return LATE
        raise AssertionError(name)


def factory_for(episode: int, release: threading.Event):
    def factory(root, drive_root=None, task_id=""):
        ctx = Ctx()
        schemas = [
            {"type": "function", "function": {"name": name, "parameters": {}}} for name in TOOLS
        ]
        return StressRegistry(episode, ctx, release), ctx, schemas

    return factory


def script_for(episode: int, rng: random.Random) -> list[dict[str, Any]]:
    rounds: list[dict[str, Any]] = []
    for rnd in range(rng.randint(1, 4)):
        calls = []
        for index in range(rng.randint(1, 3)):
            name = rng.choice(TOOLS)
            args = {"path": f"f{episode}-{rnd}-{index}.py"} if name == "read_file" else {}
            calls.append(tool_call(name, args, f"e{episode}-r{rnd}-c{index}"))
        rounds.append({"tool_calls": calls})
    rounds.append({"content": f"answer {episode}"})
    return rounds


def run_all(
    count: int, executor: BoundedExecutor, release: threading.Event, seed: int
) -> list[tuple[ScriptedModel, list[dict[str, Any]], EpisodeResult]]:
    rng = random.Random(seed)
    scripts = [script_for(number, rng) for number in range(count)]
    models = [ScriptedModel(script) for script in scripts]

    def one(number: int) -> EpisodeResult:
        return ReviewEpisode(
            "/nonexistent",
            models[number],
            policy=POLICY,
            executor=executor,
            registry_factory=factory_for(number, release),
        ).execute()

    with ThreadPoolExecutor(max_workers=count) as pool:
        results = list(pool.map(one, range(count)))
    return list(zip(models, scripts, results, strict=True))


def test_fifty_concurrent_episodes_each_call_exactly_one_receipt_and_no_late_value():
    """Every call gets one receipt and one tool message, outcomes follow the
    tool, nothing late is credited."""
    release = threading.Event()
    with BoundedExecutor(loose_cap=None) as executor:
        runs = run_all(50, executor, release, seed=7)
        before = [[r.to_dict() for r in result.receipts] for _m, _s, result in runs]
        wedged = 0
        for model, script, result in runs:
            asked = [call for answer in script for call in answer.get("tool_calls", [])]
            ids = [call["id"] for call in asked]
            assert [
                r.call_id for r in result.receipts
            ] == ids  # exactly one receipt per call, in order
            final_messages = model.calls[-1]["messages"]
            assert [m["tool_call_id"] for m in final_messages if m["role"] == "tool"] == ids
            assert LATE not in str(model.calls)
            assert result.usage["native_end_reason"] == "final_answer"
            abandoned_yet = False
            for call, receipt in zip(asked, result.receipts, strict=True):
                name = call["function"]["name"]
                if name == "wedge":
                    wedged += 1
                    assert receipt.outcome == "error" and receipt.abandoned
                    abandoned_yet = True
                elif name == "boom":
                    assert receipt.outcome == "error" and receipt.source_gap is None
                else:
                    assert receipt.outcome == "executed", (name, receipt)
                if name == "read_file" and not abandoned_yet:
                    assert receipt.extent is not None and receipt.extent[
                        "opened_path"
                    ] == call_path(call)
                elif name == "read_file":
                    assert receipt.extent is None
            expected_gap = "native_tool_abandoned" if abandoned_yet else ""
            assert result.usage["native_source_gap"] == expected_gap
        assert wedged > 0 and executor.loose == wedged and executor.ledger.peak >= 1

        release.set()
        assert executor.ledger.wait_settled(WAIT), executor.ledger.snapshot()
        snapshot = executor.ledger.snapshot()
        assert snapshot["loose"] == 0 and snapshot["settled"] == wedged == snapshot["abandoned"]
        assert snapshot["zombie_sec"] > 0.0
        # The late values and stamps changed no published receipt.
        assert [[r.to_dict() for r in result.receipts] for _m, _s, result in runs] == before
        assert all(LATE not in str(model.calls) for model, _s, _r in runs)


def call_path(call: dict[str, Any]) -> str:
    return str(json.loads(call["function"]["arguments"])["path"])


def wedge_script(number: int) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [tool_call("wedge", {}, f"w{number}"), tool_call("fast", {}, f"f{number}")]},
        {"content": "done"},
    ]


def run_wedges(
    count: int, executor: BoundedExecutor, release: threading.Event
) -> list[EpisodeResult]:
    def one(number: int) -> EpisodeResult:
        return ReviewEpisode(
            "/nonexistent",
            ScriptedModel(wedge_script(number)),
            policy=POLICY,
            executor=executor,
            registry_factory=factory_for(number, release),
        ).execute()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


def test_the_loose_cap_refuses_calls_when_reached_and_recovers_once_workers_return():
    """Past the cap calls are refused without new threads; after the
    release the executor serves again."""
    release = threading.Event()
    cap = 5
    with BoundedExecutor(loose_cap=cap) as executor:
        first = run_wedges(20, executor, release)
        outcomes = [str(r.outcome) for result in first for r in result.receipts]
        assert outcomes.count("error") == executor.loose >= cap
        assert outcomes.count("refused") >= 1  # 40 calls, at most 20 in flight: the cap was hit

        # With the cap reached, a second wave is refused entirely and starts no thread.
        threads = executor.threads_started
        second = run_wedges(10, executor, release)
        assert all(r.outcome == "refused" for result in second for r in result.receipts)
        assert executor.threads_started == threads
        assert all(
            r.error == "loose_cap" and r.bound_sec is None
            for result in second
            for r in result.receipts
        )

        release.set()
        assert executor.ledger.wait_settled(WAIT)
        assert executor.loose == 0

        # Released workers retired; the executor serves again (these wedges return at once now).
        third = run_wedges(5, executor, release)
        assert all(r.outcome == "executed" for result in third for r in result.receipts)

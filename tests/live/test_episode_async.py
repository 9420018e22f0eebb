"""The seed's scenarios on the async path: async registry, async model, the asyncio executor.

Each scenario of ``test_seed_scenarios.py`` is run again with the registry's ``execute`` and the
model's ``chat`` made ``async``; the episode must behave exactly as on the thread path, and the
two paths must publish the same receipts (timings aside).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from test_seed_scenarios import (
    BODY,
    SHORT_BOUND,
    VERDICT,
    SpyPolicy,
    repo,  # noqa: F401 - the workspace fixture
    slow_factory,
    tool_call,
    tool_messages,
)

from reviewlab.core._deadline import execution_deadline_scope, monotonic_now
from reviewlab.core._policy import Policy, PolicyError, TimeoutPolicy
from reviewlab.live._aio import AsyncBoundedExecutor
from reviewlab.live._episode import ReviewEpisode, ScriptedModel

# Timing fields differ between any two runs; everything else must match.
_TIMING = ("started_at", "duration_sec")


class AsyncRegistry:
    """An async facade over a sync registry: the blocking call runs on a thread it awaits."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def execute(self, name: str, args: Any) -> str:
        return await asyncio.to_thread(self._inner.execute, name, args)


def async_factory(*, hold_sec: float):
    """``slow_factory`` with an async registry; the holder keeps the inner (sync) registry too."""
    factory, release, holder = slow_factory(hold_sec=hold_sec)

    def wrapped(root, drive_root=None, task_id=""):
        registry, ctx, schemas = factory(root, drive_root, task_id)
        holder["async"] = AsyncRegistry(registry)
        return holder["async"], ctx, schemas

    return wrapped, release, holder


class AsyncScriptedModel(ScriptedModel):
    """``ScriptedModel`` with an ``async def chat``; optionally frees
    a held tool on its second send."""

    def __init__(self, script, release: threading.Event | None = None) -> None:
        super().__init__(script)
        self._release = release

    async def chat(self, **kwargs):
        if self.calls and self._release is not None:
            self._release.set()
        return ScriptedModel.chat(self, **kwargs)


def reading(async_model: bool = True) -> ScriptedModel:
    script = [
        {"tool_calls": [tool_call("read_file", {"path": "greeting.txt"})]},
        {"content": VERDICT},
    ]
    return AsyncScriptedModel(script) if async_model else ScriptedModel(script)


def normalised(receipts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for receipt in receipts:
        kept = {k: v for k, v in receipt.items() if k not in _TIMING}
        if kept.get("bound_by") == "deadline":
            kept.pop("bound_sec")  # the deadline's remainder depends on when the call started
        out.append(kept)
    return out


def test_async_wedged_tool_is_abandoned_and_the_episode_continues(repo):  # noqa: F811
    """Seed 1 on the async path: the held call is abandoned, the model gets the host text."""
    factory, release, holder = async_factory(hold_sec=30.0)
    model = reading()
    result = ReviewEpisode(
        repo, model, policy=TimeoutPolicy.uniform(SHORT_BOUND), registry_factory=factory
    ).execute()

    assert result.raw_text == VERDICT and result.usage["native_rounds"] == 2
    receipt = result.usage["native_tool_receipts"][0]
    assert (receipt["outcome"], receipt["source_gap"]) == ("error", "native_tool_abandoned")
    assert "start_line" not in receipt and "opened_path" not in receipt
    assert result.usage["native_source_gap"] == "native_tool_abandoned"
    assert tool_messages(model)[0]["content"].startswith("⚠️ TOOL_TIMEOUT (read_file)")
    release.set()
    assert holder["registry"].returned.wait(10), "the abandoned worker never settled"
    assert result.receipts[0].extent is None
    assert BODY not in str(model.calls[1]["messages"])


def test_async_fast_tool_is_credited(repo):  # noqa: F811
    """Seed 2 on the async path: a returning read is executed and credited its extent."""
    factory, release, _holder = async_factory(hold_sec=30.0)
    release.set()
    model = reading()
    result = ReviewEpisode(
        repo, model, policy=TimeoutPolicy.uniform(30.0), registry_factory=factory
    ).execute()
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "executed" and "source_gap" not in receipt
    assert (receipt["start_line"], receipt["end_line"], receipt["total_lines"]) == (1, 1, 1)
    assert BODY in tool_messages(model)[0]["content"]


def test_async_bound_is_resolved_once_for_this_registry(repo):  # noqa: F811
    """Seed 3 on the async path: the policy sees THIS registry and THESE arguments, once."""
    factory, release, holder = async_factory(hold_sec=30.0)
    release.set()
    spy = SpyPolicy()
    result = ReviewEpisode(repo, reading(), policy=spy, registry_factory=factory).execute()
    assert [(name, args) for _t, name, args in spy.seen] == [
        ("read_file", {"path": "greeting.txt"})
    ]
    assert spy.seen[0][0] is holder["async"]
    assert result.receipts[0].bound_sec == 600.0 and result.receipts[0].bound_by == "tool_timeout"


def test_async_inherited_deadline_narrows_the_wait(repo):  # noqa: F811
    """Seed 4 on the async path: the caller's deadline scope crosses into the episode's loop."""
    factory, release, _holder = async_factory(hold_sec=30.0)
    model = reading()
    started = monotonic_now()
    with execution_deadline_scope(monotonic_now() + 1.0):
        result = ReviewEpisode(repo, model, registry_factory=factory).execute()
    assert monotonic_now() - started < 30.0
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["source_gap"] == "native_tool_abandoned" and receipt["bound_by"] == "deadline"
    bound = float(tool_messages(model)[0]["content"].split("exceeded ")[1].split("s limit")[0])
    assert 0 < bound <= 1.0
    assert result.usage["native_end_reason"] == "final_answer"
    release.set()


def test_async_abandonment_stops_crediting(repo):  # noqa: F811
    """Seed 5 on the async path: after an abandonment no read extent is credited."""
    factory, release, holder = async_factory(hold_sec=30.0)
    model = AsyncScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "greeting.txt"}, "c1")]},
            {"tool_calls": [tool_call("read_file", {"path": "greeting.txt"}, "c2")]},
            {"content": VERDICT},
        ],
        release,
    )
    result = ReviewEpisode(
        repo, model, policy=TimeoutPolicy.uniform(SHORT_BOUND), registry_factory=factory
    ).execute()
    receipts = result.usage["native_tool_receipts"]
    assert receipts[0]["outcome"] == "error" and receipts[1]["outcome"] == "executed"
    assert all("start_line" not in receipt for receipt in receipts)
    assert holder["registry"].returned.wait(10)


@pytest.mark.parametrize("hold", ["wedged", "prompt"])
def test_thread_and_async_paths_publish_the_same_receipts(repo, hold):  # noqa: F811
    """The same scenario on both paths gives the same receipts, timings aside."""
    runs = {}
    for path in ("thread", "async"):
        maker = slow_factory if path == "thread" else async_factory
        factory, release, holder = maker(hold_sec=30.0)
        if hold == "prompt":
            release.set()
        result = ReviewEpisode(
            repo,
            reading(async_model=path == "async"),
            policy=TimeoutPolicy.uniform(SHORT_BOUND),
            registry_factory=factory,
        ).execute()
        release.set()
        assert holder["registry"].returned.wait(10)
        runs[path] = result
    thread, aio = runs["thread"], runs["async"]
    assert normalised(aio.usage["native_tool_receipts"]) == normalised(
        thread.usage["native_tool_receipts"]
    )
    assert aio.usage["native_source_gap"] == thread.usage["native_source_gap"]
    assert aio.raw_text == thread.raw_text == VERDICT


def test_a_sync_registry_runs_on_the_async_executor_when_given_one(repo):  # noqa: F811
    """An ``AsyncBoundedExecutor`` puts even a sync registry and model on the async path."""
    factory, release, holder = slow_factory(hold_sec=30.0)
    executor = AsyncBoundedExecutor()
    result = ReviewEpisode(
        repo,
        reading(async_model=False),
        policy=TimeoutPolicy.uniform(SHORT_BOUND),
        registry_factory=factory,
        executor=executor,
    ).execute()
    assert result.usage["native_tool_receipts"][0]["source_gap"] == "native_tool_abandoned"
    assert executor.ledger.snapshot()["abandoned"] == 1
    release.set()
    assert holder["registry"].returned.wait(10)


def test_aexecute_runs_on_the_callers_loop(repo):  # noqa: F811
    """``await episode.aexecute()`` runs the episode on the running loop."""
    factory, release, _holder = async_factory(hold_sec=30.0)
    release.set()

    async def main():
        episode = ReviewEpisode(repo, reading(), registry_factory=factory)
        return await episode.aexecute()

    result = asyncio.run(main())
    assert result.usage["native_tool_receipts"][0]["outcome"] == "executed"
    assert result.usage["native_end_reason"] == "final_answer"


def test_refusals_and_errors_publish_the_same_receipts_on_both_paths(repo):  # noqa: F811
    """Bad JSON, an unknown tool, a missing file and a search: identical receipts on both paths."""
    script = [
        {
            "tool_calls": [
                tool_call("read_file", "{not json", "bad"),
                tool_call("write_file", {"path": "x"}, "unknown"),
                tool_call("read_file", {"path": "missing.txt"}, "missing"),
                tool_call("search_code", {"query": "hello"}, "search"),
                tool_call("read_file", {"path": "greeting.txt"}, "read"),
            ]
        },
        {"content": VERDICT},
    ]
    runs = {}
    for path in ("thread", "async"):
        model = AsyncScriptedModel(script) if path == "async" else ScriptedModel(script)
        factory = async_factory if path == "async" else slow_factory
        registry_factory, release, _holder = factory(hold_sec=30.0)
        release.set()
        runs[path] = ReviewEpisode(repo, model, registry_factory=registry_factory).execute()
    thread, aio = runs["thread"], runs["async"]
    receipts = thread.usage["native_tool_receipts"]
    assert [r["outcome"] for r in receipts][:2] == ["refused", "refused"]
    assert receipts[4]["opened_path"] == "greeting.txt"
    assert normalised(aio.usage["native_tool_receipts"]) == normalised(receipts)


def test_the_async_path_refuses_a_hedging_policy_by_name(repo):  # noqa: F811
    """The asyncio executor does not hedge: an async model with a policy that hedges raises a
    PolicyError naming ``hedges`` before the model is sent anything."""
    factory, release, _holder = async_factory(hold_sec=0.0)
    model = reading()
    policy = Policy.uniform(30.0).with_hedge("read_file", after_sec=1.0)
    try:
        with pytest.raises(PolicyError, match="hedges"):
            ReviewEpisode(repo, model, policy=policy, registry_factory=factory).execute()
    finally:
        release.set()
    assert model.calls == []


def test_the_async_path_passes_the_policys_idle_timeout(repo):  # noqa: F811
    """An idle part reaches the asyncio executor through the same terms as on the thread path:
    a read held without progress is abandoned by ``idle`` at its idle timeout."""
    factory, release, _holder = async_factory(hold_sec=30.0)
    policy = Policy.uniform(30.0).with_idle(read_file=0.05)
    try:
        result = ReviewEpisode(repo, reading(), policy=policy, registry_factory=factory).execute()
    finally:
        release.set()
    (receipt,) = result.usage["native_tool_receipts"]
    assert receipt["bound_by"] == "idle" and receipt["bound_sec"] == 0.05

"""reviewlab.bounded_tool: each call of one's own tool bounded, abandoned, recorded and traced."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading

import pytest

import reviewlab
from reviewlab import (
    Policy,
    PolicyError,
    TimeoutPolicy,
    ToolCallLog,
    bounded_tool,
    tool_timeout_text,
)
from reviewlab.core._deadline import execution_deadline_scope, monotonic_now
from reviewlab.live._call_results import CallStatus
from reviewlab.live._executor import BoundedExecutor
from reviewlab.live._otel import tracer_provider_scope
from reviewlab.recording._files import load_episodes
from reviewlab.recording.capture import OFFSETS_KEY, Recorder

WAIT = 30.0  # generous: only ever reached if something is broken


class Sink:
    """A minimal CallSink keeping every call it is handed."""

    def __init__(self) -> None:
        self.calls = []

    def record_call(self, call) -> None:
        """Keep the call."""
        self.calls.append(call)


def read_file(path: str, start_line: int = 1) -> str:
    """Read a file (a stand-in)."""
    return f"{path}:{start_line}"


def test_sync_tool_returns_its_value_and_keeps_its_signature():
    """A call inside its bound returns the tool's value; the wrapper looks like the tool."""
    sink = Sink()
    wrapped = bounded_tool(read_file, policy=TimeoutPolicy.uniform(10), recorder=sink)
    assert wrapped("a.py", start_line=3) == "a.py:3"
    assert inspect.signature(wrapped) == inspect.signature(read_file)
    assert wrapped.__name__ == "read_file" and wrapped.__doc__ == read_file.__doc__
    (call,) = sink.calls
    assert call.status is CallStatus.RETURNED and call.outcome == "executed"
    assert call.args == {"path": "a.py", "start_line": 3}
    assert call.bound.sec == 10.0 and call.bound.by == "tool_timeout"
    assert call.result_chars == len("a.py:3")


def test_wedged_sync_tool_is_abandoned_with_the_standard_text_and_its_return_recorded_later():
    """A tool blocked past its bound gives the timeout text at once; its worker stays loose."""
    release = threading.Event()
    returned = threading.Event()

    def query_code(q: str) -> str:
        """Block until released."""
        release.wait(WAIT)
        returned.set()
        return "late"

    sink = Sink()
    with BoundedExecutor(name="t") as executor:
        wrapped = bounded_tool(
            query_code, policy=TimeoutPolicy.uniform(0.05), recorder=sink, executor=executor
        )
        assert wrapped("x") == tool_timeout_text("query_code", 0.05)
        (call,) = sink.calls
        assert call.status is CallStatus.ABANDONED
        assert call.source_gap == "native_tool_abandoned" and call.zombie_sec is None
        assert not returned.is_set()  # the worker was not killed: it is still running
        release.set()
        assert call.result.settled.wait(WAIT)
        assert returned.is_set() and call.zombie_sec is not None and call.zombie_sec >= 0


def test_tool_exception_is_reraised_and_recorded_as_an_error():
    """The tool's own exception reaches the caller unchanged and the call is an error."""

    def broken() -> str:
        """Fail."""
        raise FileNotFoundError("nope")

    sink = Sink()
    wrapped = bounded_tool(broken, policy=TimeoutPolicy.uniform(5), recorder=sink)
    with pytest.raises(FileNotFoundError, match="nope"):
        wrapped()
    assert sink.calls[0].status is CallStatus.RAISED and sink.calls[0].outcome == "error"


def test_inherited_deadline_narrows_the_bound():
    """Inside a deadline scope shorter than the tool timeout the bound says ``deadline``."""
    sink = Sink()
    wrapped = bounded_tool(read_file, policy=TimeoutPolicy.uniform(60), recorder=sink)
    with execution_deadline_scope(monotonic_now() + 20):
        wrapped("a.py")
    bound = sink.calls[0].bound
    assert bound.by == "deadline" and 0 < bound.sec <= 20


def test_async_tool_is_awaited_bounded_and_not_cancelled_when_abandoned():
    """An async tool past its bound gives the timeout text; its task runs on and settles."""
    sink = Sink()

    gates: list[asyncio.Event] = []

    async def search_code(pattern: str) -> str:
        """Wait for the gate."""
        await gates[0].wait()
        return "found"

    async def quick(pattern: str) -> str:
        """Return at once."""
        return pattern.upper()

    async def scenario() -> None:
        gates.append(asyncio.Event())
        slow = bounded_tool(search_code, policy=TimeoutPolicy.uniform(0.05), recorder=sink)
        fast = bounded_tool(quick, policy=TimeoutPolicy.uniform(5), recorder=sink)
        assert inspect.iscoroutinefunction(slow) and inspect.iscoroutinefunction(fast)
        assert await fast("abc") == "ABC"
        assert await slow("x") == tool_timeout_text("search_code", 0.05)
        abandoned = sink.calls[-1]
        assert abandoned.status is CallStatus.ABANDONED and abandoned.zombie_sec is None
        gates[0].set()
        await asyncio.sleep(0)  # let the loose task finish
        await asyncio.sleep(0)
        assert abandoned.result.settled.is_set() and abandoned.zombie_sec is not None

    asyncio.run(scenario())
    assert [c.tool for c in sink.calls] == ["quick", "search_code"]


def test_recorder_without_record_call_is_refused_with_a_hint(tmp_path):
    """Passing a plain Recorder names the expected interface."""
    with pytest.raises(TypeError, match="record_call"):
        bounded_tool(read_file, recorder=Recorder(tmp_path / "x.jsonl"))


def test_tool_call_log_records_episodes_with_rounds_from_overlap(tmp_path):
    """Two calls in flight together share a round; a later call opens the next one."""
    barrier = threading.Barrier(2, timeout=WAIT)

    def list_files(root: str) -> str:
        """Meet the other call, so both are surely in flight together."""
        barrier.wait()
        return root

    path = tmp_path / "calls.jsonl"
    with ToolCallLog(path, task="review") as log:
        tool = bounded_tool(list_files, policy=TimeoutPolicy.uniform(WAIT), recorder=log)
        reader = bounded_tool(read_file, policy=TimeoutPolicy.uniform(WAIT), recorder=log)
        with log.episode():
            threads = [threading.Thread(target=tool, args=(r,)) for r in ("a", "b")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(WAIT)
            reader("c.py")
        reader("loose.py")  # outside any block: its own episode, recorded on close
    first, second = load_episodes(path)
    assert [[c.tool for c in r.calls] for r in first.rounds] == [
        ["list_files", "list_files"],
        ["read_file"],
        [],
    ]
    assert first.end_reason == "final_answer" and first.task == "review"
    assert len(json.loads(first.meta[OFFSETS_KEY])) == 3
    assert [c.args for c in second.calls] == [{"path": "loose.py"}]
    assert (first.id, second.id) == ("calls-1", "calls-2")


def test_abandoned_call_is_censored_at_its_bound_in_the_log(tmp_path):
    """A log records an abandoned call as censored at its bound, and when it came back."""
    release = threading.Event()

    def wedge() -> str:
        """Block until released."""
        release.wait(WAIT)
        return "late"

    log = ToolCallLog(tmp_path / "w.jsonl")
    wrapped = bounded_tool(wedge, policy=TimeoutPolicy.uniform(0.05), recorder=log)
    with log.episode():
        wrapped()
    release.set()
    assert log.episodes[0].calls[0].completed is False
    assert log.episodes[0].calls[0].duration_sec == 0.05
    log.close()


def test_bounded_tool_emits_execute_tool_spans_and_a_linked_late_return_span():
    """With a tracer provider, each call is an execute_tool span; a late return links to it."""
    from opentelemetry.sdk import trace as sdk
    from opentelemetry.sdk.trace import SpanProcessor
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    late_seen = threading.Event()

    class LateWatcher(SpanProcessor):
        """Sets an event when the late-return span ends (it is emitted by a watcher thread)."""

        def on_end(self, span) -> None:
            """Note the late-return span."""
            if span.name.startswith("reviewlab.loose_worker_returned"):
                late_seen.set()

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    provider.add_span_processor(LateWatcher())
    release = threading.Event()

    def wedge(path: str) -> str:
        """Block until released."""
        release.wait(WAIT)
        return "late"

    with tracer_provider_scope(provider):
        quick = bounded_tool(read_file, policy=TimeoutPolicy.uniform(5))
        slow = bounded_tool(wedge, policy=TimeoutPolicy.uniform(0.05))
        quick("a.py")
        slow("b.py")
        release.set()
        assert late_seen.wait(WAIT)
    spans = {s.name: s for s in exporter.get_finished_spans()}
    ok, abandoned = spans["execute_tool read_file"], spans["execute_tool wedge"]
    assert ok.attributes["gen_ai.operation.name"] == "execute_tool"
    assert ok.attributes["reviewlab.outcome"] == "executed"
    assert ok.attributes["reviewlab.bound_sec"] == 5.0
    assert ok.attributes["reviewlab.bound_by"] == "tool_timeout"
    assert ok.attributes["reviewlab.source_gap"] == ""
    assert abandoned.attributes["reviewlab.source_gap"] == "native_tool_abandoned"
    assert abandoned.attributes["error.type"] == "tool_timeout"
    late = spans["reviewlab.loose_worker_returned wedge"]
    assert late.links[0].context.span_id == abandoned.context.span_id
    assert late.events[0].name == "reviewlab.loose_worker_returned"


def test_public_api_exports_bounded_tool_and_tool_call_log():
    """Both names are re-exported from the package and listed in its __all__."""
    assert reviewlab.bounded_tool is bounded_tool
    assert reviewlab.ToolCallLog is ToolCallLog
    assert {"bounded_tool", "ToolCallLog"} <= set(reviewlab.__all__)


def test_cancelling_the_caller_cancels_an_async_tool_and_records_nothing():
    """A caller cancelled while waiting (not a bound) passes the cancellation to the tool."""
    sink = Sink()
    seen: list[str] = []

    async def slow() -> str:
        """Wait until cancelled."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "never"

    async def scenario() -> None:
        wrapped = bounded_tool(slow, policy=TimeoutPolicy.uniform(WAIT), recorder=sink)
        caller = asyncio.ensure_future(wrapped())
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller
        await asyncio.sleep(0)

    asyncio.run(scenario())
    assert seen == ["cancelled"] and sink.calls == []


def run_command(command: str, timeout_sec: int | None = None) -> str:
    """Run a command (a stand-in)."""
    return f"ran {command}"


async def run_script(script: str, timeout_sec: int | None = None) -> str:
    """Run a script (a stand-in)."""
    return f"ran {script}"


@pytest.mark.parametrize("positional", [True, False])
def test_a_sync_tools_timeout_override_applies_given_positionally_or_by_name(positional):
    """ouroboros caps run_command's ``timeout_sec`` override at 1800 + 30 s: 900 gives a bound of
    930 s whether the argument comes by position or by name."""
    sink = Sink()
    wrapped = bounded_tool(run_command, policy=Policy.ouroboros(), recorder=sink)
    answer = wrapped("ls", 900) if positional else wrapped("ls", timeout_sec=900)
    assert answer == "ran ls"
    (call,) = sink.calls
    assert call.args == {"command": "ls", "timeout_sec": 900}
    assert call.bound.sec == 930.0 and call.bound.by == "tool_timeout"


def test_an_async_tools_timeout_override_applies_given_positionally():
    """The async wrapper binds positional arguments by name too: run_script(..., 900) is
    bounded at 930 s."""
    sink = Sink()
    wrapped = bounded_tool(run_script, policy=Policy.ouroboros(), recorder=sink)
    assert asyncio.run(wrapped("build.sh", 900)) == "ran build.sh"
    (call,) = sink.calls
    assert call.bound.sec == 930.0


def test_a_sync_tool_gets_the_policys_idle_timeout():
    """A wrapped sync tool that shows no progress is abandoned by ``idle`` at its 0.05 s idle
    timeout, with the standard text naming that bound."""
    release = threading.Event()

    def query_code(q: str) -> str:
        """Block until released."""
        release.wait(WAIT)
        return "late"

    sink = Sink()
    policy = Policy.uniform(30.0).with_idle(query_code=0.05)
    wrapped = bounded_tool(query_code, policy=policy, recorder=sink)
    try:
        assert wrapped("x") == tool_timeout_text("query_code", 0.05)
    finally:
        release.set()
    (call,) = sink.calls
    assert call.bound.by == "idle" and call.bound.sec == 0.05


def test_a_sync_tool_with_a_hedging_policy_is_hedged_on_an_executor_of_its_own():
    """With hedges and no executor given, the wrapped tool gets its own executor with a
    ShareBudget: a held first attempt is hedged and the second attempt's answer returned."""
    release = threading.Event()
    attempts = []
    lock = threading.Lock()

    def read_file(path: str) -> str:
        """The first attempt blocks until released; the hedge answers at once."""
        with lock:
            attempts.append(path)
            first = len(attempts) == 1
        if first:
            release.wait(WAIT)
        return f"attempt {len(attempts)}"

    policy = Policy.uniform(30.0).with_hedge("read_file", after_sec=0.05, max_share=1.0)
    sink = Sink()
    try:
        assert bounded_tool(read_file, policy=policy, recorder=sink)("a.py") == "attempt 2"
    finally:
        release.set()
    assert sink.calls[0].result.hedged and sink.calls[0].result.winner == 2


@pytest.mark.parametrize(
    ("tool", "policy", "part"),
    [
        (read_file, Policy.uniform(1.0).with_breaker(2), "breaker"),
        (run_script, Policy.uniform(1.0).with_idle(run_script=0.5), "idle_sec"),
        (run_script, Policy.uniform(1.0).with_hedge("read_file", after_sec=0.5), "hedges"),
    ],
)
def test_a_part_a_wrapped_tool_cannot_honour_is_refused_by_name(tool, policy, part):
    """No rounds for a breaker; no idle timeouts or hedges on the async path: each is refused
    when the tool is wrapped, naming the part."""
    with pytest.raises(PolicyError, match=part):
        bounded_tool(tool, policy=policy)


def test_a_shared_executor_without_hedge_admission_refuses_a_hedging_policy():
    """A hedging policy on a given executor made without hedging: refused by name."""
    policy = Policy.uniform(1.0).with_hedge("read_file", after_sec=0.5)
    with BoundedExecutor() as executor, pytest.raises(PolicyError, match="hedges"):
        bounded_tool(read_file, policy=policy, executor=executor)

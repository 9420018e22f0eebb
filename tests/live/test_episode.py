"""ReviewEpisode: the round loop, receipts, end reasons, host texts,
crediting and the recorded form."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from typing import Any

import pytest

from reviewlab.core._deadline import ScaledClock, clock_scope, execution_deadline_scope
from reviewlab.core._policy import Narrowing, Policy, PolicyError, TimeoutPolicy
from reviewlab.core._receipts import arg_error_text, tool_timeout_text, unavailable_text
from reviewlab.live._episode import DEFAULT_TASK, ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live._executor import BoundedExecutor
from reviewlab.live._inspection import inspection_registry
from reviewlab.recording._files import load_episodes
from reviewlab.recording.capture import Recorder, episode_from_result

WAIT = 10.0  # upper limit for events that must happen; never decides a race
ANSWER = "[]"
RECEIPT_KEYS = {
    "round",
    "tool",
    "outcome",
    "started_at",
    "duration_sec",
    "bound_sec",
    "bound_by",
    "result_chars",
}


@pytest.fixture()
def repo(tmp_path):
    root = tmp_path / "subject"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text(
        "".join(f"line {n}\n" for n in range(1, 41)), encoding="utf-8"
    )
    (root / "README.md").write_text("# subject\n", encoding="utf-8")
    return root


class Held:
    """Wraps the real registry; calls of ``tools`` block until ``release`` is set."""

    def __init__(
        self, inner: Any, tools: tuple[str, ...], release: threading.Event, entered: threading.Event
    ) -> None:
        self._inner = inner
        self._tools = tools
        self.release = release
        self.entered = entered
        self.returned = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def execute(self, name: str, args: Any) -> str:
        if name in self._tools:
            self.entered.set()
            self.release.wait(WAIT * 3)
            text = str(self._inner.execute(name, args))
            self.returned.set()
            return text
        return str(self._inner.execute(name, args))


def held_factory(*tools: str) -> tuple[Any, dict[str, Any]]:
    holder: dict[str, Any] = {"release": threading.Event(), "entered": threading.Event()}

    def factory(root, drive_root=None, task_id=""):
        registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
        holder["registry"] = Held(registry, tools, holder["release"], holder["entered"])
        holder["ctx"] = ctx
        return holder["registry"], ctx, schemas

    return factory, holder


def tool_contents(model: ScriptedModel, send: int) -> list[str]:
    return [m["content"] for m in model.calls[send]["messages"] if m["role"] == "tool"]


def test_a_reply_without_calls_is_the_final_answer(repo):
    """One send, no calls: the text is the answer and the usage says so."""
    model = ScriptedModel([{"content": ANSWER}])
    result = ReviewEpisode(repo, model).execute()

    assert result.raw_text == ANSWER
    assert result.usage["native_rounds"] == 1 and result.usage["native_tool_calls"] == 0
    assert result.usage["native_end_reason"] == "final_answer"
    assert result.usage["native_source_gap"] == "" and result.usage["native_tool_receipts"] == []
    sent = model.calls[0]
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert sent["messages"][1]["content"] == DEFAULT_TASK
    assert {s["function"]["name"] for s in sent["tools"]} == {
        "read_file",
        "list_files",
        "search_code",
    }


def test_calls_run_in_order_and_each_gets_one_receipt_and_one_tool_message(repo):
    """Every call of a reply is executed in order; results go back
    as tool messages with their ids."""
    model = ScriptedModel(
        [
            {
                "content": "looking",
                "tool_calls": [
                    tool_call("list_files", {"path": "pkg"}, "a"),
                    tool_call(
                        "read_file", {"path": "pkg/core.py", "start_line": 3, "end_line": 5}, "b"
                    ),
                    tool_call("search_code", {"pattern": "line 7"}, "c"),
                ],
            },
            {"content": ANSWER},
        ]
    )
    result = ReviewEpisode(repo, model, policy=TimeoutPolicy.uniform(30.0)).execute()

    receipts = result.usage["native_tool_receipts"]
    assert [r["tool"] for r in receipts] == ["list_files", "read_file", "search_code"]
    assert all(r["outcome"] == "executed" and r["round"] == 1 and r["delivered"] for r in receipts)
    assert all(set(r) >= RECEIPT_KEYS for r in receipts)
    assert all(r["bound_sec"] == 30.0 and r["bound_by"] == "tool_timeout" for r in receipts)
    tool_messages = [m for m in model.calls[1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["a", "b", "c"]
    assert [r["result_chars"] for r in receipts] == [len(m["content"]) for m in tool_messages]
    assert "line 4" in tool_messages[1]["content"] and "line 7" in tool_messages[2]["content"]
    # Only the read is credited an extent, from the reader's stamp.
    read = receipts[1]
    assert (read["opened_path"], read["start_line"], read["end_line"], read["total_lines"]) == (
        "pkg/core.py",
        3,
        5,
        40,
    )
    assert read["eof"] is False and read["path"] == "pkg/core.py"
    assert "start_line" not in receipts[0] and "start_line" not in receipts[2]


def test_bad_json_arguments_are_refused_with_the_arg_error_text(repo):
    """Arguments that are not a JSON object: outcome `refused`, the
    TOOL_ARG_ERROR text, no bound."""
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    tool_call("read_file", "{not json", "x"),
                    tool_call("read_file", "[1, 2]", "y"),
                ]
            },
            {"content": ANSWER},
        ]
    )
    result = ReviewEpisode(repo, model).execute()

    receipts = result.usage["native_tool_receipts"]
    assert [r["outcome"] for r in receipts] == ["refused", "refused"]
    assert all(r["bound_sec"] is None for r in receipts)
    contents = tool_contents(model, 1)
    assert contents[0].startswith(arg_error_text("Could not parse arguments for 'read_file': "))
    assert "expected a JSON object, got list" in contents[1]


def test_a_tool_outside_the_schema_list_is_unavailable(repo):
    """A tool the registry's schemas do not offer is refused with the
    unavailable text and never runs."""
    model = ScriptedModel(
        [{"tool_calls": [tool_call("run_command", {"cmd": "rm -rf /"})]}, {"content": ANSWER}]
    )
    result = ReviewEpisode(repo, model).execute()

    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "refused" and receipt["bound_sec"] is None
    assert tool_contents(model, 1) == [unavailable_text("run_command")]


def test_a_tool_error_is_an_error_receipt_without_a_source_gap(repo):
    """The tool's own exception (a path outside the root) becomes `error`
    with the exception text, no gap."""
    model = ScriptedModel(
        [{"tool_calls": [tool_call("read_file", {"path": "../secret"})]}, {"content": ANSWER}]
    )
    result = ReviewEpisode(repo, model).execute()

    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "error" and "source_gap" not in receipt
    assert result.usage["native_source_gap"] == ""
    assert tool_contents(model, 1)[0].startswith("⚠️ ToolError: ")


def test_an_exhausted_script_ends_the_episode_with_model_error(repo):
    """A model exception ends the episode as `model_error`; the failed send counts as a round."""
    model = ScriptedModel([{"tool_calls": [tool_call("list_files", {})]}])
    result = ReviewEpisode(repo, model).execute()

    assert result.usage["native_end_reason"] == "model_error"
    assert result.usage["native_rounds"] == 2 and len(model.calls) == 2
    assert "script exhausted" in result.usage["native_model_error"]
    assert result.raw_text == ""


def test_the_own_deadline_is_checked_before_every_send(repo):
    """Once `deadline_at` has passed the episode ends `deadline_exhausted` without sending."""
    now = [100.0]

    class SlowModel(ScriptedModel):
        def chat(self, **kwargs):
            now[0] += 10.0  # each send takes 10 s on the injected clock
            return super().chat(**kwargs)

    model = SlowModel([{"tool_calls": [tool_call("list_files", {})]}] * 5 + [{"content": ANSWER}])
    with clock_scope(lambda: now[0]):
        result = ReviewEpisode(repo, model, deadline_at=115.0).execute()
        passed = ReviewEpisode(repo, ScriptedModel([]), deadline_at=100.0).execute()

    assert len(model.calls) == 2  # sends at t=100 and t=110; at t=120 the deadline has passed
    assert (
        result.usage["native_end_reason"] == "deadline_exhausted"
        and result.usage["native_rounds"] == 2
    )
    assert (
        passed.usage["native_end_reason"] == "deadline_exhausted"
        and passed.usage["native_rounds"] == 0
    )


def test_a_passed_inherited_deadline_bounds_calls_at_zero_and_the_model_is_asked_again(repo):
    """The inherited deadline bounds tool calls only: each call gets 0
    s and the model still answers."""
    factory, holder = held_factory("read_file")
    model = ScriptedModel(
        [{"tool_calls": [tool_call("read_file", {"path": "README.md"})]}, {"content": ANSWER}]
    )
    now = [50.0]
    with clock_scope(lambda: now[0]), execution_deadline_scope(40.0):
        result = ReviewEpisode(repo, model, registry_factory=factory).execute()

    receipt = result.receipts[0]
    assert receipt.abandoned and receipt.bound_sec == 0.0 and receipt.bound_by == "deadline"
    assert tool_contents(model, 1) == [tool_timeout_text("read_file", 0.0)]
    assert result.usage["native_end_reason"] == "final_answer" and result.raw_text == ANSWER
    assert result.deadline_sec == 0.0
    holder["release"].set()


def test_unbounded_narrowing_waits_for_a_wedged_tool_until_it_is_released(repo):
    """The pre-fix behaviour: no bound, the episode waits as long as the tool runs."""
    factory, holder = held_factory("search_code")
    model = ScriptedModel(
        [{"tool_calls": [tool_call("search_code", {"pattern": "line"})]}, {"content": ANSWER}]
    )
    box: dict[str, Any] = {}
    episode = ReviewEpisode(repo, model, narrowing=Narrowing.unbounded(), registry_factory=factory)
    now = [0.0]

    def run() -> None:
        with clock_scope(lambda: now[0]):
            box["result"] = episode.execute()

    runner = threading.Thread(target=run)
    runner.start()
    assert holder["entered"].wait(WAIT)
    assert len(model.calls) == 1  # asked once; the next send needs the tool's answer
    now[0] += 86_400.0  # a day passes on the episode's clock while the tool is held
    holder["release"].set()
    runner.join(WAIT)

    receipt = box["result"].receipts[0]
    assert (
        receipt.outcome == "executed"
        and receipt.bound_sec is None
        and receipt.bound_by == "unbounded"
    )
    assert receipt.duration_sec >= 86_400.0  # no bound fired, however long the tool took
    assert box["result"].raw_text == ANSWER


def test_the_loose_cap_refuses_calls_once_reached(repo):
    """With one worker already loose and `loose_cap=1`, the next call is refused and never runs."""
    factory, holder = held_factory("read_file")
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "README.md"}, "a")]},
            {"tool_calls": [tool_call("read_file", {"path": "README.md"}, "b")]},
            {"content": ANSWER},
        ]
    )
    result = ReviewEpisode(
        repo, model, policy=TimeoutPolicy.uniform(0.05), registry_factory=factory, loose_cap=1
    ).execute()

    first, second = result.receipts
    assert first.abandoned and second.outcome == "refused" and second.bound_sec is None
    assert tool_contents(model, 2)[1].startswith("⚠️ TOOL_REFUSED (read_file): 1 abandoned")
    holder["release"].set()
    assert holder["registry"].returned.wait(WAIT)


def test_a_shared_executor_carries_its_own_cap(repo):
    """Passing both an executor and a loose cap is an error naming loose_cap."""
    with BoundedExecutor() as ex, pytest.raises(ValueError, match="loose_cap"):
        ReviewEpisode(repo, ScriptedModel([]), executor=ex, loose_cap=3)


def test_the_policy_is_resolved_once_per_dispatched_call(repo):
    """Refused calls resolve nothing; each dispatched call resolves
    exactly once with its own arguments."""
    seen = []

    class Spy:
        def timeout_for(self, tools, tool_name, tool_args=None):
            seen.append((tool_name, dict(tool_args or {})))
            return 30.0

    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    tool_call("read_file", {"path": "README.md"}),
                    tool_call("nope", {}),
                    tool_call("list_files", "{bad"),
                    tool_call("list_files", {"path": "pkg"}),
                ]
            },
            {"content": ANSWER},
        ]
    )
    ReviewEpisode(repo, model, policy=Spy()).execute()
    assert seen == [("read_file", {"path": "README.md"}), ("list_files", {"path": "pkg"})]


def test_episode_from_result_records_the_run_with_censored_abandoned_calls(repo, tmp_path):
    """The recorded form: sends, calls with extents, the abandoned call censored at its bound."""
    factory, holder = held_factory("search_code")
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    tool_call(
                        "read_file", {"path": "pkg/core.py", "start_line": 2, "end_line": 9}, "a"
                    ),
                    tool_call("read_file", {"path": "README.md"}, "b"),
                ]
            },
            {
                "tool_calls": [
                    tool_call("search_code", {"pattern": "x"}, "c"),
                    tool_call("nope", {}, "d"),
                ]
            },
            {"content": ANSWER},
        ]
    )
    with Recorder(tmp_path / "live.jsonl", slot="s1") as recorder:
        result = ReviewEpisode(
            repo,
            model,
            policy=TimeoutPolicy.uniform(30.0).with_tools(search_code=0.2),
            registry_factory=factory,
            recorder=recorder,
        ).execute()
    loose_episode = episode_from_result(result, id="e-loose")
    holder["release"].set()
    assert holder["registry"].returned.wait(WAIT)
    assert result.receipts[2].abandoned
    trace_result = result.trace[1].calls[0].result
    assert (
        trace_result is not None
        and trace_result.settled is not None
        and trace_result.settled.wait(WAIT)
    )
    episode = episode_from_result(result, id="e1", slot="slot-a")

    assert (
        episode.source == "live"
        and episode.slot == "slot-a"
        and episode.end_reason == "final_answer"
    )
    assert episode.started_at.tzinfo is not None and episode.deadline_sec is None
    assert [len(r.calls) for r in episode.rounds] == [2, 2, 0]
    a, b, c, d = episode.calls
    assert (
        a.extent is not None and (a.extent.start_line, a.extent.end_line) == (2, 9) and a.completed
    )
    assert b.extent is not None and (b.extent.start_line, b.extent.end_line) == (
        1,
        1,
    )  # the lines rendered
    assert not c.completed and c.duration_sec == 0.2 and c.extent is None
    assert c.returned_after_sec is not None and c.returned_after_sec > 0.2
    assert loose_episode.calls[2].returned_after_sec is None  # not back yet when recorded
    assert d.status == "error" and d.duration_sec == 0.0 and episode.meta["refused_calls"] == "d"
    # The recorder got the result and wrote it in the recorded format.
    [recorded] = load_episodes(tmp_path / "live.jsonl")
    assert recorded.slot == "s1" and [call.tool for call in recorded.calls] == [
        "read_file",
        "read_file",
        "search_code",
        "nope",
    ]
    assert json.loads(episode.to_json_line())["schema"] == "reviewlab.episode/1"


def test_receipt_started_at_is_a_zoned_iso_stamp(repo):
    """Every receipt's started_at parses as ISO with a time zone, refused ones too."""
    model = ScriptedModel(
        [{"tool_calls": [tool_call("list_files", {}), tool_call("x", {})]}, {"content": ANSWER}]
    )
    result = ReviewEpisode(repo, model).execute()
    assert all(datetime.fromisoformat(r.started_at).tzinfo is not None for r in result.receipts)


def test_a_credited_read_past_the_end_of_the_file_is_recorded_as_the_lines_it_rendered(repo):
    """Asking for lines 30–90 of a 40-line file records 30–40, so a replay
    credits what the live run credited."""
    model = ScriptedModel(
        [
            {
                "tool_calls": [
                    tool_call(
                        "read_file", {"path": "pkg/core.py", "start_line": 30, "end_line": 90}
                    )
                ]
            },
            {"content": ANSWER},
        ]
    )
    result = ReviewEpisode(repo, model).execute()
    receipt = result.usage["native_tool_receipts"][0]
    assert (receipt["start_line"], receipt["end_line"]) == (30, 40)
    [call] = episode_from_result(result, id="clip").calls
    assert call.extent is not None and (call.extent.start_line, call.extent.end_line) == (30, 40)
    assert call.requested_lines == 11


def test_the_sync_round_loop_gives_the_thread_executor_the_policys_idle_timeout(repo):
    """The thread path passes the idle part on as the async path does: a held read is abandoned
    by ``idle`` at exactly its 0.05 s idle timeout, long before its 30 s bound."""
    factory, holder = held_factory("read_file")
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "pkg/core.py"}, "r")]},
            {"content": ANSWER},
        ]
    )
    policy = Policy.uniform(30.0).with_idle(read_file=0.05)
    try:
        result = ReviewEpisode(repo, model, policy=policy, registry_factory=factory).execute()
    finally:
        holder["release"].set()
    (receipt,) = result.usage["native_tool_receipts"]
    assert receipt["bound_by"] == "idle" and receipt["bound_sec"] == 0.05
    assert receipt["source_gap"] == "native_tool_abandoned"
    assert tool_contents(model, 1) == [tool_timeout_text("read_file", 0.05)]
    assert result.usage["native_end_reason"] == "final_answer"


def test_a_bare_rule_and_a_separate_narrowing_are_one_policy(repo):
    """ReviewEpisode(policy=TimeoutPolicy..., narrowing=...) still works: Policy.of makes one
    value whose parts the episode reads (and None is ouroboros)."""
    episode = ReviewEpisode(
        repo, ScriptedModel([]), policy=TimeoutPolicy.uniform(0.3), narrowing=Narrowing("none")
    )
    assert episode.policy == Policy(
        timeouts=TimeoutPolicy.uniform(0.3), narrowing=Narrowing("none")
    )
    assert episode.narrowing == Narrowing("none")
    assert ReviewEpisode(repo, ScriptedModel([])).policy == Policy.ouroboros()


class FirstReadHeld:
    """The real registry, except that the first ``read_file`` blocks until ``release``."""

    def __init__(self, inner: Any, release: threading.Event) -> None:
        self.inner = inner
        self.release = release
        self.reads = 0
        self.lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def execute(self, name: str, args: Any) -> str:
        if name == "read_file":
            with self.lock:
                self.reads += 1
                first = self.reads == 1
            if first:
                self.release.wait(WAIT * 3)
        return str(self.inner.execute(name, args))


def test_an_episode_with_its_own_executor_hedges_by_the_policys_hedges_part(repo):
    """No executor given: the episode's own thread executor gets a ShareBudget of the policy's
    hedges, so a held read is hedged and answered by its second attempt."""
    release = threading.Event()
    made: list[FirstReadHeld] = []

    def factory(root, drive_root=None, task_id=""):
        registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
        made.append(FirstReadHeld(registry, release))
        return made[-1], ctx, schemas

    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "pkg/core.py"}, "r")]},
            {"content": ANSWER},
        ]
    )
    policy = Policy.uniform(30.0).with_hedge("read_file", after_sec=0.05, max_share=1.0)
    try:
        result = ReviewEpisode(repo, model, policy=policy, registry_factory=factory).execute()
    finally:
        release.set()
    (trace,) = result.trace[0].calls
    assert str(trace.receipt.outcome) == "executed" and made[0].reads == 2
    assert trace.result is not None and trace.result.hedged and trace.result.winner == 2


def test_a_shared_executor_without_hedge_admission_refuses_a_hedging_policy_by_name(repo):
    """A shared thread executor made without hedging cannot honour the policy's hedges: the
    episode says so (PolicyError naming ``hedges``) before any send."""
    model = ScriptedModel([{"content": ANSWER}])
    policy = Policy.uniform(30.0).with_hedge("read_file", after_sec=1.0)
    with BoundedExecutor() as shared, pytest.raises(PolicyError, match="hedges"):
        ReviewEpisode(repo, model, policy=policy, executor=shared).execute()
    assert model.calls == []


def test_a_deadline_tie_under_a_scaled_clock_says_which_clock_fired(repo):
    """Tool timeout 5.0 s with 5.0 s left (on a ScaledClock whose second lasts 0.1 s, so the
    episode costs a fraction of a second): the live clock has moved on by dispatch, so the window
    is a hair short of 5 s and, with no tolerance outside the real engine, the deadline's."""
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "pkg/core.py"}, "r")]},
            {"content": ANSWER},
        ]
    )
    with clock_scope(ScaledClock(0.1)) as clock, execution_deadline_scope(clock.now() + 5.0):
        result = ReviewEpisode(repo, model, policy=TimeoutPolicy.uniform(5.0)).execute()
    (receipt,) = result.usage["native_tool_receipts"]
    assert receipt["bound_by"] == "deadline" and receipt["outcome"] == "executed"
    assert 5.0 - 0.25 < receipt["bound_sec"] < 5.0

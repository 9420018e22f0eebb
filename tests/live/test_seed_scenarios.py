"""The seed's five scenarios, written against reviewlab's API.

A reviewer's inspection tool call runs under the loop's own timeout policy: it
is bounded by the per-tool resolution, narrowed by the inherited deadline, and a
call that outlives its bound is abandoned (standard host text, an ``error``
receipt with ``native_tool_abandoned``), while the value its worker finally
produces sources no receipt and no read coverage. Events, not sleeps, decide
every race here.
"""

from __future__ import annotations

import copy
import threading
from datetime import datetime
from typing import Any

import pytest

from reviewlab.core._deadline import execution_deadline_scope, monotonic_now
from reviewlab.core._policy import TimeoutPolicy
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live._executor import BoundedExecutor
from reviewlab.live._inspection import inspection_registry

VERDICT = '[{"file": "greeting.txt", "line": 1, "finding": "fine"}]'
BODY = "hello native reviewer"
"""The text of greeting.txt: what a read renders (and a late read would deliver)."""
# Long enough that a trivial read on a loaded CI box returns inside it,
# short enough to keep tests quick.
SHORT_BOUND = 1.0


@pytest.fixture()
def repo(tmp_path):
    root = tmp_path / "subject"
    root.mkdir()
    (root / "greeting.txt").write_text(BODY + "\n", encoding="utf-8")
    (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return root


class SlowRegistry:
    """The real inspection registry, with ``read_file`` held until released.

    The held read then runs the real reader, which renders the file and stamps the
    shared ``last_read_view`` itself: a late worker stamps exactly as a real one would.
    """

    def __init__(self, inner: Any, release: threading.Event, *, hold_sec: float) -> None:
        self._inner = inner
        self._release = release
        self._hold_sec = hold_sec
        self.returned = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def execute(self, name: str, args: Any) -> str:
        if name != "read_file":
            return str(self._inner.execute(name, args))
        self._release.wait(self._hold_sec)
        try:
            return str(self._inner.execute(name, args))
        finally:
            self.returned.set()


def slow_factory(*, hold_sec: float) -> tuple[Any, threading.Event, dict[str, Any]]:
    """A registry factory whose ``read_file`` hangs until the returned event is set."""
    release = threading.Event()
    holder: dict[str, Any] = {}

    def factory(root, drive_root=None, task_id=""):
        registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
        holder["registry"], holder["ctx"] = SlowRegistry(registry, release, hold_sec=hold_sec), ctx
        return holder["registry"], ctx, schemas

    return factory, release, holder


class ReleasingModel(ScriptedModel):
    """Frees the held tool the moment it is asked a SECOND time, which can only
    happen after the first call was abandoned: an event, not a wall-clock guess."""

    def __init__(self, script, release: threading.Event) -> None:
        super().__init__(script)
        self._release = release

    def chat(self, **kwargs):
        if self.calls:
            self._release.set()
        return super().chat(**kwargs)


def reading_script() -> ScriptedModel:
    return ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "greeting.txt"})]},
            {"content": VERDICT},
        ]
    )


def tool_messages(model: ScriptedModel, call_index: int = 1) -> list[dict[str, Any]]:
    return [m for m in model.calls[call_index]["messages"] if m.get("role") == "tool"]


def test_wedged_reviewer_tool_is_abandoned_and_the_episode_continues(repo):
    """The blocked case: a tool that outlives its bound never wedges the episode."""
    factory, release, holder = slow_factory(hold_sec=30.0)
    model = reading_script()
    executor = BoundedExecutor(name="seed")
    result = ReviewEpisode(
        repo,
        model,
        policy=TimeoutPolicy.uniform(SHORT_BOUND),
        registry_factory=factory,
        executor=executor,
    ).execute()

    assert result.raw_text == VERDICT  # the episode CONTINUED past the wedged call
    usage = result.usage
    assert usage["native_rounds"] == 2
    receipt = usage["native_tool_receipts"][0]
    assert receipt["tool"] == "read_file"
    assert receipt["outcome"] == "error"
    assert receipt["source_gap"] == "native_tool_abandoned"
    assert "start_line" not in receipt and "opened_path" not in receipt
    assert usage["native_source_gap"] == "native_tool_abandoned"
    # The reviewer got the standard host text, not silence and not a verdict.
    assert tool_messages(model)[0]["content"].startswith("⚠️ TOOL_TIMEOUT (read_file)")

    published = copy.deepcopy(result.usage)
    release.set()
    assert holder["registry"].returned.wait(10), "the abandoned worker never ran its read"
    assert executor.ledger.wait_settled(10), "the abandoned worker never settled"
    executor.shutdown()
    # The late read really ran and stamped the shared view...
    assert holder["ctx"].last_read_view["opened_path"] == "greeting.txt"
    # ...yet it sources nothing: read AFTER the worker settled, the episode is unchanged.
    assert result.usage == published
    assert result.usage["native_tool_receipts"][0]["outcome"] == "error"
    assert result.receipts[0].extent is None
    assert BODY not in str(model.calls[1]["messages"])


def test_fast_reviewer_tool_is_untouched_and_its_receipt_carries_duration(repo):
    """The working case: the same kind of bound leaves a returning read fully credited."""
    factory, release, _holder = slow_factory(hold_sec=30.0)
    release.set()  # the read returns at once
    model = reading_script()
    started = monotonic_now()
    result = ReviewEpisode(
        repo, model, policy=TimeoutPolicy.uniform(30.0), registry_factory=factory
    ).execute()
    elapsed = monotonic_now() - started

    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "executed"
    assert "source_gap" not in receipt
    assert result.usage["native_source_gap"] == ""
    # One clock domain: an ISO wall stamp and the seconds elapsed on that clock.
    assert datetime.fromisoformat(receipt["started_at"]).tzinfo is not None
    assert isinstance(receipt["duration_sec"], float)
    assert 0.0 < receipt["duration_sec"] <= elapsed
    # Fully credited: the extent the real reader stamped, which is the whole one-line file.
    assert receipt["opened_path"] == "greeting.txt"
    assert (receipt["start_line"], receipt["end_line"], receipt["total_lines"]) == (1, 1, 1)
    assert BODY in tool_messages(model)[0]["content"]


class SpyPolicy:
    """Records every resolution and answers with the ouroboros policy."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, str, Any]] = []
        self.real = TimeoutPolicy.ouroboros()

    def timeout_for(self, tools, tool_name, tool_args=None):
        self.seen.append((tools, tool_name, tool_args))
        return self.real.timeout_for(tools, tool_name, tool_args)


def test_tool_bound_is_the_loop_policy_for_this_registry_and_call(repo):
    """The number comes from the policy, resolved once for THIS
    registry and THIS call's arguments."""
    factory, release, holder = slow_factory(hold_sec=30.0)
    release.set()
    spy = SpyPolicy()
    result = ReviewEpisode(repo, reading_script(), policy=spy, registry_factory=factory).execute()

    assert [(name, args) for _tools, name, args in spy.seen] == [
        ("read_file", {"path": "greeting.txt"})
    ]
    assert spy.seen[0][0] is holder["registry"]
    assert result.receipts[0].bound_sec == 600.0 and result.receipts[0].bound_by == "tool_timeout"


def test_inherited_dispatch_deadline_narrows_the_tool_wait(repo):
    """An inherited execution bound narrows the wait below the tool's own ceiling;
    without it the same call on the same tool finishes untouched."""
    factory, release, _holder = slow_factory(hold_sec=30.0)
    model = reading_script()
    started = monotonic_now()
    with execution_deadline_scope(monotonic_now() + 1.0):
        result = ReviewEpisode(repo, model, registry_factory=factory).execute()
    elapsed = monotonic_now() - started

    assert elapsed < 30.0  # the 600 s tool ceiling did not decide this wait
    receipt = result.usage["native_tool_receipts"][0]
    assert receipt["outcome"] == "error" and receipt["source_gap"] == "native_tool_abandoned"
    assert receipt["bound_by"] == "deadline"
    # The model was asked again after the abandonment and read the bound from the host text.
    bound = float(tool_messages(model)[0]["content"].split("exceeded ")[1].split("s limit")[0])
    assert 0 < bound <= 1.0
    assert result.usage["native_end_reason"] == "final_answer"
    release.set()

    factory_again, release_again, _holder_again = slow_factory(hold_sec=30.0)
    release_again.set()
    again = ReviewEpisode(repo, reading_script(), registry_factory=factory_again).execute()
    assert again.usage["native_tool_receipts"][0]["outcome"] == "executed"
    assert again.receipts[0].bound_sec == 600.0


def test_abandoned_call_stops_the_episode_crediting_read_extents(repo):
    """After an abandonment no further read extent is credited, so a late stamp
    can never become this episode's coverage."""
    factory, release, holder = slow_factory(hold_sec=30.0)
    model = ReleasingModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "greeting.txt"}, "c1")]},
            {"tool_calls": [tool_call("read_file", {"path": "notes.txt"}, "c2")]},
            {"content": VERDICT},
        ],
        release,
    )
    result = ReviewEpisode(
        repo, model, policy=TimeoutPolicy.uniform(SHORT_BOUND), registry_factory=factory
    ).execute()

    receipts = result.usage["native_tool_receipts"]
    assert receipts[0]["outcome"] == "error"
    assert receipts[1]["outcome"] == "executed"  # the second call DID return
    assert all("start_line" not in receipt for receipt in receipts)
    assert result.usage["native_source_gap"] == "native_tool_abandoned"
    assert holder["registry"].returned.wait(10)
    # Both reads ran through the real reader; neither extent became coverage.
    assert "three" in tool_messages(model, 2)[-1]["content"]

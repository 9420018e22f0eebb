"""The breaker in a live ReviewEpisode: withheld calls, their receipts and host text, slot
scope."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from conftest import REPO

from reviewlab.core._breaker import BreakerRule, BreakerState
from reviewlab.core._policy import Policy, TimeoutPolicy
from reviewlab.core._receipts import withheld_text
from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
from reviewlab.live._inspection import inspection_registry

BOUND = 0.05


@pytest.fixture()
def repo(tmp_path):
    root = tmp_path / "subject"
    root.mkdir()
    (root / "a.py").write_text("".join(f"line {n}\n" for n in range(1, 11)), encoding="utf-8")
    return root


class Wedging:
    """The real inspection registry, except that ``search_code`` blocks until released."""

    def __init__(self, inner: Any, release: threading.Event) -> None:
        self._inner = inner
        self.release = release
        self.started = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def execute(self, name: str, args: dict[str, Any]) -> str:
        if name == "search_code":
            self.started += 1
            self.release.wait(10.0)
            return "late"
        return str(self._inner.execute(name, args))


@pytest.fixture()
def wedging():
    release = threading.Event()
    made: list[Wedging] = []

    def factory(root, drive_root=None, task_id=""):
        registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
        made.append(Wedging(registry, release))
        return made[-1], ctx, schemas

    yield factory, made
    release.set()


def _script(rounds: list[list[str]]) -> ScriptedModel:
    replies = []
    for tools in rounds:
        calls = [
            tool_call(tool, {"query": "x"} if tool == "search_code" else {"path": "a.py"}, f"c{n}")
            for n, tool in enumerate(tools)
        ]
        replies.append({"content": "", "tool_calls": calls} if calls else {"content": "[]"})
    return ScriptedModel(replies)


def test_three_wedges_in_a_row_withhold_the_tool_for_two_rounds(repo, wedging):
    """3x/2 rounds: rounds 1-3 each abandon search_code; it is withheld in rounds 3 (rest), 4 and
    5, never started, with the standard text; round 6 runs it again; read_file is untouched."""
    factory, made = wedging
    model = _script(
        [
            ["search_code"],
            ["search_code"],
            ["search_code", "search_code", "read_file"],
            ["search_code"],
            ["search_code"],
            ["search_code"],
            [],
        ]
    )
    policy = Policy.uniform(BOUND).with_breaker(3, cooldown_rounds=2)
    result = ReviewEpisode(repo, model, policy=policy, registry_factory=factory).execute()
    fates = [(r.round, r.tool, str(r.outcome), r.source_gap) for r in result.receipts]
    gone, held = "native_tool_abandoned", "native_tool_withheld"
    assert fates == [
        (1, "search_code", "error", gone),
        (2, "search_code", "error", gone),
        (3, "search_code", "error", gone),
        (3, "search_code", "withheld", held),
        (3, "read_file", "executed", None),
        (4, "search_code", "withheld", held),
        (5, "search_code", "withheld", held),
        (6, "search_code", "error", gone),
    ]
    assert made[0].started == 4  # a withheld call is never started
    withheld = [r for r in result.receipts if str(r.outcome) == "withheld"]
    assert all(r.bound_sec is None and r.duration_sec == 0.0 for r in withheld)
    text = withheld_text("search_code", 3, "2 model round(s)")
    sent = model.calls[4]["messages"]  # the send after round 4
    assert sent[-1] == {"role": "tool", "tool_call_id": "c0", "content": text}
    assert result.usage["native_withheld_calls"] == 3


def test_no_breaker_without_one_in_the_policy_and_none_turns_it_off(repo, wedging):
    """The policy's breaker is the default; breaker=None runs every call."""
    factory, made = wedging
    rounds = [["search_code"]] * 3 + [["search_code"], []]
    plain = ReviewEpisode(
        repo, _script(rounds), policy=TimeoutPolicy.uniform(BOUND), registry_factory=factory
    ).execute()
    assert all(str(r.outcome) == "error" for r in plain.receipts)
    off = ReviewEpisode(
        repo,
        _script(rounds),
        policy=Policy.uniform(BOUND).with_breaker(3),
        registry_factory=factory,
        breaker=None,
    ).execute()
    assert all(str(r.outcome) == "error" for r in off.receipts)
    with pytest.raises(TypeError, match="breaker"):
        ReviewEpisode(repo, _script([]), breaker=3)  # type: ignore[arg-type]


def test_a_shared_state_carries_a_slots_breaker_into_its_next_episode(repo, wedging):
    """Slot scope: two wedges at the end of one episode and one at the start of the next trip
    a 3x breaker; its cool-down then withholds the next episode's later call."""
    factory, _ = wedging
    policy = TimeoutPolicy.uniform(BOUND)
    state = BreakerState(BreakerRule(3, cooldown_rounds=1, scope="slot"))
    first = ReviewEpisode(
        repo,
        _script([["read_file"], ["search_code", "search_code"], []]),
        policy=policy,
        registry_factory=factory,
        breaker=state,
    ).execute()
    assert [str(r.outcome) for r in first.receipts] == ["executed", "error", "error"]
    second = ReviewEpisode(
        repo,
        _script([["search_code", "search_code"], ["search_code"], ["search_code"], []]),
        policy=policy,
        registry_factory=factory,
        breaker=state,
    ).execute()
    assert [str(r.outcome) for r in second.receipts] == ["error", "withheld", "withheld", "error"]
    # A fresh episode with the same rule but its own state starts closed.
    alone = ReviewEpisode(
        repo,
        _script([["search_code", "search_code"], []]),
        policy=policy,
        registry_factory=factory,
        breaker=BreakerRule(3, cooldown_rounds=1, scope="slot"),
    ).execute()
    assert [str(r.outcome) for r in alone.receipts] == ["error", "error"]


def test_the_semantics_quote_the_withheld_host_text():
    """docs/semantics.md shows exactly the text ``withheld_text`` builds."""

    text = (REPO / "docs" / "semantics.md").read_text(encoding="utf-8")
    assert withheld_text("search_code", 3, "2 model round(s)") in text


def test_the_async_loop_withholds_as_the_thread_loop_does(repo, wedging):
    """With the asyncio executor the same calls are withheld, with the same receipts."""
    from reviewlab.live._aio import AsyncBoundedExecutor

    factory, _ = wedging
    rounds = [["search_code"], ["search_code", "search_code"], ["search_code", "read_file"], []]
    policy = Policy.uniform(BOUND).with_breaker(2, cooldown_rounds=1)
    fates = []
    for executor in (None, AsyncBoundedExecutor(loose_cap=None)):
        result = ReviewEpisode(
            repo, _script(rounds), policy=policy, registry_factory=factory, executor=executor
        ).execute()
        fates.append([(r.round, r.tool, str(r.outcome), r.source_gap) for r in result.receipts])
    assert fates[0] == fates[1]
    assert [fate[2] for fate in fates[0]] == ["error", "error", "withheld", "withheld", "executed"]


class Ticking(ScriptedModel):
    """A scripted model whose every send moves a manual clock ``step_sec`` forward."""

    def __init__(self, script: ScriptedModel, clock: Any, step_sec: float) -> None:
        super().__init__(script.script)
        self.clock = clock
        self.step_sec = step_sec

    def chat(self, **kwargs: Any) -> dict[str, Any]:
        """Advance the clock, then answer from the script."""
        self.clock.advance(self.step_sec)
        return super().chat(**kwargs)


def test_a_cooldown_in_seconds_reads_the_monotonic_clock(repo, wedging):
    """1x/10 s on a manual clock moved 5 s per send: tripped at 5, withheld at 10, back at 15
    (exactly the end of the cool-down)."""
    from reviewlab.testing import manual_clock

    factory, made = wedging
    rounds = [["search_code"], ["search_code"], ["search_code"], []]
    policy = Policy.uniform(BOUND).with_breaker(1, cooldown_sec=10.0)
    with manual_clock(0.0) as clock:
        model = Ticking(_script(rounds), clock, 5.0)
        result = ReviewEpisode(repo, model, policy=policy, registry_factory=factory).execute()
    assert [str(r.outcome) for r in result.receipts] == ["error", "withheld", "error"]
    assert made[0].started == 2
    assert result.receipts[1].error == "breaker"

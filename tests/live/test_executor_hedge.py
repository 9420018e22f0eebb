"""The real executor hedges on real threads: two attempts, the first answer wins, the loser is a
loose worker in the ledger. Attempts block on events the test controls, so no outcome depends on
how fast the machine is."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from reviewlab.core._hedge import HedgeRule, ShareBudget
from reviewlab.core._policy import Policy
from reviewlab.live._call_results import CallStatus
from reviewlab.live._executor import BoundedExecutor

WAIT = 10.0  # generous real seconds for an event a test expects to be set


class Attempts:
    """A tool whose n-th invocation blocks until ``gates[n]`` is set, then returns ``n``."""

    def __init__(self, *open_at_once: bool) -> None:
        self.gates = [threading.Event() for _ in range(3)]
        self.started = [threading.Event() for _ in range(3)]
        for number, opened in enumerate(open_at_once, 1):
            if opened:
                self.gates[number].set()
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self, raise_on: int = 0) -> int:
        with self._lock:
            self.count += 1
            number = self.count
        self.started[number].set()
        assert self.gates[number].wait(WAIT), f"attempt {number} was never released"
        if number == raise_on:
            raise RuntimeError(f"attempt {number} failed")
        return number


class Always:
    """An admission object that lets every call of its tools hedge."""

    def __init__(self, **rules: HedgeRule) -> None:
        self.rules = rules
        self.noted = 0

    def rule_for(self, tool: str) -> HedgeRule | None:
        """The rule of ``tool``."""
        return self.rules.get(tool)

    def note_call(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        """Count a dispatched call."""
        self.noted += 1

    def admit(self, tool: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
        """Always yes."""
        return True


def _executor(after: float = 0.05) -> BoundedExecutor:
    return BoundedExecutor(loose_cap=None, hedging=Always(read_file=HedgeRule(after, 1.0)))


def test_the_second_attempt_answers_and_the_first_is_a_loose_worker_until_it_returns() -> None:
    """Attempt 1 is held; attempt 2 answers; the ledger shows one hedge and one loose loser,
    which settles with its zombie time when released."""
    tool = Attempts(False, True)
    with _executor() as executor:
        result = executor.run(tool, bound=30.0, name="read_file")
        assert result.status is CallStatus.RETURNED and result.value == 2
        assert result.hedged and result.winner == 2 and result.loose
        snapshot = executor.ledger.snapshot()
        assert snapshot["hedges"] == 1 and snapshot["hedge_losers"] == 1
        assert snapshot["loose"] == 1 and snapshot["abandoned"] == 0
        tool.gates[1].set()
        assert result.settled is not None and result.settled.wait(WAIT)
        assert not result.loose and result.zombie_sec is not None and result.zombie_sec >= 0
        assert result.second_zombie_sec is None
        assert executor.ledger.wait_settled(WAIT)


def test_the_first_attempt_can_still_win_after_the_hedge_started() -> None:
    """Both attempts held; once attempt 2 has started, releasing attempt 1 makes it the answer."""
    tool = Attempts(False, False)
    with _executor() as executor:
        out: dict[str, Any] = {}
        caller = threading.Thread(
            target=lambda: out.setdefault("r", executor.run(tool, bound=30.0, name="read_file"))
        )
        caller.start()
        assert tool.started[2].wait(WAIT)
        tool.gates[1].set()
        caller.join(WAIT)
        result = out["r"]
        assert result.value == 1 and result.winner == 1 and result.hedged
        tool.gates[2].set()
        assert result.settled is not None and result.settled.wait(WAIT)
        assert result.second_zombie_sec is not None and result.zombie_sec is None


def test_an_answer_before_the_delay_starts_no_second_attempt() -> None:
    """Attempt 1 answers at once, long before after_sec: one invocation, no hedge."""
    tool = Attempts(True)
    with _executor(after=30.0) as executor:
        result = executor.run(tool, bound=60.0, name="read_file")
        assert result.value == 1 and not result.hedged and tool.count == 1
        assert executor.ledger.snapshot()["hedges"] == 0


def test_both_attempts_late_abandons_the_call_and_leaves_both_loose() -> None:
    """Neither attempt answers by the bound: abandoned, two loose workers, both settle later."""
    tool = Attempts(False, False)
    with _executor() as executor:
        result = executor.run(tool, bound=0.3, name="read_file")
        assert result.status is CallStatus.ABANDONED and result.hedged and result.winner == 0
        assert tool.started[2].wait(WAIT)  # dispatched before the bound; may still be starting
        snapshot = executor.ledger.snapshot()
        assert snapshot["loose"] == 2 and snapshot["abandoned"] == 1 and snapshot["peak"] == 2
        tool.gates[1].set()
        tool.gates[2].set()
        assert result.settled is not None and result.settled.wait(WAIT)
        assert result.zombie_sec is not None and result.second_zombie_sec is not None
        assert executor.ledger.wait_settled(WAIT) and executor.ledger.snapshot()["settled"] == 2


def test_no_hedge_when_the_bound_leaves_no_time_for_it() -> None:
    """bound <= after_sec: the call is an ordinary bounded call (abandoned, one loose worker)."""
    tool = Attempts(False)
    with _executor(after=5.0) as executor:
        result = executor.run(tool, bound=0.1, name="read_file")
        assert result.status is CallStatus.ABANDONED and not result.hedged and tool.count == 1
        tool.gates[1].set()
        assert executor.ledger.wait_settled(WAIT)


def test_a_tool_without_a_rule_is_never_hedged() -> None:
    """Only tools with a hedge rule get a second attempt."""
    tool = Attempts(False)
    with _executor() as executor:
        result = executor.run(tool, bound=0.2, name="search_code")
        assert result.status is CallStatus.ABANDONED and not result.hedged and tool.count == 1
        tool.gates[1].set()


def test_the_winners_exception_is_the_answer() -> None:
    """A winning attempt that raises makes the call raised, as an unhedged call would be."""
    tool = Attempts(False, True)
    with _executor() as executor:
        result = executor.run(tool, 2, bound=30.0, name="read_file")
        assert result.status is CallStatus.RAISED and result.winner == 2
        tool.gates[1].set()


def test_the_live_running_budget_refuses_past_its_share() -> None:
    """ShareBudget, max_share 0.5: the first slow call may not hedge (1 > 0.5), the second may."""
    policy = Policy.ouroboros().with_hedge("read_file", after_sec=0.05, max_share=0.5)
    with BoundedExecutor(loose_cap=None, hedging=ShareBudget(policy.hedges)) as executor:
        first = Attempts(False)
        refused = executor.run(first, bound=0.3, name="read_file")
        assert refused.status is CallStatus.ABANDONED and not refused.hedged
        second = Attempts(False, True)
        admitted = executor.run(second, bound=30.0, name="read_file")
        assert admitted.hedged and admitted.value == 2
        first.gates[1].set()
        second.gates[1].set()
        assert executor.ledger.wait_settled(WAIT)


@pytest.mark.parametrize("cap", [1])
def test_a_hedge_loser_counts_against_the_loose_cap(cap: int) -> None:
    """A loose loser is a loose worker: with a cap of 1, the next call is refused."""
    tool = Attempts(False, True)
    executor = BoundedExecutor(loose_cap=cap, hedging=Always(read_file=HedgeRule(0.05, 1.0)))
    with executor:
        executor.run(tool, bound=30.0, name="read_file")
        refused = executor.run(lambda: None, bound=1.0, name="list_files")
        assert refused.status is CallStatus.REFUSED
        tool.gates[1].set()
        assert executor.ledger.wait_settled(WAIT)


class _FirstReadHeld:
    """An inspection registry whose first ``read_file`` is held until ``release``; later ones
    (the hedge) run at once."""

    def __init__(self, inner: Any, release: threading.Event) -> None:
        self.inner = inner
        self.release = release
        self.reads = 0
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def execute(self, name: str, args: Any) -> str:
        """Hold the first read, pass everything else through."""
        if name == "read_file":
            with self._lock:
                self.reads += 1
                first = self.reads == 1
            if first:
                assert self.release.wait(WAIT)
        return str(self.inner.execute(name, args))


def test_a_live_episode_hedges_a_held_read_and_credits_the_hedge(tmp_path: Any) -> None:
    """A real ReviewEpisode with ShareBudget: the held first read is hedged, the second attempt's
    read is the answer and is credited; the held attempt is a loose worker until released."""
    from reviewlab.live._episode import ReviewEpisode, ScriptedModel, tool_call
    from reviewlab.live._inspection import inspection_registry

    (tmp_path / "a.py").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    release = threading.Event()
    made: list[_FirstReadHeld] = []

    def factory(root: Any, drive_root: Any = None, task_id: str = "") -> tuple[Any, Any, Any]:
        registry, ctx, schemas = inspection_registry(root, drive_root, task_id)
        made.append(_FirstReadHeld(registry, release))
        return made[-1], ctx, schemas

    policy = Policy.ouroboros().with_hedge("read_file", after_sec=0.05, max_share=1.0)
    model = ScriptedModel(
        [
            {"tool_calls": [tool_call("read_file", {"path": "a.py"})]},
            {"content": "done"},
        ]
    )
    with BoundedExecutor(loose_cap=None, hedging=ShareBudget(policy.hedges)) as executor:
        result = ReviewEpisode(
            tmp_path, model, policy=policy, registry_factory=factory, executor=executor
        ).execute()
        receipt = result.receipts[0]
        assert str(receipt.outcome) == "executed" and receipt.source_gap in (None, "")
        assert receipt.extent is not None and receipt.extent.get("end_line") == 30
        assert made[0].reads == 2
        snapshot = executor.ledger.snapshot()
        assert snapshot["hedges"] == 1 and snapshot["loose"] == 1 and snapshot["abandoned"] == 0
        release.set()
        assert executor.ledger.wait_settled(WAIT)

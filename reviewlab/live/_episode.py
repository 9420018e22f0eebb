"""The review episode: a model inspecting a workspace over rounds of read-only tool calls.

Lifecycle of :meth:`ReviewEpisode.execute`: open a fresh registry → [check the episode's own
deadline → send → run the calls in order]* → end (``final_answer``, ``deadline_exhausted``
before a send, or ``model_error``). Each call runs through the
:class:`~reviewlab.live._executor.BoundedExecutor` with its terms resolved once from the
:class:`~reviewlab.core._policy.Policy`; the inherited deadline only narrows the bounds. The
round loop lives in :mod:`reviewlab.live._rounds`, the traces and the result in
:mod:`reviewlab.live._traces` (re-exported here).

Invariants: every call the model asked for gets exactly one receipt and one tool message; an
abandoned call's late value never reaches the model or a receipt; after the first abandonment
no read is credited a line extent. The policy, breaker and hedges on this path:
docs/architecture.md, "The review episode".
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewlab.core._breaker import BreakerRule, BreakerState
from reviewlab.core._deadline import deadline_remaining
from reviewlab.core._hedge import ShareBudget
from reviewlab.core._policy import Narrowing, Policy, SupportsTimeoutFor
from reviewlab.live._aio import AsyncBoundedExecutor, is_async_callable
from reviewlab.live._executor import DEFAULT_LOOSE_CAP, BoundedExecutor
from reviewlab.live._inspection import inspection_registry
from reviewlab.live._loop_runner import run_coroutine
from reviewlab.live._rounds import RoundLoop
from reviewlab.live._traces import EpisodeResult

DEFAULT_TASK = (
    "Review the code in this workspace. Inspect the files you need with the read-only tools, "
    "then answer with a JSON array of findings, each citing a file and line."
)
_UNSET: Any = object()


def tool_call(name: str, args: Mapping[str, Any] | str, call_id: str = "c0") -> dict[str, Any]:
    """One OpenAI-style tool call; ``args`` given as a string is sent verbatim (e.g. bad JSON)."""
    arguments = args if isinstance(args, str) else json.dumps(dict(args))
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class ScriptedModel:
    """A model answering from a script: the n-th ``chat`` returns (a copy of) the n-th dict.

    Every call's keyword arguments are appended to :attr:`calls` first, so a
    send that finds the script exhausted is still recorded; it then raises
    :class:`RuntimeError` (the episode ends with ``model_error``).
    """

    def __init__(self, script: Sequence[Mapping[str, Any]]) -> None:
        self.script = [dict(answer) for answer in script]
        self.calls: list[dict[str, Any]] = []

    def chat(self, **kwargs: Any) -> dict[str, Any]:
        """Record the send's keyword arguments, then answer with the next reply of the script."""
        self.calls.append(kwargs)
        index = len(self.calls) - 1
        if index >= len(self.script):
            raise RuntimeError(
                f"ScriptedModel: script exhausted after {len(self.script)} answer(s)"
            )
        return copy.deepcopy(self.script[index])


class ReviewEpisode:
    """One review episode over ``root`` with ``model`` (see the module docstring).

    ``policy=None`` means :meth:`Policy.ouroboros`; a bare timeout rule is taken with
    ``narrowing`` (``None``: the default ``inherit``) through :meth:`Policy.of`. Without an
    ``executor`` the episode runs its own :class:`BoundedExecutor` with ``loose_cap`` (shared
    executors carry their own cap, so passing both is an error).
    """

    def __init__(
        self,
        root: str | Path,
        model: Any,
        *,
        task: str = DEFAULT_TASK,
        policy: Policy | SupportsTimeoutFor | None = None,
        narrowing: Narrowing | None = None,
        deadline_at: float | None = None,
        registry_factory: Callable[..., tuple[Any, Any, Any]] = inspection_registry,
        recorder: Any = None,
        executor: BoundedExecutor | AsyncBoundedExecutor | None = None,
        loose_cap: int | None = _UNSET,
        drive_root: str | Path | None = None,
        task_id: str = "",
        breaker: BreakerRule | BreakerState | None = _UNSET,
    ) -> None:
        if executor is not None and loose_cap is not _UNSET:
            raise ValueError(
                "loose_cap: give it to the shared executor, not to an episode that uses one"
            )
        if deadline_at is not None and (
            isinstance(deadline_at, bool)
            or not isinstance(deadline_at, int | float)
            or math.isnan(deadline_at)
        ):
            raise ValueError(
                f"deadline_at: expected seconds on the monotonic clock, got {deadline_at!r}"
            )
        self.root = root
        self.model = model
        self.task = task
        self.policy = Policy.of(policy, narrowing)
        self.deadline_at = deadline_at
        self.registry_factory = registry_factory
        self.recorder = recorder
        self.executor = executor
        self.loose_cap = DEFAULT_LOOSE_CAP if loose_cap is _UNSET else loose_cap
        self.drive_root = drive_root
        self.task_id = task_id
        if breaker is _UNSET:
            breaker = self.policy.breaker
        if breaker is not None and not isinstance(breaker, BreakerRule | BreakerState):
            raise TypeError(
                f"breaker: expected a BreakerRule, a shared BreakerState or None, got {breaker!r}"
            )
        self.breaker: BreakerRule | BreakerState | None = breaker

    @property
    def narrowing(self) -> Narrowing:
        """The policy's narrowing part."""
        return self.policy.narrowing

    def breaker_state(self) -> BreakerState | None:
        """The breaker state of one run: the shared one, a fresh one of the rule, or ``None``."""
        if isinstance(self.breaker, BreakerRule):
            return BreakerState(self.breaker)
        return self.breaker

    def execute(self) -> EpisodeResult:
        """Run the episode to its end and return what it produced (never
        raises for model or tool failures).

        With an async registry, an async model or an
        :class:`~reviewlab.live._aio.AsyncBoundedExecutor`, the episode runs :meth:`aexecute`
        on the registry's own event loop when it has one (an MCP server's), else on an event
        loop of its own thread; the caller's context (deadline scopes) goes with it.
        """
        started_at = datetime.now(UTC)
        inherited = deadline_remaining()
        registry, ctx, schemas = self.registry_factory(self.root, self.drive_root, self.task_id)
        if self._wants_async(registry):
            return run_coroutine(
                lambda: self._aexecute(started_at, inherited, registry, ctx, schemas),
                loop=getattr(registry, "loop", None),
            )
        executor = self.executor or BoundedExecutor(
            loose_cap=self.loose_cap,
            name="episode",
            hedging=ShareBudget(self.policy.hedges) if self.policy.hedges else None,
        )
        assert isinstance(executor, BoundedExecutor)
        run = RoundLoop(self, registry, ctx, list(schemas), executor, self.breaker_state())
        try:
            run.loop()
        finally:
            if self.executor is None:
                executor.shutdown()
        return self._finish(run, started_at, inherited)

    async def aexecute(self) -> EpisodeResult:
        """:meth:`execute` on the running event loop: tools through an ``AsyncBoundedExecutor``.

        Async tools run as tasks (cancelled when abandoned), sync tools on threads, a sync
        model's ``chat`` on a thread; the receipts are those :meth:`execute` gives.
        """
        started_at = datetime.now(UTC)
        inherited = deadline_remaining()
        registry, ctx, schemas = self.registry_factory(self.root, self.drive_root, self.task_id)
        return await self._aexecute(started_at, inherited, registry, ctx, schemas)

    async def _aexecute(
        self, started_at: datetime, inherited: float | None, registry: Any, ctx: Any, schemas: Any
    ) -> EpisodeResult:
        executor = self.executor
        if not isinstance(executor, AsyncBoundedExecutor):
            executor = AsyncBoundedExecutor(loose_cap=self.loose_cap, name="episode")
        run = RoundLoop(self, registry, ctx, list(schemas), executor, self.breaker_state())
        await run.aloop()
        return self._finish(run, started_at, inherited)

    def _wants_async(self, registry: Any) -> bool:
        return (
            isinstance(self.executor, AsyncBoundedExecutor)
            or is_async_callable(getattr(registry, "execute", None))
            or is_async_callable(getattr(self.model, "chat", None))
        )

    def _finish(
        self, run: RoundLoop, started_at: datetime, inherited: float | None
    ) -> EpisodeResult:
        result = run.result(started_at, inherited)
        if self.recorder is not None:
            self.recorder.record(result)
        return result

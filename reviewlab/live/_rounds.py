"""The round loop of a review episode: send, run the calls in order, settle each into a receipt.

:class:`RoundLoop` holds one run's mutable state; :meth:`RoundLoop.loop` drives a sync model
with the thread executor, :meth:`RoundLoop.aloop` a sync or async model with the asyncio
executor. Both share every decision: :meth:`~RoundLoop.open_round` (the episode's deadline),
:meth:`~RoundLoop.take_reply`, and the per-call ones of :mod:`reviewlab.live._call_decisions`:
:meth:`~RoundLoop.prepare` (decode a call, resolve its terms once, or refuse or withhold it)
and :meth:`~RoundLoop.settle` (the one place a call's fate becomes the message and receipt).

Invariants: every call gets exactly one receipt and one tool message; the policy is read by
name (a part this path cannot honour is refused when the loop starts); the breaker withholds a
call whose tool is open and records every dispatched call's fate, refused and withheld calls
not recorded. In full: docs/architecture.md, "The round loop".
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from reviewlab.core._breaker import BreakerState
from reviewlab.core._deadline import monotonic_now
from reviewlab.core._policy import Policy
from reviewlab.core._receipts import (
    exception_text,
)
from reviewlab.core._vocab import SOURCE_GAP_WITHHELD
from reviewlab.live._aio import AsyncBoundedExecutor, is_async_callable
from reviewlab.live._call_decisions import CallDecisions
from reviewlab.live._call_notes import notes_onto_receipt
from reviewlab.live._executor import BoundedExecutor
from reviewlab.live._traces import CallTrace, EpisodeResult, RoundTrace

CANCEL_SETTLE_SEC = 5.0
"""How long an async episode waits at its end for an abandoned remote call to send its cancel."""

SYSTEM_PROMPT = (
    "You are a code reviewer with read-only inspection tools. Read what you need, then answer. "
    "If a tool times out or fails, continue with the evidence you have and name the gap explicitly."
)


class RoundLoop(CallDecisions):
    """One episode run: the sends and the executor's runs over the per-call decisions of
    :class:`~reviewlab.live._call_decisions.CallDecisions`, and the episode's result."""

    def __init__(
        self,
        episode: Any,
        registry: Any,
        ctx: Any,
        schemas: list[Any],
        executor: BoundedExecutor | AsyncBoundedExecutor,
        breaker: BreakerState | None = None,
    ) -> None:
        policy: Policy = episode.policy
        if executor.hedging is None:
            policy.refuse(
                f"{type(executor).__name__} {executor.name!r} (it has no hedge admission)",
                "hedges",
            )
        policy.refuse("a live episode (its executors hold a true total cap)", "cap_rule")
        if not getattr(registry, "runs_tasks", False):
            policy.refuse(f"a live episode on {type(registry).__name__}", "tasks")
        if breaker is not None:
            breaker.start_episode()
        if hasattr(registry, "bind_policy"):  # an MCP registry re-issues only idempotent tools
            registry.bind_policy(policy)
        super().__init__(policy, registry, ctx, schemas, breaker)
        self.episode = episode
        self.executor = executor
        self.messages += [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": episode.task},
        ]
        self.raw_text = ""
        self.end_reason = ""
        self.model_error = ""

    def loop(self) -> None:
        """The round loop with a sync model and the thread executor."""
        assert isinstance(self.executor, BoundedExecutor)
        while self.open_round():
            send_start = monotonic_now()
            try:
                # A snapshot: the model (and ScriptedModel.calls) keep what this send carried.
                reply = self.episode.model.chat(**self.send_kwargs())
                _check_reply(reply)
            except Exception as exc:  # any model failure ends the episode as a record, not a crash
                self.model_failed(exc, send_start)
                return
            calls = self.take_reply(reply, send_start)
            for index, call in enumerate(calls or ()):
                prepared = self.prepare(call, index)
                if isinstance(prepared, CallTrace):
                    self.note(prepared)
                    continue
                # Cleared before each dispatch: a stamp seen afterwards was written by this call
                # (or, after an abandonment, maybe by a loose worker, which Crediting accounts for).
                self.ctx.last_read_view = None
                result = self.executor.run(
                    self.registry.execute,
                    prepared.name,
                    prepared.args,
                    bound=prepared.bound,
                    name=prepared.name,
                    idle_sec=prepared.idle_sec,
                    call_id=prepared.call_id,
                )
                self.note(self.settle(prepared, result))
            if calls is None:
                return

    async def aloop(self) -> None:
        """The round loop on an event loop: async or sync model, the async executor.

        Before it returns, it waits (at most :data:`CANCEL_SETTLE_SEC` each) until every
        abandoned remote call has sent its cancellation, so the receipts say whether it did.
        """
        await self._aloop()
        for rnd in self.trace:
            for trace in rnd.calls:
                notes = getattr(trace.result, "notes", None)
                settled = None if notes is None else notes.cancel_settled
                if settled is not None and not settled.is_set():
                    await asyncio.to_thread(settled.wait, CANCEL_SETTLE_SEC)

    async def _aloop(self) -> None:
        executor = self.executor
        assert isinstance(executor, AsyncBoundedExecutor)
        chat = self.episode.model.chat
        chat_is_async = is_async_callable(chat)
        while self.open_round():
            send_start = monotonic_now()
            try:
                kwargs = self.send_kwargs()
                if chat_is_async:
                    reply = await chat(**kwargs)
                else:
                    reply = await asyncio.to_thread(chat, **kwargs)
                _check_reply(reply)
            except Exception as exc:  # any model failure ends the episode as a record, not a crash
                self.model_failed(exc, send_start)
                return
            calls = self.take_reply(reply, send_start)
            for index, call in enumerate(calls or ()):
                prepared = self.prepare(call, index)
                if isinstance(prepared, CallTrace):
                    self.note(prepared)
                    continue
                self.ctx.last_read_view = None
                result = await executor.run(
                    self.registry.execute,
                    prepared.name,
                    prepared.args,
                    bound=prepared.bound,
                    name=prepared.name,
                    idle_sec=prepared.idle_sec,
                    transport=getattr(self.registry, "transport", None),
                    call_id=prepared.call_id,
                )
                self.note(self.settle(prepared, result))
            if calls is None:
                return

    def open_round(self) -> bool:
        """Check the episode's own deadline before a send; count the round when it may go."""
        deadline_at = self.episode.deadline_at
        if deadline_at is not None and monotonic_now() >= deadline_at:
            self.end_reason = "deadline_exhausted"
            return False
        self.rounds += 1
        return True

    def send_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of the next send: a snapshot of the transcript, the schemas."""
        return {"messages": list(self.messages), "tools": self.schemas, "tool_choice": "auto"}

    def model_failed(self, exc: BaseException, send_start: float) -> None:
        """End the episode with ``model_error``: the failed send still counts as a round."""
        self.trace.append(RoundTrace(self.rounds, monotonic_now() - send_start))
        self.end_reason, self.model_error = "model_error", exception_text(exc)

    def take_reply(self, reply: Mapping[str, Any], send_start: float) -> list[Any] | None:
        """Record the send and the assistant message; the calls to run (``None``: final answer)."""
        rnd = RoundTrace(self.rounds, monotonic_now() - send_start)
        self.trace.append(rnd)
        for receipt in self.receipts:
            receipt.delivered = True
        content = reply.get("content")
        content = content if isinstance(content, str) else ""
        calls = reply.get("tool_calls") or []
        calls = calls if isinstance(calls, list) else [calls]
        assistant: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            assistant["tool_calls"] = calls
        self.messages.append(assistant)
        if not calls:
            self.raw_text, self.end_reason = content, "final_answer"
            return None
        return calls

    def result(self, started_at: datetime, inherited: float | None) -> EpisodeResult:
        """The episode result: usage dict, receipts (MCP cancel facts as known now), trace."""
        episode = self.episode
        if self.breaker is not None:
            self.breaker.end_episode(self.rounds)
        for rnd in self.trace:
            for trace in rnd.calls:
                notes = getattr(trace.result, "notes", None)
                if notes is not None and notes.transport == "mcp":
                    # What is known of the cancellation when the episode ends.
                    notes_onto_receipt(notes, trace.receipt)
        usage: dict[str, Any] = {
            "native_rounds": self.rounds,
            "native_tool_calls": len(self.receipts),
            "native_tool_receipts": [receipt.to_dict() for receipt in self.receipts],
            "native_source_gap": self.source_gap,
            "native_end_reason": self.end_reason,
            "native_abandoned_calls": sum(receipt.abandoned for receipt in self.receipts),
            "native_withheld_calls": sum(
                receipt.source_gap == SOURCE_GAP_WITHHELD for receipt in self.receipts
            ),
            "native_loose_workers": self.executor.loose,
            "delivery": "native_tool_rounds",
        }
        if self.model_error:
            usage["native_model_error"] = self.model_error
        meta = {
            "model": type(episode.model).__name__,
            "policy": self.policy.label,
            "narrowing": self.policy.narrowing.label,
        }
        return EpisodeResult(
            self.raw_text,
            usage,
            list(self.receipts),
            self.trace,
            self.end_reason,
            started_at,
            inherited,
            episode.task,
            meta,
        )


def _check_reply(reply: Any) -> None:
    if not isinstance(reply, Mapping):
        raise TypeError(f"model reply must be a dict, got {type(reply).__name__}")

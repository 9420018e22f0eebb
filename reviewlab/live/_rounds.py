"""The round loop of a review episode: send, run the calls in order, settle each into a receipt.

:class:`RoundLoop` holds one run's mutable state; :meth:`RoundLoop.loop` drives a sync model
with the thread executor, :meth:`RoundLoop.aloop` a sync or async model with the asyncio
executor. Both share every decision: :meth:`~RoundLoop.open_round` (the episode's deadline),
:meth:`~RoundLoop.take_reply`, :meth:`~RoundLoop.prepare` (decode a call, resolve its terms
once, or refuse or withhold it) and :meth:`~RoundLoop.settle` (the one place a call's fate
becomes the tool message and the receipt).

Invariants: every call gets exactly one receipt and one tool message; the policy is read by
name (a part this path cannot honour is refused when the loop starts); the breaker withholds a
call whose tool is open and records every dispatched call's fate, refused and withheld calls
not recorded. In full: docs/architecture.md, "The round loop".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reviewlab.core._breaker import BreakerState
from reviewlab.core._clocks import call_clocks, ended_by
from reviewlab.core._crediting import Crediting
from reviewlab.core._deadline import monotonic_now
from reviewlab.core._policy import Bound, Policy
from reviewlab.core._receipts import (
    Outcome,
    ToolReceipt,
    arg_error_text,
    exception_text,
    task_detached_text,
    tool_timeout_text,
    unavailable_text,
    wall_stamp,
    withheld_text,
)
from reviewlab.core._vocab import SOURCE_GAP_ABANDONED, SOURCE_GAP_WITHHELD
from reviewlab.live._aio import AsyncBoundedExecutor, is_async_callable
from reviewlab.live._call_notes import notes_onto_receipt
from reviewlab.live._executor import BoundedExecutor, CallResult
from reviewlab.live._executor_base import CallStatus, call_terms
from reviewlab.live._otel import emit_trace_call
from reviewlab.live._traces import CallTrace, EpisodeResult, RoundTrace

CANCEL_SETTLE_SEC = 5.0
"""How long an async episode waits at its end for an abandoned remote call to send its cancel."""

SYSTEM_PROMPT = (
    "You are a code reviewer with read-only inspection tools. Read what you need, then answer. "
    "If a tool times out or fails, continue with the evidence you have and name the gap explicitly."
)
# Argument fields copied onto a receipt (truncated) so a reader can tell the calls apart.
_SUMMARY_ARGS = ("path", "root", "query", "pattern")


def _schema_names(schemas: Sequence[Any]) -> set[str]:
    names = set()
    for schema in schemas:
        if isinstance(schema, Mapping):
            inner = schema.get("function", schema)
            if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
                names.add(inner["name"])
    return names


@dataclass
class _Dispatch:
    """A call ready for the executor: its decoded arguments and its bound, resolved once."""

    call_id: str
    name: str
    args: dict[str, Any]
    bound: Bound
    idle_sec: float | None


class RoundLoop:
    """The mutable state of one episode run: its transcript, receipts, trace and crediting."""

    def __init__(
        self,
        episode: Any,
        registry: Any,
        ctx: Any,
        schemas: list[Any],
        executor: BoundedExecutor | AsyncBoundedExecutor,
        breaker: BreakerState | None = None,
    ) -> None:
        self.episode = episode
        self.policy: Policy = episode.policy
        if executor.hedging is None:
            self.policy.refuse(
                f"{type(executor).__name__} {executor.name!r} (it has no hedge admission)",
                "hedges",
            )
        self.policy.refuse("a live episode (its executors hold a true total cap)", "cap_rule")
        if not getattr(registry, "runs_tasks", False):
            self.policy.refuse(f"a live episode on {type(registry).__name__}", "tasks")
        self.breaker = breaker
        if breaker is not None:
            breaker.start_episode()
        self.registry = registry
        if hasattr(registry, "bind_policy"):  # an MCP registry re-issues only idempotent tools
            registry.bind_policy(self.policy)
        self.ctx = ctx
        self.schemas = schemas
        self.allowed = _schema_names(schemas)
        self.executor = executor
        self.crediting = Crediting()
        # Tools the registry credits as reads besides ``read_file`` (an MCP server's mapping).
        self.read_tools = frozenset(getattr(registry, "read_tools", ()))
        # A registry may say which calls report progress (an idle timeout applies only to
        # those); without the hook every call may.
        self._reports_progress = getattr(registry, "reports_progress", _reports_progress)
        self._transport_sec = getattr(registry, "transport_timeout_sec", None)
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": episode.task},
        ]
        self.receipts: list[ToolReceipt] = []
        self.trace: list[RoundTrace] = []
        self.rounds = 0
        self.raw_text = ""
        self.end_reason = ""
        self.model_error = ""
        self.source_gap = ""

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

    def note(self, trace: CallTrace) -> None:
        """Add a settled call to the current round and its receipt to the episode."""
        self.trace[-1].calls.append(trace)
        self.receipts.append(trace.receipt)
        emit_trace_call(trace)  # an execute_tool span, when an OpenTelemetry provider is set

    def prepare(self, call: Any, index: int) -> _Dispatch | CallTrace:
        """Decode one call and resolve its bound; a call that cannot run is refused here."""
        function = call.get("function") if isinstance(call, Mapping) else None
        function = function if isinstance(function, Mapping) else {}
        name = function.get("name")
        name = name if isinstance(name, str) else ""
        call_id = call.get("id") if isinstance(call, Mapping) else None
        call_id = call_id if isinstance(call_id, str) and call_id else f"call-{self.rounds}-{index}"
        args, problem = _decode_args(name, function.get("arguments"))
        if problem is not None:
            return self.refuse(call_id, name, None, arg_error_text(problem))
        if name not in self.allowed:
            return self.refuse(call_id, name, args, unavailable_text(name))
        assert args is not None
        if self.breaker is not None and self.breaker.withheld(name, self.rounds, monotonic_now()):
            return self.withhold(call_id, name, args)
        terms = call_terms(self.policy, self.registry, name, args)
        idle = terms.idle_sec
        if idle is not None and not self._reports_progress(name, call_id):
            idle = None  # the registry says this call reports no progress: nothing to time
        return _Dispatch(call_id, name, args, terms.bound, idle)

    def settle(self, prepared: _Dispatch, result: CallResult) -> CallTrace:
        """Turn the executor's verdict into the tool message and the receipt (one place)."""
        call_id, name, args = prepared.call_id, prepared.name, prepared.args
        stamp = self.ctx.last_read_view if result.status is CallStatus.RETURNED else None
        summary = _summary(args)
        # One place turns each fate into what the model sees and what the receipt says.
        if result.status is CallStatus.RETURNED:
            outcome, gap, error = Outcome.EXECUTED, None, None
            text = result.value if isinstance(result.value, str) else str(result.value)
        elif result.status is CallStatus.RAISED:
            # The tool's own failure: an error, but no source gap (nothing is loose).
            assert result.exc is not None
            outcome, gap, text = Outcome.ERROR, None, exception_text(result.exc)
            error = text
        elif result.status is CallStatus.ABANDONED:
            outcome, gap, error = Outcome.ERROR, SOURCE_GAP_ABANDONED, "abandoned"
            text = tool_timeout_text(name, result.bound_sec or 0.0)
            notes = result.notes
            if notes is not None and notes.task_action == "detach" and notes.task_id:
                # Detached, not cancelled: the model hears the task runs on (MCP Tasks).
                text = task_detached_text(
                    name, result.bound_sec or 0.0, notes.task_id, notes.task_immediate_response
                )
        else:  # refused by the loose-worker cap: never started
            receipt = ToolReceipt(
                round=self.rounds,
                tool=name[:200],
                outcome=Outcome.REFUSED,
                started_at=result.started_at,
                duration_sec=0.0,
                bound_sec=None,
                bound_by="",
                result_chars=len(result.text),
                call_id=call_id,
                error="loose_cap",
                args_summary=summary,
            )
            self.reply(call_id, result.text)
            return CallTrace(self.rounds, call_id, name, args, receipt, result)
        # A registry's read tools (an MCP server's) are credited by the rule for reads.
        credit_as = "read_file" if name in self.read_tools else name
        extent = self.crediting.extent(credit_as, outcome, stamp)
        if gap == SOURCE_GAP_ABANDONED:
            # After this call's own credit was decided (an abandoned call is never credited).
            self.crediting.note_abandoned()
            self.source_gap = SOURCE_GAP_ABANDONED
        if self.breaker is not None:
            # When the wait ended: a cool-down in seconds runs from here.
            self.breaker.record(name, gap == SOURCE_GAP_ABANDONED, self.rounds, monotonic_now())
        bound = result.bound if result.bound is not None else prepared.bound
        receipt = ToolReceipt(
            round=self.rounds,
            tool=name,
            outcome=outcome,
            started_at=result.started_at,
            duration_sec=float(result.duration_sec),
            bound_sec=result.bound_sec,
            bound_by=bound.by,
            result_chars=len(text),
            call_id=call_id,
            source_gap=gap,
            error=error,
            args_summary=summary,
            extent=extent,
            ended_by=ended_by(result.status is CallStatus.ABANDONED, bound.by),
            clocks=call_clocks(prepared.bound, prepared.idle_sec, self._transport_sec),
        )
        self.reply(call_id, text)
        return CallTrace(
            self.rounds,
            call_id,
            name,
            args,
            receipt,
            result,
            rendered=stamp,
            read=credit_as == "read_file",
        )

    def refuse(self, call_id: str, name: str, args: dict[str, Any] | None, text: str) -> CallTrace:
        """A call that never reaches the executor (bad arguments, unavailable tool)."""
        receipt = ToolReceipt(
            round=self.rounds,
            tool=name[:200],
            outcome=Outcome.REFUSED,
            started_at=wall_stamp(),
            duration_sec=0.0,
            bound_sec=None,
            bound_by="",
            result_chars=len(text),
            call_id=call_id,
            error=text,
            args_summary=_summary(args or {}),
        )
        self.reply(call_id, text)
        return CallTrace(self.rounds, call_id, name, args, receipt, at_sec=monotonic_now())

    def withhold(self, call_id: str, name: str, args: dict[str, Any]) -> CallTrace:
        """A call the breaker withheld: never started, its tool's breaker is open."""
        assert self.breaker is not None
        rule = self.breaker.rule
        assert rule.consecutive is not None
        text = withheld_text(name, rule.consecutive, rule.cooldown_label)
        receipt = ToolReceipt(
            round=self.rounds,
            tool=name,
            outcome=Outcome.WITHHELD,
            started_at=wall_stamp(),
            duration_sec=0.0,
            bound_sec=None,
            bound_by="",
            result_chars=len(text),
            call_id=call_id,
            source_gap=SOURCE_GAP_WITHHELD,
            error="breaker",
            args_summary=_summary(args),
        )
        if not self.source_gap:
            self.source_gap = SOURCE_GAP_WITHHELD
        self.reply(call_id, text)
        return CallTrace(self.rounds, call_id, name, args, receipt, at_sec=monotonic_now())

    def reply(self, call_id: str, text: str) -> None:
        """Send the tool message of ``call_id`` back into the transcript."""
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

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


def _reports_progress(tool_name: str, call_id: str) -> bool:
    """The default: any call may report progress, so an idle timeout applies to every call."""
    return True


def _check_reply(reply: Any) -> None:
    if not isinstance(reply, Mapping):
        raise TypeError(f"model reply must be a dict, got {type(reply).__name__}")


def _decode_args(name: str, raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """``(args, None)`` for a JSON object (or an empty argument
    string), else ``(None, problem)``."""
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, Mapping):
        return dict(raw), None
    if not isinstance(raw, str):
        return (
            None,
            f"Could not parse arguments for {name[:200]!r}: expected a JSON string, got "
            f"{type(raw).__name__}",
        )
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, RecursionError) as exc:
        return None, f"Could not parse arguments for {name[:200]!r}: {exc}"
    if not isinstance(value, dict):
        return (
            None,
            f"Could not parse arguments for {name[:200]!r}: expected a JSON object, got "
            f"{type(value).__name__}",
        )
    return value, None


def _summary(args: Mapping[str, Any]) -> dict[str, str]:
    return {
        key: str(args[key])[:300] for key in _SUMMARY_ARGS if key in args and args[key] is not None
    }

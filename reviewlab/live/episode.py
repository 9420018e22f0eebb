"""The review episode: a model inspecting a workspace over rounds of read-only tool calls.

Lifecycle of :meth:`ReviewEpisode.execute` (one episode, one attempt)::

    open a fresh registry ─> [ check own deadline ─> send ─> run the calls in order ]* ─> end

* **Before every send** the episode's own ``deadline_at`` (on
  :func:`~reviewlab.core.deadline.monotonic_now`) is checked; once passed the episode
  ends with ``deadline_exhausted`` without sending.
* **A send** gives the model the whole transcript and the tool schemas. A
  reply without tool calls ends the episode with ``final_answer``; a model
  exception ends it with ``model_error`` (the failed send still counts as a round).
* **Each call** of a reply runs in order on the episode thread's behalf through
  the :class:`~reviewlab.live.executor.BoundedExecutor`, with its bound resolved once
  (``resolve_bound(policy, registry, name, args, narrowing=...)``, ``registry``
  being the very object the factory returned). The inherited deadline (a scope
  around ``execute()``) only narrows these bounds: once it has passed every call
  gets a bound of 0 and is abandoned at once, and the model is still asked again.

Invariants: every call the model asked for gets exactly one receipt and one tool
message. An abandoned call's late value never reaches the model or a receipt.
After the first abandonment no read is credited a line extent
(:class:`~reviewlab.core.receipts.Crediting`), and the reader stamp is read only for a
call that returned inside its bound (it is cleared before each dispatch).
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewlab.core.crediting import Crediting
from reviewlab.core.deadline import deadline_remaining, monotonic_now
from reviewlab.core.idle import resolve_idle
from reviewlab.core.policy import (
    Bound,
    Narrowing,
    SupportsTimeoutFor,
    TimeoutPolicy,
    resolve_bound,
)
from reviewlab.core.receipts import (
    Outcome,
    ToolReceipt,
    arg_error_text,
    exception_text,
    tool_timeout_text,
    unavailable_text,
    wall_stamp,
)
from reviewlab.core.vocab import SOURCE_GAP_ABANDONED
from reviewlab.live.aio import AsyncBoundedExecutor, is_async_callable, run_coroutine
from reviewlab.live.executor import DEFAULT_LOOSE_CAP, BoundedExecutor, CallResult, CallStatus
from reviewlab.live.inspection import inspection_registry
from reviewlab.live.otel import emit_trace_call

__all__ = [
    "DEFAULT_TASK",
    "CallTrace",
    "EpisodeResult",
    "ReviewEpisode",
    "RoundTrace",
    "ScriptedModel",
    "tool_call",
]

DEFAULT_TASK = (
    "Review the code in this workspace. Inspect the files you need with the read-only tools, "
    "then answer with a JSON array of findings, each citing a file and line."
)
SYSTEM_PROMPT = (
    "You are a code reviewer with read-only inspection tools. Read what you need, then answer. "
    "If a tool times out or fails, continue with the evidence you have and name the gap explicitly."
)
# Argument fields copied onto a receipt (truncated) so a reader can tell the calls apart.
_SUMMARY_ARGS = ("path", "root", "query", "pattern")
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


@dataclass
class CallTrace:
    """One call as the episode ran it: what was asked, what the executor said, the receipt."""

    round: int
    call_id: str
    tool: str
    args: dict[str, Any] | None
    """Decoded arguments; ``None`` when they were not a JSON object."""
    receipt: ToolReceipt
    result: CallResult | None = None
    """The executor's record; ``None`` for a call refused before it reached the executor."""
    rendered: dict[str, Any] | None = None
    """The reader stamp of a ``read_file`` that returned inside its
    bound (lines actually rendered)."""


@dataclass
class RoundTrace:
    """One model send (``send_sec`` long) and the calls its reply asked for."""

    round: int
    send_sec: float
    calls: list[CallTrace] = field(default_factory=list)


@dataclass
class EpisodeResult:
    """What an episode produced: the final answer, the usage dict, the receipts and the trace.

    :func:`reviewlab.recording.capture.episode_from_result` turns it into a recorded episode.
    """

    raw_text: str
    usage: dict[str, Any]
    receipts: list[ToolReceipt]
    trace: list[RoundTrace]
    end_reason: str
    started_at: datetime
    deadline_sec: float | None
    task: str
    meta: dict[str, str] = field(default_factory=dict)


def _schema_names(schemas: Sequence[Any]) -> set[str]:
    names = set()
    for schema in schemas:
        if isinstance(schema, Mapping):
            inner = schema.get("function", schema)
            if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
                names.add(inner["name"])
    return names


class ReviewEpisode:
    """One review episode over ``root`` with ``model`` (see the module docstring).

    ``policy=None`` means :meth:`TimeoutPolicy.ouroboros`; ``narrowing=None`` the
    default ``inherit``. Without an ``executor`` the episode runs its own
    :class:`BoundedExecutor` with ``loose_cap`` (shared executors carry their own
    cap, so passing both is an error).
    """

    def __init__(
        self,
        root: str | Path,
        model: Any,
        *,
        task: str = DEFAULT_TASK,
        policy: SupportsTimeoutFor | None = None,
        narrowing: Narrowing | None = None,
        deadline_at: float | None = None,
        registry_factory: Callable[..., tuple[Any, Any, Any]] = inspection_registry,
        recorder: Any = None,
        executor: BoundedExecutor | AsyncBoundedExecutor | None = None,
        loose_cap: int | None = _UNSET,
        drive_root: str | Path | None = None,
        task_id: str = "",
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
        self.policy: SupportsTimeoutFor = (
            policy if policy is not None else TimeoutPolicy.ouroboros()
        )
        self.narrowing = narrowing if narrowing is not None else Narrowing()
        self.deadline_at = deadline_at
        self.registry_factory = registry_factory
        self.recorder = recorder
        self.executor = executor
        self.loose_cap = DEFAULT_LOOSE_CAP if loose_cap is _UNSET else loose_cap
        self.drive_root = drive_root
        self.task_id = task_id

    def execute(self) -> EpisodeResult:
        """Run the episode to its end and return what it produced (never
        raises for model or tool failures).

        With an async registry, an async model or an
        :class:`~reviewlab.live.aio.AsyncBoundedExecutor`, the episode runs :meth:`aexecute`
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
        executor = self.executor or BoundedExecutor(loose_cap=self.loose_cap, name="episode")
        assert isinstance(executor, BoundedExecutor)
        run = _Run(self, registry, ctx, list(schemas), executor)
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
        run = _Run(self, registry, ctx, list(schemas), executor)
        await run.aloop()
        return self._finish(run, started_at, inherited)

    def _wants_async(self, registry: Any) -> bool:
        return (
            isinstance(self.executor, AsyncBoundedExecutor)
            or is_async_callable(getattr(registry, "execute", None))
            or is_async_callable(getattr(self.model, "chat", None))
        )

    def _finish(self, run: _Run, started_at: datetime, inherited: float | None) -> EpisodeResult:
        result = run.result(started_at, inherited)
        if self.recorder is not None:
            self.recorder.record(result)
        return result


@dataclass
class _Dispatch:
    """A call ready for the executor: its decoded arguments and its bound, resolved once."""

    call_id: str
    name: str
    args: dict[str, Any]
    bound: Bound
    idle_sec: float | None


class _Run:
    """The mutable state of one :meth:`ReviewEpisode.execute`."""

    def __init__(
        self,
        episode: ReviewEpisode,
        registry: Any,
        ctx: Any,
        schemas: list[Any],
        executor: BoundedExecutor | AsyncBoundedExecutor,
    ) -> None:
        self.episode = episode
        self.registry = registry
        self.ctx = ctx
        self.schemas = schemas
        self.allowed = _schema_names(schemas)
        self.executor = executor
        self.crediting = Crediting()
        # Tools the registry credits as reads besides ``read_file`` (an MCP server's mapping).
        self.read_tools = frozenset(getattr(registry, "read_tools", ()))
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
                )
                self.note(self.settle(prepared, result))
            if calls is None:
                return

    async def aloop(self) -> None:
        """The round loop on an event loop: async or sync model, the async executor."""
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
        return {"messages": list(self.messages), "tools": self.schemas, "tool_choice": "auto"}

    def model_failed(self, exc: BaseException, send_start: float) -> None:
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
        policy = self.episode.policy
        bound = resolve_bound(policy, self.registry, name, args, narrowing=self.episode.narrowing)
        # An idle timeout only ever shortens a bounded wait (the pre-fix policy has none).
        idle = None if not bound.bounded else resolve_idle(policy, self.registry, name, args)
        return _Dispatch(call_id, name, args, bound, idle)

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
        )
        self.reply(call_id, text)
        return CallTrace(self.rounds, call_id, name, args, receipt, result, rendered=stamp)

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
        return CallTrace(self.rounds, call_id, name, args, receipt)

    def reply(self, call_id: str, text: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": text})

    def result(self, started_at: datetime, inherited: float | None) -> EpisodeResult:
        episode = self.episode
        for rnd in self.trace:
            for trace in rnd.calls:
                notes = getattr(trace.result, "notes", None)
                if notes is not None and notes.transport == "mcp":
                    # What is known of the cancellation when the episode ends.
                    trace.receipt.cancel_sent = notes.cancel_sent
                    trace.receipt.cancel_honoured_sec = notes.cancel_honoured_sec
        usage: dict[str, Any] = {
            "native_rounds": self.rounds,
            "native_tool_calls": len(self.receipts),
            "native_tool_receipts": [receipt.to_dict() for receipt in self.receipts],
            "native_source_gap": self.source_gap,
            "native_end_reason": self.end_reason,
            "native_abandoned_calls": sum(receipt.abandoned for receipt in self.receipts),
            "native_loose_workers": self.executor.loose,
            "delivery": "native_tool_rounds",
        }
        if self.model_error:
            usage["native_model_error"] = self.model_error
        policy_name = getattr(episode.policy, "name", type(episode.policy).__name__)
        meta = {
            "model": type(episode.model).__name__,
            "policy": str(policy_name),
            "narrowing": episode.narrowing.label,
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

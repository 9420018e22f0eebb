"""Bound the tools of one's own agent: :func:`bounded_tool` wraps a sync or async callable.

Lifecycle of one call: resolve the bound (once per call, the arguments bound to the
function's parameter names, the caller's inherited deadline) → run → returned (the value) |
raised (re-raised) | abandoned (the standard timeout text, which any framework passes on) |
refused (the loose-worker refusal text). A sync tool runs on a
:class:`~reviewlab.live._executor.BoundedExecutor` worker; an async tool as its own task,
never cancelled when abandoned.

Invariants: the policy is converted once when the tool is wrapped; a policy this path cannot
honour (a breaker; hedges or idle timeouts on an async tool) is refused by name; each finished
call is handed to ``recorder.record_call`` (:class:`CallSink`), an abandoned one at once, its
``zombie_sec`` filled in later; spans go into a framework's own ``execute_tool`` span or one of
ours. In full: docs/architecture.md, "Bounded tools".
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import threading
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from reviewlab.core._deadline import execution_deadline_scope, monotonic_now
from reviewlab.core._hedge import ShareBudget
from reviewlab.core._policy import Bound, Narrowing, Policy, SupportsTimeoutFor
from reviewlab.core._receipts import exception_text, tool_timeout_text
from reviewlab.core._vocab import (
    OUTCOME_ERROR,
    OUTCOME_EXECUTED,
    OUTCOME_REFUSED,
    SOURCE_GAP_ABANDONED,
    OutcomeName,
    SourceGap,
)
from reviewlab.live import _otel as otel
from reviewlab.live._call_results import CallStatus
from reviewlab.live._executor import BoundedExecutor, CallResult
from reviewlab.live._executor_base import call_terms

F = TypeVar("F", bound=Callable[..., Any])

_shared: BoundedExecutor | None = None
_shared_lock = threading.Lock()


class CallSink(Protocol):
    """Where :func:`bounded_tool` hands each finished call (e.g. a ``ToolCallLog``)."""

    def record_call(self, call: BoundedCall) -> None:
        """Take one finished call (fate settled, answer built); called once per call."""
        ...


@dataclass
class BoundedCall:
    """One call of a wrapped tool: its arguments, the executor's record and what the model got."""

    tool: str
    args: dict[str, Any]
    result: CallResult
    result_chars: int
    span_context: Any = field(default=None, repr=False)

    @property
    def status(self) -> CallStatus:
        """The call's final state (returned, raised, abandoned or refused)."""
        return self.result.status

    @property
    def started_wall(self) -> float:
        """Dispatch time, seconds since the epoch."""
        return self.result.started_wall

    @property
    def duration_sec(self) -> float:
        """Dispatch to the moment control came back (for an abandoned call: about its bound)."""
        return self.result.duration_sec

    @property
    def bound(self) -> Bound | None:
        """The bound the call ran under."""
        return self.result.bound

    @property
    def outcome(self) -> OutcomeName:
        """The receipt's outcome: ``executed``, ``error`` or ``refused``."""
        if self.status is CallStatus.RETURNED:
            return OUTCOME_EXECUTED
        return OUTCOME_REFUSED if self.status is CallStatus.REFUSED else OUTCOME_ERROR

    @property
    def source_gap(self) -> SourceGap | None:
        """``native_tool_abandoned`` for an abandoned call, else ``None``."""
        return SOURCE_GAP_ABANDONED if self.status is CallStatus.ABANDONED else None

    @property
    def zombie_sec(self) -> float | None:
        """How long an abandoned call's worker ran past the abandonment, once it came back."""
        return self.result.zombie_sec


def _executor() -> BoundedExecutor:
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = BoundedExecutor(name="bounded_tool")
        return _shared


def bounded_tool(
    fn: F,
    *,
    policy: Policy | SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    recorder: CallSink | None = None,
    name: str | None = None,
    executor: BoundedExecutor | None = None,
) -> F:
    """``fn`` wrapped so that each call is bounded, abandoned with the standard text, recorded.

    ``policy=None`` means :meth:`Policy.ouroboros`; ``name`` defaults to
    ``fn.__name__``. The wrapper keeps ``fn``'s name, docstring and signature
    (frameworks read the tool schema from it) and is ``async`` exactly when
    ``fn`` is. ``recorder`` needs a ``record_call`` method (:class:`CallSink`).
    """
    if not callable(fn):
        raise TypeError(f"bounded_tool: expected a callable, got {type(fn).__name__}")
    if recorder is not None and not callable(getattr(recorder, "record_call", None)):
        raise TypeError(
            "recorder: expected an object with record_call(call), e.g. "
            f"reviewlab.ToolCallLog(...), got {type(recorder).__name__}"
        )
    tool = str(name or getattr(fn, "__name__", None) or "tool")
    spine = Policy.of(policy, narrowing)
    is_async = inspect.iscoroutinefunction(fn)
    # A wrapped tool has no rounds for a breaker; its async path neither hedges nor watches
    # progress.
    spine.refuse(f"bounded_tool({tool})", "breaker")
    if is_async:
        spine.refuse(f"bounded_tool({tool}) of an async tool", "idle_sec", "hedges")
    elif spine.hedges:
        if executor is None:
            executor = BoundedExecutor(
                name=f"bounded_tool:{tool}", hedging=ShareBudget(spine.hedges)
            )
        elif executor.hedging is None:
            spine.refuse(f"bounded_tool({tool}) on an executor without hedge admission", "hedges")
    signature = _signature(fn)
    wrap = _Wrapped(fn, tool, signature, spine, recorder, executor)
    if is_async:

        @functools.wraps(fn)
        async def call_async(*args: Any, **kwargs: Any) -> Any:
            return await wrap.call_async(args, kwargs)

        return cast(F, call_async)

    @functools.wraps(fn)
    def call_sync(*args: Any, **kwargs: Any) -> Any:
        return wrap.call_sync(args, kwargs)

    return cast(F, call_sync)


class _Wrapped:
    """The state one wrapped tool shares between its calls."""

    def __init__(
        self,
        fn: Callable[..., Any],
        tool: str,
        signature: inspect.Signature | None,
        policy: Policy,
        recorder: CallSink | None,
        executor: BoundedExecutor | None,
    ) -> None:
        self.fn = fn
        self.tool = tool
        self.signature = signature
        self.policy = policy
        self.recorder = recorder
        self.executor = executor

    def arguments(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        """The call's arguments by parameter name, JSON-safe (other values by type name)."""
        named: dict[str, Any] = dict(kwargs)
        if self.signature is not None:
            try:
                named = dict(self.signature.bind_partial(*args, **kwargs).arguments)
            except TypeError:
                named = {**{f"arg{i}": v for i, v in enumerate(args)}, **kwargs}
        elif args:
            named = {**{f"arg{i}": v for i, v in enumerate(args)}, **kwargs}
        return {key: _json_safe(value) for key, value in named.items()}

    def call_sync(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        named = self.arguments(args, kwargs)
        terms = call_terms(self.policy, None, self.tool, named)
        executor = self.executor or _executor()
        # The call's own arguments travel in a partial: none can clash with run()'s keywords.
        result = executor.run(
            functools.partial(self.fn, *args, **kwargs),
            bound=terms.bound,
            name=self.tool,
            idle_sec=terms.idle_sec,
        )
        return self.finish(named, result)

    async def call_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        # The caller's wait starts here: resolving the bound is part of the call.
        started_wall = time.time()
        start = monotonic_now()
        named = self.arguments(args, kwargs)
        bound = call_terms(self.policy, None, self.tool, named).bound
        deadline = None if bound.sec is None else start + bound.sec
        task = asyncio.ensure_future(_scoped(self.fn(*args, **kwargs), deadline))
        try:
            done, _ = await asyncio.wait({task}, timeout=bound.sec)
        except asyncio.CancelledError:
            # The caller was cancelled (not the bound): the cancellation goes on to the tool.
            task.cancel()
            raise
        duration = monotonic_now() - start
        if task in done:
            exc = task.exception()
            status = CallStatus.RAISED if exc is not None else CallStatus.RETURNED
            value = None if exc is not None else task.result()
            result = CallResult(self.tool, status, started_wall, duration, bound, value, exc)
        else:
            result = CallResult(
                self.tool,
                CallStatus.ABANDONED,
                started_wall,
                duration,
                bound,
                settled=threading.Event(),
            )
            abandoned_at = monotonic_now()

            def settle(finished: asyncio.Future[Any]) -> None:
                # The late value or exception is dropped: it is credited to nothing.
                if not finished.cancelled():
                    finished.exception()
                result.zombie_sec = max(0.0, monotonic_now() - abandoned_at)
                assert result.settled is not None
                result.settled.set()

            task.add_done_callback(settle)
        return self.finish(named, result)

    def finish(self, named: dict[str, Any], result: CallResult) -> Any:
        """What the caller gets; records and traces the call first."""
        if result.status is CallStatus.RETURNED:
            answer: Any = result.value
            chars = len(answer) if isinstance(answer, str) else len(str(answer))
        elif result.status is CallStatus.RAISED:
            assert result.exc is not None
            chars = len(exception_text(result.exc))
        elif result.status is CallStatus.ABANDONED:
            answer = tool_timeout_text(self.tool, result.bound_sec or 0.0)
            chars = len(answer)
        else:
            answer = result.text
            chars = len(answer)
        call = BoundedCall(self.tool, named, result, chars)
        call.span_context = _trace(call)
        if self.recorder is not None:
            self.recorder.record_call(call)
        if result.status is CallStatus.RAISED:
            assert result.exc is not None
            raise result.exc
        return answer


async def _scoped(work: Coroutine[Any, Any, Any], deadline: float | None) -> Any:
    """Await ``work`` inside an execution deadline scope ending at the call's bound."""
    if deadline is None:
        return await work
    scope = execution_deadline_scope(deadline)
    scope.__enter__()
    try:
        return await work
    finally:
        # A loose task still pending when its loop closes is closed by the garbage collector,
        # from another context: its scope can no longer be reset there, nor does it matter.
        with contextlib.suppress(ValueError):
            scope.__exit__(None, None, None)


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _json_safe(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return f"<{type(value).__name__}>"
    return value


def _trace(call: BoundedCall) -> Any:
    """Annotate the framework's ``execute_tool`` span, or emit one; the span context or None."""
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    bound = call.bound
    attributes = otel.call_attributes(
        tool=call.tool,
        call_id="",
        args=call.args,
        bound_sec=None if bound is None else bound.sec,
        bound_by=bound.by if bound is not None else "unbounded",
        outcome=call.outcome,
        source_gap=call.source_gap,
        result_chars=call.result_chars,
    )
    current = trace.get_current_span()
    framework = getattr(current, "attributes", None) or {}
    tracer = otel.active_tracer()
    if current.is_recording() and framework.get("gen_ai.operation.name") == "execute_tool":
        for key, value in attributes.items():
            if key.startswith("reviewlab.") and value is not None:
                current.set_attribute(key, value)
        if call.status is CallStatus.ABANDONED:
            # The framework saw a normal return (the timeout text): mark its span censored.
            current.set_attribute("error.type", "tool_timeout")
            current.set_status(trace.Status(trace.StatusCode.ERROR, "tool_timeout"))
        context = current.get_span_context()
    elif tracer is None:
        return None
    else:
        error = None
        if call.status is CallStatus.ABANDONED:
            error = "tool_timeout"
        elif call.status is CallStatus.RAISED:
            error = type(call.result.exc).__name__
        elif call.status is CallStatus.REFUSED:
            error = OUTCOME_REFUSED
        span = otel.emit_call_span(
            tracer,
            started_wall=call.started_wall,
            duration_sec=call.duration_sec,
            attributes=attributes,
            error_type=error,
        )
        context = span.get_span_context()
    if call.status is CallStatus.ABANDONED and tracer is not None:
        otel.watch_late_return(tracer, context, call.result, call.tool)
    return context

"""What each call of a review episode becomes: decoded, bounded, run or not, settled.

:class:`CallDecisions` is the per-call half of the round loop
(:class:`~reviewlab.live._rounds.RoundLoop` drives the sends and the executor):
:meth:`~CallDecisions.prepare` decodes a call and resolves its terms once (``call_terms``: its
bound and idle timeout), or refuses or withholds it; :meth:`~CallDecisions.settle` is the one
place a call's fate (returned, raised, abandoned, refused by the loose cap) becomes the tool
message and the receipt, credited by the crediting rule and recorded by the breaker.

Invariants: every call gets exactly one receipt and one tool message; refused and withheld
calls never start and are not recorded by the breaker. In full: docs/architecture.md, "The
round loop".
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
from reviewlab.live._call_results import CallResult, CallStatus
from reviewlab.live._executor_base import call_terms
from reviewlab.live._otel import emit_trace_call
from reviewlab.live._traces import CallTrace, RoundTrace

# Argument fields copied onto a receipt (truncated) so a reader can tell the calls apart.
_SUMMARY_ARGS = ("path", "root", "query", "pattern")


@dataclass
class Dispatch:
    """A call ready for the executor: its decoded arguments and its bound, resolved once."""

    call_id: str
    name: str
    args: dict[str, Any]
    bound: Bound
    idle_sec: float | None


class CallDecisions:
    """The per-call state of one episode run: transcript, receipts, trace, crediting, breaker.

    ``policy`` is read by name; ``registry`` runs the tools (it may say which tools it credits
    as reads, which calls report progress, and its transport's timeout); ``ctx`` carries the
    read stamp; ``schemas`` name the tools a call may use; ``breaker`` (``None``: none) withholds
    and records.
    """

    def __init__(
        self,
        policy: Policy,
        registry: Any,
        ctx: Any,
        schemas: list[Any],
        breaker: BreakerState | None,
    ) -> None:
        self.policy = policy
        self.registry = registry
        self.ctx = ctx
        self.schemas = schemas
        self.allowed = _schema_names(schemas)
        self.breaker = breaker
        self.crediting = Crediting()
        # Tools the registry credits as reads besides ``read_file`` (an MCP server's mapping).
        self.read_tools = frozenset(getattr(registry, "read_tools", ()))
        # A registry may say which calls report progress (an idle timeout applies only to
        # those); without the hook every call may.
        self._reports_progress: Callable[[str, str], bool] = getattr(
            registry, "reports_progress", _reports_progress
        )
        self._transport_sec = getattr(registry, "transport_timeout_sec", None)
        self.messages: list[dict[str, Any]] = []
        self.receipts: list[ToolReceipt] = []
        self.trace: list[RoundTrace] = []
        self.rounds = 0
        self.source_gap = ""

    def note(self, trace: CallTrace) -> None:
        """Add a settled call to the current round and its receipt to the episode."""
        self.trace[-1].calls.append(trace)
        self.receipts.append(trace.receipt)
        emit_trace_call(trace)  # an execute_tool span, when an OpenTelemetry provider is set

    def prepare(self, call: Any, index: int) -> Dispatch | CallTrace:
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
        return Dispatch(call_id, name, args, terms.bound, idle)

    def settle(self, prepared: Dispatch, result: CallResult) -> CallTrace:
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


def _schema_names(schemas: Sequence[Any]) -> set[str]:
    names = set()
    for schema in schemas:
        if isinstance(schema, Mapping):
            inner = schema.get("function", schema)
            if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
                names.add(inner["name"])
    return names


def _reports_progress(tool_name: str, call_id: str) -> bool:
    """The default: any call may report progress, so an idle timeout applies to every call."""
    return True


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

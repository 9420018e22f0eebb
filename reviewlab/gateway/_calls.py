"""One host ``tools/call`` through the gateway: bounded, answered, counted and recorded.

Lifecycle: the bound is resolved when the call starts — the policy in force's timeout, narrowed
by the sooner of the host's ``_meta`` deadline (:data:`DEADLINE_META_KEY`) and the session
budget — and the call runs on its upstream's :class:`~reviewlab.live._aio.AsyncBoundedExecutor`
(idle timeout re-armed by progress under the hard cap; a loose-call cap per upstream). It ends
returned (the upstream's result as sent), failed (its JSON-RPC error as sent; a dead or
malformed upstream: an ``isError`` result naming the server), abandoned (``isError`` with the
standard ``⚠️ TOOL_TIMEOUT`` text; the upstream is cancelled and stays loose until it answers,
and a late answer is recorded, never delivered), refused (the cap is full: the standard
refusal), or cancelled by the host (the upstream is cancelled, nothing answered). Each call is
recorded before its answer leaves, so a crash loses only calls in flight (docs/gateway.md,
"The bound").
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from reviewlab.core._clocks import ended_by
from reviewlab.core._policy import resolve_bound
from reviewlab.core._receipts import tool_timeout_text
from reviewlab.gateway._stdio import received_at
from reviewlab.live._call_notes import CallNotes, current_notes
from reviewlab.live._call_results import CallStatus
from reviewlab.live.mcp import MCPServerError, MCPToolError
from reviewlab.live.mcp._call import Relayed, call_tool_raw

DEADLINE_META_KEY = "reviewlab.dev/deadline_sec"
"""The ``_meta`` key of a ``tools/call`` by which a host gives the seconds left before its own
deadline; the call's bound is narrowed to it (the key is not passed upstream)."""
_OWN_META = frozenset({DEADLINE_META_KEY, "progressToken"})
_BOUND_PARAMS = frozenset({"name", "arguments", "_meta"})  # the rest (a ``task``) goes as sent


class Pending:
    """What both sides of an abandoned call share: the recording's index of the call, written
    by the handler, and the late facts the lingering upstream call learns afterwards."""

    __slots__ = ("index", "journal", "late")

    def __init__(self) -> None:
        self.index: int | None = None
        self.journal: Any = None
        self.late: dict[str, Any] | None = None

    def settle(self, notes: CallNotes) -> None:
        """The abandoned call stopped being watched: record what came after the cancel."""
        late = late_fields(notes)
        if self.index is not None and self.journal is not None:
            if any(value is not None for value in late.values()):
                with contextlib.suppress(Exception):  # the host session's recording has closed
                    self.journal.update(self.index, **late)
        else:
            self.late = late


def late_fields(notes: CallNotes) -> dict[str, Any]:
    """The four facts a recording learns after an abandonment."""
    returned_after = None
    if notes.late_result_sec is not None and notes.cancel_sent_sec is not None:
        # Seconds after dispatch; strictly past the bound, or a replay would count it in time.
        floor = notes.abandoned_sec if notes.abandoned_sec is not None else notes.cancel_sent_sec
        returned_after = max(
            notes.cancel_sent_sec + notes.late_result_sec, math.nextafter(floor, math.inf)
        )
    return {
        "late_result_sec": notes.late_result_sec,
        "late_result_chars": notes.late_result_chars,
        "cancel_honoured_sec": notes.cancel_honoured_sec,
        "returned_after_sec": returned_after,
    }


def remaining_sec(host: Any, meta: Mapping[str, Any], now: float) -> float | None:
    """Seconds left before the sooner of the host's ``_meta`` deadline and the session budget
    (both as of the request's arrival: the bound counts from there)."""
    left = []
    given = meta.get(DEADLINE_META_KEY)
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, int | float) or math.isnan(given):
            raise ValueError(f"_meta[{DEADLINE_META_KEY!r}]: expected seconds, got {given!r}")
        left.append(max(0.0, float(given)))
    if host.deadline_at is not None:
        left.append(max(0.0, host.deadline_at - now))
    return min(left) if left else None


def content_chars(result: Mapping[str, Any]) -> int:
    """The size of a ``tools/call`` result: its text blocks' characters, and the JSON size of
    any other block (an image, a resource) and of ``structuredContent``."""
    total = 0
    for block in result.get("content") or []:
        if isinstance(block, Mapping) and block.get("type") == "text":
            total += len(str(block.get("text", "")))
        else:
            total += len(json.dumps(block, separators=(",", ":"), ensure_ascii=False))
    if result.get("structuredContent") is not None:
        total += len(json.dumps(result["structuredContent"], separators=(",", ":")))
    return total


def error_result(text: str) -> dict[str, Any]:
    """A ``CallToolResult`` the host reads as the tool's failure."""
    return {"content": [{"type": "text", "text": text}], "isError": True}


async def bounded_tools_call(gateway: Any, ctx: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The answer to one host ``tools/call`` (see the module docstring)."""
    from mcp.shared.exceptions import MCPError

    from reviewlab.core._deadline import monotonic_now

    shown = params.get("name")
    if not isinstance(shown, str):
        raise MCPError(-32602, "tools/call: params.name must be a string")
    route = gateway.tools.get(shown)
    if route is None:
        await gateway._list_tools()  # the upstream's tools may have changed since the last list
        route = gateway.tools.get(shown)
    if route is None and len(gateway.upstreams) == 1:
        # One upstream: a name it did not list is still its to answer, as it would answer it
        # directly (server-everything: an isError result; the conformance suite needs that).
        from reviewlab.gateway._routes import Route

        route = Route(next(iter(gateway.upstreams)), shown, {"name": shown})
    if route is None:
        raise MCPError(-32602, f"Unknown tool: {shown}")
    args = params.get("arguments") or {}
    if not isinstance(args, Mapping):
        raise MCPError(-32602, "tools/call: params.arguments must be an object")
    meta = params.get("_meta") or {}
    host = gateway.hosts.of(ctx)
    policy = gateway.policy
    now = monotonic_now()
    arrived = received_at(ctx)
    # The bound counts from the request's arrival: a call that waited behind others in the
    # gateway (a burst) is still answered at its bound, as the host counts it.
    queued = 0.0 if arrived is None else max(0.0, now - arrived)
    try:
        left = remaining_sec(host, meta, now if arrived is None else arrived)
    except ValueError as exc:
        raise MCPError(-32602, str(exc)) from None
    bound = resolve_bound(policy, gateway.tools, shown, args, remaining_sec=left)
    waits = bound
    if queued > 0 and bound.sec is not None:
        waits = dataclasses.replace(bound, sec=max(0.0, bound.sec - queued))
    upstream = gateway.upstreams[route.upstream]
    token = meta.get("progressToken")
    forward_meta = {key: value for key, value in meta.items() if key not in _OWN_META}
    extra = {key: value for key, value in params.items() if key not in _BOUND_PARAMS}
    from reviewlab.gateway._front import progress_forwarder

    forward = progress_forwarder(ctx, token) if token is not None else None
    pending = Pending()
    idempotent = shown in policy.idempotent_tools

    async def upstream_call() -> dict[str, Any]:
        notes = current_notes() or CallNotes("mcp")
        try:
            return await call_tool_raw(
                upstream.link,
                route.name,
                dict(args),
                notes,
                idempotent,
                Relayed(meta=forward_meta, on_progress=forward, linger=True, extra=extra),
            )
        except asyncio.CancelledError:
            pending.settle(notes)
            raise

    executor = gateway.executors[route.upstream]
    gateway.inflight[route.upstream].append(ctx)
    started = monotonic_now()
    try:
        result = await executor.run(
            upstream_call,
            bound=waits,
            name=shown,
            idle_sec=policy.idle_for(shown),
            transport="mcp",
            call_id=str(ctx.request_id),
        )
    except asyncio.CancelledError:
        # The host cancelled the request or went away: the executor cancelled the upstream call.
        _record_cancelled(Site(gateway, host, route, shown, args), started - queued)
        raise
    finally:
        gateway.inflight[route.upstream].remove(ctx)
        if forward is not None:
            forward.answered = True  # type: ignore[attr-defined]
    answer, outcome = _answer(result, bound, shown, route.upstream)
    taken = Taken(result, bound, queued)
    _record(Site(gateway, host, route, shown, args), taken, answer, outcome, pending)
    gateway.metrics.count(route.upstream, shown, outcome, taken.duration_sec)
    if isinstance(answer, BaseException):
        raise answer
    return answer


@dataclasses.dataclass(frozen=True)
class Site:
    """Where a call was made: the gateway, the host session, the route to its upstream, the
    name the host called and the arguments it gave."""

    gateway: Any
    host: Any
    route: Any
    shown: str
    args: Mapping[str, Any]

    def fields(self) -> dict[str, Any]:
        """The recorded call's fields that say where it was made."""
        return {
            "tool": self.shown[:200],
            "server": self.route.upstream,
            "transport": "mcp",
            **_args_fields(self.gateway, self.args),
        }


class Taken:
    """A call as the host saw it: from its arrival, its bound the policy's (the executor waited
    what was left of it after the call's time in the gateway's queue)."""

    __slots__ = ("bound", "by", "duration_sec", "notes", "queued", "started_wall", "status")

    def __init__(self, result: Any, bound: Any, queued: float) -> None:
        self.status = result.status
        self.bound = bound
        # which clock ended it: the executor's word (an idle timeout), else the bound's term
        self.by = result.bound.by if result.bound is not None else bound.by
        self.queued = queued
        self.notes = result.notes
        self.started_wall = result.started_wall - queued
        self.duration_sec = max(0.0, result.duration_sec) + (
            queued if result.status is not CallStatus.REFUSED else 0.0
        )


def _answer(result: Any, bound: Any, shown: str, server: str) -> tuple[Any, str]:
    """What the host gets, and the outcome the metrics and the recording name."""
    from mcp.shared.exceptions import MCPError

    status = result.status
    if status is CallStatus.RETURNED:
        answer = result.value
        return answer, "error" if answer.get("isError") else "returned"
    if status is CallStatus.ABANDONED:
        bound_sec = bound.sec if bound is not None and bound.sec is not None else 0.0
        return error_result(tool_timeout_text(shown, bound_sec)), "abandoned"
    if status is CallStatus.REFUSED:
        return error_result(result.text), "refused"
    exc = result.exc
    if isinstance(exc, MCPToolError) and exc.error is not None:
        # the upstream's own JSON-RPC error, as it was sent
        return MCPError.from_error_data(exc.error), "error"  # type: ignore[arg-type]
    if isinstance(exc, MCPServerError):
        return error_result(f"reviewlab gateway: upstream server {server!r} failed: {exc}"), "error"
    return error_result(f"reviewlab gateway: upstream server {server!r}: {exc}"), "error"


def _args_fields(gateway: Any, args: Mapping[str, Any]) -> dict[str, Any]:
    from reviewlab.recording import args_digest

    digest, chars = args_digest(dict(args))
    kept = dict(args) if gateway.record_args else {}
    return {"args": kept, "args_sha256": digest, "args_chars": chars}


def _record(site: Site, result: Taken, answer: Any, outcome: str, pending: Pending) -> None:
    host = site.host
    journal = site.gateway.hosts.journal_of(host)
    if journal is None:
        return
    from reviewlab.recording._schema import Call

    notes = result.notes
    bound = result.bound
    fields = site.fields()
    if notes is not None and notes.progress_sec:
        shift = result.queued  # progress times count from the call's arrival, as its duration
        fields["progress_sec"] = [round(sec + shift, 6) for sec in sorted(notes.progress_sec)]
    status = result.status
    if status is CallStatus.REFUSED:
        call = Call(duration_sec=0.0, status="error", **fields)
    elif status is CallStatus.ABANDONED:
        late = pending.late or {}
        call = Call(
            duration_sec=bound.sec if bound is not None else result.duration_sec,
            completed=False,
            cancel_sent=True,  # sent by the upstream call as it is cancelled, right after this
            ended_by=ended_by(True, result.by),
            **{key: value for key, value in late.items() if value is not None},
            **fields,
        )
    else:
        chars = content_chars(answer) if isinstance(answer, Mapping) else 0
        call = Call(
            duration_sec=max(0.0, result.duration_sec),
            status="ok" if outcome == "returned" else "error",
            result_chars=chars,
            ended_by="returned",
            **fields,
        )
    pending.journal = journal
    pending.index = journal.call(call, at_sec=max(0.0, result.started_wall - host.started_wall))
    host.calls += 1


def _record_cancelled(site: Site, started: float) -> None:
    """A call the host cancelled (or left): right-censored where it stopped being waited on."""
    import time

    from reviewlab.core._deadline import monotonic_now

    host = site.host
    site.gateway.metrics.count(site.route.upstream, site.shown, "cancelled", None)
    journal = site.gateway.hosts.journal_of(host)
    if journal is None:
        return
    from reviewlab.recording._schema import Call

    elapsed = max(0.0, monotonic_now() - started)
    call = Call(duration_sec=elapsed, completed=False, cancel_sent=True, **site.fields())
    journal.call(call, at_sec=max(0.0, time.time() - elapsed - host.started_wall))
    host.calls += 1

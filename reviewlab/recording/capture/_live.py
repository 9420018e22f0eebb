"""Capture a live run as a recorded episode: :func:`episode_from_result` and :func:`record_live`.

A live :class:`~reviewlab.live._episode.EpisodeResult` knows what each call did on the real
clock; the recorded format knows what a replay needs. A call that returned is a completed call
of its measured duration; an abandoned call is right-censored at its bound, with
``returned_after_sec`` once its loose worker came back (strictly past the bound); a refused
call is an ``error`` call of 0 s; a read records the lines it asked for and, credited, the
lines it rendered; a round records its tokens when the model reported them (:class:`UsageTap`),
which makes the episode ``reviewlab.episode/2``.

Invariant: the live layer does not know this format; recording imports live, never the
reverse. The mapping in full: docs/recording-format.md, "A live run as an episode".
"""

from __future__ import annotations

import math
import os
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reviewlab.core._policy import Narrowing, SupportsTimeoutFor
from reviewlab.core._receipts import Outcome
from reviewlab.core._vocab import Source
from reviewlab.live._call_results import CallStatus
from reviewlab.live._episode import EpisodeResult, ReviewEpisode
from reviewlab.live._openai_model import DEFAULT_TIMEOUT_SEC, OpenAIChatModel
from reviewlab.live._traces import CallTrace
from reviewlab.recording._files import save_episodes
from reviewlab.recording._schema import (
    SCHEMA_VERSION,
    SCHEMA_VERSION_2,
    V2_CALL_FIELDS,
    Call,
    Episode,
    Extent,
    Round,
)
from reviewlab.recording.capture._usage import token_counts


class UsageTap:
    """A chat model wrapper that keeps the ``usage`` of every reply, in send order.

    Lifecycle: each ``chat`` forwards to the wrapped model and appends the reply's ``usage``
    (``None`` when it has none); a send that raised appends ``None`` too, so ``usages[k]`` is
    the usage of the episode's ``k``-th round. Everything else is the wrapped model's.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.usages: list[dict[str, Any] | None] = []

    def chat(self, **kwargs: Any) -> Any:
        """Forward one send to the wrapped model and keep its reply's usage."""
        try:
            reply = self.model.chat(**kwargs)
        except BaseException:
            self.usages.append(None)
            raise
        usage = reply.get("usage") if isinstance(reply, dict) else None
        self.usages.append(usage if isinstance(usage, dict) else None)
        return reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


def episode_from_result(
    result: EpisodeResult,
    *,
    id: str,
    slot: str = "",
    source: Source = "live",
    usages: Sequence[Mapping[str, Any] | None] | None = None,
    model: str | None = None,
) -> Episode:
    """The live run ``result`` in the recorded format, as episode ``id`` of ``slot``.

    Calls are censored, refused and credited as the module docstring states. A loose worker
    that has not come back yet is recorded without ``returned_after_sec``; converting again
    later can add it. ``usages``: the usage the model reported per round, in round order
    (:attr:`UsageTap.usages`); without it, a round trace's own ``usage``, if it has one.
    ``model``: the name of the model that served the episode.
    """
    refused = [
        trace.call_id
        for rnd in result.trace
        for trace in rnd.calls
        if trace.receipt.outcome == Outcome.REFUSED
    ]
    meta = dict(result.meta)
    if refused:
        meta["refused_calls"] = ",".join(refused)
    rounds = []
    for number, rnd in enumerate(result.trace):
        if usages is not None:
            usage = usages[number] if number < len(usages) else None
        else:
            usage = getattr(rnd, "usage", None)
        tokens = token_counts(dict(usage) if isinstance(usage, Mapping) else None)
        rounds.append(
            Round(
                send_sec=max(0.0, rnd.send_sec),
                calls=[_recorded_call(c) for c in rnd.calls],
                input_tokens=tokens[0],
                output_tokens=tokens[1],
            )
        )
    # Calls run on the async path carry progress and cancel facts, and usage is version 2 too.
    v2 = model is not None or any(
        getattr(c, name) is not None for r in rounds for c in r.calls for name in V2_CALL_FIELDS
    )
    v2 = v2 or any(r.input_tokens is not None or r.output_tokens is not None for r in rounds)
    return Episode(
        schema_version=SCHEMA_VERSION_2 if v2 else SCHEMA_VERSION,  # type: ignore[call-arg]
        model=model,
        id=id,
        source=source,
        slot=slot,
        started_at=result.started_at,
        deadline_sec=result.deadline_sec,
        rounds=rounds,
        end_reason=result.end_reason,  # type: ignore[arg-type]
        task=result.task,
        meta=meta,
    )


def record_live(
    base_url: str,
    model: str,
    root: str | os.PathLike[str],
    task: str | None,
    out_path: str | os.PathLike[str],
    *,
    policy: SupportsTimeoutFor | None = None,
    narrowing: Narrowing | None = None,
    slot: str = "live",
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SEC,
    deadline_at: float | None = None,
    episode_id: str | None = None,
    mcp: str | None = None,
    **defaults: Any,
) -> EpisodeResult:
    """Run one live review episode over ``root`` against the endpoint and save it to ``out_path``.

    The file holds exactly that one episode (written atomically; an existing file is
    replaced). Its ``meta`` records the model and the endpoint, never the key. ``task=None``
    or ``""`` uses the episode's default review task. Returns the live result for printing.
    With ``mcp`` (a server command, or an ``http(s)://`` URL for Streamable HTTP) the
    reviewer's tools are that MCP server's, started over stdio in ``root``
    (:class:`~reviewlab.live.mcp.MCPServer`); the episode is recorded as
    ``reviewlab.episode/2`` and ``meta["mcp"]`` names the command or URL.
    """
    root_dir = Path(root)
    if not root_dir.is_dir():
        raise NotADirectoryError(f"root {str(root)!r} is not a directory")
    chat_model = OpenAIChatModel(base_url, model, api_key=api_key, timeout=timeout, **defaults)
    tap = UsageTap(chat_model)
    options: dict[str, Any] = {"policy": policy, "narrowing": narrowing, "deadline_at": deadline_at}
    if task:
        options["task"] = task
    if mcp:
        from reviewlab.live.mcp import MCPServer

        remote = mcp.startswith(("http://", "https://"))  # Streamable HTTP, else a command
        opened = MCPServer(url=mcp) if remote else MCPServer(mcp, cwd=root_dir)
        with opened as server:
            options["registry_factory"] = server.registry_factory
            result = ReviewEpisode(root_dir, tap, **options).execute()
            server.wait_watched()  # late answers of abandoned calls reach the recording
    else:
        result = ReviewEpisode(root_dir, tap, **options).execute()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    episode = episode_from_result(
        result,
        id=episode_id or f"live-{stamp}-{uuid.uuid4().hex[:8]}",
        slot=slot,
        usages=tap.usages,
        model=model,
    )
    meta = {**episode.meta, "model": model, "endpoint": chat_model.endpoint}
    if mcp:
        meta["mcp"] = mcp
    save_episodes([episode.model_copy(update={"meta": meta})], out_path)
    return result


def _recorded_call(trace: CallTrace) -> Call:
    receipt, result = trace.receipt, trace.result
    common: dict[str, Any] = {
        "tool": trace.tool[:200] or "?",
        "args": trace.args or {},
        "result_chars": receipt.result_chars,
        "extent": _requested_extent(trace),
    }
    notes = getattr(result, "notes", None)
    if notes is not None:  # the async path (reviewlab.episode/2)
        common["transport"] = notes.transport
        common["progress_sec"] = list(notes.progress_sec)
        common["ended_by"] = receipt.ended_by
        if notes.transport == "mcp":
            common["cancel_sent"] = notes.cancel_sent
            common["cancel_honoured_sec"] = notes.cancel_honoured_sec
            common["late_result_sec"] = notes.late_result_sec
            common["late_result_chars"] = notes.late_result_chars
            if notes.task_id is not None:
                common["task_states"] = list(notes.task_states)
    if result is None or result.status is CallStatus.REFUSED:
        return Call(duration_sec=0.0, status="error", **common)
    if result.status is CallStatus.ABANDONED:
        bound = result.bound_sec or 0.0
        returned_after = None
        back_sec = None if result.zombie_sec is None else result.duration_sec + result.zombie_sec
        if notes is not None and notes.transport == "mcp":
            # The zombie of an MCP call is the server's work: it is back when the server
            # answered after the cancellation (never, as far as we know, when it stayed silent).
            back_sec = None
            if notes.cancel_sent_sec is not None and notes.cancel_honoured_sec is not None:
                back_sec = notes.cancel_sent_sec + notes.cancel_honoured_sec
        if back_sec is not None:
            # Strictly past the bound, or a replay would count the call as returned in time.
            returned_after = max(back_sec, math.nextafter(bound, math.inf))
        return Call(
            duration_sec=bound, completed=False, returned_after_sec=returned_after, **common
        )
    if result.status is CallStatus.RAISED:
        return Call(duration_sec=max(0.0, result.duration_sec), status="error", **common)
    return Call(duration_sec=max(0.0, result.duration_sec), status="ok", **common)


def _requested_extent(trace: CallTrace) -> Extent | None:
    """The lines a read asked for, as they exist in the file.

    A credited read records the lines it rendered (clipped to the file). Otherwise the
    arguments say what was asked; a read without a range falls back on the lines rendered.
    """
    args = trace.args or {}
    path = args.get("path")
    is_read = trace.read or trace.tool == "read_file"
    if not is_read or not isinstance(path, str) or not path:
        return None
    if trace.receipt.outcome == Outcome.EXECUTED and trace.rendered is None:
        # It returned and rendered no line (an empty file): there were no lines to ask for, and
        # a replay must not credit the range its arguments named.
        return None
    rendered = trace.rendered or {}
    credited = rendered if trace.receipt.extent is not None else {}
    start = (
        _line(credited.get("first_line"))
        or _line(args.get("start_line"))
        or _line(rendered.get("first_line"))
    )
    end = (
        _line(credited.get("end_line"))
        or _line(args.get("end_line"))
        or _line(rendered.get("end_line"))
    )
    if start is None or end is None or end < start:
        return None
    return Extent(path=path, start_line=start, end_line=end)


def _line(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None

"""What a task-augmented call sends and records, against a scripted session (reviewlab/live/mcp/
_tasks.py): the TTL goes out in milliseconds, and a task still working after the abandonment is
"running after cancel" only when a cancel was sent and acknowledged.

The session answers from a script (no server, no network); the abandonment is the caller
cancelling the call's coroutine once the task has been created, an event the script sets, and
every later wait is on the watcher finishing, so nothing depends on timing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from reviewlab.live._call_notes import CallNotes
from reviewlab.live.mcp._call import Link
from reviewlab.live.mcp._tasks import call_task

TEXT = {"content": [{"type": "text", "text": "the answer"}]}


class ScriptedSession:
    """A dispatcher answering each method from a script (a list of answers per method, the last
    one repeated), recording every request it was sent."""

    def __init__(self, answers: dict[str, list[dict[str, Any]]]) -> None:
        self.answers = answers
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.created = asyncio.Event()

    async def send_raw_request(
        self, method: str, params: dict[str, Any], opts: dict[str, Any]
    ) -> dict[str, Any]:
        """The next scripted answer to ``method``; a ``tools/call`` also sets :attr:`created`."""
        self.sent.append((method, params))
        queue = self.answers[method]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if method == "tools/call":
            self.created.set()
        return answer


def link_to(session: ScriptedSession) -> Link:
    """A plain (stdio-like) link on the scripted session, watching abandoned tasks 5 s."""
    return Link(
        dispatcher=session,
        session=None,
        label="scripted",
        http=False,
        protocol_version=None,
        cancel_watch_sec=5.0,
    )


def test_the_task_ttl_goes_out_in_milliseconds():
    """A TTL of 300 s is sent as ``task: {ttl: 300000}`` (the spec's milliseconds); a server
    that runs the call without a task answers it directly."""
    session = ScriptedSession({"tools/call": [TEXT]})
    notes = CallNotes("mcp")
    text = asyncio.run(call_task(link_to(session), "slow", {"q": 1}, notes, "cancel", 300.0))
    assert "the answer" in text
    ((method, params),) = session.sent
    assert method == "tools/call"
    assert params["task"] == {"ttl": 300000}
    assert params["name"] == "slow" and params["arguments"] == {"q": 1}


def _abandon(action: str, cancel_answer: dict[str, Any] | None) -> CallNotes:
    """Create a task that works for two polls after the abandonment and then completes; abandon
    the call once the task exists, with ``action``; wait for the watcher; the call's notes."""
    working = {"taskId": "t1", "status": "working", "pollInterval": 1, "ttl": 60000}
    answers: dict[str, list[dict[str, Any]]] = {
        "tools/call": [{"task": working}],
        "tasks/get": [working, working, working, {**working, "status": "completed"}],
        "tasks/result": [TEXT],
    }
    if cancel_answer is not None:
        answers["tasks/cancel"] = [cancel_answer]
    session = ScriptedSession(answers)
    link = link_to(session)
    notes = CallNotes("mcp")

    async def scenario() -> None:
        call = asyncio.create_task(call_task(link, "slow", {}, notes, action, 60.0))
        await session.created.wait()
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        await asyncio.gather(*list(link.watchers))

    asyncio.run(scenario())
    return notes


def test_a_detached_task_that_works_on_is_working_not_running_after_cancel():
    """Detached (no cancel sent): the polls after the abandonment read ``working`` then
    ``completed``; nothing says it ran on after a cancel, and its late result is recorded."""
    notes = _abandon("detach", None)
    assert notes.task_detached and notes.task_cancel_ack is None
    assert notes.task_states == ["working", "completed"]
    assert notes.late_result_chars is not None and notes.late_result_chars > 0


def test_a_cancelled_task_that_works_on_is_running_after_cancel():
    """Cancelled, and the server acknowledges with ``working``: the polls after it read
    ``running_after_cancel`` until the task completes anyway."""
    notes = _abandon("cancel", {"status": "working"})
    assert notes.task_cancel_ack == "working"
    assert notes.task_states == ["working", "running_after_cancel", "completed"]

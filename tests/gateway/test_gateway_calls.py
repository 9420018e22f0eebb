"""A tools/call through the gateway: bounded by the policy in force, abandoned with the standard
text, refused when the upstream's loose cap is full, and recorded as it really ran.

The upstream is the demo server (a real stdio process); the host is the SDK's ClientSession in
this process. Abandonment is decided by tools that never answer (``wedge``), so no assertion
rests on a race: a wedged call can only end at its bound.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from gateway_kit import demo_gateway, hosted, text_of

from reviewlab.core._receipts import tool_timeout_text
from reviewlab.gateway import DEADLINE_META_KEY, GatewayLimits
from reviewlab.live._inspection import demo_workspace
from reviewlab.recording import load_episodes

README = (demo_workspace() / "README.md").read_text(encoding="utf-8")


def recorded_calls(folder: Path) -> list:
    """Every call of every session recorded in ``folder``, in order."""
    return [call for episode in load_episodes(folder) for call in episode.calls]


def test_a_call_inside_its_bound_is_the_upstreams_answer_and_is_recorded(tmp_path):
    """read_file comes back as the upstream sent it, and the recording has it with its size."""

    async def run():
        async with hosted(demo_gateway(tmp_path)) as host:
            return await host.call_tool("read_file", {"path": "README.md"})

    result = asyncio.run(run())
    assert not result.is_error
    assert text_of(result) == README
    (call,) = recorded_calls(tmp_path / "rec")
    assert (call.tool, call.server, call.completed) == ("read_file", "demo", True)
    assert call.status == "ok"
    assert call.result_chars == len(README)
    assert call.ended_by == "returned"
    assert call.args == {}  # private by default: only the hash and the size
    canonical = json.dumps({"path": "README.md"}, sort_keys=True, separators=(",", ":"))
    import hashlib

    assert call.args_sha256 == hashlib.sha256(canonical.encode()).hexdigest()
    assert call.args_chars == len(canonical)


def test_a_wedged_call_is_abandoned_at_its_bound_with_the_standard_text(tmp_path):
    """wedge never answers: the host gets isError and the TOOL_TIMEOUT text at the 0.4 s bound."""

    async def run():
        async with hosted(demo_gateway(tmp_path, "uniform:0.4")) as host:
            started = time.monotonic()
            result = await host.call_tool("wedge", {})
            return result, time.monotonic() - started

    result, waited = asyncio.run(run())
    assert result.is_error
    assert text_of(result) == tool_timeout_text("wedge", 0.4)
    assert waited >= 0.4
    (call,) = recorded_calls(tmp_path / "rec")
    assert call.completed is False and call.duration_sec == 0.4
    assert call.ended_by == "tool_timeout" and call.cancel_sent is True


def test_the_hosts_deadline_narrows_the_bound_and_names_the_deadline(tmp_path):
    """A 0.3 s deadline in _meta under a 5 s tool timeout bounds the call at 0.3 s (deadline)."""

    async def run():
        async with hosted(demo_gateway(tmp_path, "uniform:5")) as host:
            return await host.call_tool("wedge", {}, meta={DEADLINE_META_KEY: 0.3})

    result = asyncio.run(run())
    assert text_of(result) == tool_timeout_text("wedge", 0.3)
    (call,) = recorded_calls(tmp_path / "rec")
    assert call.ended_by == "deadline" and call.duration_sec == 0.3


def test_a_session_budget_narrows_later_calls_by_what_is_left(tmp_path):
    """Under a 0.5 s session budget, a wedged call after 0.25 s of waiting gets what is left."""

    async def run():
        gateway = demo_gateway(tmp_path, "uniform:5", limits=GatewayLimits(session_budget_sec=0.5))
        async with hosted(gateway) as host:
            first = await host.call_tool("wedge", {})  # spends the whole budget
            second = await host.call_tool("wedge", {})
            return first, second

    first, second = asyncio.run(run())
    first_bound = float(text_of(first).split("exceeded ")[1].split("s limit")[0])
    assert 0 < first_bound <= 0.5
    assert text_of(second) == tool_timeout_text("wedge", 0.0)  # the budget is spent: bound 0
    calls = recorded_calls(tmp_path / "rec")
    assert [c.ended_by for c in calls] == ["deadline", "deadline"]


def test_the_loose_cap_refuses_calls_while_abandoned_ones_are_loose(tmp_path):
    """With a cap of one loose call, a second call after an abandoned wedge is refused."""
    from reviewlab.core._receipts import refused_text

    async def run():
        gateway = demo_gateway(tmp_path, "uniform:0.2", limits=GatewayLimits(loose_cap=1))
        async with hosted(gateway) as host:
            await host.call_tool("wedge", {})
            refused = await host.call_tool("read_file", {"path": "README.md"})
            loose = gateway.executors["demo"].ledger.loose
            refusals = gateway.metrics.value(
                "reviewlab_gateway_refusals_total", server="demo", tool="read_file"
            )
            return refused, loose, refusals

    refused, loose, refusals = asyncio.run(run())
    assert refused.is_error and text_of(refused) == refused_text("read_file", 1, 1)
    assert loose == 1 and refusals == 1
    calls = recorded_calls(tmp_path / "rec")
    assert [(c.tool, c.completed, c.status, c.duration_sec) for c in calls][1] == (
        "read_file",
        True,
        "error",
        0.0,
    )


def test_a_late_answer_is_recorded_and_never_delivered(tmp_path):
    """ignore_cancel answers 0.2 s after its cancel: the host has the timeout text, the
    recording the late answer (seconds after the cancel, its size) and the loose time."""

    async def run():
        gateway = demo_gateway(tmp_path, "uniform:0.3")
        async with hosted(gateway) as host:
            result = await host.call_tool("ignore_cancel", {"after_sec": 0.2})
            ledger = gateway.executors["demo"].ledger
            for _ in range(200):  # the upstream answers late: wait for the call to settle
                if ledger.loose == 0:
                    break
                await asyncio.sleep(0.05)
            return result, ledger.loose

    result, loose = asyncio.run(run())
    assert text_of(result) == tool_timeout_text("ignore_cancel", 0.3)
    assert loose == 0
    (call,) = recorded_calls(tmp_path / "rec")
    assert call.completed is False and call.cancel_sent is True
    assert call.late_result_chars == len("finished anyway")
    assert call.late_result_sec is not None and call.late_result_sec >= 0.2
    assert call.returned_after_sec is not None and call.returned_after_sec > 0.3


def test_a_flood_of_progress_does_not_move_the_hard_cap(tmp_path):
    """progress every millisecond under a 0.1 s idle timeout: the call still ends at its 0.5 s
    cap (the idle timeout is re-armed by progress, never past the cap)."""
    policy = tmp_path / "policy.toml"
    policy.write_text("[policy]\ndefault_sec = 0.5\n\n[idle]\nprogress = 0.1\n", encoding="utf-8")

    async def run():
        async with hosted(demo_gateway(tmp_path, policy)) as host:
            started = time.monotonic()
            args = {"steps": 100000, "interval_sec": 0.001, "then": "wedge"}
            result = await host.call_tool("progress", args)
            return result, time.monotonic() - started

    result, waited = asyncio.run(run())
    assert text_of(result) == tool_timeout_text("progress", 0.5)
    assert waited >= 0.5
    (call,) = recorded_calls(tmp_path / "rec")
    assert call.ended_by == "tool_timeout"
    assert call.progress_sec and len(call.progress_sec) > 10


def test_an_upstream_that_crashes_mid_call_is_an_error_naming_it(tmp_path):
    """crash ends the demo server's process: the host gets an error result naming the server,
    and the call is recorded as an error."""

    async def run():
        async with hosted(demo_gateway(tmp_path)) as host:
            return await host.call_tool("crash", {})

    result = asyncio.run(run())
    assert result.is_error and "'demo'" in text_of(result)
    (call,) = recorded_calls(tmp_path / "rec")
    assert (call.tool, call.status, call.completed) == ("crash", "error", True)


def test_a_malformed_upstream_answer_is_an_error_result(tmp_path):
    """A result whose content is not a list reaches the host as an error naming the server."""

    async def run():
        async with hosted(demo_gateway(tmp_path)) as host:
            return await host.call_tool("malformed", {})

    result = asyncio.run(run())
    assert result.is_error
    assert "'demo'" in text_of(result) and "malformed" in text_of(result)


def test_a_host_that_cancels_mid_call_cancels_the_upstream_and_is_recorded(tmp_path):
    """The host gives up on a wedged call after 0.3 s: the upstream hears the cancel (its
    seen_cancels lists the gateway's request), and the call is recorded right-censored."""

    async def run():
        async with hosted(demo_gateway(tmp_path, "uniform:30")) as host:
            with pytest.raises(Exception):  # noqa: B017 - the SDK's timeout error
                await host.call_tool("wedge", {}, read_timeout_seconds=0.3)
            for _ in range(400):  # the cancel crosses two hops: give a loaded machine 20 s
                seen = json.loads(text_of(await host.call_tool("seen_cancels", {})))
                if seen:
                    return seen
                await asyncio.sleep(0.05)
            return seen

    seen = asyncio.run(run())
    assert seen and str(seen[0]).startswith("reviewlab-")
    calls = recorded_calls(tmp_path / "rec")
    wedge = [c for c in calls if c.tool == "wedge"]
    assert len(wedge) == 1 and wedge[0].completed is False and wedge[0].cancel_sent is True
    # Cut where the gateway stopped waiting: the host's 0.3 s counts from its send, the
    # gateway's from its receipt, so only "cut, well before the 30 s bound" is certain.
    assert 0 < wedge[0].duration_sec < 30


def test_with_one_upstream_an_unlisted_name_gets_the_upstreams_own_answer(tmp_path):
    """A name the demo server did not list goes to it anyway (as a direct call would) and comes
    back as the server's own error result, recorded like any call."""

    async def run():
        async with hosted(demo_gateway(tmp_path)) as host:
            return await host.call_tool("nope", {})

    result = asyncio.run(run())
    assert result.is_error and text_of(result) == "unknown tool 'nope'"  # the demo server's text
    (call,) = recorded_calls(tmp_path / "rec")
    assert (call.tool, call.status) == ("nope", "error")


def test_a_request_that_waited_in_the_gateway_is_answered_at_its_bound_from_arrival(tmp_path):
    """A request stamped as arrived 0.45 s before its handler ran (as a burst's last one is)
    under a 0.5 s bound is abandoned about 0.05 s later, not 0.5 s: the bound counts from the
    arrival; the host reads the policy's 0.5 s and the recording the host's 0.5 s."""
    import dataclasses

    from reviewlab.core._deadline import monotonic_now
    from reviewlab.gateway._stdio import Received

    class Backdated:
        """Stamps each request as arrived 0.45 s ago (the stdio front stamps the real time)."""

        async def __call__(self, ctx, call_next):
            return await call_next(
                dataclasses.replace(ctx, request=Received(monotonic_now() - 0.45))
            )

    async def run():
        async with hosted(demo_gateway(tmp_path, "uniform:0.5"), Backdated()) as host:
            started = time.monotonic()
            result = await host.call_tool("wedge", {})
            return result, time.monotonic() - started

    result, waited = asyncio.run(run())
    assert text_of(result) == tool_timeout_text("wedge", 0.5)
    assert waited < 0.4  # 0.05 s expected: a wait of the whole bound would be 0.5 s
    (call,) = recorded_calls(tmp_path / "rec")
    assert call.duration_sec == 0.5 and call.ended_by == "tool_timeout"


def test_a_server_that_stops_at_the_cancel_is_recorded_with_how_soon(tmp_path):
    """honour_cancel answers the cancel with an error at once: no late result, and the time from
    the cancel to its stop is recorded (a small, known figure)."""

    async def run():
        gateway = demo_gateway(tmp_path, "uniform:0.3")
        async with hosted(gateway) as host:
            result = await host.call_tool("honour_cancel", {})
            ledger = gateway.executors["demo"].ledger
            for _ in range(200):
                if ledger.loose == 0:
                    break
                await asyncio.sleep(0.05)
            return result

    result = asyncio.run(run())
    assert text_of(result) == tool_timeout_text("honour_cancel", 0.3)
    (call,) = recorded_calls(tmp_path / "rec")
    assert call.late_result_sec is None and call.late_result_chars is None
    assert call.cancel_honoured_sec is not None and 0 <= call.cancel_honoured_sec < 5

